// A table of bad requests, each with the status code and the field path the contract names
// (tests compare the code exactly and check that the message starts with the path). One server
// runs the whole table, with a token file and small batch limits; afterwards it still answers,
// and the scene the bad requests aimed at is unchanged (same version, same bodies). Stream cases
// check that the stream goes on after the error: the next good batch is answered.

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/cpp/asset_digest.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_status.h"
#include "gtest/gtest.h"
#include "integration/reference.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using absl::StatusCode;
using client::MakeBody;
using client::MakeBox;
using client::MakeCapsule;
using client::MakePose;
using client::MakeQuat;
using client::MakeSphere;
using client::MakeVec3;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

constexpr char kTokens[] =
    "# token role [prefixes]\n"
    "admin-token admin\n"
    "writer-token writer\n"
    "\n"
    "reader-token reader\n"
    "team-writer writer team-,crew-\n"
    "team-reader reader team-\n";
constexpr char kAdmin[] = "admin-token";
constexpr char kWriter[] = "writer-token";
constexpr char kReader[] = "reader-token";
constexpr char kTeamWriter[] = "team-writer";
constexpr char kTeamReader[] = "team-reader";

// The server's limits for this test (see ServerConfig below); max_hits and max_excluded_ids
// keep their defaults.
constexpr int kMaxBatchOps = 100;
constexpr int kMaxQueriesPerBatch = 100;
constexpr uint32_t kMaxHits = 4096;
constexpr int kMaxExcludedIds = 64;

std::vector<v1::Body> ArenaBodies() {
  return {MakeBody(1, MakeSphere(0.5f), MakePose(MakeVec3(0, 0, 5))),
          MakeBody(2, MakeBox(1, 1, 1), MakePose(MakeVec3(3, 0, 5), MakeQuat(0, 0, 0.6f, 0.8f))),
          client::MakeStaticBody(3, MakeCapsule(0.5f, 1), MakePose(MakeVec3(-3, 0, 5)))};
}

// One bad request: who sends it, what comes back.
struct BadCase {
  std::string name;
  StatusCode code;
  std::string path;  // The message's required prefix ("" for auth errors: any message).
  std::function<absl::Status()> run;
};

class BadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerConfig config;
    config.token_file_contents = kTokens;
    // Debug logging, to check that no token ever reaches the log.
    config.extra_flags = {absl::StrCat("--max_batch_ops=", kMaxBatchOps),
                          absl::StrCat("--max_queries_per_batch=", kMaxQueriesPerBatch),
                          "--log_level=debug"};
    auto server = ServerProcess::Start(config);
    ASSERT_TRUE(IsOk(server));
    server_ = *std::move(server);
    client::Client& admin = Client(kAdmin);
    ASSERT_TRUE(IsOk(admin.CreateScene("arena")));
    ASSERT_TRUE(IsOk(admin.UpsertBodies("arena", ArenaBodies())));
    ASSERT_TRUE(IsOk(admin.CreateScene("team-scratch")));
    ASSERT_TRUE(IsOk(admin.UpsertBodies(
        "team-scratch",
        std::vector<v1::Body>{MakeBody(1, MakeSphere(1), MakePose(MakeVec3(0, 0, 0)))})));
    // Level geometry: a one-triangle mesh in arena (no body places it), and one in
    // team-scratch that body 2 places.
    ASSERT_TRUE(IsOk(admin.UploadMesh("arena", "tri", TriangleMesh())));
    ASSERT_TRUE(IsOk(admin.UploadMesh("team-scratch", "tri", TriangleMesh())));
    ASSERT_TRUE(IsOk(admin.UpsertBodies(
        "team-scratch",
        std::vector<v1::Body>{MakeBody(2, client::MakeMesh("tri"), MakePose(MakeVec3(5, 0, 0)))})));
    auto arena = admin.GetScene("arena");
    ASSERT_TRUE(IsOk(arena));
    arena_version_ = arena->stats().version();
  }

  static client::MeshArrays TriangleMesh() {
    static const float kVertices[] = {0, 0, 0, 1, 0, 0, 0, 0, 1};
    static const uint32_t kIndices[] = {0, 2, 1};
    return client::MeshArrays{kVertices, kIndices};
  }

  // An UploadAsset call of `messages` as `token` sends them, the last a trailer sealed over the
  // chunks between (its counts and CRC) unless `seal` is false.
  // Messages in `after` follow the trailer.
  absl::Status RawUpload(const std::string& token, std::vector<v1::UploadAssetRequest> messages,
                         bool seal = true, std::vector<v1::UploadAssetRequest> after = {}) {
    client::Client& client = Client(token);
    if (seal) {
      v1::AssetTrailer* trailer = messages.back().mutable_trailer();
      uint32_t crc = 0;
      uint64_t floats = 0, indices = 0, heights = 0, chunks = 0;
      for (size_t i = 1; i + 1 < messages.size(); ++i) {
        const v1::AssetChunk& c = messages[i].chunk();
        crc = client::Crc32cExtend(crc, c.vertices().data(), c.vertices_size() * 4);
        crc = client::Crc32cExtend(crc, c.indices().data(), c.indices_size() * 4);
        crc = client::Crc32cExtend(crc, c.heights().data(), c.heights_size() * 4);
        floats += c.vertices_size();
        indices += c.indices_size();
        heights += c.heights_size();
        ++chunks;
      }
      trailer->set_vertex_count(floats / 3);
      trailer->set_index_count(indices);
      trailer->set_sample_count(heights);
      trailer->set_chunk_count(chunks);
      trailer->set_crc32c(crc);
    }
    std::unique_ptr<grpc::ClientContext> context =
        client.NewContext(messages.front().scene(), /*unary=*/false);
    v1::UploadAssetResponse response;
    auto stub = v1::Collide::NewStub(client.channel());
    auto writer = stub->UploadAsset(context.get(), &response);
    messages.insert(messages.end(), after.begin(), after.end());
    for (const v1::UploadAssetRequest& m : messages) {
      if (!writer->Write(m)) break;
    }
    writer->WritesDone();
    return client::FromGrpcStatus(writer->Finish());
  }

  // A mesh upload to arena: header (vertex and index counts), one chunk, a trailer.
  static std::vector<v1::UploadAssetRequest> MeshMessages(const std::string& name,
                                                          std::vector<float> vertices,
                                                          std::vector<uint32_t> indices) {
    std::vector<v1::UploadAssetRequest> m(3);
    m[0].set_scene("arena");
    m[0].mutable_header()->set_name(name);
    m[0].mutable_header()->mutable_mesh()->set_vertex_count(vertices.size() / 3);
    m[0].mutable_header()->mutable_mesh()->set_index_count(indices.size());
    for (float v : vertices) m[1].mutable_chunk()->add_vertices(v);
    for (uint32_t i : indices) m[1].mutable_chunk()->add_indices(i);
    m[2].mutable_trailer();
    return m;
  }

  // A heightfield upload to arena of rows x columns zero heights.
  static std::vector<v1::UploadAssetRequest> FieldMessages(uint64_t rows, uint64_t columns,
                                                           size_t heights) {
    std::vector<v1::UploadAssetRequest> m(3);
    m[0].set_scene("arena");
    m[0].mutable_header()->set_name("field");
    v1::HeightfieldAssetSize* size = m[0].mutable_header()->mutable_heightfield();
    size->set_rows(rows);
    size->set_columns(columns);
    size->set_spacing_x(1);
    size->set_spacing_z(1);
    for (size_t i = 0; i < heights; ++i) m[1].mutable_chunk()->add_heights(0.0f);
    m[2].mutable_trailer();
    return m;
  }

  client::Client& Client(const std::string& token) {
    std::unique_ptr<client::Client>& client = clients_[token];
    if (client == nullptr) client = server_->NewClient(token);
    return *client;
  }

  // The long-lived update stream of a token.
  client::UpdateWriter& Writer(const std::string& token) {
    std::unique_ptr<client::UpdateWriter>& writer = writers_[token];
    if (writer == nullptr) {
      writer = *Client(token).OpenUpdateStream(/*scene=*/"", /*client_id=*/100 + writers_.size());
    }
    return *writer;
  }

  // The long-lived query stream of a token.
  client::QueryStreamSession& Session(const std::string& token) {
    std::unique_ptr<client::QueryStreamSession>& session = sessions_[token];
    if (session == nullptr) session = *Client(token).OpenQueryStream(/*scene=*/"");
    return *session;
  }

  // A batch every writer may send: moves team-scratch's body a little further each time.
  v1::UpdateBatch GoodBatch() {
    v1::UpdateBatch batch;
    batch.set_scene("team-scratch");
    *batch.add_ops() = client::MakeSetPoseOp(1, MakePose(MakeVec3(0, 0, 0.01f * ++good_batches_)));
    return batch;
  }

  // Sends `bad` on the token's update stream and returns the ack's error; then checks that the
  // stream goes on (a good batch is acknowledged). A stream that stopped is an INTERNAL error.
  // An interest stream opened with `first`'s observers (and, after its snapshot, `second`'s):
  // how it ended. OK when it answered every message.
  absl::Status InterestCase(const std::string& token, const std::string& scene,
                            std::vector<v1::Observer> first,
                            std::optional<std::vector<v1::Observer>> second = std::nullopt,
                            std::vector<uint64_t> second_removes = {}) {
    auto stream = Client(token).OpenInterest(scene, std::move(first), {.reconnect = false});
    if (!stream.ok()) return stream.status();
    absl::StatusOr<v1::InterestResponse> message = (*stream)->Read();
    if (!message.ok() || !second.has_value()) return message.status();
    (*stream)->Upsert(*second).IgnoreError();
    if (!second_removes.empty()) (*stream)->Remove(second_removes).IgnoreError();
    return (*stream)->Read().status();
  }

  absl::Status UpdateCase(const std::string& token, v1::UpdateBatch bad) {
    client::UpdateWriter& writer = Writer(token);
    auto ack = writer.Apply(std::move(bad));
    if (!ack.ok()) return ack.status();
    absl::Status error = client::AckStatus(*ack);
    auto next = writer.Apply(GoodBatch());
    if (!next.ok() || !client::AckStatus(*next).ok()) {
      return absl::InternalError(absl::StrCat(
          "the stream did not go on after \"", error.ToString(),
          "\": ", next.ok() ? client::AckStatus(*next).ToString() : next.status().ToString()));
    }
    return error;
  }

  // Sends a batch of [good query, `bad`] on the token's query stream. Returns the bad query's
  // error (or the whole batch's); checks that the good query was answered and that the stream
  // goes on.
  absl::Status QueryCase(const std::string& token, const std::string& scene, v1::Query bad,
                         int extra_good = 0) {
    v1::QueryBatch batch;
    batch.set_scene(scene);
    v1::Query good =
        client::MakeRaycastQuery(1, client::MakeRaycast(MakeVec3(0, 0, 0), MakeVec3(0, 0, 1), 100));
    *batch.add_queries() = good;
    bad.set_request_id(2);
    *batch.add_queries() = bad;
    for (int i = 0; i < extra_good; ++i) *batch.add_queries() = good;
    return RunQueryBatch(token, batch);
  }

  absl::Status RunQueryBatch(const std::string& token, const v1::QueryBatch& batch) {
    client::QueryStreamSession& session = Session(token);
    auto result = session.Run(batch);
    if (!result.ok()) return result.status();
    absl::Status error = client::BatchStatus(*result);
    if (error.ok()) {
      if (result->results_size() != batch.queries_size()) {
        return absl::InternalError("one result per query expected");
      }
      if (!client::ResultStatus(result->results(0)).ok() || result->results(0).hits_size() != 1) {
        return absl::InternalError(absl::StrCat("the good query was not answered: ",
                                                result->results(0).ShortDebugString()));
      }
      error = client::ResultStatus(result->results(1));
    }
    v1::QueryBatch next;
    next.set_scene("team-scratch");
    *next.add_queries() = client::MakeRaycastQuery(
        7, client::MakeRaycast(MakeVec3(0, 0, -10), MakeVec3(0, 0, 1), 100));
    auto answer = session.Run(next);
    if (!answer.ok() || !client::BatchStatus(*answer).ok() || answer->results_size() != 1 ||
        answer->results(0).hits_size() != 1) {
      return absl::InternalError(absl::StrCat(
          "the stream did not go on after \"", error.ToString(),
          "\": ", answer.ok() ? answer->ShortDebugString() : answer.status().ToString()));
    }
    return error;
  }

  std::unique_ptr<ServerProcess> server_;
  std::map<std::string, std::unique_ptr<client::Client>> clients_;
  std::map<std::string, std::unique_ptr<client::UpdateWriter>> writers_;
  std::map<std::string, std::unique_ptr<client::QueryStreamSession>> sessions_;
  uint64_t arena_version_ = 0;
  int good_batches_ = 0;
};

// Requests builders for the table.
v1::RaycastRequest Ray(v1::Vec3 origin, v1::Vec3 direction, float max_distance) {
  v1::RaycastRequest request;
  request.set_scene("arena");
  *request.mutable_ray() = client::MakeRaycast(origin, direction, max_distance);
  return request;
}

v1::SphereCastRequest Cast(v1::Vec3 origin, v1::Vec3 direction, float max_distance, float radius) {
  v1::SphereCastRequest request;
  request.set_scene("arena");
  *request.mutable_cast() = client::MakeSphereCast(origin, direction, max_distance, radius);
  return request;
}

v1::OverlapRequest OverlapOf(v1::Shape shape, v1::Pose pose) {
  v1::OverlapRequest request;
  request.set_scene("arena");
  *request.mutable_overlap()->mutable_shape() = shape;
  *request.mutable_overlap()->mutable_pose() = pose;
  return request;
}

v1::UpsertBodiesRequest Upsert(std::vector<v1::Body> bodies) {
  v1::UpsertBodiesRequest request;
  request.set_scene("arena");
  for (v1::Body& body : bodies) *request.add_bodies() = std::move(body);
  return request;
}

v1::Body Sphere(uint64_t id, float radius, v1::Pose pose) {
  return MakeBody(id, MakeSphere(radius), pose);
}

v1::UpdateBatch Batch(std::vector<v1::UpdateOp> ops, const std::string& scene = "arena") {
  v1::UpdateBatch batch;
  batch.set_scene(scene);
  for (v1::UpdateOp& op : ops) *batch.add_ops() = std::move(op);
  return batch;
}

v1::UpdateBatch Moves(std::vector<uint64_t> ids, std::vector<float> poses) {
  v1::UpdateBatch batch;
  batch.set_scene("arena");
  for (uint64_t id : ids) batch.mutable_moves()->add_ids(id);
  for (float f : poses) batch.mutable_moves()->add_poses(f);
  return batch;
}

v1::Pose At(float x, float y, float z) { return MakePose(MakeVec3(x, y, z)); }

// An observer at the origin with these radii.
v1::Observer Watcher(uint64_t id, float enter, float leave) {
  v1::Observer o;
  o.set_id(id);
  o.set_enter_radius(enter);
  o.set_leave_radius(leave);
  return o;
}

TEST_F(BadInputTest, EachBadRequestGetsItsCodeAndFieldPathAndChangesNothing) {
  const v1::Vec3 origin = MakeVec3(0, 0, 0);
  const v1::Vec3 up = MakeVec3(0, 0, 1);
  auto admin = [this]() -> client::Client& { return Client(kAdmin); };
  // One interest message through the raw stub (the client library never sends an id twice in a
  // message, nor one it both upserts and removes): how the stream ended.
  auto raw_interest = [&](v1::InterestRequest request) {
    auto stub = v1::Collide::NewStub(admin().channel());
    auto context = admin().NewContext("arena", /*unary=*/false);
    auto stream = stub->Interest(context.get());
    request.set_scene("arena");
    stream->Write(request);
    v1::InterestResponse response;
    if (stream->Read(&response)) {
      context->TryCancel();
      stream->Finish().ok();
      return absl::OkStatus();
    }
    return client::FromGrpcStatus(stream->Finish());
  };
  std::vector<BadCase> cases = {
      // Unary queries.
      {"raycast NaN origin", StatusCode::kInvalidArgument, "ray.origin",
       [&] { return admin().Raycast(Ray(MakeVec3(kNaN, 0, 0), up, 10)).status(); }},
      {"raycast infinite origin", StatusCode::kInvalidArgument, "ray.origin",
       [&] { return admin().Raycast(Ray(MakeVec3(0, -kInf, 0), up, 10)).status(); }},
      {"raycast infinite direction", StatusCode::kInvalidArgument, "ray.direction",
       [&] { return admin().Raycast(Ray(origin, MakeVec3(0, 0, kInf), 10)).status(); }},
      {"raycast NaN direction", StatusCode::kInvalidArgument, "ray.direction",
       [&] { return admin().Raycast(Ray(origin, MakeVec3(kNaN, 0, 1), 10)).status(); }},
      {"raycast zero direction", StatusCode::kInvalidArgument, "ray.direction",
       [&] { return admin().Raycast(Ray(origin, MakeVec3(0, 0, 0), 10)).status(); }},
      {"raycast negative max_distance", StatusCode::kInvalidArgument, "ray.max_distance",
       [&] { return admin().Raycast(Ray(origin, up, -1)).status(); }},
      {"raycast NaN max_distance", StatusCode::kInvalidArgument, "ray.max_distance",
       [&] { return admin().Raycast(Ray(origin, up, kNaN)).status(); }},
      {"raycast infinite max_distance", StatusCode::kInvalidArgument, "ray.max_distance",
       [&] { return admin().Raycast(Ray(origin, up, kInf)).status(); }},
      {"raycast max_hits over the limit", StatusCode::kInvalidArgument, "max_hits",
       [&] {
         v1::RaycastRequest request = Ray(origin, up, 10);
         request.set_mode(v1::MODE_ALL);
         request.set_max_hits(kMaxHits + 1);
         return admin().Raycast(request).status();
       }},
      {"raycast too many excluded ids", StatusCode::kInvalidArgument, "filter.excluded_ids",
       [&] {
         v1::RaycastRequest request = Ray(origin, up, 10);
         for (int i = 0; i <= kMaxExcludedIds; ++i) request.mutable_filter()->add_excluded_ids(i);
         return admin().Raycast(request).status();
       }},
      {"raycast unknown scene", StatusCode::kNotFound, "scene",
       [&] {
         v1::RaycastRequest request = Ray(origin, up, 10);
         request.set_scene("nowhere");
         return admin().Raycast(request).status();
       }},
      {"spherecast negative radius", StatusCode::kInvalidArgument, "cast.radius",
       [&] { return admin().SphereCast(Cast(origin, up, 10, -0.5f)).status(); }},
      {"spherecast infinite radius", StatusCode::kInvalidArgument, "cast.radius",
       [&] { return admin().SphereCast(Cast(origin, up, 10, kInf)).status(); }},
      {"spherecast NaN origin", StatusCode::kInvalidArgument, "cast.origin",
       [&] { return admin().SphereCast(Cast(MakeVec3(0, kNaN, 0), up, 10, 1)).status(); }},
      {"spherecast zero direction", StatusCode::kInvalidArgument, "cast.direction",
       [&] { return admin().SphereCast(Cast(origin, MakeVec3(0, 0, 0), 10, 1)).status(); }},
      {"spherecast negative max_distance", StatusCode::kInvalidArgument, "cast.max_distance",
       [&] { return admin().SphereCast(Cast(origin, up, -2, 1)).status(); }},
      {"overlap missing shape", StatusCode::kInvalidArgument, "overlap.shape",
       [&] { return admin().Overlap(OverlapOf(v1::Shape(), At(0, 0, 5))).status(); }},
      {"overlap zero quaternion", StatusCode::kInvalidArgument, "overlap.pose.rotation",
       [&] {
         return admin()
             .Overlap(OverlapOf(MakeSphere(1), MakePose(MakeVec3(0, 0, 5), MakeQuat(0, 0, 0, 0))))
             .status();
       }},
      {"overlap non-unit quaternion", StatusCode::kInvalidArgument, "overlap.pose.rotation",
       [&] {
         return admin()
             .Overlap(OverlapOf(MakeBox(1, 1, 1),
                                MakePose(MakeVec3(0, 0, 5), MakeQuat(0, 0, 0.5f, 0.5f))))
             .status();
       }},
      {"overlap NaN position", StatusCode::kInvalidArgument, "overlap.pose.position",
       [&] { return admin().Overlap(OverlapOf(MakeSphere(1), At(kNaN, 0, 5))).status(); }},
      {"overlap negative sphere radius", StatusCode::kInvalidArgument,
       "overlap.shape.sphere.radius",
       [&] { return admin().Overlap(OverlapOf(MakeSphere(-1), At(0, 0, 5))).status(); }},
      {"overlap negative box half extent", StatusCode::kInvalidArgument,
       "overlap.shape.box.half_extents",
       [&] { return admin().Overlap(OverlapOf(MakeBox(1, -1, 1), At(0, 0, 5))).status(); }},
      {"overlap NaN capsule half height", StatusCode::kInvalidArgument,
       "overlap.shape.capsule.half_height",
       [&] { return admin().Overlap(OverlapOf(MakeCapsule(1, kNaN), At(0, 0, 5))).status(); }},

      // Level geometry: uploads (none may store anything), bodies placing assets, deletions.
      {"upload NaN vertex", StatusCode::kInvalidArgument, "vertices[1]: must be finite",
       [&] {
         return RawUpload(kWriter, MeshMessages("bad", {0, 0, 0, 1, kNaN, 0, 0, 0, 1}, {0, 1, 2}));
       }},
      {"upload infinite vertex", StatusCode::kInvalidArgument, "vertices[2]: must be finite",
       [&] {
         return RawUpload(kWriter, MeshMessages("bad", {0, 0, 0, 1, 0, 0, 0, 0, -kInf}, {0, 1, 2}));
       }},
      {"upload vertex at 1e30", StatusCode::kInvalidArgument, "vertices[0]: must be within",
       [&] {
         return RawUpload(kWriter, MeshMessages("bad", {1e30f, 0, 0, 1, 0, 0, 0, 0, 1}, {0, 1, 2}));
       }},
      {"upload vertex at -1e30", StatusCode::kInvalidArgument, "vertices[0]: must be within",
       [&] {
         return RawUpload(kWriter,
                          MeshMessages("bad", {-1e30f, 0, 0, 1, 0, 0, 0, 0, 1}, {0, 1, 2}));
       }},
      {"upload index out of range", StatusCode::kInvalidArgument,
       "indices[2]: must be below the vertex count",
       [&] {
         return RawUpload(kWriter, MeshMessages("bad", {0, 0, 0, 1, 0, 0, 0, 0, 1}, {0, 1, 3}));
       }},
      {"upload index 2^32 - 1", StatusCode::kInvalidArgument,
       "indices[0]: 4294967295 is not a vertex index",
       [&] {
         return RawUpload(kWriter,
                          MeshMessages("bad", {0, 0, 0, 1, 0, 0, 0, 0, 1}, {0xFFFFFFFFu, 1, 2}));
       }},
      {"upload empty mesh", StatusCode::kInvalidArgument, "header.mesh.vertex_count",
       [&] { return RawUpload(kWriter, MeshMessages("bad", {}, {})); }},
      {"upload zero-area and sliver triangles are kept", StatusCode::kAlreadyExists, "header.name",
       [&] {
         // Accepted as "sliver" (a repeated vertex, collinear ones, a sliver), then refused as
         // other content under the same name.
         absl::Status first =
             RawUpload(kWriter, MeshMessages("sliver", {0, 0, 0, 1, 0, 0, 2, 0, 0, 1, 1e-7f, 0},
                                             {0, 0, 1, 0, 1, 2, 0, 2, 3}));
         if (!first.ok()) return first;
         return RawUpload(kWriter, MeshMessages("sliver", {0, 0, 0, 1, 0, 0, 0, 0, 1}, {0, 1, 2}));
       }},
      {"upload 1 x 1 heightfield", StatusCode::kInvalidArgument, "header.heightfield.rows",
       [&] { return RawUpload(kWriter, FieldMessages(1, 1, 1)); }},
      {"upload 2^32 columns", StatusCode::kInvalidArgument, "header.heightfield.columns",
       [&] { return RawUpload(kWriter, FieldMessages(2, uint64_t{1} << 32, 4)); }},
      {"upload header counting more than it sends", StatusCode::kDataLoss, "trailer",
       [&] {
         auto m = MeshMessages("bad", {0, 0, 0, 1, 0, 0, 0, 0, 1}, {0, 1, 2});
         m[0].mutable_header()->mutable_mesh()->set_vertex_count(4);
         return RawUpload(kWriter, m);
       }},
      {"upload trailer lying about its counts", StatusCode::kDataLoss, "trailer.index_count",
       [&] {
         auto m = MeshMessages("bad2", {0, 0, 0, 1, 0, 0, 0, 0, 1}, {0, 1, 2});
         m[2].mutable_trailer()->set_vertex_count(3);
         m[2].mutable_trailer()->set_index_count(4);
         m[2].mutable_trailer()->set_chunk_count(1);
         return RawUpload(kWriter, m, /*seal=*/false);
       }},
      {"upload chunk after the trailer", StatusCode::kInvalidArgument, "messages[3]",
       [&] {
         auto m = MeshMessages("bad3", {0, 0, 0, 1, 0, 0, 0, 0, 1}, {0, 1, 2});
         return RawUpload(kWriter, m, /*seal=*/true, {m[1]});
       }},
      {"upload second header", StatusCode::kInvalidArgument, "messages[1]: a second header",
       [&] {
         auto m = MeshMessages("bad4", {0, 0, 0, 1, 0, 0, 0, 0, 1}, {0, 1, 2});
         v1::UploadAssetRequest again = m[0];
         again.clear_scene();
         m.insert(m.begin() + 1, again);
         return RawUpload(kWriter, m);
       }},
      {"upload name too long", StatusCode::kInvalidArgument, "header.name",
       [&] {
         return RawUpload(
             kWriter, MeshMessages(std::string(129, 'n'), {0, 0, 0, 1, 0, 0, 0, 0, 1}, {0, 1, 2}));
       }},
      {"upload name not valid", StatusCode::kInvalidArgument, "header.name",
       [&] {
         return RawUpload(kWriter, MeshMessages("../etc", {0, 0, 0, 1, 0, 0, 0, 0, 1}, {0, 1, 2}));
       }},
      {"upload other content under a taken name", StatusCode::kAlreadyExists, "header.name",
       [&] {
         return RawUpload(kWriter, MeshMessages("tri", {0, 0, 0, 2, 0, 0, 0, 0, 1}, {0, 2, 1}));
       }},
      {"upload to an unknown scene", StatusCode::kNotFound, "scene",
       [&] {
         auto m = MeshMessages("x", {0, 0, 0, 1, 0, 0, 0, 0, 1}, {0, 1, 2});
         m[0].set_scene("nowhere");
         return RawUpload(kWriter, m);
       }},
      {"upload by a reader", StatusCode::kPermissionDenied, "",
       [&] {
         return RawUpload(kReader, MeshMessages("x", {0, 0, 0, 1, 0, 0, 0, 0, 1}, {0, 1, 2}));
       }},
      {"upload outside the token's prefix", StatusCode::kPermissionDenied, "",
       [&] {
         return RawUpload(kTeamWriter, MeshMessages("x", {0, 0, 0, 1, 0, 0, 0, 0, 1}, {0, 1, 2}));
       }},
      {"upsert of a missing asset", StatusCode::kNotFound, "bodies[0].shape.mesh.asset",
       [&] {
         return admin()
             .UpsertBodies(Upsert({MakeBody(20, client::MakeMesh("nope"), At(0, 0, 0))}))
             .status();
       }},
      {"upsert of a mesh as a heightfield", StatusCode::kInvalidArgument,
       "bodies[0].shape.heightfield.asset",
       [&] {
         return admin()
             .UpsertBodies(Upsert({MakeBody(20, client::MakeHeightfield("tri"), At(0, 0, 0))}))
             .status();
       }},
      {"upsert of an asset at scale 0", StatusCode::kInvalidArgument, "bodies[0].shape.mesh.scale",
       [&] {
         return admin()
             .UpsertBodies(Upsert({MakeBody(20, client::MakeMesh("tri", 0.0f), At(0, 0, 0))}))
             .status();
       }},
      {"upsert of an asset at scale NaN", StatusCode::kInvalidArgument,
       "bodies[0].shape.mesh.scale",
       [&] {
         return admin()
             .UpsertBodies(Upsert({MakeBody(20, client::MakeMesh("tri", kNaN), At(0, 0, 0))}))
             .status();
       }},
      {"upsert of an asset at a negative scale", StatusCode::kInvalidArgument,
       "bodies[0].shape.mesh.scale",
       [&] {
         return admin()
             .UpsertBodies(Upsert({MakeBody(20, client::MakeMesh("tri", -2.0f), At(0, 0, 0))}))
             .status();
       }},
      {"upsert of an asset at scale 1e30", StatusCode::kInvalidArgument,
       "bodies[0].shape.mesh.scale",
       [&] {
         return admin()
             .UpsertBodies(Upsert({MakeBody(20, client::MakeMesh("tri", 1e30f), At(0, 0, 0))}))
             .status();
       }},
      {"update stream upsert of a missing asset", StatusCode::kNotFound,
       "ops[0].upsert.shape.mesh.asset",
       [&] {
         return UpdateCase(
             kWriter,
             Batch({client::MakeUpsertOp(MakeBody(21, client::MakeMesh("nope"), At(0, 0, 0)))}));
       }},
      {"overlap with a mesh as its shape", StatusCode::kInvalidArgument, "overlap.shape",
       [&] { return admin().Overlap(OverlapOf(client::MakeMesh("tri"), At(0, 0, 5))).status(); }},
      {"delete of an asset a body places", StatusCode::kFailedPrecondition,
       "name: asset \"tri\" is used by body 2",
       [&] { return admin().DeleteAsset("team-scratch", "tri"); }},
      {"delete of an unknown asset", StatusCode::kNotFound, "name: no asset \"nope\"",
       [&] { return admin().DeleteAsset("arena", "nope"); }},
      {"delete of an asset by a reader", StatusCode::kPermissionDenied, "",
       [&] { return Client(kReader).DeleteAsset("arena", "tri"); }},
      {"assets of an unknown scene", StatusCode::kNotFound, "scene",
       [&] { return admin().ListAssets("nowhere").status(); }},

      // Unary writes (all against arena, none may change it).
      {"upsert NaN position", StatusCode::kInvalidArgument, "bodies[1].pose.position",
       [&] {
         return admin()
             .UpsertBodies(Upsert({Sphere(10, 1, At(0, 0, 0)), Sphere(11, 1, At(0, kNaN, 0))}))
             .status();
       }},
      {"upsert negative radius", StatusCode::kInvalidArgument, "bodies[2].shape.sphere.radius",
       [&] {
         return admin()
             .UpsertBodies(Upsert({Sphere(10, 1, At(0, 0, 0)), Sphere(11, 1, At(1, 0, 0)),
                                   Sphere(12, -1, At(2, 0, 0))}))
             .status();
       }},
      // The whole message: the other body it names is in the request's words (bodies[0]).
      {"upsert one id twice", StatusCode::kInvalidArgument,
       "bodies[2].id: body 10 is upserted twice in one batch (first by bodies[0])",
       [&] {
         return admin()
             .UpsertBodies(Upsert({Sphere(10, 1, At(0, 0, 0)), Sphere(11, 1, At(1, 0, 0)),
                                   Sphere(10, 1, At(2, 0, 0))}))
             .status();
       }},
      {"upsert infinite radius", StatusCode::kInvalidArgument, "bodies[0].shape.sphere.radius",
       [&] { return admin().UpsertBodies(Upsert({Sphere(10, kInf, At(0, 0, 0))})).status(); }},
      {"upsert zero quaternion", StatusCode::kInvalidArgument, "bodies[0].pose.rotation",
       [&] {
         return admin()
             .UpsertBodies(Upsert({Sphere(10, 1, MakePose(origin, MakeQuat(0, 0, 0, 0)))}))
             .status();
       }},
      {"upsert non-unit quaternion", StatusCode::kInvalidArgument, "bodies[0].pose.rotation",
       [&] {
         return admin()
             .UpsertBodies(Upsert({Sphere(10, 1, MakePose(origin, MakeQuat(0, 0, 0, 1.01f)))}))
             .status();
       }},
      {"upsert missing shape", StatusCode::kInvalidArgument, "bodies[0].shape",
       [&] {
         return admin().UpsertBodies(Upsert({MakeBody(10, v1::Shape(), At(0, 0, 0))})).status();
       }},
      {"upsert negative box half extent", StatusCode::kInvalidArgument,
       "bodies[0].shape.box.half_extents",
       [&] {
         return admin()
             .UpsertBodies(Upsert({MakeBody(10, MakeBox(-1, 1, 1), At(0, 0, 0))}))
             .status();
       }},
      {"upsert duplicate id", StatusCode::kInvalidArgument, "bodies[1].id",
       [&] {
         return admin()
             .UpsertBodies(Upsert({Sphere(10, 1, At(0, 0, 0)), Sphere(10, 1, At(1, 0, 0))}))
             .status();
       }},
      {"upsert unknown scene", StatusCode::kNotFound, "scene",
       [&] {
         v1::UpsertBodiesRequest request = Upsert({Sphere(10, 1, At(0, 0, 0))});
         request.set_scene("nowhere");
         return admin().UpsertBodies(request).status();
       }},
      {"upsert over max_batch_ops", StatusCode::kResourceExhausted, "bodies",
       [&] {
         std::vector<v1::Body> bodies;
         for (int i = 0; i <= kMaxBatchOps; ++i) bodies.push_back(Sphere(100 + i, 1, At(i, 0, 0)));
         return admin().UpsertBodies(Upsert(bodies)).status();
       }},
      {"remove unknown body", StatusCode::kNotFound, "ids[1]",
       [&] {
         std::vector<uint64_t> ids = {1, 99};
         return admin().RemoveBodies("arena", ids).status();
       }},
      {"remove over max_batch_ops", StatusCode::kResourceExhausted, "ids",
       [&] {
         std::vector<uint64_t> ids;
         for (int i = 0; i <= kMaxBatchOps; ++i) ids.push_back(1000 + i);
         return admin().RemoveBodies("arena", ids).status();
       }},
      {"get bodies unknown scene", StatusCode::kNotFound, "scene",
       [&] { return admin().GetBodies("nowhere").status(); }},

      // Scenes.
      {"create bad scene name", StatusCode::kInvalidArgument, "scene",
       [&] { return admin().CreateScene("bad name!").status(); }},
      {"create scene name starting with a dash", StatusCode::kInvalidArgument, "scene",
       [&] { return admin().CreateScene("-dash").status(); }},
      {"create empty scene name", StatusCode::kInvalidArgument, "scene",
       [&] { return admin().CreateScene("").status(); }},
      {"create scene name of 129 characters", StatusCode::kInvalidArgument, "scene",
       [&] { return admin().CreateScene(std::string(129, 'a')).status(); }},
      {"create duplicate scene", StatusCode::kAlreadyExists, "scene",
       [&] { return admin().CreateScene("arena").status(); }},
      {"create negative fat_margin", StatusCode::kInvalidArgument, "options.fat_margin",
       [&] {
         v1::SceneOptions options;
         options.set_fat_margin(-0.1f);
         return admin().CreateScene("fresh", options).status();
       }},
      {"create NaN fat_margin", StatusCode::kInvalidArgument, "options.fat_margin",
       [&] {
         v1::SceneOptions options;
         options.set_fat_margin(kNaN);
         return admin().CreateScene("fresh", options).status();
       }},
      {"create max_bodies 0", StatusCode::kInvalidArgument, "options.max_bodies",
       [&] {
         v1::SceneOptions options;
         options.set_max_bodies(0);
         return admin().CreateScene("fresh", options).status();
       }},
      {"get unknown scene", StatusCode::kNotFound, "scene",
       [&] { return admin().GetScene("nowhere").status(); }},
      {"delete unknown scene", StatusCode::kNotFound, "scene",
       [&] { return admin().DeleteScene("nowhere"); }},

      // Update stream: each bad batch is answered with an error, and the stream goes on.
      {"stream set_pose of an unknown body", StatusCode::kNotFound, "ops[1].set_pose",
       [&] {
         return UpdateCase(kAdmin, Batch({client::MakeSetPoseOp(1, At(0, 0, 6)),
                                          client::MakeSetPoseOp(99, At(0, 0, 6))}));
       }},
      {"stream remove of an unknown body", StatusCode::kNotFound, "ops[0].remove",
       [&] { return UpdateCase(kAdmin, Batch({client::MakeRemoveOp(99)})); }},
      {"stream set_pose after remove", StatusCode::kNotFound, "ops[1].set_pose",
       [&] {
         return UpdateCase(kAdmin,
                           Batch({client::MakeRemoveOp(1), client::MakeSetPoseOp(1, At(0, 0, 6))}));
       }},
      {"stream moves of an unknown body", StatusCode::kNotFound, "moves.ids[1]",
       [&] {
         return UpdateCase(kAdmin, Moves({1, 99}, {0, 0, 6, 0, 0, 0, 1, 0, 0, 7, 0, 0, 0, 1}));
       }},
      {"stream duplicate upsert", StatusCode::kInvalidArgument, "ops[1].upsert.id",
       [&] {
         return UpdateCase(kAdmin, Batch({client::MakeUpsertOp(Sphere(10, 1, At(0, 0, 0))),
                                          client::MakeUpsertOp(Sphere(10, 2, At(0, 0, 0)))}));
       }},
      {"stream moves.poses length mismatch", StatusCode::kInvalidArgument, "moves.poses",
       [&] {
         return UpdateCase(kAdmin, Moves({1}, {0, 0, 6, 0, 0, 0}));
       }},
      {"stream moves NaN position", StatusCode::kInvalidArgument, "moves.poses[1]",
       [&] {
         return UpdateCase(kAdmin, Moves({1, 2}, {0, 0, 6, 0, 0, 0, 1, kNaN, 0, 7, 0, 0, 0, 1}));
       }},
      {"stream moves non-unit quaternion", StatusCode::kInvalidArgument, "moves.poses[0]",
       [&] {
         return UpdateCase(kAdmin, Moves({1}, {0, 0, 6, 0, 0, 0, 0.5f}));
       }},
      {"stream moves zero quaternion", StatusCode::kInvalidArgument, "moves.poses[0]",
       [&] {
         return UpdateCase(kAdmin, Moves({1}, {0, 0, 6, 0, 0, 0, 0}));
       }},
      {"stream set_pose non-unit quaternion", StatusCode::kInvalidArgument,
       "ops[0].set_pose.pose.rotation",
       [&] {
         return UpdateCase(
             kAdmin, Batch({client::MakeSetPoseOp(1, MakePose(origin, MakeQuat(1, 1, 0, 0)))}));
       }},
      {"stream set_pose infinite position", StatusCode::kInvalidArgument,
       "ops[0].set_pose.pose.position",
       [&] { return UpdateCase(kAdmin, Batch({client::MakeSetPoseOp(1, At(kInf, 0, 0))})); }},
      {"stream upsert negative box half extent", StatusCode::kInvalidArgument,
       "ops[0].upsert.shape.box.half_extents",
       [&] {
         return UpdateCase(
             kAdmin, Batch({client::MakeUpsertOp(MakeBody(10, MakeBox(1, 1, -2), At(0, 0, 0)))}));
       }},
      {"stream upsert missing shape", StatusCode::kInvalidArgument, "ops[0].upsert.shape",
       [&] {
         return UpdateCase(kAdmin,
                           Batch({client::MakeUpsertOp(MakeBody(10, v1::Shape(), At(0, 0, 0)))}));
       }},
      {"stream op without a kind", StatusCode::kInvalidArgument, "ops[1]",
       [&] {
         return UpdateCase(kAdmin, Batch({client::MakeSetPoseOp(1, At(0, 0, 6)), v1::UpdateOp()}));
       }},
      {"stream unknown scene", StatusCode::kNotFound, "scene",
       [&] { return UpdateCase(kAdmin, Batch({client::MakeRemoveOp(1)}, "nowhere")); }},
      {"stream batch over max_batch_ops", StatusCode::kResourceExhausted, "ops",
       [&] {
         std::vector<v1::UpdateOp> ops;
         for (int i = 0; i <= kMaxBatchOps; ++i) {
           ops.push_back(client::MakeSetPoseOp(1, At(0, 0, 5 + 0.01f * i)));
         }
         return UpdateCase(kAdmin, Batch(ops));
       }},

      // Query stream: a bad query gets its own error; the batch's other queries are answered.
      {"query without a kind", StatusCode::kInvalidArgument, "queries[1]",
       [&] { return QueryCase(kAdmin, "arena", v1::Query()); }},
      {"query zero direction", StatusCode::kInvalidArgument, "queries[1].raycast.direction",
       [&] {
         return QueryCase(
             kAdmin, "arena",
             client::MakeRaycastQuery(0, client::MakeRaycast(origin, MakeVec3(0, 0, 0), 5)),
             /*extra_good=*/1);
       }},
      {"query NaN sphere cast radius", StatusCode::kInvalidArgument,
       "queries[1].sphere_cast.radius",
       [&] {
         return QueryCase(
             kAdmin, "arena",
             client::MakeSphereCastQuery(0, client::MakeSphereCast(origin, up, 5, kNaN)));
       }},
      {"query overlap without shape", StatusCode::kInvalidArgument, "queries[1].overlap.shape",
       [&] {
         return QueryCase(
             kAdmin, "arena",
             client::MakeOverlapQuery(0, client::MakeOverlap(v1::Shape(), At(0, 0, 0))));
       }},
      {"query point negative radius", StatusCode::kInvalidArgument, "queries[1].point.radius",
       [&] {
         return QueryCase(kAdmin, "arena",
                          client::MakePointQuery(0, client::MakePoint(origin, -1)));
       }},
      {"query aabb min above max", StatusCode::kInvalidArgument, "queries[1].aabb",
       [&] {
         return QueryCase(
             kAdmin, "arena",
             client::MakeAabbQuery(0, client::MakeRegion(MakeVec3(0, 1, 0), MakeVec3(1, 0, 1))));
       }},
      {"query max_hits over the limit", StatusCode::kInvalidArgument, "queries[1].max_hits",
       [&] {
         return QueryCase(kAdmin, "arena",
                          client::MakeRaycastQuery(0, client::MakeRaycast(origin, up, 5),
                                                   v1::MODE_ALL, kMaxHits + 1));
       }},
      {"query too many excluded ids", StatusCode::kInvalidArgument,
       "queries[1].filter.excluded_ids",
       [&] {
         v1::Query query = client::MakeRaycastQuery(0, client::MakeRaycast(origin, up, 5));
         for (int i = 0; i <= kMaxExcludedIds; ++i) query.mutable_filter()->add_excluded_ids(i);
         return QueryCase(kAdmin, "arena", query);
       }},
      {"query batch on an unknown scene", StatusCode::kNotFound, "scene",
       [&] {
         return QueryCase(kAdmin, "nowhere",
                          client::MakeRaycastQuery(0, client::MakeRaycast(origin, up, 5)));
       }},
      {"query batch over max_queries_per_batch", StatusCode::kResourceExhausted, "queries",
       [&] {
         return QueryCase(kAdmin, "arena",
                          client::MakeRaycastQuery(0, client::MakeRaycast(origin, up, 5)),
                          /*extra_good=*/kMaxQueriesPerBatch - 1);
       }},

      // Interest streams.
      {"observer NaN enter radius", StatusCode::kInvalidArgument,
       "messages[0].observers[0].enter_radius",
       [&] { return InterestCase(kAdmin, "arena", {Watcher(1, kNaN, 5)}); }},
      {"observer negative leave radius", StatusCode::kInvalidArgument,
       "messages[0].observers[0].leave_radius",
       [&] { return InterestCase(kAdmin, "arena", {Watcher(1, 1, -1)}); }},
      {"observer enter radius 1e30", StatusCode::kInvalidArgument,
       "messages[0].observers[0].enter_radius",
       [&] { return InterestCase(kAdmin, "arena", {Watcher(1, 1e30f, 1e30f)}); }},
      {"observer leave radius under its enter radius", StatusCode::kInvalidArgument,
       "messages[0].observers[0].leave_radius",
       [&] { return InterestCase(kAdmin, "arena", {Watcher(1, 5, 4)}); }},
      {"observer max_relevant 2^32-1", StatusCode::kInvalidArgument,
       "messages[0].observers[0].max_relevant",
       [&] {
         v1::Observer o = Watcher(1, 1, 1);
         o.set_max_relevant(UINT32_MAX);
         return InterestCase(kAdmin, "arena", {o});
       }},
      {"observer NaN position", StatusCode::kInvalidArgument,
       "messages[0].observers[0].pose.position",
       [&] {
         v1::Observer o = Watcher(1, 1, 1);
         *o.mutable_pose() = At(kNaN, 0, 0);
         return InterestCase(kAdmin, "arena", {o});
       }},
      {"observer zero cone direction", StatusCode::kInvalidArgument,
       "messages[0].observers[0].cone.direction",
       [&] {
         v1::Observer o = Watcher(1, 1, 1);
         o.mutable_cone()->set_half_angle(1);
         return InterestCase(kAdmin, "arena", {o});
       }},
      {"observer cone half-angle 0", StatusCode::kInvalidArgument,
       "messages[0].observers[0].cone.half_angle",
       [&] {
         v1::Observer o = Watcher(1, 1, 1);
         *o.mutable_cone()->mutable_direction() = up;
         return InterestCase(kAdmin, "arena", {o});
       }},
      {"observer cone leave half-angle under its half-angle", StatusCode::kInvalidArgument,
       "messages[0].observers[0].cone.leave_half_angle",
       [&] {
         v1::Observer o = Watcher(1, 1, 1);
         *o.mutable_cone()->mutable_direction() = up;
         o.mutable_cone()->set_half_angle(1);
         o.mutable_cone()->set_leave_half_angle(0.5f);
         return InterestCase(kAdmin, "arena", {o});
       }},
      {"observer excluding ids", StatusCode::kInvalidArgument,
       "messages[0].observers[0].filter.excluded_ids",
       [&] {
         v1::Observer o = Watcher(1, 1, 1);
         o.mutable_filter()->add_excluded_ids(2);
         return InterestCase(kAdmin, "arena", {o});
       }},
      {"observer id twice", StatusCode::kInvalidArgument,
       "messages[0].observers[1].id: observer 4 appears twice (first by "
       "messages[0].observers[0])",
       [&] {
         v1::InterestRequest request;
         *request.add_observers() = Watcher(4, 1, 1);
         *request.add_observers() = Watcher(4, 2, 2);
         return raw_interest(request);
       }},
      {"observer upserted and removed by one message", StatusCode::kInvalidArgument,
       "messages[0].removes[0]: observer 4 is also upserted (by messages[0].observers[0])",
       [&] {
         v1::InterestRequest request;
         *request.add_observers() = Watcher(4, 1, 1);
         request.add_removes(4);
         return raw_interest(request);
       }},
      {"observer in a later message", StatusCode::kInvalidArgument,
       "messages[1].observers[0].enter_radius",
       [&] {
         return InterestCase(kAdmin, "arena", {Watcher(1, 1, 1)},
                             std::vector<v1::Observer>{Watcher(2, -3, 1)});
       }},
      {"interest stream on an unknown scene", StatusCode::kNotFound, "scene",
       [&] { return InterestCase(kAdmin, "nowhere", {Watcher(1, 1, 1)}); }},
      {"interest stream outside the token's prefix", StatusCode::kPermissionDenied, "",
       [&] { return InterestCase(kTeamReader, "arena", {Watcher(1, 1, 1)}); }},

      // Auth.
      {"missing token", StatusCode::kUnauthenticated, "",
       [&] { return Client("").ListScenes().status(); }},
      {"token without the Bearer scheme", StatusCode::kUnauthenticated, "",
       [&] {
         auto stub = v1::Collide::NewStub(admin().channel());
         grpc::ClientContext context;
         context.AddMetadata("authorization", kAdmin);
         v1::ListScenesResponse response;
         return client::FromGrpcStatus(
             stub->ListScenes(&context, v1::ListScenesRequest(), &response));
       }},
      {"wrong token", StatusCode::kUnauthenticated, "",
       [&] { return Client("not-a-token").GetScene("arena").status(); }},
      {"missing token on a query stream", StatusCode::kUnauthenticated, "",
       [&] {
         auto session = Client("").OpenQueryStream(/*scene=*/"");
         if (!session.ok()) return session.status();
         v1::QueryBatch batch;
         batch.set_scene("arena");
         return (*session)->Run(batch).status();
       }},
      {"reader token writing", StatusCode::kPermissionDenied, "",
       [&] { return Client(kReader).UpsertBodies(Upsert({Sphere(10, 1, At(0, 0, 0))})).status(); }},
      {"reader token removing", StatusCode::kPermissionDenied, "",
       [&] {
         std::vector<uint64_t> ids = {1};
         return Client(kReader).RemoveBodies("arena", ids).status();
       }},
      {"reader token opening an update stream", StatusCode::kPermissionDenied, "",
       [&] {
         auto writer = Client(kReader).OpenUpdateStream(/*scene=*/"", 1);
         if (!writer.ok()) return writer.status();
         return (*writer)->Apply(Batch({client::MakeSetPoseOp(1, At(0, 0, 6))})).status();
       }},
      {"writer token creating a scene", StatusCode::kPermissionDenied, "",
       [&] { return Client(kWriter).CreateScene("fresh").status(); }},
      {"writer token deleting a scene", StatusCode::kPermissionDenied, "",
       [&] { return Client(kWriter).DeleteScene("arena"); }},
      {"token outside its prefix reading a scene", StatusCode::kPermissionDenied, "",
       [&] { return Client(kTeamReader).GetScene("arena").status(); }},
      {"token outside its prefix casting a ray", StatusCode::kPermissionDenied, "",
       [&] { return Client(kTeamReader).Raycast(Ray(origin, up, 10)).status(); }},
      {"token outside its prefix writing", StatusCode::kPermissionDenied, "",
       [&] {
         return Client(kTeamWriter).UpsertBodies(Upsert({Sphere(10, 1, At(0, 0, 0))})).status();
       }},
      {"token outside its prefix inside an update stream", StatusCode::kPermissionDenied, "",
       [&] { return UpdateCase(kTeamWriter, Batch({client::MakeSetPoseOp(1, At(0, 0, 6))})); }},
      {"token outside its prefix inside a query stream", StatusCode::kPermissionDenied, "",
       [&] {
         v1::QueryBatch batch;
         batch.set_scene("arena");
         *batch.add_queries() = client::MakeRaycastQuery(1, client::MakeRaycast(origin, up, 10));
         return RunQueryBatch(kTeamReader, batch);
       }},
  };
  ASSERT_GE(cases.size(), 30u);

  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(HasError(c.run(), c.code, c.path)) << c.name;
  }

  // The server still answers, and arena is as it was: same version, same bodies.
  client::Client& client = Client(kAdmin);
  auto arena = client.GetScene("arena");
  ASSERT_TRUE(IsOk(arena));
  EXPECT_EQ(arena->stats().version(), arena_version_);
  auto bodies = client.GetBodies("arena");
  ASSERT_TRUE(IsOk(bodies));
  EXPECT_TRUE(SameBodies(BodiesOf(*bodies), ArenaBodies()));
  v1::RaycastRequest request = Ray(MakeVec3(-10, 0, 5), MakeVec3(1, 0, 0), 100);
  request.set_mode(v1::MODE_ALL);
  auto hits = client.Raycast(request);
  ASSERT_TRUE(IsOk(hits));
  std::vector<v1::Body> expected = ArenaBodies();
  EXPECT_TRUE(ResponseMatches(AsQuery(request), *hits, ReferenceWorld(expected)));
  EXPECT_EQ(hits->hits_size(), 3);
  auto scenes = client.ListScenes();
  ASSERT_TRUE(IsOk(scenes));
  EXPECT_EQ(scenes->size(), 2u);  // No scene was created by a bad request.

  // The update streams that saw errors still end cleanly.
  for (auto& [token, writer] : writers_) EXPECT_TRUE(IsOk(writer->Finish())) << token;
  for (auto& [token, session] : sessions_) EXPECT_TRUE(IsOk(session->Finish())) << token;

  // Tokens, right or wrong, never reach the log.
  std::string logs = server_->Logs();
  for (const char* token : {kAdmin, kWriter, kReader, kTeamWriter, kTeamReader, "not-a-token"}) {
    EXPECT_FALSE(absl::StrContains(logs, token)) << token << " is in the log:\n" << logs;
  }
}

TEST_F(BadInputTest, PrefixTokensSeeOnlyTheirScenes) {
  ASSERT_TRUE(IsOk(Client(kAdmin).CreateScene("crew-one")));
  auto team = Client(kTeamReader).ListScenes();
  ASSERT_TRUE(IsOk(team));
  ASSERT_EQ(team->size(), 1u);
  EXPECT_EQ((*team)[0].name(), "team-scratch");
  auto writer = Client(kTeamWriter).ListScenes();
  ASSERT_TRUE(IsOk(writer));
  ASSERT_EQ(writer->size(), 2u);
  EXPECT_EQ((*writer)[0].name(), "crew-one");
  EXPECT_EQ((*writer)[1].name(), "team-scratch");
  auto all = Client(kReader).ListScenes();
  ASSERT_TRUE(IsOk(all));
  EXPECT_EQ(all->size(), 3u);
  // Within its prefixes a writer writes, through unary calls and streams.
  EXPECT_TRUE(
      IsOk(Client(kTeamWriter)
               .UpsertBodies("crew-one", std::vector<v1::Body>{Sphere(1, 1, At(0, 0, 0))})));
  auto stream = Client(kTeamWriter).OpenUpdateStream(/*scene=*/"", 5);
  ASSERT_TRUE(IsOk(stream));
  auto ack = (*stream)->Apply(GoodBatch());
  ASSERT_TRUE(IsOk(ack));
  EXPECT_TRUE(IsOk(client::AckStatus(*ack)));
  EXPECT_TRUE(IsOk((*stream)->Finish()));
  // The health service needs no token.
}

TEST_F(BadInputTest, RotationsWithinTheToleranceAreAccepted) {
  // |q| within 1e-3 of 1 is renormalised; absent rotations are the identity.
  client::Client& admin = Client(kAdmin);
  auto write = admin.UpsertBodies(
      "team-scratch",
      std::vector<v1::Body>{Sphere(2, 1, MakePose(MakeVec3(5, 0, 0), MakeQuat(0, 0, 0, 1.0005f))),
                            Sphere(3, 1, At(10, 0, 0))});
  ASSERT_TRUE(IsOk(write));
  std::vector<uint64_t> ids = {2};
  auto bodies = admin.GetBodies("team-scratch", ids);
  ASSERT_TRUE(IsOk(bodies));
  ASSERT_EQ(bodies->bodies_size(), 1);
  const v1::Pose& pose = bodies->bodies(0).pose();
  float w = pose.has_rotation() ? pose.rotation().w() : 1.0f;
  EXPECT_NEAR(w, 1.0f, 1e-6f);
}

}  // namespace
}  // namespace collide::integration
