// The viewer's HTTP API against the gRPC API of the same real server: the viewer's casts are the
// unary Raycast and SphereCast rpcs (the same request message, JSON in the `request` parameter,
// or the parameters' form; the same collide.v1.QueryResponse once the viewer's JSON is parsed,
// byte for byte, and the same refusal word for word), and its scene list and bodies are the
// ListScenes and GetBodies rpcs' messages. Random scenes and casts with a fixed seed (printed
// on failure).

#include <cstdint>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "collide/v1/collide.grpc.pb.h"
#include "collide/v1/collide.pb.h"
#include "collide/viewer/v1/viewer.pb.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "integration/http_probe.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

constexpr char kScene[] = "viewed";
constexpr uint32_t kSeed = 20240601;

std::string UrlEncode(absl::string_view text) {
  std::string out;
  for (const char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(c);
    } else {
      absl::StrAppendFormat(&out, "%%%02X", static_cast<unsigned char>(c));
    }
  }
  return out;
}

std::string Json(const google::protobuf::Message& message) {
  std::string out;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(message, &out).ok());
  return out;
}

// The bytes of `message` (no maps: the serialisation is deterministic).
std::string Bytes(const google::protobuf::Message& message) { return message.SerializeAsString(); }

// `message` as the viewer prints its answers (protobuf's JSON mapping: the .proto's names, every
// field, a newline). An rpc's answer printed so is, text for text, what the viewer answers the
// same request, and parsed it is the same message. The texts are compared as well as the parsed
// bytes: Debian's protobuf 3.21 reads the JSON number -0 as +0 (a hit's normal may hold -0), and
// the text keeps every float's bits.
std::string ViewerJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string out;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(message, &out, options).ok());
  return out + "\n";
}

// `grpc` once printed as the viewer prints and parsed again: the bytes the viewer's answer must
// parse to (every -0 read as +0, see ViewerJson).
std::string ParsedBytes(const google::protobuf::Message& grpc) {
  std::unique_ptr<google::protobuf::Message> parsed(grpc.New());
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(ViewerJson(grpc), parsed.get()).ok());
  return parsed->SerializeAsString();
}

// A server with the viewer on, and a scene of random spheres, boxes and capsules (categories
// 1, 2 or 4, some static, user data) moved over ticks 1 to 6, of which it retains 8.
class ViewerAgainstRpcs : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerConfig config;
    config.extra_flags = {"--viewer_address=127.0.0.1:0",
                          absl::StrCat("--viewer_port_file=", files_.File("viewer_port"))};
    auto server = ServerProcess::Start(config);
    ASSERT_TRUE(IsOk(server));
    server_ = *std::move(server);
    std::ifstream(files_.File("viewer_port")) >> port_;
    ASSERT_GT(port_, 0);
    client_ = server_->NewClient();
    v1::CreateSceneRequest create;
    create.set_scene(kScene);
    create.mutable_options()->set_history_ticks(8);
    ASSERT_TRUE(IsOk(client_->CreateScene(create)));
    std::mt19937 rng(kSeed);
    std::uniform_real_distribution<float> coordinate(-40.0f, 40.0f);
    std::uniform_real_distribution<float> size(0.2f, 4.0f);
    std::vector<v1::Body> bodies;
    for (uint64_t id = 1; id <= 300; ++id) {
      v1::Body body;
      body.set_id(id * 7919);
      switch (id % 3) {
        case 0:
          body.mutable_shape()->mutable_sphere()->set_radius(size(rng));
          break;
        case 1: {
          v1::Vec3* h = body.mutable_shape()->mutable_box()->mutable_half_extents();
          h->set_x(size(rng));
          h->set_y(size(rng));
          h->set_z(size(rng));
          break;
        }
        default:
          body.mutable_shape()->mutable_capsule()->set_radius(size(rng));
          body.mutable_shape()->mutable_capsule()->set_half_height(size(rng));
      }
      v1::Vec3* p = body.mutable_pose()->mutable_position();
      p->set_x(coordinate(rng));
      p->set_y(coordinate(rng));
      p->set_z(coordinate(rng));
      // A rotation whose floats print long (0.70710677...).
      if (id % 4 == 0) {
        body.mutable_pose()->mutable_rotation()->set_z(0.70710677f);
        body.mutable_pose()->mutable_rotation()->set_w(0.70710677f);
      }
      body.set_category(1u << (id % 3));
      body.set_user_data(id * 1000003);
      if (id % 10 == 0) body.set_kind(v1::BODY_KIND_STATIC);
      bodies.push_back(body);
    }
    ASSERT_TRUE(IsOk(client_->UpsertBodies(kScene, bodies)));
    auto writer = client_->OpenUpdateStream(kScene, 0);
    ASSERT_TRUE(IsOk(writer));
    for (uint64_t tick = 1; tick <= 6; ++tick) {
      v1::UpdateBatch batch;
      batch.set_scene(kScene);
      batch.set_tick(tick);
      for (size_t k = 0; k < bodies.size(); k += 3) {
        batch.mutable_moves()->add_ids(bodies[k].id());
        for (const float v :
             {coordinate(rng), coordinate(rng), coordinate(rng), 0.0f, 0.0f, 0.0f, 1.0f}) {
          batch.mutable_moves()->add_poses(v);
        }
      }
      absl::StatusOr<v1::UpdateAck> ack = (*writer)->Apply(batch);
      ASSERT_TRUE(IsOk(ack));
      ASSERT_FALSE(ack->has_error()) << ack->error().ShortDebugString();
    }
    ASSERT_TRUE(IsOk((*writer)->Finish()));
  }

  // GET `path` of the viewer: its status and body.
  HttpAnswer Get(const std::string& path) {
    HttpAnswer answer = HttpExchange(port_, HttpRequestLine("GET", path));
    EXPECT_TRUE(answer.answered) << path;
    return answer;
  }

  // The viewer's answer to `request` sent as JSON to `call`, parsed as `Answer` (or as the
  // viewer's Error when refused).
  template <typename Answer>
  HttpAnswer Cast(absl::string_view call, const google::protobuf::Message& request, Answer* answer,
                  viewer::v1::Error* error) {
    HttpAnswer http =
        Get(absl::StrCat("/viewer/api/", call, "?request=", UrlEncode(Json(request))));
    google::protobuf::Message* out = http.status == 200
                                         ? static_cast<google::protobuf::Message*>(answer)
                                         : static_cast<google::protobuf::Message*>(error);
    const auto parsed = google::protobuf::util::JsonStringToMessage(http.body, out);
    EXPECT_TRUE(parsed.ok()) << parsed.ToString() << ": " << http.body;
    return http;
  }

  TempDir files_{"viewer"};
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<client::Client> client_;
  int port_ = 0;
};

// The filter, mode and tick fields both casts share, drawn at random (within what the rpcs
// take, and now and then not: a tick outside the retained ones).
template <typename Request>
void RandomCommon(std::mt19937& rng, Request* request) {
  const uint32_t pick = rng() % 8;
  if (pick == 1) request->set_mode(v1::MODE_ANY);
  if (pick >= 2 && pick <= 4) {
    request->set_mode(v1::MODE_ALL);
    request->set_max_hits(rng() % 6);
  }
  if (rng() % 3 == 0) request->mutable_filter()->set_mask(1 + rng() % 7);
  if (rng() % 4 == 0) request->mutable_filter()->add_excluded_ids((1 + rng() % 300) * 7919);
  const uint32_t tick = rng() % 10;
  if (tick <= 7) request->set_at_tick(tick);  // 0 and 7 are not retained
  if (tick >= 2 && tick <= 4) request->set_tick_fraction(static_cast<float>(rng() % 100) / 100);
}

void RandomRay(std::mt19937& rng, v1::Vec3* origin, v1::Vec3* direction) {
  std::uniform_real_distribution<float> coordinate(-60.0f, 60.0f);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  origin->set_x(coordinate(rng));
  origin->set_y(coordinate(rng));
  origin->set_z(coordinate(rng));
  // Towards the scene's middle, give or take.
  direction->set_x(-origin->x() / 60 + unit(rng) * 0.3f);
  direction->set_y(-origin->y() / 60 + unit(rng) * 0.3f);
  direction->set_z(-origin->z() / 60 + unit(rng) * 0.3f);
}

TEST_F(ViewerAgainstRpcs, CastsAnswerWhatTheUnaryRpcsAnswerByteForByte) {
  std::mt19937 rng(kSeed + 1);
  int hits = 0;
  int refused = 0;
  for (int i = 0; i < 300; ++i) {
    SCOPED_TRACE(absl::StrCat("seed ", kSeed + 1, ", cast ", i));
    absl::StatusOr<v1::QueryResponse> grpc;
    v1::QueryResponse viewer;
    viewer::v1::Error error;
    HttpAnswer http;
    std::string request_json;
    if (i % 2 == 0) {
      v1::RaycastRequest request;
      request.set_scene(kScene);
      RandomRay(rng, request.mutable_ray()->mutable_origin(),
                request.mutable_ray()->mutable_direction());
      request.mutable_ray()->set_max_distance(static_cast<float>(rng() % 150));
      RandomCommon(rng, &request);
      request_json = Json(request);
      grpc = client_->Raycast(request);
      http = Cast("raycast", request, &viewer, &error);
    } else {
      v1::SphereCastRequest request;
      request.set_scene(kScene);
      RandomRay(rng, request.mutable_cast()->mutable_origin(),
                request.mutable_cast()->mutable_direction());
      request.mutable_cast()->set_max_distance(static_cast<float>(rng() % 150));
      request.mutable_cast()->set_radius(static_cast<float>(rng() % 40) / 10);
      RandomCommon(rng, &request);
      request_json = Json(request);
      grpc = client_->SphereCast(request);
      http = Cast("spherecast", request, &viewer, &error);
    }
    SCOPED_TRACE(request_json);
    if (grpc.ok()) {
      ASSERT_EQ(http.status, 200) << http.body;
      EXPECT_EQ(Bytes(viewer), Bytes(*grpc))
          << http.body << "\n  gRPC: " << grpc->ShortDebugString();
      hits += grpc->hits_size() > 0 ? 1 : 0;
    } else {
      ++refused;
      EXPECT_EQ(http.status, 400) << http.body;
      EXPECT_EQ(error.error(), grpc.status().message());
      EXPECT_EQ(error.code(), absl::StatusCodeToString(grpc.status().code()));
    }
  }
  // Both kinds of outcome were met, and many hits.
  EXPECT_GT(hits, 100);
  EXPECT_GT(refused, 10);
}

TEST_F(ViewerAgainstRpcs, TheParametersFormIsTheSameRequest) {
  std::mt19937 rng(kSeed + 2);
  for (int i = 0; i < 100; ++i) {
    SCOPED_TRACE(absl::StrCat("seed ", kSeed + 2, ", cast ", i));
    v1::SphereCastRequest request;
    request.set_scene(kScene);
    v1::SphereCast* cast = request.mutable_cast();
    RandomRay(rng, cast->mutable_origin(), cast->mutable_direction());
    cast->set_max_distance(static_cast<float>(rng() % 150));
    cast->set_radius(i % 2 == 0 ? 0.0f : static_cast<float>(rng() % 40) / 7);
    if (i % 3 == 0) request.set_at_tick(1 + rng() % 6);
    // Nine significant digits read back as the same float.
    const auto vec = [](const v1::Vec3& v) {
      return absl::StrFormat("%.9g,%.9g,%.9g", v.x(), v.y(), v.z());
    };
    std::string query = absl::StrCat("name=", kScene, "&origin=", vec(cast->origin()),
                                     "&direction=", vec(cast->direction()),
                                     absl::StrFormat("&max_distance=%.9g", cast->max_distance()));
    if (request.has_at_tick()) absl::StrAppend(&query, "&at_tick=", request.at_tick());
    absl::StatusOr<v1::QueryResponse> grpc = client_->SphereCast(request);
    ASSERT_TRUE(IsOk(grpc));
    const HttpAnswer sphere = Get(absl::StrCat("/viewer/api/spherecast?", query,
                                               absl::StrFormat("&radius=%.9g", cast->radius())));
    ASSERT_EQ(sphere.status, 200) << sphere.body;
    v1::QueryResponse viewer;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(sphere.body, &viewer).ok());
    EXPECT_EQ(sphere.body, ViewerJson(*grpc)) << query;
    EXPECT_EQ(Bytes(viewer), ParsedBytes(*grpc)) << query;
    if (cast->radius() == 0) {
      // A sphere cast of radius 0 is a ray cast in every respect.
      const HttpAnswer ray = Get(absl::StrCat("/viewer/api/raycast?", query));
      ASSERT_EQ(ray.status, 200) << ray.body;
      ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ray.body, &viewer).ok());
      EXPECT_EQ(ray.body, ViewerJson(*grpc)) << query;
    }
  }
}

TEST_F(ViewerAgainstRpcs, TheSceneListAndBodiesAreTheRpcsMessages) {
  const HttpAnswer scenes = Get("/viewer/api/scenes");
  ASSERT_EQ(scenes.status, 200);
  v1::ListScenesResponse listed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(scenes.body, &listed).ok());
  grpc::ClientContext context;
  v1::ListScenesResponse expected;
  ASSERT_TRUE(v1::Collide::NewStub(client_->channel())->ListScenes(&context, {}, &expected).ok());
  // The memory a scene holds may grow between the two reads (its history's buffers): the rest is
  // the same.
  ASSERT_EQ(listed.scenes_size(), 1);
  listed.mutable_scenes(0)->mutable_stats()->clear_memory_bytes();
  expected.mutable_scenes(0)->mutable_stats()->clear_memory_bytes();
  EXPECT_EQ(Bytes(listed), Bytes(expected)) << scenes.body;

  // Every body, page by page, as GetBodies reads them (user data included).
  absl::StatusOr<v1::GetBodiesResponse> bodies = client_->GetBodies(kScene, {});
  ASSERT_TRUE(IsOk(bodies));
  v1::GetBodiesResponse paged;
  std::string after;
  for (int page = 0; page < 10; ++page) {
    const HttpAnswer http = Get(absl::StrCat("/viewer/api/scene?name=", kScene, "&limit=128",
                                             after.empty() ? "" : "&after=", after));
    ASSERT_EQ(http.status, 200) << http.body;
    viewer::v1::ScenePage answer;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(http.body, &answer).ok());
    EXPECT_EQ(answer.version(), bodies->version());
    EXPECT_EQ(answer.body_count(), 300u);
    paged.set_version(answer.version());
    for (const v1::Body& body : answer.bodies()) *paged.add_bodies() = body;
    if (!answer.has_next_after()) break;
    after = absl::StrCat(answer.next_after());
  }
  EXPECT_EQ(Bytes(paged), Bytes(*bodies));
}

}  // namespace
}  // namespace collide::integration
