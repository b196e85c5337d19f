// The real collide-server against a careless or hostile client, through the gRPC API only.
//
// NumericExtremes: every numeric field of every request at its extremes (integers at 0, 1, 2^31,
// 2^32 - 1, 2^63 - 1, 2^63, 2^64 - 2 and 2^64 - 1 as the type allows; floats at 0, -0, the
// smallest subnormal and normal, +-1, the coordinate bound and just past it, 1e10, 3e38, +-max,
// +-inf and NaN; enums at unknown values). Each call must end within its deadline, either
// accepted or with a clear error (a canonical client-error code and a message naming the field);
// after each field's values the server is SIGKILLed and restarted on the same data directory,
// where it must serve again (a logged record must never stop a restart), and its memory must stay
// bounded throughout. The table of outcomes is printed at the end.
//
// The other tests: sequences of imports and move marks at their edges, malformed messages on
// every rpc and stream, compressed requests, two servers on one port or one data directory, slow
// and silent clients on every listener (gRPC, /metrics, the viewer), every HTTP method against the
// HTTP listeners, every parameter of the viewer's calls and every field of its JSON requests at
// its edges, and every flag at its extremes.

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/cpp/asset_digest.h"
#include "collide/v1/collide.grpc.pb.h"
#include "collide/viewer/v1/viewer.pb.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "integration/http_probe.h"
#include "integration/raw_call.h"
#include "integration/test_util.h"
#include "sanitizers.h"

namespace collide::integration {
namespace {

constexpr char kScene[] = "t";
constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
constexpr uint32_t kU32Max = std::numeric_limits<uint32_t>::max();
constexpr float kFloatMax = std::numeric_limits<float>::max();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
// A call that takes longer than this hangs (min_version waits are cut at 200 ms by the flag below).
constexpr auto kCallDeadline = std::chrono::seconds(10);
// The server's resident memory must stay below this throughout (it is a few tens of MB here; the
// poison batches this test guards against grew it by gigabytes). Sanitizers inflate RSS.
constexpr uint64_t kRssCeilingBytes = (testing::kSanitized ? 1536ull : 512ull) << 20;

const std::vector<uint64_t>& U64Values() {
  static const std::vector<uint64_t> values = {
      0,           1,      (uint64_t{1} << 31), kU32Max, (uint64_t{1} << 63) - 1, uint64_t{1} << 63,
      kU64Max - 1, kU64Max};
  return values;
}
const std::vector<uint32_t>& U32Values() {
  static const std::vector<uint32_t> values = {0, 1, uint32_t{1} << 31, kU32Max - 1, kU32Max};
  return values;
}
const std::vector<float>& FloatValues() {
  static const std::vector<float> values = {0.0f,
                                            -0.0f,
                                            std::numeric_limits<float>::denorm_min(),
                                            std::numeric_limits<float>::min(),
                                            1.0f,
                                            -1.0f,
                                            1e9f,
                                            std::nextafter(1e9f, kInf),
                                            1e10f,
                                            3e38f,
                                            kFloatMax,
                                            -kFloatMax,
                                            kInf,
                                            -kInf,
                                            kNaN};
  return values;
}
const std::vector<int32_t>& EnumValues() {
  static const std::vector<int32_t> values = {0,
                                              1,
                                              2,
                                              3,
                                              4,
                                              99,
                                              std::numeric_limits<int32_t>::max(),
                                              -1,
                                              std::numeric_limits<int32_t>::min()};
  return values;
}

std::string ValueName(double v) {
  if (std::isnan(v)) return "nan";
  return absl::StrCat(v);
}

// What one call returned.
struct Outcome {
  grpc::StatusCode code = grpc::StatusCode::OK;
  std::string message;
};

// One numeric field and how to send a request with it set to a value.
struct FieldCase {
  std::string path;
  // A word the error message must contain (the field's name as the server reports it).
  std::string names;
  std::function<Outcome(uint64_t)> u64;
  std::function<Outcome(uint32_t)> u32;
  std::function<Outcome(float)> f32;
  std::function<Outcome(int32_t)> enumeration;
};

// The codes that mean "a clear refusal of this request" (not a fault of the server).
bool IsClientErrorCode(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::NOT_FOUND:
    case grpc::StatusCode::OUT_OF_RANGE:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::ALREADY_EXISTS:
    // An import or upload whose trailer disagrees with what arrived (its counts, its checksum).
    case grpc::StatusCode::DATA_LOSS:
      return true;
    default:
      return false;
  }
}

class AdversarialTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ServerConfig config;
    // min_version waits end after 200 ms (DEADLINE_EXCEEDED, a clear answer).
    config.extra_flags = {"--max_version_wait_ms=200"};
    auto server = ServerProcess::Start(config);
    ASSERT_TRUE(IsOk(server));
    server_ = std::move(*server).release();
    Connect();
    v1::CreateSceneRequest create;
    create.set_scene(kScene);
    create.mutable_options()->set_history_ticks(8);
    v1::CreateSceneResponse created;
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->CreateScene(&context, create, &created).ok());
  }

  static void TearDownTestSuite() {
    std::printf("\n%-44s %6s %8s  %s\n", "field", "tried", "accepted", "clear errors");
    for (const auto& [path, row] : *table_) {
      std::vector<std::string> codes;
      for (const auto& [code, count] : row.errors) codes.push_back(absl::StrCat(code, " x", count));
      std::printf("%-44s %6d %8d  %s\n", path.c_str(), row.tried, row.accepted,
                  absl::StrJoin(codes, ", ").c_str());
    }
    std::printf("peak server RSS: %.1f MB\n", static_cast<double>(peak_rss_) / (1 << 20));
    delete stub_holder_;
    stub_holder_ = nullptr;
    delete server_;
    server_ = nullptr;
  }

  static void Connect() {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
    channel_ =
        grpc::CreateCustomChannel(server_->address(), grpc::InsecureChannelCredentials(), args);
    delete stub_holder_;
    stub_holder_ = new std::unique_ptr<v1::Collide::Stub>(v1::Collide::NewStub(channel_));
    stub_ = stub_holder_->get();
  }

  static std::unique_ptr<grpc::ClientContext> Context() {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + kCallDeadline);
    return context;
  }

  static Outcome Of(const grpc::Status& status) {
    return Outcome{status.error_code(), status.error_message()};
  }

  // The scene's two base bodies, put back before each field (a case may have removed them).
  static void ResetBodies() {
    v1::UpsertBodiesRequest request;
    request.set_scene(kScene);
    v1::Body* sphere = request.add_bodies();
    sphere->set_id(1);
    sphere->mutable_shape()->mutable_sphere()->set_radius(0.5f);
    sphere->mutable_pose()->mutable_position()->set_z(5);
    v1::Body* box = request.add_bodies();
    box->set_id(2);
    v1::Vec3* half = box->mutable_shape()->mutable_box()->mutable_half_extents();
    half->set_x(1);
    half->set_y(1);
    half->set_z(1);
    box->mutable_pose()->mutable_position()->set_x(3);
    v1::WriteResponse response;
    grpc::Status status = stub_->UpsertBodies(Context().get(), request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  // One batch over an UpdateStream; its ack's error, or the stream's status.
  static Outcome SendBatch(const v1::UpdateBatch& batch) {
    auto context = Context();
    auto stream = stub_->UpdateStream(context.get());
    if (!stream->Write(batch)) return Of(stream->Finish());
    v1::UpdateAck ack;
    const bool read = stream->Read(&ack);
    stream->WritesDone();
    const grpc::Status status = stream->Finish();
    if (!read || !status.ok()) return Of(status);
    if (ack.has_error()) {
      return Outcome{static_cast<grpc::StatusCode>(ack.error().code()), ack.error().message()};
    }
    return Outcome{};
  }

  // One QueryBatch over a QueryStream; the batch's or its one query's error.
  static Outcome SendQueries(const v1::QueryBatch& batch) {
    auto context = Context();
    auto stream = stub_->QueryStream(context.get());
    if (!stream->Write(batch)) return Of(stream->Finish());
    v1::QueryBatchResult result;
    const bool read = stream->Read(&result);
    stream->WritesDone();
    const grpc::Status status = stream->Finish();
    if (!read || !status.ok()) return Of(status);
    if (result.has_error()) {
      return Outcome{static_cast<grpc::StatusCode>(result.error().code()),
                     result.error().message()};
    }
    for (const v1::QueryResult& r : result.results()) {
      if (r.has_error()) {
        return Outcome{static_cast<grpc::StatusCode>(r.error().code()), r.error().message()};
      }
    }
    return Outcome{};
  }

  // A Watch: the first message, or the call's status.
  static Outcome StartWatch(const v1::WatchRequest& request) {
    auto context = Context();
    auto reader = stub_->Watch(context.get(), request);
    v1::WatchResponse first;
    if (reader->Read(&first)) {
      context->TryCancel();
      reader->Finish().ok();
      return Outcome{};
    }
    return Of(reader->Finish());
  }

  // An Interest stream: `first` (scene set here), then `second` when given once the snapshot came;
  // OK when the stream answered the last message sent, else the call's status.
  static Outcome StartInterest(v1::InterestRequest first,
                               std::optional<v1::InterestRequest> second = std::nullopt) {
    auto context = Context();
    auto stream = stub_->Interest(context.get());
    first.set_scene(kScene);
    v1::InterestResponse response;
    bool answered = stream->Write(first) && stream->Read(&response);
    if (answered && second.has_value()) {
      answered = stream->Write(*second) && stream->Read(&response);
    }
    if (answered) {
      context->TryCancel();
      stream->Finish().ok();
      return Outcome{};
    }
    return Of(stream->Finish());
  }

  // One observer at the origin, enter and leave radius 1.
  static v1::InterestRequest OneObserver() {
    v1::InterestRequest request;
    v1::Observer* observer = request.add_observers();
    observer->set_id(1);
    observer->set_enter_radius(1);
    return request;
  }

  static v1::UpdateBatch MoveBatch() {
    v1::UpdateBatch batch;
    batch.set_scene(kScene);
    batch.mutable_moves()->add_ids(1);
    for (float v : {0.0f, 0.0f, 5.0f, 0.0f, 0.0f, 0.0f, 1.0f}) batch.mutable_moves()->add_poses(v);
    return batch;
  }

  static v1::UpdateBatch UpsertBatch() {
    v1::UpdateBatch batch;
    batch.set_scene(kScene);
    v1::Body* body = batch.add_ops()->mutable_upsert();
    body->set_id(10);
    body->mutable_shape()->mutable_sphere()->set_radius(1);
    body->mutable_pose()->mutable_position()->set_x(-4);
    return batch;
  }

  static v1::RaycastRequest Ray() {
    v1::RaycastRequest request;
    request.set_scene(kScene);
    request.mutable_ray()->mutable_origin()->set_z(-5);
    request.mutable_ray()->mutable_direction()->set_z(1);
    request.mutable_ray()->set_max_distance(100);
    return request;
  }

  static Outcome Raycast(const v1::RaycastRequest& request) {
    v1::QueryResponse response;
    return Of(stub_->Raycast(Context().get(), request, &response));
  }

  static v1::QueryBatch PointBatch() {
    v1::QueryBatch batch;
    batch.set_scene(kScene);
    v1::Query* query = batch.add_queries();
    query->set_request_id(1);
    query->mutable_point()->set_radius(1);
    query->mutable_point()->mutable_point()->set_z(5);
    return batch;
  }

  // The export of kScene as it stands: a header, one chunk, the trailer.
  static std::vector<v1::SceneExportMessage> ExportOfScene() {
    v1::ExportSceneRequest request;
    request.set_scene(kScene);
    auto context = Context();
    auto reader = stub_->ExportScene(context.get(), request);
    std::vector<v1::SceneExportMessage> messages;
    v1::SceneExportMessage message;
    while (reader->Read(&message)) messages.push_back(message);
    EXPECT_TRUE(reader->Finish().ok());
    EXPECT_EQ(messages.size(), 3u);
    return messages;
  }

  // kScene's export with at least one deduplication mark in its header (one is added, with an
  // honest trailer, when the scene has none), for the first mark's fields.
  static std::vector<v1::SceneExportMessage> ExportWithMark() {
    std::vector<v1::SceneExportMessage> messages = ExportOfScene();
    if (messages.front().header().clients_size() == 0) {
      v1::ClientMark* mark = messages.front().mutable_header()->add_clients();
      mark->set_client_id(5);
      mark->set_sequence(1);
      mark->set_version(1);
      messages.back() = HonestTrailer(messages);
    }
    return messages;
  }

  // The first request of an import into the scene "imported", replacing it.
  static v1::ImportSceneRequest ImportTarget(bool check_only = false) {
    v1::ImportSceneRequest first;
    first.set_scene("imported");
    first.set_replace(true);
    first.set_check_only(check_only);
    return first;
  }

  // An ImportScene of `messages` into the scene "imported" (replaced when it exists), the
  // first request carrying `first` (scene and flags); with `honest_trailer`, the trailer is
  // recomputed first, so that the changed field's own check answers.
  static Outcome SendImport(std::vector<v1::SceneExportMessage> messages, bool honest_trailer,
                            v1::ImportSceneRequest first = ImportTarget()) {
    if (honest_trailer) messages.back() = HonestTrailer(messages);
    auto context = Context();
    v1::ImportSceneResponse response;
    auto writer = stub_->ImportScene(context.get(), &response);
    for (size_t i = 0; i < messages.size(); ++i) {
      v1::ImportSceneRequest request = i == 0 ? first : v1::ImportSceneRequest();
      *request.mutable_message() = messages[i];
      if (!writer->Write(request)) break;
    }
    writer->WritesDone();
    return Of(writer->Finish());
  }

  static Outcome SetMoving(const std::string& scene, const std::string& destination, bool clear) {
    v1::SetSceneMovingRequest request;
    request.set_scene(scene);
    request.set_destination(destination);
    request.set_clear(clear);
    v1::SetSceneMovingResponse response;
    return Of(stub_->SetSceneMoving(Context().get(), request, &response));
  }

  static void RunU64(std::string path, std::string names, std::function<Outcome(uint64_t)> f) {
    FieldCase field;
    field.path = std::move(path);
    field.names = std::move(names);
    field.u64 = std::move(f);
    Run(field);
  }
  static void RunU32(std::string path, std::string names, std::function<Outcome(uint32_t)> f) {
    FieldCase field;
    field.path = std::move(path);
    field.names = std::move(names);
    field.u32 = std::move(f);
    Run(field);
  }
  static void RunF32(std::string path, std::string names, std::function<Outcome(float)> f) {
    FieldCase field;
    field.path = std::move(path);
    field.names = std::move(names);
    field.f32 = std::move(f);
    Run(field);
  }
  static void RunEnum(std::string path, std::string names, std::function<Outcome(int32_t)> f) {
    FieldCase field;
    field.path = std::move(path);
    field.names = std::move(names);
    field.enumeration = std::move(f);
    Run(field);
  }

  // Runs every value of `field`, checks each outcome, then SIGKILLs the server and restarts it
  // on the same data directory.
  static void Run(const FieldCase& field) {
    SCOPED_TRACE(field.path);
    ResetBodies();
    Row& row = (*table_)[field.path];
    auto check = [&](const std::string& value, const Outcome& outcome) {
      ++row.tried;
      if (outcome.code == grpc::StatusCode::OK) {
        ++row.accepted;
        return;
      }
      EXPECT_TRUE(IsClientErrorCode(outcome.code) ||
                  (outcome.code == grpc::StatusCode::DEADLINE_EXCEEDED &&
                   absl::StrContains(outcome.message, "min_version")))
          << field.path << " = " << value << ": code " << outcome.code << " " << outcome.message;
      EXPECT_TRUE(absl::StrContains(outcome.message, field.names))
          << field.path << " = " << value << ": the message does not name `" << field.names
          << "`: " << outcome.message;
      ++row.errors[StatusCodeName(outcome.code)];
    };
    if (field.u64) {
      for (uint64_t v : U64Values()) check(absl::StrCat(v), field.u64(v));
    }
    if (field.u32) {
      for (uint32_t v : U32Values()) check(absl::StrCat(v), field.u32(v));
    }
    if (field.f32) {
      for (float v : FloatValues()) check(ValueName(v), field.f32(v));
    }
    if (field.enumeration) {
      for (int32_t v : EnumValues()) check(absl::StrCat(v), field.enumeration(v));
    }
    const uint64_t rss = server_->RssBytes();
    peak_rss_ = std::max(peak_rss_, rss);
    EXPECT_LT(rss, kRssCeilingBytes) << field.path << ": the server holds " << rss << " bytes";
    // Whatever was logged must not stop a restart.
    ASSERT_TRUE(IsOk(server_->Stop(SIGKILL)));
    absl::Status restarted = server_->Restart();
    ASSERT_TRUE(IsOk(restarted)) << field.path << ": no restart:\n" << server_->Logs();
    Connect();
    v1::GetSceneRequest get;
    get.set_scene(kScene);
    v1::GetSceneResponse scene;
    grpc::Status status = stub_->GetScene(Context().get(), get, &scene);
    ASSERT_TRUE(status.ok()) << field.path << ": after the restart: " << status.error_message();
    // The assets the restart recovered are whole: each still answers a ray.
    v1::ListAssetsRequest list;
    list.set_scene(kScene);
    v1::ListAssetsResponse assets;
    status = stub_->ListAssets(Context().get(), list, &assets);
    ASSERT_TRUE(status.ok()) << field.path << ": after the restart: " << status.error_message();
    for (const v1::AssetInfo& asset : assets.assets()) {
      EXPECT_EQ(asset.sha256().size(), 64u) << field.path << ": " << asset.name();
    }
  }

  // The messages of an upload of a 1-triangle mesh named `name` (vertices (0,0,0), (1,0,0),
  // (0,0,1)), changed by `change`, with the trailer's counts and CRC of what is then sent
  // unless `keep_trailer` (a trailer case sets its own).
  static std::vector<v1::UploadAssetRequest> MeshUpload(
      const std::string& name,
      const std::function<void(std::vector<v1::UploadAssetRequest>&)>& change,
      bool keep_trailer = false) {
    std::vector<v1::UploadAssetRequest> messages(3);
    messages[0].set_scene(kScene);
    messages[0].mutable_header()->set_name(name);
    messages[0].mutable_header()->mutable_mesh()->set_vertex_count(3);
    messages[0].mutable_header()->mutable_mesh()->set_index_count(3);
    for (float v : {0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f}) {
      messages[1].mutable_chunk()->add_vertices(v);
    }
    for (uint32_t i : {0u, 2u, 1u}) messages[1].mutable_chunk()->add_indices(i);
    messages[2].mutable_trailer();
    SealTrailer(&messages);
    change(messages);
    if (!keep_trailer) SealTrailer(&messages);
    return messages;
  }

  // The same for a 2 x 2 heightfield (heights 0, 1, 2, 3).
  static std::vector<v1::UploadAssetRequest> FieldUpload(
      const std::string& name,
      const std::function<void(std::vector<v1::UploadAssetRequest>&)>& change) {
    std::vector<v1::UploadAssetRequest> messages(3);
    messages[0].set_scene(kScene);
    messages[0].mutable_header()->set_name(name);
    v1::HeightfieldAssetSize* size = messages[0].mutable_header()->mutable_heightfield();
    size->set_rows(2);
    size->set_columns(2);
    size->set_spacing_x(1);
    size->set_spacing_z(1);
    for (float h : {0.0f, 1.0f, 2.0f, 3.0f}) messages[1].mutable_chunk()->add_heights(h);
    messages[2].mutable_trailer();
    change(messages);
    SealTrailer(&messages);
    return messages;
  }

  // The trailer of what the chunks carry (every chunk between the first and the last message).
  static void SealTrailer(std::vector<v1::UploadAssetRequest>* messages) {
    v1::AssetTrailer* trailer = messages->back().mutable_trailer();
    uint32_t crc = 0;
    uint64_t floats = 0, indices = 0, heights = 0, holes = 0, chunks = 0;
    for (size_t i = 1; i + 1 < messages->size(); ++i) {
      const v1::AssetChunk& c = (*messages)[i].chunk();
      crc = client::Crc32cExtend(crc, c.vertices().data(), c.vertices_size() * 4);
      crc = client::Crc32cExtend(crc, c.indices().data(), c.indices_size() * 4);
      crc = client::Crc32cExtend(crc, c.heights().data(), c.heights_size() * 4);
      crc = client::Crc32cExtend(crc, c.holes().data(), c.holes().size());
      floats += c.vertices_size();
      indices += c.indices_size();
      heights += c.heights_size();
      holes += c.holes().size();
      ++chunks;
    }
    trailer->set_vertex_count(floats / 3);
    trailer->set_index_count(indices);
    trailer->set_sample_count(heights);
    trailer->set_hole_bytes(holes);
    trailer->set_chunk_count(chunks);
    trailer->set_crc32c(crc);
  }

  // One UploadAsset call: its status.
  static Outcome Upload(const std::vector<v1::UploadAssetRequest>& messages) {
    auto context = Context();
    v1::UploadAssetResponse response;
    auto writer = stub_->UploadAsset(context.get(), &response);
    for (const v1::UploadAssetRequest& m : messages) {
      if (!writer->Write(m)) break;
    }
    writer->WritesDone();
    return Of(writer->Finish());
  }

  // A name no earlier case used (an accepted upload keeps its asset).
  static std::string FreshName() {
    static int next = 0;
    return absl::StrCat("a", ++next);
  }

  static std::string StatusCodeName(grpc::StatusCode code) {
    switch (code) {
      case grpc::StatusCode::INVALID_ARGUMENT:
        return "INVALID_ARGUMENT";
      case grpc::StatusCode::NOT_FOUND:
        return "NOT_FOUND";
      case grpc::StatusCode::OUT_OF_RANGE:
        return "OUT_OF_RANGE";
      case grpc::StatusCode::RESOURCE_EXHAUSTED:
        return "RESOURCE_EXHAUSTED";
      case grpc::StatusCode::FAILED_PRECONDITION:
        return "FAILED_PRECONDITION";
      case grpc::StatusCode::DEADLINE_EXCEEDED:
        return "DEADLINE_EXCEEDED";
      case grpc::StatusCode::ALREADY_EXISTS:
        return "ALREADY_EXISTS";
      case grpc::StatusCode::DATA_LOSS:
        return "DATA_LOSS";
      default:
        return absl::StrCat("code ", static_cast<int>(code));
    }
  }

  struct Row {
    int tried = 0;
    int accepted = 0;
    std::map<std::string, int> errors;
  };

  static ServerProcess* server_;
  static std::shared_ptr<grpc::Channel> channel_;
  static std::unique_ptr<v1::Collide::Stub>* stub_holder_;
  static v1::Collide::Stub* stub_;
  static std::map<std::string, Row>* table_;
  static uint64_t peak_rss_;
};

ServerProcess* AdversarialTest::server_ = nullptr;
std::shared_ptr<grpc::Channel> AdversarialTest::channel_;
std::unique_ptr<v1::Collide::Stub>* AdversarialTest::stub_holder_ = nullptr;
v1::Collide::Stub* AdversarialTest::stub_ = nullptr;
std::map<std::string, AdversarialTest::Row>* AdversarialTest::table_ =
    new std::map<std::string, AdversarialTest::Row>();
uint64_t AdversarialTest::peak_rss_ = 0;

TEST_F(AdversarialTest, UpdateBatchFieldsAtTheirExtremes) {
  RunU64("UpdateBatch.tick", "tick", [](uint64_t v) {
    v1::UpdateBatch batch = MoveBatch();
    batch.set_tick(v);
    return SendBatch(batch);
  });
  RunU64("UpdateBatch.client_id", "client", [](uint64_t v) {
    v1::UpdateBatch batch = MoveBatch();
    batch.set_client_id(v);
    batch.set_client_sequence(1);
    return SendBatch(batch);
  });
  RunU64("UpdateBatch.client_sequence", "sequence", [](uint64_t v) {
    v1::UpdateBatch batch = MoveBatch();
    batch.set_client_id(77);
    batch.set_client_sequence(v);
    return SendBatch(batch);
  });
  RunU64("UpdateBatch.moves.ids[0]", "moves", [](uint64_t v) {
    v1::UpdateBatch batch = MoveBatch();
    batch.mutable_moves()->set_ids(0, v);
    return SendBatch(batch);
  });
  for (int k : {0, 2, 3, 6}) {
    RunF32(absl::StrCat("UpdateBatch.moves.poses[", k, "]"), "moves.poses", [k](float v) {
      v1::UpdateBatch batch = MoveBatch();
      batch.mutable_moves()->set_poses(k, v);
      return SendBatch(batch);
    });
  }
  RunU64("UpdateBatch.ops[0].upsert.id", "ops[0]", [](uint64_t v) {
    v1::UpdateBatch batch = UpsertBatch();
    batch.mutable_ops(0)->mutable_upsert()->set_id(v);
    return SendBatch(batch);
  });
  RunU32("UpdateBatch.ops[0].upsert.category", "category", [](uint32_t v) {
    v1::UpdateBatch batch = UpsertBatch();
    batch.mutable_ops(0)->mutable_upsert()->set_category(v);
    return SendBatch(batch);
  });
  RunU32("UpdateBatch.ops[0].upsert.mask", "mask", [](uint32_t v) {
    v1::UpdateBatch batch = UpsertBatch();
    batch.mutable_ops(0)->mutable_upsert()->set_mask(v);
    return SendBatch(batch);
  });
  RunU64("UpdateBatch.ops[0].upsert.user_data", "user_data", [](uint64_t v) {
    v1::UpdateBatch batch = UpsertBatch();
    batch.mutable_ops(0)->mutable_upsert()->set_user_data(v);
    return SendBatch(batch);
  });
  RunEnum("UpdateBatch.ops[0].upsert.kind", "kind", [](int32_t v) {
    v1::UpdateBatch batch = UpsertBatch();
    batch.mutable_ops(0)->mutable_upsert()->set_kind(static_cast<v1::BodyKind>(v));
    return SendBatch(batch);
  });
  RunF32("UpdateBatch.ops[0].upsert.shape.sphere.radius", "sphere.radius", [](float v) {
    v1::UpdateBatch batch = UpsertBatch();
    batch.mutable_ops(0)->mutable_upsert()->mutable_shape()->mutable_sphere()->set_radius(v);
    return SendBatch(batch);
  });
  RunF32("UpdateBatch.ops[0].upsert.shape.box.half_extents.y", "box.half_extents", [](float v) {
    v1::UpdateBatch batch = UpsertBatch();
    v1::Vec3* half = batch.mutable_ops(0)
                         ->mutable_upsert()
                         ->mutable_shape()
                         ->mutable_box()
                         ->mutable_half_extents();
    half->set_x(1);
    half->set_y(v);
    half->set_z(1);
    return SendBatch(batch);
  });
  RunF32("UpdateBatch.ops[0].upsert.shape.capsule.half_height", "capsule.half_height", [](float v) {
    v1::UpdateBatch batch = UpsertBatch();
    v1::Capsule* capsule =
        batch.mutable_ops(0)->mutable_upsert()->mutable_shape()->mutable_capsule();
    capsule->set_radius(0.5f);
    capsule->set_half_height(v);
    return SendBatch(batch);
  });
  RunF32("UpdateBatch.ops[0].upsert.pose.position.z", "pose.position", [](float v) {
    v1::UpdateBatch batch = UpsertBatch();
    batch.mutable_ops(0)->mutable_upsert()->mutable_pose()->mutable_position()->set_z(v);
    return SendBatch(batch);
  });
  RunF32("UpdateBatch.ops[0].upsert.pose.rotation.w", "pose.rotation", [](float v) {
    v1::UpdateBatch batch = UpsertBatch();
    batch.mutable_ops(0)->mutable_upsert()->mutable_pose()->mutable_rotation()->set_w(v);
    return SendBatch(batch);
  });
  RunU64("UpdateBatch.ops[0].set_pose.id", "ops[0]", [](uint64_t v) {
    v1::UpdateBatch batch;
    batch.set_scene(kScene);
    batch.add_ops()->mutable_set_pose()->set_id(v);
    return SendBatch(batch);
  });
  RunU32("UpdateBatch.ops[0].set_filter.category", "category", [](uint32_t v) {
    v1::UpdateBatch batch;
    batch.set_scene(kScene);
    v1::SetFilter* filter = batch.add_ops()->mutable_set_filter();
    filter->set_id(2);
    filter->set_category(v);
    filter->set_mask(v);
    return SendBatch(batch);
  });
  RunU64("UpdateBatch.ops[0].remove", "ops[0]", [](uint64_t v) {
    v1::UpdateBatch batch;
    batch.set_scene(kScene);
    batch.add_ops()->set_remove(v);
    return SendBatch(batch);
  });
}

TEST_F(AdversarialTest, BodyRequestFieldsAtTheirExtremes) {
  RunU64("UpsertBodies.bodies[0].id", "bodies[0]", [](uint64_t v) {
    v1::UpsertBodiesRequest request;
    request.set_scene(kScene);
    v1::Body* body = request.add_bodies();
    body->set_id(v);
    body->mutable_shape()->mutable_sphere()->set_radius(1);
    v1::WriteResponse response;
    return Of(stub_->UpsertBodies(Context().get(), request, &response));
  });
  RunF32("UpsertBodies.bodies[0].shape.capsule.radius", "capsule.radius", [](float v) {
    v1::UpsertBodiesRequest request;
    request.set_scene(kScene);
    v1::Body* body = request.add_bodies();
    body->set_id(11);
    body->mutable_shape()->mutable_capsule()->set_radius(v);
    v1::WriteResponse response;
    return Of(stub_->UpsertBodies(Context().get(), request, &response));
  });
  RunU64("RemoveBodies.ids[0]", "ids[0]", [](uint64_t v) {
    v1::RemoveBodiesRequest request;
    request.set_scene(kScene);
    request.add_ids(v);
    v1::WriteResponse response;
    return Of(stub_->RemoveBodies(Context().get(), request, &response));
  });
  RunU64("GetBodies.ids[0]", "ids", [](uint64_t v) {
    v1::GetBodiesRequest request;
    request.set_scene(kScene);
    request.add_ids(v);
    v1::GetBodiesResponse response;
    return Of(stub_->GetBodies(Context().get(), request, &response));
  });
}

TEST_F(AdversarialTest, ServerStatsRequestAtItsExtremes) {
  // Every value is accepted (over 1000 is taken as 1000); the list never holds more scenes than
  // asked for, nor more than exist.
  RunU32("GetServerStats.max_scenes", "max_scenes", [](uint32_t v) {
    v1::GetServerStatsRequest request;
    request.set_max_scenes(v);
    v1::GetServerStatsResponse response;
    Outcome outcome = Of(stub_->GetServerStats(Context().get(), request, &response));
    if (outcome.code == grpc::StatusCode::OK) {
      EXPECT_LE(static_cast<uint32_t>(response.scene_stats_size()), std::min(v, 1000u)) << v;
      EXPECT_EQ(static_cast<uint32_t>(response.scene_stats_size()) + response.scenes_omitted(),
                response.scenes())
          << v;
    }
    return outcome;
  });
}

TEST_F(AdversarialTest, SceneOptionsAtTheirExtremes) {
  static int created = 0;
  // Creates scene `c<n>` with the options and deletes it again when it was created.
  auto create = [](const std::function<void(v1::SceneOptions*)>& set) {
    v1::CreateSceneRequest request;
    request.set_scene(absl::StrCat("c", ++created));
    set(request.mutable_options());
    v1::CreateSceneResponse response;
    Outcome outcome = Of(stub_->CreateScene(Context().get(), request, &response));
    if (outcome.code == grpc::StatusCode::OK) {
      v1::DeleteSceneRequest remove;
      remove.set_scene(request.scene());
      v1::DeleteSceneResponse removed;
      EXPECT_TRUE(stub_->DeleteScene(Context().get(), remove, &removed).ok());
    }
    return outcome;
  };
  RunF32("CreateScene.options.fat_margin", "fat_margin",
         [&](float v) { return create([v](v1::SceneOptions* o) { o->set_fat_margin(v); }); });
  RunU32("CreateScene.options.max_bodies", "max_bodies",
         [&](uint32_t v) { return create([v](v1::SceneOptions* o) { o->set_max_bodies(v); }); });
  RunU32("CreateScene.options.history_ticks", "history_ticks",
         [&](uint32_t v) { return create([v](v1::SceneOptions* o) { o->set_history_ticks(v); }); });
  RunEnum("CreateScene.options.durability", "durability", [&](int32_t v) {
    return create([v](v1::SceneOptions* o) { o->set_durability(static_cast<v1::Durability>(v)); });
  });
}

TEST_F(AdversarialTest, UnaryQueryFieldsAtTheirExtremes) {
  RunF32("Raycast.ray.origin.y", "origin", [](float v) {
    v1::RaycastRequest request = Ray();
    request.mutable_ray()->mutable_origin()->set_y(v);
    return Raycast(request);
  });
  RunF32("Raycast.ray.direction.x (y, z = 0)", "direction", [](float v) {
    v1::RaycastRequest request = Ray();
    request.mutable_ray()->mutable_direction()->set_x(v);
    request.mutable_ray()->mutable_direction()->set_z(0);
    return Raycast(request);
  });
  RunF32("Raycast.ray.max_distance", "max_distance", [](float v) {
    v1::RaycastRequest request = Ray();
    request.mutable_ray()->set_max_distance(v);
    return Raycast(request);
  });
  RunU32("Raycast.max_hits (MODE_ALL)", "max_hits", [](uint32_t v) {
    v1::RaycastRequest request = Ray();
    request.set_mode(v1::MODE_ALL);
    request.set_max_hits(v);
    return Raycast(request);
  });
  RunEnum("Raycast.mode", "mode", [](int32_t v) {
    v1::RaycastRequest request = Ray();
    request.set_mode(static_cast<v1::Mode>(v));
    return Raycast(request);
  });
  RunU64("Raycast.at_tick", "at_tick", [](uint64_t v) {
    v1::RaycastRequest request = Ray();
    request.set_at_tick(v);
    return Raycast(request);
  });
  RunF32("Raycast.tick_fraction (at_tick 0)", "tick", [](float v) {
    v1::RaycastRequest request = Ray();
    request.set_at_tick(0);
    request.set_tick_fraction(v);
    return Raycast(request);
  });
  RunU64("Raycast.min_version", "min_version", [](uint64_t v) {
    v1::RaycastRequest request = Ray();
    request.set_min_version(v);
    return Raycast(request);
  });
  RunU32("Raycast.filter.category", "filter", [](uint32_t v) {
    v1::RaycastRequest request = Ray();
    request.mutable_filter()->set_category(v);
    request.mutable_filter()->set_mask(v);
    return Raycast(request);
  });
  RunU64("Raycast.filter.excluded_ids[0]", "excluded_ids", [](uint64_t v) {
    v1::RaycastRequest request = Ray();
    request.mutable_filter()->add_excluded_ids(v);
    return Raycast(request);
  });
  RunF32("SphereCast.cast.radius", "radius", [](float v) {
    v1::SphereCastRequest request;
    request.set_scene(kScene);
    v1::SphereCast* cast = request.mutable_cast();
    cast->mutable_origin()->set_z(-5);
    cast->mutable_direction()->set_z(1);
    cast->set_max_distance(100);
    cast->set_radius(v);
    v1::QueryResponse response;
    return Of(stub_->SphereCast(Context().get(), request, &response));
  });
  RunF32("Overlap.overlap.pose.rotation.x", "pose.rotation", [](float v) {
    v1::OverlapRequest request;
    request.set_scene(kScene);
    v1::Overlap* overlap = request.mutable_overlap();
    v1::Vec3* half = overlap->mutable_shape()->mutable_box()->mutable_half_extents();
    half->set_x(1);
    half->set_y(2);
    half->set_z(3);
    overlap->mutable_pose()->mutable_rotation()->set_x(v);
    overlap->mutable_pose()->mutable_rotation()->set_w(1);
    request.set_mode(v1::MODE_ALL);
    v1::QueryResponse response;
    return Of(stub_->Overlap(Context().get(), request, &response));
  });
}

TEST_F(AdversarialTest, InterestFieldsAtTheirExtremes) {
  RunU32("InterestRequest.max_queued_events", "max_queued_events", [](uint32_t v) {
    v1::InterestRequest request = OneObserver();
    request.set_max_queued_events(v);
    return StartInterest(request);
  });
  RunU64("InterestRequest.observers[0].id", "observers[0]", [](uint64_t v) {
    v1::InterestRequest request = OneObserver();
    request.mutable_observers(0)->set_id(v);
    return StartInterest(request);
  });
  RunU64("InterestRequest.observers[0].attached_to", "observers[0]", [](uint64_t v) {
    v1::InterestRequest request = OneObserver();
    request.mutable_observers(0)->set_attached_to(v);  // unknown bodies: an empty set
    return StartInterest(request);
  });
  RunF32("InterestRequest.observers[0].enter_radius", "observers[0].enter_radius", [](float v) {
    v1::InterestRequest request = OneObserver();
    request.mutable_observers(0)->set_enter_radius(v);
    return StartInterest(request);
  });
  RunF32("InterestRequest.observers[0].leave_radius", "observers[0].leave_radius", [](float v) {
    v1::InterestRequest request = OneObserver();
    request.mutable_observers(0)->set_leave_radius(v);
    return StartInterest(request);
  });
  RunU32("InterestRequest.observers[0].max_relevant", "observers[0].max_relevant", [](uint32_t v) {
    v1::InterestRequest request = OneObserver();
    request.mutable_observers(0)->set_max_relevant(v);
    return StartInterest(request);
  });
  RunU32("InterestRequest.observers[0].filter.mask", "observers[0]", [](uint32_t v) {
    v1::InterestRequest request = OneObserver();
    request.mutable_observers(0)->mutable_filter()->set_mask(v);
    request.mutable_observers(0)->mutable_filter()->set_category(v);
    return StartInterest(request);
  });
  RunF32("InterestRequest.observers[0].pose.position.x", "observers[0].pose.position", [](float v) {
    v1::InterestRequest request = OneObserver();
    request.mutable_observers(0)->mutable_pose()->mutable_position()->set_x(v);
    return StartInterest(request);
  });
  RunF32("InterestRequest.observers[0].cone.direction.x", "observers[0].cone.direction",
         [](float v) {
           v1::InterestRequest request = OneObserver();
           v1::ViewCone* cone = request.mutable_observers(0)->mutable_cone();
           cone->mutable_direction()->set_x(v);
           cone->set_half_angle(1);
           return StartInterest(request);
         });
  RunF32("InterestRequest.observers[0].cone.half_angle", "observers[0].cone", [](float v) {
    v1::InterestRequest request = OneObserver();
    v1::ViewCone* cone = request.mutable_observers(0)->mutable_cone();
    cone->mutable_direction()->set_x(1);
    cone->set_half_angle(v);
    return StartInterest(request);
  });
  RunF32("InterestRequest.observers[0].cone.leave_half_angle", "observers[0].cone.leave_half",
         [](float v) {
           v1::InterestRequest request = OneObserver();
           v1::ViewCone* cone = request.mutable_observers(0)->mutable_cone();
           cone->mutable_direction()->set_x(1);
           cone->set_half_angle(0.5f);
           cone->set_leave_half_angle(v);
           return StartInterest(request);
         });
  // The same fields in a later message of the open stream.
  RunF32("InterestRequest (messages[1]).observers[0].enter_radius",
         "messages[1].observers[0].enter_radius", [](float v) {
           v1::InterestRequest second = OneObserver();
           second.mutable_observers(0)->set_enter_radius(v);
           return StartInterest(OneObserver(), second);
         });
  RunU64("InterestRequest (messages[1]).removes[0]", "removes", [](uint64_t v) {
    v1::InterestRequest second;
    second.add_removes(v);  // unknown ids are ignored
    return StartInterest(OneObserver(), second);
  });
}

// Every numeric field of an ImportSceneRequest (header, mark, options, body, trailer) at its
// extremes, over an export of the test's scene; the trailer is recomputed for the header's and
// the bodies' fields, so that each field's own check answers, and left as exported for the
// trailer's. Plus ExportSceneRequest's one number.
TEST_F(AdversarialTest, ImportSceneFieldsAtTheirExtremes) {
  using Messages = std::vector<v1::SceneExportMessage>;
  const auto header = [](Messages& m) { return m.front().mutable_header(); };
  const auto body = [](Messages& m, int i) { return m[1].mutable_chunk()->mutable_bodies(i); };
  RunU64("ImportSceneRequest.header.version", "header.version", [&](uint64_t v) {
    Messages m = ExportOfScene();
    header(m)->set_version(v);
    return SendImport(m, true);
  });
  RunU64("ImportSceneRequest.header.tick", "header.tick", [&](uint64_t v) {
    Messages m = ExportOfScene();
    header(m)->set_tick(v);
    return SendImport(m, true);
  });
  RunU64("ImportSceneRequest.header.body_count", "body_count", [&](uint64_t v) {
    Messages m = ExportOfScene();
    header(m)->set_body_count(v);
    return SendImport(m, true);
  });
  RunU64("ImportSceneRequest.header.clients[0].client_id", "header.clients[0]", [&](uint64_t v) {
    Messages m = ExportWithMark();
    header(m)->mutable_clients(0)->set_client_id(v);
    return SendImport(m, true);
  });
  RunU64("ImportSceneRequest.header.clients[0].sequence", "header.clients[0]", [&](uint64_t v) {
    Messages m = ExportWithMark();
    header(m)->mutable_clients(0)->set_sequence(v);
    return SendImport(m, true);
  });
  RunU64("ImportSceneRequest.header.clients[0].version", "header.clients[0]", [&](uint64_t v) {
    Messages m = ExportWithMark();
    header(m)->mutable_clients(0)->set_version(v);
    return SendImport(m, true);
  });
  RunU64("ImportSceneRequest.chunk.bodies[0].id", "chunks[0].bodies[", [&](uint64_t v) {
    Messages m = ExportOfScene();
    body(m, 0)->set_id(v);
    return SendImport(m, true);
  });
  RunU64("ImportSceneRequest.chunk.bodies[0].user_data", "chunks[0].bodies[0]", [&](uint64_t v) {
    Messages m = ExportOfScene();
    body(m, 0)->set_user_data(v);
    return SendImport(m, true);
  });
  RunU64("ImportSceneRequest.trailer.body_count", "trailer.body_count", [&](uint64_t v) {
    Messages m = ExportOfScene();
    m.back().mutable_trailer()->set_body_count(v);
    return SendImport(m, false);
  });
  RunU64("ImportSceneRequest.trailer.chunk_count", "trailer.chunk_count", [&](uint64_t v) {
    Messages m = ExportOfScene();
    m.back().mutable_trailer()->set_chunk_count(v);
    return SendImport(m, false);
  });
  RunU32("ImportSceneRequest.trailer.crc32c", "trailer.crc32c", [&](uint32_t v) {
    Messages m = ExportOfScene();
    m.back().mutable_trailer()->set_crc32c(v);
    return SendImport(m, false);
  });
  RunU32("ImportSceneRequest.header.format", "header.format", [&](uint32_t v) {
    Messages m = ExportOfScene();
    header(m)->set_format(v);
    return SendImport(m, true);
  });
  RunU32("ImportSceneRequest.header.options.max_bodies", "max_bodies", [&](uint32_t v) {
    Messages m = ExportOfScene();
    header(m)->mutable_options()->set_max_bodies(v);
    return SendImport(m, true);
  });
  RunU32("ImportSceneRequest.header.options.history_ticks", "header.options.history_ticks",
         [&](uint32_t v) {
           Messages m = ExportOfScene();
           header(m)->mutable_options()->set_history_ticks(v);
           return SendImport(m, true);
         });
  RunU32("ImportSceneRequest.chunk.bodies[0].category", "chunks[0].bodies[0]", [&](uint32_t v) {
    Messages m = ExportOfScene();
    body(m, 0)->set_category(v);
    return SendImport(m, true);
  });
  RunU32("ImportSceneRequest.chunk.bodies[0].mask", "chunks[0].bodies[0]", [&](uint32_t v) {
    Messages m = ExportOfScene();
    body(m, 0)->set_mask(v);
    return SendImport(m, true);
  });
  RunF32("ImportSceneRequest.header.options.fat_margin", "header.options.fat_margin", [&](float v) {
    Messages m = ExportOfScene();
    header(m)->mutable_options()->set_fat_margin(v);
    return SendImport(m, true);
  });
  RunF32("ImportSceneRequest.chunk.bodies[0].pose.position.x", "chunks[0].bodies[0].pose.position",
         [&](float v) {
           Messages m = ExportOfScene();
           body(m, 0)->mutable_pose()->mutable_position()->set_x(v);
           return SendImport(m, true);
         });
  RunF32("ImportSceneRequest.chunk.bodies[0].pose.rotation.w", "chunks[0].bodies[0].pose.rotation",
         [&](float v) {
           Messages m = ExportOfScene();
           body(m, 0)->mutable_pose()->mutable_rotation()->set_w(v);
           return SendImport(m, true);
         });
  RunF32("ImportSceneRequest.chunk.bodies[0].shape.sphere.radius", "chunks[0].bodies[0].shape",
         [&](float v) {
           Messages m = ExportOfScene();
           body(m, 0)->mutable_shape()->mutable_sphere()->set_radius(v);
           return SendImport(m, true);
         });
  RunEnum("ImportSceneRequest.header.options.durability", "header.options.durability",
          [&](int32_t v) {
            Messages m = ExportOfScene();
            header(m)->mutable_options()->set_durability(static_cast<v1::Durability>(v));
            return SendImport(m, true);
          });
  RunEnum("ImportSceneRequest.chunk.bodies[0].kind", "chunks[0].bodies[0].kind", [&](int32_t v) {
    Messages m = ExportOfScene();
    body(m, 0)->set_kind(static_cast<v1::BodyKind>(v));
    return SendImport(m, true);
  });
  RunU32("ExportSceneRequest.max_bodies_per_chunk", "max_bodies_per_chunk", [](uint32_t v) {
    v1::ExportSceneRequest request;
    request.set_scene(kScene);
    request.set_max_bodies_per_chunk(v);
    auto context = Context();
    auto reader = stub_->ExportScene(context.get(), request);
    v1::SceneExportMessage message;
    while (reader->Read(&message)) {
    }
    return Of(reader->Finish());
  });
}

// Sequences of imports and move marks at their edges: a scene marked as moving is neither
// replaced (checked or not) nor re-targeted; marking it again to the same destination and
// clearing twice are accepted; counts that lie, a check_only past the first message; then the
// server restarts from what was logged.
TEST_F(AdversarialTest, ImportAndMoveSequencesAtTheirEdges) {
  ResetBodies();
  const std::vector<v1::SceneExportMessage> good = ExportOfScene();
  ASSERT_EQ(SendImport(good, false).code, grpc::StatusCode::OK);
  const auto expect = [](const Outcome& outcome, grpc::StatusCode code, const std::string& text) {
    EXPECT_EQ(outcome.code, code) << outcome.message;
    EXPECT_TRUE(absl::StrContains(outcome.message, text)) << outcome.message;
  };
  ASSERT_EQ(SetMoving("imported", "a:1", false).code, grpc::StatusCode::OK);
  expect(SetMoving("imported", "a:1", false), grpc::StatusCode::OK, "");
  expect(SetMoving("imported", "b:2", false), grpc::StatusCode::FAILED_PRECONDITION,
         "destination: scene \"imported\" is already moving to a:1");
  expect(SendImport(good, false), grpc::StatusCode::FAILED_PRECONDITION,
         "scene: scene \"imported\" moved to a:1");
  expect(SendImport(good, false, ImportTarget(/*check_only=*/true)),
         grpc::StatusCode::FAILED_PRECONDITION, "moved to a:1");
  expect(SetMoving("imported", "", true), grpc::StatusCode::OK, "");
  expect(SetMoving("imported", "", true), grpc::StatusCode::OK, "");
  expect(SetMoving("imported", "b:2", false), grpc::StatusCode::OK, "");
  expect(SetMoving("imported", "", true), grpc::StatusCode::OK, "");
  expect(SendImport(good, false), grpc::StatusCode::OK, "");
  // Counts that lie.
  {
    auto m = good;
    m.front().mutable_header()->set_body_count(1);  // two or more bodies follow
    expect(SendImport(m, true), grpc::StatusCode::INVALID_ARGUMENT, "chunks[0].bodies[1]");
    m = good;
    m.front().mutable_header()->set_body_count(good.front().header().body_count() + 1);
    expect(SendImport(m, true), grpc::StatusCode::DATA_LOSS, "trailer.body_count");
    m = good;
    m.back().mutable_trailer()->set_chunk_count(2);
    expect(SendImport(m, false), grpc::StatusCode::DATA_LOSS, "trailer.chunk_count");
    m = good;
    m.insert(m.begin() + 1, m[1]);  // a chunk twice, counted twice, the trailer recomputed
    m.front().mutable_header()->set_body_count(2 * good.front().header().body_count());
    expect(SendImport(m, true), grpc::StatusCode::INVALID_ARGUMENT, "chunks[1].bodies[0].id");
  }
  // check_only (and the target) only in the first message.
  {
    auto context = Context();
    v1::ImportSceneResponse response;
    auto writer = stub_->ImportScene(context.get(), &response);
    for (size_t i = 0; i < good.size(); ++i) {
      v1::ImportSceneRequest request = i == 0 ? ImportTarget() : v1::ImportSceneRequest();
      if (i == 2) request.set_check_only(true);
      *request.mutable_message() = good[i];
      if (!writer->Write(request)) break;
    }
    writer->WritesDone();
    expect(Of(writer->Finish()), grpc::StatusCode::INVALID_ARGUMENT, "messages[2].check_only");
  }
  // A check_only import of a scene that does not exist yet creates nothing.
  v1::ImportSceneRequest check = ImportTarget(/*check_only=*/true);
  check.set_scene("checked");
  expect(SendImport(good, false, check), grpc::StatusCode::OK, "");
  v1::GetSceneRequest get;
  get.set_scene("checked");
  v1::GetSceneResponse scene;
  EXPECT_EQ(stub_->GetScene(Context().get(), get, &scene).error_code(),
            grpc::StatusCode::NOT_FOUND);
  // What was logged restarts.
  ASSERT_TRUE(IsOk(server_->Stop(SIGKILL)));
  ASSERT_TRUE(IsOk(server_->Restart())) << server_->Logs();
  Connect();
  get.set_scene("imported");
  ASSERT_TRUE(stub_->GetScene(Context().get(), get, &scene).ok());
  EXPECT_EQ(scene.scene().moved_to(), "");
  EXPECT_EQ(static_cast<uint64_t>(scene.scene().stats().body_count()),
            good.front().header().body_count());
}

TEST_F(AdversarialTest, StreamedQueryAndWatchFieldsAtTheirExtremes) {
  RunU64("QueryBatch.min_version", "min_version", [](uint64_t v) {
    v1::QueryBatch batch = PointBatch();
    batch.set_min_version(v);
    return SendQueries(batch);
  });
  RunU64("QueryBatch.queries[0].request_id", "queries[0]", [](uint64_t v) {
    v1::QueryBatch batch = PointBatch();
    batch.mutable_queries(0)->set_request_id(v);
    return SendQueries(batch);
  });
  RunU32("QueryBatch.queries[0].max_hits (MODE_ALL)", "max_hits", [](uint32_t v) {
    v1::QueryBatch batch = PointBatch();
    batch.mutable_queries(0)->set_mode(v1::MODE_ALL);
    batch.mutable_queries(0)->set_max_hits(v);
    return SendQueries(batch);
  });
  RunU64("QueryBatch.queries[0].at_tick", "at_tick", [](uint64_t v) {
    v1::QueryBatch batch = PointBatch();
    batch.mutable_queries(0)->set_at_tick(v);
    return SendQueries(batch);
  });
  RunF32("QueryBatch.queries[0].point.radius", "radius", [](float v) {
    v1::QueryBatch batch = PointBatch();
    batch.mutable_queries(0)->mutable_point()->set_radius(v);
    return SendQueries(batch);
  });
  RunF32("QueryBatch.queries[0].aabb.region.max.x", "region", [](float v) {
    v1::QueryBatch batch;
    batch.set_scene(kScene);
    v1::Aabb* region = batch.add_queries()->mutable_aabb()->mutable_region();
    region->mutable_min()->set_x(-1);
    region->mutable_max()->set_x(v);
    return SendQueries(batch);
  });
  RunU32("WatchRequest.max_queued_events", "max_queued_events", [](uint32_t v) {
    v1::WatchRequest request;
    request.set_scene(kScene);
    request.set_max_queued_events(v);
    v1::Fence* fence = request.add_fences();
    fence->set_id(1);
    fence->mutable_shape()->mutable_sphere()->set_radius(2);
    return StartWatch(request);
  });
  RunU64("WatchRequest.fences[0].id", "fences[0]", [](uint64_t v) {
    v1::WatchRequest request;
    request.set_scene(kScene);
    v1::Fence* fence = request.add_fences();
    fence->set_id(v);
    fence->mutable_shape()->mutable_sphere()->set_radius(2);
    return StartWatch(request);
  });
  RunU64("WatchRequest.fences[0].attached_to", "fences[0]", [](uint64_t v) {
    v1::WatchRequest request;
    request.set_scene(kScene);
    v1::Fence* fence = request.add_fences();
    fence->set_id(1);
    fence->set_attached_to(v);
    fence->mutable_shape()->mutable_sphere()->set_radius(2);
    return StartWatch(request);
  });
}

TEST_F(AdversarialTest, AssetFieldsAtTheirExtremes) {
  // The assets bodies place below.
  ASSERT_EQ(Upload(MeshUpload("cube", [](auto&) {})).code, grpc::StatusCode::OK);
  ASSERT_EQ(Upload(FieldUpload("ground", [](auto&) {})).code, grpc::StatusCode::OK);
  RunU64("UploadAsset.header.mesh.vertex_count", "vert", [](uint64_t v) {
    return Upload(MeshUpload(
        FreshName(), [v](auto& m) { m[0].mutable_header()->mutable_mesh()->set_vertex_count(v); }));
  });
  RunU64("UploadAsset.header.mesh.index_count", "ind", [](uint64_t v) {
    return Upload(MeshUpload(
        FreshName(), [v](auto& m) { m[0].mutable_header()->mutable_mesh()->set_index_count(v); }));
  });
  RunU64("UploadAsset.header.heightfield.rows", "rows", [](uint64_t v) {
    return Upload(FieldUpload(
        FreshName(), [v](auto& m) { m[0].mutable_header()->mutable_heightfield()->set_rows(v); }));
  });
  RunU64("UploadAsset.header.heightfield.columns", "columns", [](uint64_t v) {
    return Upload(FieldUpload(FreshName(), [v](auto& m) {
      m[0].mutable_header()->mutable_heightfield()->set_columns(v);
    }));
  });
  RunF32("UploadAsset.header.heightfield.spacing_x", "spacing_x", [](float v) {
    return Upload(FieldUpload(FreshName(), [v](auto& m) {
      m[0].mutable_header()->mutable_heightfield()->set_spacing_x(v);
    }));
  });
  RunF32("UploadAsset.header.heightfield.spacing_z", "spacing_z", [](float v) {
    return Upload(FieldUpload(FreshName(), [v](auto& m) {
      m[0].mutable_header()->mutable_heightfield()->set_spacing_z(v);
    }));
  });
  RunF32("UploadAsset.chunk.vertices (a coordinate)", "vertices", [](float v) {
    return Upload(
        MeshUpload(FreshName(), [v](auto& m) { m[1].mutable_chunk()->set_vertices(4, v); }));
  });
  RunU32("UploadAsset.chunk.indices (an index)", "indices", [](uint32_t v) {
    return Upload(
        MeshUpload(FreshName(), [v](auto& m) { m[1].mutable_chunk()->set_indices(2, v); }));
  });
  RunF32("UploadAsset.chunk.heights (a height)", "heights", [](float v) {
    return Upload(
        FieldUpload(FreshName(), [v](auto& m) { m[1].mutable_chunk()->set_heights(3, v); }));
  });
  RunU64("UploadAsset.trailer.vertex_count", "trailer", [](uint64_t v) {
    return Upload(MeshUpload(
        FreshName(), [v](auto& m) { m.back().mutable_trailer()->set_vertex_count(v); }, true));
  });
  RunU64("UploadAsset.trailer.index_count", "trailer", [](uint64_t v) {
    return Upload(MeshUpload(
        FreshName(), [v](auto& m) { m.back().mutable_trailer()->set_index_count(v); }, true));
  });
  RunU64("UploadAsset.trailer.chunk_count", "trailer", [](uint64_t v) {
    return Upload(MeshUpload(
        FreshName(), [v](auto& m) { m.back().mutable_trailer()->set_chunk_count(v); }, true));
  });
  RunU32("UploadAsset.trailer.crc32c", "trailer", [](uint32_t v) {
    return Upload(MeshUpload(
        FreshName(), [v](auto& m) { m.back().mutable_trailer()->set_crc32c(v); }, true));
  });
  RunF32("UpsertBodies.bodies[0].shape.mesh.scale", "scale", [](float v) {
    v1::UpsertBodiesRequest request;
    request.set_scene(kScene);
    v1::Body* body = request.add_bodies();
    body->set_id(12);
    body->mutable_shape()->mutable_mesh()->set_asset("cube");
    body->mutable_shape()->mutable_mesh()->set_scale(v);
    v1::WriteResponse response;
    return Of(stub_->UpsertBodies(Context().get(), request, &response));
  });
  RunF32("UpdateBatch.ops[0].upsert.shape.heightfield.scale", "scale", [](float v) {
    v1::UpdateBatch batch;
    batch.set_scene(kScene);
    v1::Body* body = batch.add_ops()->mutable_upsert();
    body->set_id(13);
    body->set_kind(v1::BODY_KIND_STATIC);
    body->mutable_shape()->mutable_heightfield()->set_asset("ground");
    body->mutable_shape()->mutable_heightfield()->set_scale(v);
    return SendBatch(batch);
  });
  // A body of each kind placing the assets, queried at the extremes of a ray's length.
  RunF32("Raycast onto assets: ray.max_distance", "max_distance", [](float v) {
    v1::RaycastRequest request = Ray();
    request.set_mode(v1::MODE_ALL);
    request.mutable_ray()->set_max_distance(v);
    v1::QueryResponse response;
    return Of(stub_->Raycast(Context().get(), request, &response));
  });
}

// ---------------------------------------------------------------------------------------------
// Malformed messages.

// Bytes that are no valid encoding of any message: a field with wire type 7 (none exists).
const std::string kBadTag = std::string("\x0f\x01", 2);
// A length-delimited field 1 claiming 100 bytes where 2 follow.
const std::string kTruncated = std::string("\x0a\x64xy", 4);
// A varint that never ends.
const std::string kEndlessVarint =
    std::string("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 12);

// Every unary rpc of collide.v1.Collide and its request type.
const std::map<std::string, std::string>& UnaryMethods() {
  static const std::map<std::string, std::string> methods = {
      {"CreateScene", "collide.v1.CreateSceneRequest"},
      {"DeleteScene", "collide.v1.DeleteSceneRequest"},
      {"ListScenes", "collide.v1.ListScenesRequest"},
      {"GetScene", "collide.v1.GetSceneRequest"},
      {"UpsertBodies", "collide.v1.UpsertBodiesRequest"},
      {"RemoveBodies", "collide.v1.RemoveBodiesRequest"},
      {"GetBodies", "collide.v1.GetBodiesRequest"},
      {"Raycast", "collide.v1.RaycastRequest"},
      {"SphereCast", "collide.v1.SphereCastRequest"},
      {"Overlap", "collide.v1.OverlapRequest"},
      {"GetServerStats", "collide.v1.GetServerStatsRequest"},
      {"SetSceneMoving", "collide.v1.SetSceneMovingRequest"},
      {"ListAssets", "collide.v1.ListAssetsRequest"},
      {"DeleteAsset", "collide.v1.DeleteAssetRequest"},
  };
  return methods;
}

class MalformedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ServerProcess::Start();
    ASSERT_TRUE(IsOk(server));
    server_ = *std::move(server);
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
    channel_ =
        grpc::CreateCustomChannel(server_->address(), grpc::InsecureChannelCredentials(), args);
    stub_ = v1::Collide::NewStub(channel_);
    v1::CreateSceneRequest create;
    create.set_scene(kScene);
    v1::CreateSceneResponse created;
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->CreateScene(&context, create, &created).ok());
  }

  static std::unique_ptr<grpc::ClientContext> Context() {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + kCallDeadline);
    return context;
  }

  uint64_t Version() {
    v1::GetSceneRequest request;
    request.set_scene(kScene);
    v1::GetSceneResponse response;
    EXPECT_TRUE(stub_->GetScene(Context().get(), request, &response).ok());
    return response.scene().stats().version();
  }

  static std::string Move(uint64_t sequence) {
    v1::UpdateBatch batch;
    batch.set_scene(kScene);
    batch.set_client_id(5);
    batch.set_client_sequence(sequence);
    v1::Body* body = batch.add_ops()->mutable_upsert();
    body->set_id(sequence);
    body->mutable_shape()->mutable_sphere()->set_radius(1);
    return batch.SerializeAsString();
  }

  std::unique_ptr<ServerProcess> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Collide::Stub> stub_;
};

TEST_F(MalformedTest, EveryUnaryRpcRefusesABodyThatDoesNotParse) {
  const std::map<std::string, std::string>& methods = UnaryMethods();
  for (const auto& [method, type] : methods) {
    for (const std::string& bytes : {kBadTag, kTruncated, kEndlessVarint}) {
      auto context = Context();
      const grpc::Status status = RawUnaryCall(
          channel_, absl::StrCat("/collide.v1.Collide/", method), bytes, context.get());
      EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << method;
      EXPECT_EQ(status.error_message(),
                absl::StrCat("request: not a valid ", type, " message (", bytes.size(), " bytes)"))
          << method;
    }
  }
  // A malformed Watch request too.
  auto context = Context();
  RawStream watch(channel_, "/collide.v1.Collide/Watch", context.get());
  ASSERT_TRUE(watch.started());
  watch.Write(kTruncated);
  watch.WritesDone();
  const grpc::Status status = watch.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "request: not a valid collide.v1.WatchRequest message (4 bytes)");
  // The server logged nothing per request (no libprotobuf lines) and still serves.
  EXPECT_FALSE(absl::StrContains(server_->Logs(), "libprotobuf")) << server_->Logs();
  EXPECT_EQ(Version(), 0u);
}

TEST_F(MalformedTest, AnUpdateStreamEndsWithInvalidArgumentAtACorruptMessage) {
  auto context = Context();
  RawStream stream(channel_, "/collide.v1.Collide/UpdateStream", context.get());
  ASSERT_TRUE(stream.started());
  ASSERT_TRUE(stream.Write(Move(1)));
  std::optional<std::string> first = stream.Read();
  ASSERT_TRUE(first.has_value());
  v1::UpdateAck ack;
  ASSERT_TRUE(ack.ParseFromString(*first));
  EXPECT_EQ(ack.version(), 1u);
  stream.Write(kTruncated);
  stream.Write(Move(2));  // Never applied: the stream ended at the corrupt message.
  stream.WritesDone();
  const grpc::Status status = stream.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "messages[1]: not a valid collide.v1.UpdateBatch message (4 bytes)");
  EXPECT_EQ(Version(), 1u);
}

TEST_F(MalformedTest, AnUpdateStreamAcksEveryBatchBeforeTheCorruptOne) {
  auto context = Context();
  RawStream stream(channel_, "/collide.v1.Collide/UpdateStream", context.get());
  ASSERT_TRUE(stream.started());
  // Three batches and a corrupt message, without waiting: all three are acknowledged first.
  for (uint64_t sequence = 1; sequence <= 3; ++sequence) ASSERT_TRUE(stream.Write(Move(sequence)));
  stream.Write(kBadTag);
  stream.WritesDone();
  std::vector<uint64_t> versions;
  while (std::optional<std::string> message = stream.Read()) {
    v1::UpdateAck ack;
    ASSERT_TRUE(ack.ParseFromString(*message));
    EXPECT_FALSE(ack.has_error()) << ack.error().message();
    versions.push_back(ack.version());
  }
  EXPECT_EQ(versions, (std::vector<uint64_t>{1, 2, 3}));
  const grpc::Status status = stream.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "messages[3]: not a valid"))
      << status.error_message();
}

TEST_F(MalformedTest, AQueryStreamEndsWithInvalidArgumentAtACorruptMessage) {
  v1::QueryBatch batch;
  batch.set_scene(kScene);
  batch.add_queries()->mutable_point()->set_radius(1);
  auto context = Context();
  RawStream stream(channel_, "/collide.v1.Collide/QueryStream", context.get());
  ASSERT_TRUE(stream.started());
  ASSERT_TRUE(stream.Write(batch.SerializeAsString()));
  std::optional<std::string> first = stream.Read();
  ASSERT_TRUE(first.has_value());
  v1::QueryBatchResult result;
  ASSERT_TRUE(result.ParseFromString(*first));
  EXPECT_EQ(result.results_size(), 1);
  stream.Write(kEndlessVarint);
  stream.Write(batch.SerializeAsString());
  stream.WritesDone();
  int answers = 0;
  while (stream.Read().has_value()) ++answers;
  EXPECT_EQ(answers, 0) << "the batch after the corrupt message was answered";
  const grpc::Status status = stream.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "messages[1]: not a valid collide.v1.QueryBatch message (12 bytes)");
}

TEST_F(MalformedTest, AnUploadEndsWithInvalidArgumentAtACorruptMessageAndStoresNothing) {
  v1::UploadAssetRequest header;
  header.set_scene(kScene);
  header.mutable_header()->set_name("cube");
  header.mutable_header()->mutable_mesh()->set_vertex_count(3);
  header.mutable_header()->mutable_mesh()->set_index_count(3);
  auto context = Context();
  RawStream stream(channel_, "/collide.v1.Collide/UploadAsset", context.get());
  ASSERT_TRUE(stream.started());
  ASSERT_TRUE(stream.Write(header.SerializeAsString()));
  stream.Write(kTruncated);
  stream.WritesDone();
  while (stream.Read().has_value()) {
  }
  const grpc::Status status = stream.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "messages[1]: not a valid collide.v1.UploadAssetRequest message (4 bytes)");
  v1::ListAssetsRequest list;
  list.set_scene(kScene);
  v1::ListAssetsResponse assets;
  ASSERT_TRUE(stub_->ListAssets(Context().get(), list, &assets).ok());
  EXPECT_EQ(assets.assets_size(), 0);
}

TEST_F(MalformedTest, AnImportSceneEndsWithInvalidArgumentNamingTheCorruptMessage) {
  v1::ExportSceneRequest export_request;
  export_request.set_scene(kScene);
  auto export_context = Context();
  auto reader = stub_->ExportScene(export_context.get(), export_request);
  std::vector<v1::SceneExportMessage> messages;
  v1::SceneExportMessage message;
  while (reader->Read(&message)) messages.push_back(message);
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_EQ(messages.size(), 2u);  // an empty scene: header, trailer
  auto context = Context();
  RawStream stream(channel_, "/collide.v1.Collide/ImportScene", context.get());
  ASSERT_TRUE(stream.started());
  v1::ImportSceneRequest first;
  first.set_scene("copy");
  *first.mutable_message() = messages[0];
  ASSERT_TRUE(stream.Write(first.SerializeAsString()));
  v1::ImportSceneRequest chunk;
  chunk.mutable_message()->mutable_chunk();
  ASSERT_TRUE(stream.Write(chunk.SerializeAsString()));
  stream.Write(kBadTag);
  v1::ImportSceneRequest trailer;
  *trailer.mutable_message() = messages[1];
  stream.Write(trailer.SerializeAsString());
  stream.WritesDone();
  const grpc::Status status = stream.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "messages[2]: not a valid collide.v1.ImportSceneRequest message (2 bytes)");
  v1::GetSceneRequest get;
  get.set_scene("copy");
  v1::GetSceneResponse scene;
  EXPECT_EQ(stub_->GetScene(Context().get(), get, &scene).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

// ---------------------------------------------------------------------------------------------
// Compressed requests.

// Opens `method` (its full name) as a raw stream whose messages are compressed with
// `algorithm`, writes `message`, closes the writes and returns how the stream ended.
grpc::Status SendCompressedOnStream(const std::shared_ptr<grpc::Channel>& channel,
                                    const std::string& method, const std::string& message,
                                    grpc_compression_algorithm algorithm,
                                    std::chrono::seconds deadline) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  context.set_compression_algorithm(algorithm);
  RawStream stream(channel, method, &context);
  stream.Write(message);
  stream.WritesDone();
  return stream.Finish();
}

TEST(Compression, ACompressedRequestIsRefusedBeforeItIsInflated) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(IsOk(server));
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
  auto channel =
      grpc::CreateCustomChannel((*server)->address(), grpc::InsecureChannelCredentials(), args);
  // 200 MiB of zeros: about 200 KiB once gzipped.
  const std::string zeros(200u << 20, '\0');
  const uint64_t before = (*server)->RssBytes();
  for (const char* method : {"/collide.v1.Collide/GetBodies", "/collide.v1.Collide/ListScenes"}) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    context.set_compression_algorithm(GRPC_COMPRESS_GZIP);
    const grpc::Status status = RawUnaryCall(channel, method, zeros, &context);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED) << method;
    EXPECT_TRUE(absl::StrContains(status.error_message(), "gzip")) << status.error_message();
  }
  {
    const grpc::Status status =
        SendCompressedOnStream(channel, "/collide.v1.Collide/UpdateStream", zeros,
                               GRPC_COMPRESS_DEFLATE, std::chrono::seconds(30));
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
    EXPECT_TRUE(absl::StrContains(status.error_message(), "deflate")) << status.error_message();
  }
  const uint64_t after = (*server)->RssBytes();
  std::printf("server RSS before %.1f MB, after three compressed 200 MiB requests %.1f MB\n",
              static_cast<double>(before) / (1 << 20), static_cast<double>(after) / (1 << 20));
  // Nothing was inflated: the server grew by far less than one request's 200 MiB.
  EXPECT_LT(after, before + (32u << 20));
  // And it still serves uncompressed calls on the same channel.
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
  v1::ListScenesResponse list;
  EXPECT_TRUE(v1::Collide::NewStub(channel)->ListScenes(&context, {}, &list).ok());
}

// Every rpc and stream refuses a compressed message the same way (the refusal is the
// transport's, before any handler): UNIMPLEMENTED naming the algorithm, and the server goes on.
TEST(Compression, EveryRpcAndStreamRefusesACompressedMessage) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(IsOk(server));
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
  auto channel =
      grpc::CreateCustomChannel((*server)->address(), grpc::InsecureChannelCredentials(), args);
  const std::string zeros(1u << 20, '\0');
  for (const auto& entry : UnaryMethods()) {
    const std::string& method = entry.first;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
    context.set_compression_algorithm(GRPC_COMPRESS_GZIP);
    const grpc::Status status =
        RawUnaryCall(channel, absl::StrCat("/collide.v1.Collide/", method), zeros, &context);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED) << method;
    EXPECT_TRUE(absl::StrContains(status.error_message(), "gzip"))
        << method << ": " << status.error_message();
  }
  for (const char* method : {"UpdateStream", "QueryStream", "Watch"}) {
    const grpc::Status status =
        SendCompressedOnStream(channel, absl::StrCat("/collide.v1.Collide/", method), zeros,
                               GRPC_COMPRESS_GZIP, kCallDeadline);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED) << method;
    EXPECT_TRUE(absl::StrContains(status.error_message(), "gzip"))
        << method << ": " << status.error_message();
  }
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
  v1::ListScenesResponse list;
  EXPECT_TRUE(v1::Collide::NewStub(channel)->ListScenes(&context, {}, &list).ok());
}

// ---------------------------------------------------------------------------------------------
// One port, one data directory.

TEST(Exclusive, ASecondServerOnTheSamePortFailsFast) {
  auto first = ServerProcess::Start();
  ASSERT_TRUE(IsOk(first));
  ServerConfig config;
  config.address = (*first)->address();
  auto second = ServerProcess::Start(config);
  ASSERT_FALSE(second.ok()) << "a second server bound " << (*first)->address();
  EXPECT_TRUE(absl::StrContains(second.status().message(), "cannot listen on"))
      << second.status().message();
  EXPECT_TRUE(absl::StrContains(second.status().message(), "in use")) << second.status().message();
  // The first one still serves every new connection.
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(IsOk((*first)->NewClient()->ListScenes()));
}

TEST(Exclusive, ASecondServerOnTheSameDataDirectoryFailsFast) {
  auto first = ServerProcess::Start();
  ASSERT_TRUE(IsOk(first));
  ServerConfig config;
  config.extra_flags = {absl::StrCat("--data_dir=", (*first)->data_dir())};
  auto second = ServerProcess::Start(config);
  ASSERT_FALSE(second.ok()) << "a second server opened " << (*first)->data_dir();
  EXPECT_TRUE(absl::StrContains(second.status().message(), "in use by another process"))
      << second.status().message();
  EXPECT_TRUE(IsOk((*first)->NewClient()->ListScenes()));
}

// ---------------------------------------------------------------------------------------------
// The HTTP listeners (/metrics, the viewer) and slow clients on every listener.

// A server with /metrics and the viewer on 127.0.0.1, port 0 each, and a scene of one body.
class Listeners {
 public:
  Listeners() {
    ServerConfig config;
    config.metrics = true;
    config.extra_flags = {"--viewer_address=127.0.0.1:0",
                          absl::StrCat("--viewer_port_file=", files_.File("viewer_port"))};
    auto server = ServerProcess::Start(config);
    EXPECT_TRUE(IsOk(server));
    if (!server.ok()) return;
    server_ = *std::move(server);
    std::ifstream in(files_.File("viewer_port"));
    in >> viewer_port_;
    auto client = server_->NewClient();
    EXPECT_TRUE(IsOk(client->CreateScene(kScene)));
    v1::Body body;
    body.set_id(1);
    body.mutable_shape()->mutable_sphere()->set_radius(1);
    const std::vector<v1::Body> bodies = {body};
    EXPECT_TRUE(IsOk(client->UpsertBodies(kScene, bodies)));
  }

  bool ok() const { return server_ != nullptr && viewer_port_ > 0; }
  ServerProcess& server() { return *server_; }
  int metrics_port() const { return server_->metrics_port(); }
  int viewer_port() const { return viewer_port_; }
  int grpc_port() const {
    int port = 0;
    EXPECT_TRUE(
        absl::SimpleAtoi(server_->address().substr(server_->address().rfind(':') + 1), &port));
    return port;
  }

 private:
  TempDir files_{"listeners"};
  std::unique_ptr<ServerProcess> server_;
  int viewer_port_ = 0;
};

// How long an ordinary request may take while the slow clients hold their connections: far
// less than the 5 s header timeout, so a request answered only after a slow client was cut
// would fail.
constexpr auto kPromptAnswer = std::chrono::milliseconds(3000);

// The beginning of a request a slow client spells out, a byte a second.
const std::string& SlowHttpRequest() {
  static const std::string request =
      "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + std::string(200, 'a') + "\r\n\r\n";
  return request;
}

// The HTTP/2 connection preface and an empty SETTINGS frame, spelled out a byte a second.
const std::string& SlowHttp2Preface() {
  static const std::string preface =
      std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + std::string("\0\0\0\4\0\0\0\0\0", 9);
  return preface;
}

TEST(SlowClients, EveryListenerAnswersWhileHundredsOfSlowClientsHoldConnections) {
  Listeners listeners;
  ASSERT_TRUE(listeners.ok());
  // 100 slow connections on each HTTP listener and on the gRPC port, and 100 silent ones on the
  // gRPC port: before the fix, 100 slow sockets left /metrics without an answer for 8 s and
  // more, and 20 did the same to the viewer.
  SlowClients http({listeners.metrics_port(), listeners.viewer_port()}, 100, SlowHttpRequest());
  SlowClients grpc_slow({listeners.grpc_port()}, 100, SlowHttp2Preface());
  SlowClients grpc_silent({listeners.grpc_port()}, 100, "", /*silent=*/true);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_GE(http.open() + grpc_slow.open() + grpc_silent.open(), 380)
      << "the slow clients could not connect";
  // Several rounds, over more than the header timeout, so the server has cut slow connections
  // and their replacements hold its workers again.
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(7);
  int rounds = 0;
  while (std::chrono::steady_clock::now() < end) {
    ++rounds;
    const HttpAnswer scrape =
        HttpExchange(listeners.metrics_port(), HttpRequestLine("GET", "/metrics"), kPromptAnswer);
    ASSERT_TRUE(scrape.answered) << "round " << rounds << ": /metrics did not answer in 3 s";
    EXPECT_EQ(scrape.status, 200);
    EXPECT_TRUE(absl::StrContains(scrape.body, "collide_scene_bodies")) << scrape.body;
    const HttpAnswer scenes = HttpExchange(
        listeners.viewer_port(), HttpRequestLine("GET", "/viewer/api/scenes"), kPromptAnswer);
    ASSERT_TRUE(scenes.answered) << "round " << rounds << ": the viewer did not answer in 3 s";
    EXPECT_EQ(scenes.status, 200);
    EXPECT_TRUE(absl::StrContains(scenes.body, kScene)) << scenes.body;
    auto client = listeners.server().NewClient();
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kPromptAnswer);
    v1::ListScenesResponse list;
    const grpc::Status listed =
        v1::Collide::NewStub(client->channel())->ListScenes(&context, {}, &list);
    ASSERT_TRUE(listed.ok()) << "round " << rounds << ": " << listed.error_message();
    EXPECT_EQ(list.scenes_size(), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  // The HTTP listeners cut the connections whose headers took longer than the header timeout
  // (5 s): every one of the 200 once, some of their replacements again.
  EXPECT_GE(http.closed_by_server(), 200);
  // gRPC closes a connection whose client sent no SETTINGS within its handshake timeout (10 s,
  // kGrpcHandshakeTimeout; gRPC's default is 120 s): the silent ones, and the slow ones, which
  // are still spelling the preface.
  const auto handshake_end = std::chrono::steady_clock::now() + std::chrono::seconds(8);
  while ((grpc_silent.closed_by_server() < 100 || grpc_slow.closed_by_server() < 100) &&
         std::chrono::steady_clock::now() < handshake_end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_GE(grpc_silent.closed_by_server(), 100);
  EXPECT_GE(grpc_slow.closed_by_server(), 100);
}

TEST(SlowClients, AnHttpRequestWhoseHeadersNeverEndIsCutAfterTheHeaderTimeout) {
  Listeners listeners;
  ASSERT_TRUE(listeners.ok());
  // A byte a second for ever, to each listener: the server closes each connection without an
  // answer within the header timeout (5 s) and a scheduling margin, never waits for the
  // headers' end.
  const std::string endless = "GET /metrics HTTP/1.1\r\nX-Slow: " + std::string(100, 'a');
  SlowClients one({listeners.metrics_port(), listeners.viewer_port()}, 1, endless);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (one.closed_by_server() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(one.closed_by_server(), 2);
}

// Every method against every kind of path: GET and HEAD answer (HEAD: GET's status and
// headers, no body), anything else is 405 with `Allow: GET, HEAD` in the listener's format.
TEST(HttpMethods, TheListenersAnswerGetAndHeadAndRefuseEveryOtherMethod) {
  Listeners listeners;
  ASSERT_TRUE(listeners.ok());
  struct Path {
    int port;
    std::string path;
    int get_status;
    bool json;
  };
  const std::vector<Path> paths = {
      {listeners.metrics_port(), "/metrics", 200, false},
      {listeners.metrics_port(), "/", 404, false},
      {listeners.metrics_port(), "/metrics/more", 404, false},
      {listeners.viewer_port(), "/viewer/", 200, false},
      {listeners.viewer_port(), "/viewer/api/scenes", 200, true},
      {listeners.viewer_port(), absl::StrCat("/viewer/api/scene?name=", kScene), 200, true},
      {listeners.viewer_port(),
       absl::StrCat("/viewer/api/raycast?name=", kScene, "&origin=0,0,-5&direction=0,0,1"), 200,
       true},
      {listeners.viewer_port(), "/viewer/api/nothing", 404, true},
      {listeners.viewer_port(), "/viewer/api/scene?name=none", 404, true},
  };
  const std::vector<std::string> refused = {"POST",    "PUT",      "DELETE", "OPTIONS", "TRACE",
                                            "PATCH",   "PROPFIND", "LOCK",   "COPY",    "MOVE",
                                            "CONNECT", "MKCOL",    "UNLOCK", "BREW"};
  for (const Path& p : paths) {
    const HttpAnswer get = HttpExchange(p.port, HttpRequestLine("GET", p.path));
    ASSERT_TRUE(get.answered) << "GET " << p.path;
    EXPECT_EQ(get.status, p.get_status) << "GET " << p.path << ": " << get.body;
    const HttpAnswer head = HttpExchange(p.port, HttpRequestLine("HEAD", p.path));
    ASSERT_TRUE(head.answered) << "HEAD " << p.path;
    EXPECT_EQ(head.status, get.status) << "HEAD " << p.path;
    EXPECT_EQ(head.Header("Content-Type"), get.Header("Content-Type")) << "HEAD " << p.path;
    EXPECT_TRUE(head.body.empty()) << "HEAD " << p.path << ": " << head.body;
    if (get.status == 200) {
      EXPECT_EQ(head.Header("Content-Length"), absl::StrCat(get.body.size())) << p.path;
    }
    for (const std::string& method : refused) {
      const HttpAnswer answer = HttpExchange(p.port, HttpRequestLine(method, p.path));
      const std::string label = absl::StrCat(method, " ", p.path);
      ASSERT_TRUE(answer.answered) << label;
      EXPECT_EQ(answer.status, 405) << label << ": " << answer.body;
      EXPECT_EQ(answer.Header("Allow"), "GET, HEAD") << label;
      const std::string why = absl::StrCat("method: ", method, " is not allowed (GET, HEAD)");
      if (p.json || p.port == listeners.viewer_port()) {
        EXPECT_EQ(answer.Header("Content-Type"), "application/json") << label;
        EXPECT_EQ(answer.body,
                  absl::StrCat("{\"error\":\"", why, "\",\"code\":\"UNIMPLEMENTED\"}\n"))
            << label;
      } else {
        EXPECT_EQ(answer.body, absl::StrCat(why, "\n")) << label;
      }
    }
  }
  // A request that is not HTTP is a 400 in the listener's format, and a method that is not a
  // token is not quoted back.
  for (const int port : {listeners.metrics_port(), listeners.viewer_port()}) {
    for (const std::string& request :
         {std::string("\x01\x02\x03\r\n\r\n"), std::string("GET /metrics HTTP/9.9\r\n\r\n"),
          std::string("G\"E{T /metrics HTTP/1.1\r\n\r\n"), std::string("GET /metrics\r\n\r\n")}) {
      const HttpAnswer answer = HttpExchange(port, request);
      ASSERT_TRUE(answer.answered) << absl::CEscape(request);
      EXPECT_GE(answer.status, 400) << absl::CEscape(request);
      EXPECT_LT(answer.status, 506) << absl::CEscape(request);
      EXPECT_NE(answer.status, 405) << absl::CEscape(request);
      EXPECT_FALSE(absl::StrContains(answer.body, "{T")) << answer.body;
    }
  }
  // Nothing was changed, and both still serve.
  const std::vector<uint64_t> ids = {1};
  auto bodies = listeners.server().NewClient()->GetBodies(kScene, ids);
  ASSERT_TRUE(IsOk(bodies));
  EXPECT_EQ(bodies->bodies_size(), 1);
  EXPECT_EQ(HttpExchange(listeners.metrics_port(), HttpRequestLine("GET", "/metrics")).status, 200);
}

// ---------------------------------------------------------------------------------------------
// The viewer's API at its edges.

// The longest query string the viewer takes (docs/SECURITY.md).
constexpr size_t kMaxViewerQueryBytes = 8192;

// A text as a query string's value: every byte but letters, digits and -_.~ escaped.
std::string UrlEncoded(absl::string_view text) {
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

// A RaycastRequest (or, `sphere`, a SphereCastRequest) on kScene as JSON, its fields (dotted
// paths below the request, the cast's under `ray` / `cast`) as in `fields` (raw JSON values)
// where given.
std::string CastJson(bool sphere, const std::map<std::string, std::string>& fields) {
  const std::string root = sphere ? "cast" : "ray";
  std::map<std::string, std::string> v = {{"scene", absl::StrCat("\"", kScene, "\"")},
                                          {root + ".origin.x", "0"},
                                          {root + ".origin.y", "0"},
                                          {root + ".origin.z", "-5"},
                                          {root + ".direction.x", "0"},
                                          {root + ".direction.y", "0"},
                                          {root + ".direction.z", "1"},
                                          {root + ".max_distance", "10"}};
  if (sphere) v[root + ".radius"] = "0.5";
  for (const auto& [field, value] : fields) v[field] = value;
  const auto vec = [&](const std::string& name) {
    return absl::StrCat("{\"x\":", v[name + ".x"], ",\"y\":", v[name + ".y"],
                        ",\"z\":", v[name + ".z"], "}");
  };
  std::string cast = absl::StrCat("{\"origin\":", vec(root + ".origin"),
                                  ",\"direction\":", vec(root + ".direction"),
                                  ",\"max_distance\":", v[root + ".max_distance"]);
  if (sphere) absl::StrAppend(&cast, ",\"radius\":", v[root + ".radius"]);
  cast.push_back('}');
  std::string out = absl::StrCat("{\"scene\":", v["scene"], ",\"", root, "\":", cast);
  std::string filter;
  for (const auto& [field, value] : v) {
    if (absl::StartsWith(field, "filter.")) {
      absl::StrAppend(&filter, filter.empty() ? "" : ",", "\"", field.substr(7), "\":", value);
    } else if (field != "scene" && !absl::StartsWith(field, root + ".")) {
      absl::StrAppend(&out, ",\"", field, "\":", value);
    }
  }
  if (!filter.empty()) absl::StrAppend(&out, ",\"filter\":{", filter, "}");
  out.push_back('}');
  return out;
}

// `message` as the viewer prints its answers (protobuf's JSON mapping: the .proto's names, every
// field, a newline): an rpc's answer printed so is, text for text, what the viewer answers the
// same request. (Text, not bytes once parsed: Debian's protobuf 3.21 reads the JSON number -0
// as +0, and a hit's normal may hold -0.)
std::string ViewerJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string out;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(message, &out, options).ok());
  return out + "\n";
}

// The viewer's refusal (collide.viewer.v1.Error), or an empty one when `body` is not one.
viewer::v1::Error ViewerErrorOf(const std::string& body) {
  viewer::v1::Error error;
  if (!google::protobuf::util::JsonStringToMessage(body, &error).ok()) error.Clear();
  return error;
}

// Every parameter of every viewer call and every field of the casts' JSON requests at its edges
// (NaN, the infinities, past float's and double's ranges, 2^64-1 and past it, negative, empty,
// oversized, malformed, unknown, of the wrong type): each request is answered at once with 200
// or a 4xx whose body is a collide.viewer.v1.Error (a code, and the parameter's or field's path);
// a JSON request that is an rpc's message gets the rpc's own answer or refusal, word for word;
// JSON that is not gets `request: ...`. The server serves on, its scene unchanged.
TEST(ViewerEdges, EveryParameterAndFieldAtItsEdgesIsAnsweredOrRefusedNamingIt) {
  Listeners listeners;
  ASSERT_TRUE(listeners.ok());
  auto client = listeners.server().NewClient();
  auto stub = v1::Collide::NewStub(client->channel());
  // Assets for /viewer/api/asset: a two-triangle mesh and a 3 x 3 heightfield with a hole.
  const std::vector<float> wall = {0, -2, 0, 0, 2, 0, 0, 2, 4, 0, -2, 4};
  const std::vector<uint32_t> wall_indices = {0, 3, 2, 0, 2, 1};
  ASSERT_TRUE(
      IsOk(client->UploadMesh(kScene, "wall", {.vertices = wall, .indices = wall_indices})));
  const std::vector<float> heights(9, 1.0f);
  const std::vector<uint8_t> holes = {0b0100};
  ASSERT_TRUE(IsOk(client->UploadHeightfield(
      kScene, "ground", {.rows = 3, .columns = 3, .heights = heights, .holes = holes})));
  int refused = 0;
  int answered = 0;
  // GET `path`: an answer within the deadline, 200 or a 4xx with an Error body; returns it.
  const auto get = [&](const std::string& path) {
    const HttpAnswer answer =
        HttpExchange(listeners.viewer_port(), HttpRequestLine("GET", path), kPromptAnswer);
    EXPECT_TRUE(answer.answered) << path;
    EXPECT_TRUE(answer.status == 200 || (answer.status >= 400 && answer.status < 500))
        << path << ": " << answer.status << " " << answer.body;
    if (answer.status == 200) {
      ++answered;
    } else {
      ++refused;
      const viewer::v1::Error error = ViewerErrorOf(answer.body);
      EXPECT_FALSE(error.error().empty()) << path << ": " << answer.body;
      EXPECT_FALSE(error.code().empty()) << path << ": " << answer.body;
    }
    return answer;
  };

  // The parameters' form: each parameter of each call set to each value.
  const std::vector<std::string> values = {"NaN",
                                           "nan",
                                           "Infinity",
                                           "-Infinity",
                                           "inf",
                                           "1e400",
                                           "-1e400",
                                           "1e39",
                                           "3.4028235e38",
                                           "-3.4028235e38",
                                           "18446744073709551615",
                                           "18446744073709551616",
                                           "-1",
                                           "-0",
                                           "0",
                                           "",
                                           "%00",
                                           "%ZZ",
                                           "1e-50",
                                           "0x10",
                                           "1,2",
                                           "1,2,3,4",
                                           "abc",
                                           "+1",
                                           "%201",
                                           std::string(3000, '9'),
                                           std::string(9000, '7')};
  struct Call {
    std::string call;
    std::string base;  // the other parameters, valid
    std::vector<std::string> params;
  };
  const std::string ray = absl::StrCat("name=", kScene, "&origin=0,0,-5&direction=0,0,1");
  const std::vector<Call> calls = {
      {"scene", absl::StrCat("name=", kScene), {"after", "limit", "at_tick"}},
      {"raycast", ray, {"max_distance", "at_tick"}},
      {"raycast", absl::StrCat("name=", kScene, "&direction=0,0,1"), {"origin"}},
      {"raycast", absl::StrCat("name=", kScene, "&origin=0,0,-5"), {"direction"}},
      {"spherecast", absl::StrCat(ray, "&radius=1"), {"max_distance", "at_tick"}},
      {"spherecast", ray, {"radius"}},
      {"scene", "", {"name"}},
      {"raycast", "origin=0,0,-5&direction=0,0,1", {"name"}},
      {"spherecast", "origin=0,0,-5&direction=0,0,1&radius=1", {"name"}},
      {"asset", absl::StrCat("name=", kScene, "&asset=wall"), {"offset"}},
      {"asset", absl::StrCat("name=", kScene, "&asset=ground"), {"offset"}},
      {"asset", absl::StrCat("name=", kScene), {"asset"}},
      {"asset", "asset=wall", {"name"}},
      // No valid scene name among the values: a stream that opens would never end.
      {"stream", "", {"name"}},
  };
  for (const Call& c : calls) {
    for (const std::string& param : c.params) {
      for (const std::string& value : values) {
        // Vectors get the value in one coordinate, and as the whole parameter.
        std::vector<std::string> forms = {value};
        if (param == "origin" || param == "direction") forms.push_back(absl::StrCat(value, ",0,1"));
        for (const std::string& form : forms) {
          const std::string path = absl::StrCat("/viewer/api/", c.call, "?", c.base,
                                                c.base.empty() ? "" : "&", param, "=", form);
          const HttpAnswer answer = get(path);
          if (answer.status == 200) continue;
          const std::string error = ViewerErrorOf(answer.body).error();
          const std::string label = absl::StrCat(c.call, " ", param, "=", form.substr(0, 40));
          if (path.size() - path.find('?') - 1 > kMaxViewerQueryBytes) {
            EXPECT_TRUE(absl::StartsWith(error, "query: ")) << label << ": " << error;
          } else {
            EXPECT_TRUE(absl::StartsWith(error, absl::StrCat(param, ": ")))
                << label << ": " << error;
          }
        }
      }
    }
  }

  // The JSON form: each field of each cast's request set to each value of its type.
  const std::vector<std::string> floats = {"\"NaN\"",
                                           "\"Infinity\"",
                                           "\"-Infinity\"",
                                           "1e400",
                                           "-1e400",
                                           "1e39",
                                           "3.4028235e38",
                                           "-3.4028235e38",
                                           "1e9",
                                           "1.0000001e9",
                                           "-1",
                                           "-0",
                                           "0",
                                           "1e-50",
                                           "\"abc\"",
                                           "\"1\"",
                                           "true",
                                           "{}",
                                           "[]",
                                           "null",
                                           "\"\"",
                                           "18446744073709551615"};
  const std::vector<std::string> u64s = {"\"18446744073709551615\"",
                                         "18446744073709551615",
                                         "\"18446744073709551616\"",
                                         "\"9223372036854775808\"",
                                         "-1",
                                         "1.5",
                                         "\"x\"",
                                         "\"\"",
                                         "true",
                                         "[]",
                                         "{}",
                                         "null",
                                         "0",
                                         "1"};
  const std::vector<std::string> u32s = {"4294967295", "4294967296", "-1",    "\"x\"", "1e10",
                                         "0",          "1",          "\"7\"", "null"};
  const std::vector<std::string> modes = {
      "7", "-1", "\"MODE_NOPE\"", "\"MODE_ALL\"", "\"MODE_ANY\"", "2147483648", "\"\"", "1.5"};
  std::string many_ids = "[";
  for (int i = 0; i < 100; ++i) absl::StrAppend(&many_ids, i > 0 ? "," : "", "\"", i, "\"");
  many_ids.push_back(']');
  const std::vector<std::string> id_lists = {
      "[\"1\",\"x\"]", many_ids, "{}", "\"1\"", "[null]", "[\"18446744073709551615\"]", "[-1]"};
  const std::vector<std::string> scenes = {
      "\"\"",         "5",     absl::StrCat("\"", std::string(300, 'x'), "\""),
      "\"../x\"",     "null",  "\"\\u0000\"",
      "\"t\\u00ff\"", "\"t\"", "[]",
      "\"nope\""};
  std::vector<std::pair<bool, std::map<std::string, std::string>>> requests;
  for (const bool sphere : {false, true}) {
    const std::string root = sphere ? "cast" : "ray";
    std::vector<std::pair<std::string, const std::vector<std::string>*>> fields = {
        {root + ".origin.x", &floats},
        {root + ".origin.z", &floats},
        {root + ".direction.y", &floats},
        {root + ".direction.z", &floats},
        {root + ".max_distance", &floats},
        {"tick_fraction", &floats},
        {"at_tick", &u64s},
        {"min_version", &u64s},
        {"max_hits", &u32s},
        {"filter.category", &u32s},
        {"filter.mask", &u32s},
        {"mode", &modes},
        {"filter.excluded_ids", &id_lists},
        {"scene", &scenes},
        {"bogus", &u32s},
        {root + ".bogus", &u32s}};
    if (sphere) fields.push_back({root + ".radius", &floats});
    for (const auto& [field, field_values] : fields) {
      for (const std::string& value : *field_values) {
        requests.push_back({sphere, {{field, value}}});
      }
    }
    // With at_tick: tick_fraction's edges; with MODE_ALL: max_hits'.
    for (const std::string& value : floats) {
      requests.push_back({sphere, {{"at_tick", "\"0\""}, {"tick_fraction", value}}});
    }
    for (const std::string& value : u32s) {
      requests.push_back({sphere, {{"mode", "\"MODE_ALL\""}, {"max_hits", value}}});
    }
  }
  for (const auto& [sphere, fields] : requests) {
    const std::string json = CastJson(sphere, fields);
    const std::string call = sphere ? "spherecast" : "raycast";
    const HttpAnswer answer =
        get(absl::StrCat("/viewer/api/", call, "?request=", UrlEncoded(json)));
    const std::string label = absl::StrCat(call, " ", json);
    // What the rpc answers to the same message, when the JSON is one.
    v1::RaycastRequest ray_request;
    v1::SphereCastRequest sphere_request;
    google::protobuf::Message& request =
        sphere ? static_cast<google::protobuf::Message&>(sphere_request) : ray_request;
    if (!google::protobuf::util::JsonStringToMessage(json, &request).ok()) {
      EXPECT_EQ(answer.status, 400) << label;
      EXPECT_TRUE(absl::StartsWith(
          ViewerErrorOf(answer.body).error(),
          absl::StrCat("request: not a ", request.GetDescriptor()->full_name(), " in ")))
          << label << ": " << answer.body;
      continue;
    }
    // The rpc waits for a min_version (the viewer never does): a short deadline cuts the wait.
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + (fields.contains("min_version")
                                                                 ? std::chrono::milliseconds(300)
                                                                 : kCallDeadline));
    v1::QueryResponse response;
    const grpc::Status status = sphere ? stub->SphereCast(&context, sphere_request, &response)
                                       : stub->Raycast(&context, ray_request, &response);
    if (status.ok()) {
      EXPECT_EQ(answer.status, 200) << label << ": " << answer.body;
      EXPECT_EQ(answer.body, ViewerJson(response)) << label;
    } else if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      EXPECT_TRUE(fields.contains("min_version")) << label;
      EXPECT_TRUE(absl::StartsWith(ViewerErrorOf(answer.body).error(), "min_version: "))
          << label << ": " << answer.body;
    } else {
      const viewer::v1::Error error = ViewerErrorOf(answer.body);
      EXPECT_EQ(error.error(), status.error_message()) << label;
      EXPECT_EQ(error.code(),
                absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code())))
          << label;
      // A field path: the request's field that holds the edge, or the scene's.
      bool named = absl::StartsWith(error.error(), "scene: ");
      for (const auto& [field, value] : fields) {
        named = named || absl::StartsWith(error.error(), field.substr(0, field.find('.')));
      }
      EXPECT_TRUE(named) << label << ": " << error.error();
    }
  }
  // /viewer/api/relevant: each field of an observer at each value of its type. The answer is a
  // set (200) or a refusal naming the field, the scene or the request, as the rpc's words.
  const std::vector<std::pair<std::string, const std::vector<std::string>*>> observer_fields = {
      {"id", &u64s},
      {"attached_to", &u64s},
      {"enter_radius", &floats},
      {"leave_radius", &floats},
      {"max_relevant", &u32s},
      {"pose.position.x", &floats},
      {"pose.rotation.w", &floats},
      {"cone.direction.y", &floats},
      {"cone.half_angle", &floats},
      {"cone.leave_half_angle", &floats},
      {"filter.mask", &u32s},
      {"filter.excluded_ids", &id_lists},
      {"bogus", &u32s}};
  for (const auto& [field, field_values] : observer_fields) {
    for (const std::string& value : *field_values) {
      // The field as nested JSON objects, beside valid values of the others.
      std::vector<std::string> path = absl::StrSplit(field, '.');
      std::string nested = value;
      for (auto it = path.rbegin(); it != path.rend(); ++it) {
        nested = absl::StrCat("{\"", *it, "\":", nested, "}");
      }
      nested = nested.substr(1, nested.size() - 2);  // the outer braces
      std::string observer = absl::StrCat("{", nested);
      if (field != "id") absl::StrAppend(&observer, ",\"id\":\"1\"");
      if (field != "enter_radius") absl::StrAppend(&observer, ",\"enter_radius\":2");
      absl::StrAppend(&observer, "}");
      const std::string json =
          absl::StrCat("{\"scene\":\"", kScene, "\",\"observers\":[", observer, "]}");
      const HttpAnswer answer =
          get(absl::StrCat("/viewer/api/relevant?request=", UrlEncoded(json)));
      const std::string label = absl::StrCat("relevant ", json);
      if (answer.status == 200) continue;
      EXPECT_EQ(answer.status, 400) << label << ": " << answer.body;
      const std::string error = ViewerErrorOf(answer.body).error();
      EXPECT_TRUE(absl::StartsWith(error, "observers[0].") || absl::StartsWith(error, "request: "))
          << label << ": " << error;
    }
  }

  // Whole requests that are not the message: empty, cut, of another type, nested past the
  // parser's depth, oversized (past the API's 8 KiB, and past the HTTP server's 16 KiB).
  std::string deep = "{\"ray\":";
  for (int i = 0; i < 200; ++i) absl::StrAppend(&deep, "{\"origin\":");
  for (const std::string& json :
       {std::string(""), std::string("{"), std::string("[]"), std::string("\"x\""),
        std::string("1"), std::string("null"), std::string("{\"scene\":\"t\"}garbage"), deep,
        std::string(3000, '['), absl::StrCat("{\"scene\":\"", std::string(3000, 'x'), "\"}"),
        std::string(6000, ' ')}) {
    const HttpAnswer answer = get(absl::StrCat("/viewer/api/raycast?request=", UrlEncoded(json)));
    EXPECT_GE(answer.status, 400) << json.substr(0, 80);
    const std::string error = ViewerErrorOf(answer.body).error();
    // (A message with a scene but no ray is one: its absent ray's direction is refused.)
    EXPECT_TRUE(absl::StartsWith(error, "request: ") || absl::StartsWith(error, "query: ") ||
                absl::StartsWith(error, "ray.direction: "))
        << json.substr(0, 80) << ": " << error;
  }
  EXPECT_GT(refused, 500);
  EXPECT_GT(answered, 50);

  // Nothing changed, and the server serves on, over both APIs.
  const std::vector<uint64_t> ids = {1};
  auto bodies = client->GetBodies(kScene, ids);
  ASSERT_TRUE(IsOk(bodies));
  EXPECT_EQ(bodies->bodies_size(), 1);
  EXPECT_EQ(bodies->version(), 1u);
  EXPECT_EQ(
      HttpExchange(listeners.viewer_port(), HttpRequestLine("GET", "/viewer/api/scenes")).status,
      200);
}

// ---------------------------------------------------------------------------------------------
// Every flag of collide-server at its extremes.

struct FlagInfo {
  std::string name;
  std::string default_value;
};

// The flags `collide-server --help` lists (those of server/main.cc), with their defaults.
std::vector<FlagInfo> ServerFlags() {
  const CommandResult help = RunCommand({testing::ServerBinaryPath(), "--help"});
  std::vector<FlagInfo> flags;
  const std::string text = help.out + help.err;
  size_t at = 0;
  while ((at = text.find("\n    --", at)) != std::string::npos) {
    at += 7;
    const size_t name_end = text.find(' ', at);
    FlagInfo flag{text.substr(at, name_end - at), ""};
    const size_t default_at = text.find("default: ", name_end);
    if (default_at != std::string::npos) {
      const size_t end = text.find(";\n", default_at);
      flag.default_value = text.substr(default_at + 9, end - default_at - 9);
    }
    flags.push_back(flag);
  }
  return flags;
}

TEST(FlagExtremes, EveryFlagIsRefusedWithItsNameOrServesAtItsExtremes) {
  const std::vector<FlagInfo> flags = ServerFlags();
  // The list is read from --help: a flag added later is covered the day it is added.
  ASSERT_GE(flags.size(), 45u);
  int refused = 0;
  int served = 0;
  std::vector<std::string> accepted;
  for (const FlagInfo& flag : flags) {
    // The harness's own flags: an empty port file would leave it waiting for the port.
    if (flag.name == "port_file") continue;
    double unused = 0;
    const bool numeric = absl::SimpleAtod(flag.default_value, &unused);
    std::vector<std::string> values = {""};
    if (numeric) {
      values = {"", "-1", "18446744073709551615", "9223372036854775808", "nan", "-inf", "1e999"};
    }
    for (const std::string& value : values) {
      const std::string argument = absl::StrCat("--", flag.name, "=", value);
      // Refused: exit 1 (Abseil's parser) or 2 (ServerOptions::Validate), never a signal, before
      // anything is written, with the flag's name in the message.
      // First Abseil's parser alone (--only_check_args: exit 0 once every value parsed).
      const CommandResult run = RunCommand(
          {testing::ServerBinaryPath(), "--log_level=warn", argument, "--only_check_args"});
      if (run.exit_code != 0) {
        ++refused;
        EXPECT_TRUE(run.exit_code == 1 || run.exit_code == 2) << argument << ": " << run.exit_code;
        EXPECT_TRUE(absl::StrContains(run.err, flag.name)) << argument << ": " << run.err;
        continue;
      }
      // Accepted by the parser: Validate and the start must accept it too, and the server
      // serves with it.
      ServerConfig config;
      config.extra_flags = {argument};
      auto server = ServerProcess::Start(config);
      if (!server.ok()) {
        ++refused;
        const std::string message(server.status().message());
        EXPECT_TRUE(absl::StrContains(message, "exited with 2") ||
                    absl::StrContains(message, "exited with 1"))
            << argument << ": " << message;
        EXPECT_TRUE(absl::StrContains(message, flag.name)) << argument << ": " << message;
        continue;
      }
      ++served;
      accepted.push_back(argument);
      EXPECT_TRUE(IsOk((*server)->NewClient()->ListScenes())) << argument;
    }
  }
  std::printf("flags at their extremes: %d refused, %d served (%s)\n", refused, served,
              absl::StrJoin(accepted, " ").c_str());
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace collide::integration
