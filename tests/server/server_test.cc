// Starts the server in process on 127.0.0.1:0 with a temporary data directory and calls every
// rpc through a generated stub.

#include "server/server.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "collide/v1/collide.grpc.pb.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "server/infra/listen_address.h"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/spdlog.h"

namespace collide {
namespace {

template <typename Message>
Message Parse(const std::string& text) {
  Message message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

// A directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "collide-server-XXXXXX");
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void ExpectStatus(const grpc::Status& status, grpc::StatusCode code, const std::string& path) {
  EXPECT_EQ(status.error_code(), code) << status.error_message();
  EXPECT_TRUE(absl::StartsWith(status.error_message(), path + ": "))
      << "expected path " << path << ", got " << status.error_message();
}

void ExpectError(const v1::Error& error, int code, const std::string& path) {
  EXPECT_EQ(error.code(), code) << error.message();
  EXPECT_TRUE(absl::StartsWith(error.message(), path + ": "))
      << "expected path " << path << ", got " << error.message();
}

class ServerTest : public ::testing::Test {
 protected:
  void Start(const std::string& tokens = "") {
    ServerOptions options;
    options.address = "127.0.0.1:0";
    options.data_dir = dir_.File("data");
    options.durability = DurabilityPolicy::kAlways;
    options.drain_timeout_ms = 500;
    options.limits.max_inflight_per_stream = 4;
    options.limits.max_queries_per_batch = 8;
    if (!tokens.empty()) {
      std::ofstream(dir_.File("tokens")) << tokens;
      options.token_file = dir_.File("tokens");
    }
    absl::StatusOr<std::unique_ptr<CollideServer>> server = CollideServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    ASSERT_GT(server_->port(), 0);
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
    channel_ = grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                         grpc::InsecureChannelCredentials(), args);
    stub_ = v1::Collide::NewStub(channel_);
  }

  std::unique_ptr<grpc::ClientContext> Context(const std::string& token = "") {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    if (!token.empty()) context->AddMetadata("authorization", absl::StrCat("Bearer ", token));
    return context;
  }

  grpc::Status CreateScene(const std::string& name, v1::Durability durability,
                           const std::string& token = "") {
    v1::CreateSceneRequest request;
    request.set_scene(name);
    request.mutable_options()->set_durability(durability);
    v1::CreateSceneResponse response;
    return stub_->CreateScene(Context(token).get(), request, &response);
  }

  TempDir dir_;
  std::unique_ptr<CollideServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Collide::Stub> stub_;
};

constexpr char kBodies[] =
    "scene: 'a' "
    "bodies { id: 1 shape { sphere { radius: 1 } } pose { position { x: 5 } } } "
    "bodies { id: 2 shape { box { half_extents { x: 1 y: 1 z: 1 } } } pose { position { x: 10 } "
    "} kind: BODY_KIND_STATIC } "
    "bodies { id: 3 shape { capsule { radius: 0.5 half_height: 1 } } pose { position { y: 20 } } "
    "user_data: 9 }";

TEST_F(ServerTest, ScenesAreCreatedListedReadAndDeleted) {
  Start();
  v1::CreateSceneRequest create =
      Parse<v1::CreateSceneRequest>("scene: 'b' options { fat_margin: 0.25 max_bodies: 100 }");
  v1::CreateSceneResponse created;
  ASSERT_TRUE(stub_->CreateScene(Context().get(), create, &created).ok());
  EXPECT_EQ(created.scene().name(), "b");
  EXPECT_FLOAT_EQ(created.scene().options().fat_margin(), 0.25f);
  EXPECT_EQ(created.scene().options().max_bodies(), 100u);
  EXPECT_EQ(created.scene().options().durability(), v1::DURABILITY_ALWAYS);  // resolved
  ASSERT_TRUE(CreateScene("a", v1::DURABILITY_NONE).ok());
  ExpectStatus(CreateScene("a", v1::DURABILITY_NONE), grpc::StatusCode::ALREADY_EXISTS, "scene");
  ExpectStatus(CreateScene("-bad", v1::DURABILITY_NONE), grpc::StatusCode::INVALID_ARGUMENT,
               "scene");
  create.mutable_options()->set_fat_margin(-1);
  ExpectStatus(stub_->CreateScene(Context().get(), create, &created),
               grpc::StatusCode::INVALID_ARGUMENT, "options.fat_margin");

  v1::ListScenesResponse list;
  ASSERT_TRUE(stub_->ListScenes(Context().get(), v1::ListScenesRequest(), &list).ok());
  ASSERT_EQ(list.scenes_size(), 2);
  EXPECT_EQ(list.scenes(0).name(), "a");
  EXPECT_EQ(list.scenes(0).options().durability(), v1::DURABILITY_NONE);
  EXPECT_EQ(list.scenes(1).name(), "b");

  v1::GetSceneRequest get;
  get.set_scene("zz");
  v1::GetSceneResponse got;
  grpc::Status missing = stub_->GetScene(Context().get(), get, &got);
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(missing.error_message(), "scene: no scene \"zz\"");

  v1::DeleteSceneRequest del;
  del.set_scene("b");
  v1::DeleteSceneResponse deleted;
  ASSERT_TRUE(stub_->DeleteScene(Context().get(), del, &deleted).ok());
  ExpectStatus(stub_->DeleteScene(Context().get(), del, &deleted), grpc::StatusCode::NOT_FOUND,
               "scene");
  get.set_scene("b");
  EXPECT_EQ(stub_->GetScene(Context().get(), get, &got).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(ServerTest, BodiesAreWrittenReadAndQueried) {
  Start();
  ASSERT_TRUE(CreateScene("a", v1::DURABILITY_DEFAULT).ok());
  v1::WriteResponse write;
  grpc::Status status =
      stub_->UpsertBodies(Context().get(), Parse<v1::UpsertBodiesRequest>(kBodies), &write);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(write.version(), 1u);
  EXPECT_TRUE(write.durable());

  ExpectStatus(stub_->UpsertBodies(Context().get(),
                                   Parse<v1::UpsertBodiesRequest>(
                                       "scene: 'a' bodies { id: 4 shape { sphere { radius: 1 } } "
                                       "} bodies { id: 4 shape { sphere { radius: 1 } } }"),
                                   &write),
               grpc::StatusCode::INVALID_ARGUMENT, "bodies[1].id");
  ExpectStatus(stub_->UpsertBodies(Context().get(),
                                   Parse<v1::UpsertBodiesRequest>(
                                       "scene: 'a' bodies { id: 4 shape { sphere { radius: 1 } } "
                                       "pose { rotation { } } }"),
                                   &write),
               grpc::StatusCode::INVALID_ARGUMENT, "bodies[0].pose.rotation");
  ExpectStatus(stub_->UpsertBodies(Context().get(),
                                   Parse<v1::UpsertBodiesRequest>(
                                       "scene: 'nope' bodies { id: 4 shape { sphere { } } }"),
                                   &write),
               grpc::StatusCode::NOT_FOUND, "scene");
  ExpectStatus(
      stub_->RemoveBodies(Context().get(),
                          Parse<v1::RemoveBodiesRequest>("scene: 'a' ids: [1, 99]"), &write),
      grpc::StatusCode::NOT_FOUND, "ids[1]");

  v1::GetBodiesResponse bodies;
  ASSERT_TRUE(
      stub_->GetBodies(Context().get(), Parse<v1::GetBodiesRequest>("scene: 'a'"), &bodies).ok());
  EXPECT_EQ(bodies.version(), 1u);
  ASSERT_EQ(bodies.bodies_size(), 3);
  EXPECT_EQ(bodies.bodies(2).id(), 3u);
  EXPECT_EQ(bodies.bodies(2).user_data(), 9u);
  EXPECT_EQ(bodies.bodies(1).kind(), v1::BODY_KIND_STATIC);
  ASSERT_TRUE(stub_
                  ->GetBodies(Context().get(),
                              Parse<v1::GetBodiesRequest>("scene: 'a' ids: [3, 77, 1]"), &bodies)
                  .ok());
  ASSERT_EQ(bodies.bodies_size(), 2);
  EXPECT_EQ(bodies.bodies(0).id(), 3u);
  EXPECT_EQ(bodies.bodies(1).id(), 1u);
  ASSERT_EQ(bodies.missing_ids_size(), 1);
  EXPECT_EQ(bodies.missing_ids(0), 77u);

  v1::QueryResponse hits;
  status = stub_->Raycast(
      Context().get(),
      Parse<v1::RaycastRequest>("scene: 'a' ray { direction { x: 3 } max_distance: 100 } mode: "
                                "MODE_ALL"),
      &hits);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(hits.version(), 1u);
  ASSERT_EQ(hits.hits_size(), 2);
  EXPECT_EQ(hits.hits(0).body_id(), 1u);
  EXPECT_NEAR(hits.hits(0).distance(), 4.0f, 1e-5f);
  EXPECT_NEAR(hits.hits(0).normal().x(), -1.0f, 1e-5f);
  EXPECT_EQ(hits.hits(1).body_id(), 2u);
  ExpectStatus(
      stub_->Raycast(Context().get(),
                     Parse<v1::RaycastRequest>("scene: 'a' ray { max_distance: 1 }"), &hits),
      grpc::StatusCode::INVALID_ARGUMENT, "ray.direction");
  ExpectStatus(
      stub_->Raycast(Context().get(),
                     Parse<v1::RaycastRequest>("scene: 'x' ray { direction { x: 1 } }"), &hits),
      grpc::StatusCode::NOT_FOUND, "scene");

  status = stub_->SphereCast(
      Context().get(),
      Parse<v1::SphereCastRequest>("scene: 'a' cast { origin { y: 10 } direction { y: 1 } "
                                   "max_distance: 100 radius: 0.5 }"),
      &hits);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(hits.hits_size(), 1);
  EXPECT_EQ(hits.hits(0).body_id(), 3u);
  EXPECT_NEAR(hits.hits(0).distance(), 8.0f, 1e-4f);

  status = stub_->Overlap(
      Context().get(),
      Parse<v1::OverlapRequest>("scene: 'a' overlap { shape { sphere { radius: 3 } } pose { "
                                "position { x: 7.5 } } } mode: MODE_ALL detail: true"),
      &hits);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(hits.hits_size(), 2);
  EXPECT_EQ(hits.hits(0).body_id(), 1u);
  EXPECT_GT(hits.hits(0).depth(), 0.0f);
  ExpectStatus(
      stub_->Overlap(Context().get(), Parse<v1::OverlapRequest>("scene: 'a' overlap { }"), &hits),
      grpc::StatusCode::INVALID_ARGUMENT, "overlap.shape");

  ASSERT_TRUE(stub_
                  ->RemoveBodies(Context().get(),
                                 Parse<v1::RemoveBodiesRequest>("scene: 'a' ids: [1, 2]"), &write)
                  .ok());
  EXPECT_EQ(write.version(), 2u);
}

TEST_F(ServerTest, QueryStreamAnswersEachBatchAtOneVersionWithPerQueryErrors) {
  Start();
  ASSERT_TRUE(CreateScene("a", v1::DURABILITY_NONE).ok());
  v1::WriteResponse write;
  ASSERT_TRUE(
      stub_->UpsertBodies(Context().get(), Parse<v1::UpsertBodiesRequest>(kBodies), &write).ok());

  auto context = Context();
  auto stream = stub_->QueryStream(context.get());
  ASSERT_TRUE(stream->Write(Parse<v1::QueryBatch>(
      "scene: 'a' "
      "queries { request_id: 10 raycast { direction { x: 1 } max_distance: 100 } } "
      "queries { request_id: 11 raycast { direction { } max_distance: 100 } } "
      "queries { request_id: 12 point { point { y: 20 } radius: 0 } } "
      "queries { request_id: 13 aabb { region { min { x: -100 y: -100 z: -100 } max { x: 100 y: "
      "100 z: 100 } } } mode: MODE_ALL max_hits: 2 }")));
  ASSERT_TRUE(stream->Write(Parse<v1::QueryBatch>("scene: 'zz' queries { point { } }")));
  v1::QueryBatch too_many;
  too_many.set_scene("a");
  for (int i = 0; i < 9; ++i) too_many.add_queries()->mutable_point();
  ASSERT_TRUE(stream->Write(too_many));
  ASSERT_TRUE(stream->Write(Parse<v1::QueryBatch>("scene: 'a'")));
  ASSERT_TRUE(stream->WritesDone());

  v1::QueryBatchResult result;
  ASSERT_TRUE(stream->Read(&result));
  EXPECT_FALSE(result.has_error());
  EXPECT_EQ(result.version(), 1u);
  ASSERT_EQ(result.results_size(), 4);
  EXPECT_EQ(result.results(0).request_id(), 10u);
  ASSERT_EQ(result.results(0).hits_size(), 1);
  EXPECT_EQ(result.results(0).hits(0).body_id(), 1u);
  EXPECT_EQ(result.results(1).request_id(), 11u);
  ExpectError(result.results(1).error(), 3, "queries[1].raycast.direction");
  EXPECT_EQ(result.results(1).hits_size(), 0);
  ASSERT_EQ(result.results(2).hits_size(), 1);
  EXPECT_EQ(result.results(2).hits(0).body_id(), 3u);
  EXPECT_EQ(result.results(3).hits_size(), 2);
  EXPECT_TRUE(result.results(3).truncated());

  ASSERT_TRUE(stream->Read(&result));
  ExpectError(result.error(), 5, "scene");
  EXPECT_EQ(result.results_size(), 0);
  ASSERT_TRUE(stream->Read(&result));
  ExpectError(result.error(), 8, "queries");
  ASSERT_TRUE(stream->Read(&result));
  EXPECT_FALSE(result.has_error());
  EXPECT_EQ(result.results_size(), 0);
  EXPECT_EQ(result.version(), 1u);
  EXPECT_FALSE(stream->Read(&result));
  EXPECT_TRUE(stream->Finish().ok());
}

// Batches to scene "slow" (always: acknowledged after an fsync) and "fast" (none: acknowledged
// at once) alternate in one stream, so the store completes them out of order; the acks must
// still come back in the order the batches were sent. More batches than the in-flight limit (4)
// exercise the read pause.
TEST_F(ServerTest, UpdateStreamAcksInSendOrderAcrossMixedDurabilities) {
  Start();
  ASSERT_TRUE(CreateScene("slow", v1::DURABILITY_ALWAYS).ok());
  ASSERT_TRUE(CreateScene("fast", v1::DURABILITY_NONE).ok());
  auto context = Context();
  auto stream = stub_->UpdateStream(context.get());
  constexpr int kBatches = 40;
  std::vector<std::string> scenes;
  for (int i = 0; i < kBatches; ++i) {
    v1::UpdateBatch batch;
    batch.set_scene(i % 2 == 0 ? "slow" : "fast");
    batch.set_client_id(7);
    batch.set_client_sequence(static_cast<uint64_t>(100 + i));
    if (i < 2) {
      v1::Body* body = batch.add_ops()->mutable_upsert();
      body->set_id(1);
      body->mutable_shape()->mutable_sphere()->set_radius(1);
    } else {
      batch.mutable_moves()->add_ids(1);
      for (float v : {static_cast<float>(i), 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f}) {
        batch.mutable_moves()->add_poses(v);
      }
    }
    scenes.push_back(batch.scene());
    ASSERT_TRUE(stream->Write(batch));
  }
  // Errors keep their place in the order too.
  ASSERT_TRUE(stream->Write(Parse<v1::UpdateBatch>(
      "scene: 'fast' client_sequence: 1 ops { set_pose { id: 1 } } ops { set_pose { id: 1 } } "
      "ops { remove: 55 }")));
  ASSERT_TRUE(stream->Write(Parse<v1::UpdateBatch>(
      "scene: 'slow' client_sequence: 2 moves { ids: [1, 8] poses: [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, "
      "0, 0, 0, 1] }")));
  ASSERT_TRUE(stream->Write(Parse<v1::UpdateBatch>(
      "scene: 'fast' client_sequence: 3 ops { upsert { id: 2 shape { sphere { radius: 1 } } } } "
      "ops { upsert { id: 2 shape { sphere { radius: 1 } } } }")));
  ASSERT_TRUE(stream->Write(Parse<v1::UpdateBatch>(
      "scene: 'fast' client_sequence: 4 ops { set_pose { id: 1 pose { rotation { w: 0.5 } } } }")));
  ASSERT_TRUE(stream->Write(Parse<v1::UpdateBatch>("scene: 'gone' client_sequence: 5")));
  // A duplicate of an already applied batch.
  ASSERT_TRUE(stream->Write(
      Parse<v1::UpdateBatch>("scene: 'slow' client_id: 7 client_sequence: 100 ops { remove: 1 }")));
  ASSERT_TRUE(stream->WritesDone());

  v1::UpdateAck ack;
  uint64_t slow_version = 0, fast_version = 0;
  for (int i = 0; i < kBatches; ++i) {
    ASSERT_TRUE(stream->Read(&ack)) << i;
    EXPECT_EQ(ack.client_sequence(), static_cast<uint64_t>(100 + i));
    EXPECT_FALSE(ack.has_error()) << ack.error().message();
    uint64_t& version = scenes[i] == "slow" ? slow_version : fast_version;
    EXPECT_EQ(ack.version(), version + 1) << i;
    version = ack.version();
    if (scenes[i] == "slow") {
      EXPECT_TRUE(ack.durable());
    }
  }
  ASSERT_TRUE(stream->Read(&ack));
  EXPECT_EQ(ack.client_sequence(), 1u);
  ExpectError(ack.error(), 5, "ops[2].remove");
  ASSERT_TRUE(stream->Read(&ack));
  EXPECT_EQ(ack.client_sequence(), 2u);
  ExpectError(ack.error(), 5, "moves.ids[1]");
  ASSERT_TRUE(stream->Read(&ack));
  ExpectError(ack.error(), 3, "ops[1].upsert.id");
  ASSERT_TRUE(stream->Read(&ack));
  ExpectError(ack.error(), 3, "ops[0].set_pose.pose.rotation");
  ASSERT_TRUE(stream->Read(&ack));
  ExpectError(ack.error(), 5, "scene");
  ASSERT_TRUE(stream->Read(&ack));
  EXPECT_FALSE(ack.has_error());
  EXPECT_TRUE(ack.duplicate());
  EXPECT_EQ(ack.version(), slow_version);
  EXPECT_FALSE(stream->Read(&ack));
  EXPECT_TRUE(stream->Finish().ok());

  v1::GetBodiesResponse bodies;
  ASSERT_TRUE(
      stub_->GetBodies(Context().get(), Parse<v1::GetBodiesRequest>("scene: 'fast'"), &bodies)
          .ok());
  ASSERT_EQ(bodies.bodies_size(), 1);
  EXPECT_EQ(bodies.bodies(0).pose().position().x(), static_cast<float>(kBatches - 1));
}

TEST_F(ServerTest, ACancelledUpdateStreamLeavesTheServerServing) {
  Start();
  ASSERT_TRUE(CreateScene("slow", v1::DURABILITY_ALWAYS).ok());
  for (int round = 0; round < 3; ++round) {
    auto context = Context();
    auto stream = stub_->UpdateStream(context.get());
    for (int i = 0; i < 20; ++i) {
      v1::UpdateBatch batch;
      batch.set_scene("slow");
      v1::Body* body = batch.add_ops()->mutable_upsert();
      body->set_id(static_cast<uint64_t>(i));
      body->mutable_shape()->mutable_sphere()->set_radius(1);
      if (!stream->Write(batch)) break;
    }
    context->TryCancel();  // acks still in flight in the store
    v1::UpdateAck ack;
    while (stream->Read(&ack)) {
    }
    EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }
  v1::GetSceneResponse got;
  v1::GetSceneRequest get;
  get.set_scene("slow");
  EXPECT_TRUE(stub_->GetScene(Context().get(), get, &got).ok());
}

TEST_F(ServerTest, ConcurrentUpdateStreamsEachGetTheirAcksInOrder) {
  Start();
  ASSERT_TRUE(CreateScene("slow", v1::DURABILITY_ALWAYS).ok());
  ASSERT_TRUE(CreateScene("fast", v1::DURABILITY_NONE).ok());
  constexpr int kStreams = 4;
  constexpr int kBatches = 100;
  std::vector<std::thread> threads;
  std::vector<int> in_order(kStreams, 0);
  for (int s = 0; s < kStreams; ++s) {
    threads.emplace_back([&, s] {
      auto context = Context();
      auto stream = stub_->UpdateStream(context.get());
      // Writes from a second thread while this one reads, like a real client.
      std::thread writer([&] {
        for (int i = 0; i < kBatches; ++i) {
          v1::UpdateBatch batch;
          batch.set_scene(i % 3 == 0 ? "slow" : "fast");
          batch.set_client_sequence(static_cast<uint64_t>(i));
          v1::Body* body = batch.add_ops()->mutable_upsert();
          body->set_id(static_cast<uint64_t>(s * kBatches + i));
          body->mutable_shape()->mutable_sphere()->set_radius(1);
          if (!stream->Write(batch)) return;
        }
        stream->WritesDone();
      });
      v1::UpdateAck ack;
      int next = 0;
      while (stream->Read(&ack)) {
        if (ack.client_sequence() == static_cast<uint64_t>(next) && !ack.has_error()) ++next;
      }
      writer.join();
      EXPECT_TRUE(stream->Finish().ok());
      in_order[s] = next;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int s = 0; s < kStreams; ++s) EXPECT_EQ(in_order[s], kBatches) << "stream " << s;
}

TEST_F(ServerTest, TokensGateRolesAndScenePrefixes) {
  Start(
      "# test tokens\n"
      "r reader\n"
      "w writer team-\n"
      "adm admin\n");
  ExpectStatus(CreateScene("team-1", v1::DURABILITY_NONE), grpc::StatusCode::UNAUTHENTICATED,
               "authorization");
  ExpectStatus(CreateScene("team-1", v1::DURABILITY_NONE, "nope"),
               grpc::StatusCode::UNAUTHENTICATED, "authorization");
  EXPECT_EQ(CreateScene("team-1", v1::DURABILITY_NONE, "w").error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  ASSERT_TRUE(CreateScene("team-1", v1::DURABILITY_NONE, "adm").ok());
  ASSERT_TRUE(CreateScene("other", v1::DURABILITY_NONE, "adm").ok());

  v1::ListScenesResponse list;
  ASSERT_TRUE(stub_->ListScenes(Context("w").get(), v1::ListScenesRequest(), &list).ok());
  ASSERT_EQ(list.scenes_size(), 1);
  EXPECT_EQ(list.scenes(0).name(), "team-1");
  list.Clear();
  ASSERT_TRUE(stub_->ListScenes(Context("r").get(), v1::ListScenesRequest(), &list).ok());
  EXPECT_EQ(list.scenes_size(), 2);

  v1::WriteResponse write;
  const auto upsert = [](const std::string& scene) {
    return Parse<v1::UpsertBodiesRequest>(
        absl::StrCat("scene: '", scene, "' bodies { id: 1 shape { sphere { radius: 1 } } }"));
  };
  EXPECT_EQ(stub_->UpsertBodies(Context("r").get(), upsert("team-1"), &write).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  ExpectStatus(stub_->UpsertBodies(Context("w").get(), upsert("other"), &write),
               grpc::StatusCode::PERMISSION_DENIED, "scene");
  EXPECT_TRUE(stub_->UpsertBodies(Context("w").get(), upsert("team-1"), &write).ok());

  {
    auto context = Context("w");
    auto stream = stub_->UpdateStream(context.get());
    ASSERT_TRUE(stream->Write(Parse<v1::UpdateBatch>("scene: 'other' ops { remove: 1 }")));
    ASSERT_TRUE(stream->Write(Parse<v1::UpdateBatch>("scene: 'team-1' ops { remove: 1 }")));
    ASSERT_TRUE(stream->WritesDone());
    v1::UpdateAck ack;
    ASSERT_TRUE(stream->Read(&ack));
    ExpectError(ack.error(), 7, "scene");
    ASSERT_TRUE(stream->Read(&ack));
    EXPECT_FALSE(ack.has_error()) << ack.error().message();
    EXPECT_FALSE(stream->Read(&ack));
    EXPECT_TRUE(stream->Finish().ok());
  }
  {
    auto context = Context("r");
    auto stream = stub_->UpdateStream(context.get());
    v1::UpdateAck ack;
    EXPECT_FALSE(stream->Read(&ack));
    EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
  }
  {
    auto context = Context("w");
    auto stream = stub_->QueryStream(context.get());
    ASSERT_TRUE(stream->Write(Parse<v1::QueryBatch>("scene: 'other' queries { point { } }")));
    ASSERT_TRUE(stream->WritesDone());
    v1::QueryBatchResult result;
    ASSERT_TRUE(stream->Read(&result));
    ExpectError(result.error(), 7, "scene");
    EXPECT_FALSE(stream->Read(&result));
    EXPECT_TRUE(stream->Finish().ok());
  }
  {
    auto context = Context();
    auto stream = stub_->QueryStream(context.get());
    v1::QueryBatchResult result;
    EXPECT_FALSE(stream->Read(&result));
    EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
}

// Every rpc, called with every kind of token on a scene inside and outside the token's
// prefixes: allowed exactly when the role suffices and the scene is covered (an allowed call
// may still fail for its own reasons, but never with UNAUTHENTICATED or PERMISSION_DENIED);
// denied with PERMISSION_DENIED otherwise (inside a stream: that batch's error, code 7), and
// UNAUTHENTICATED without a token or with an unknown one.
TEST_F(ServerTest, EveryRpcIsAllowedAndDeniedByRoleAndScenePrefixBothWays) {
  Start(
      "r reader\n"
      "w writer\n"
      "a admin\n"
      "rp reader team-\n"
      "wp writer team-,crew-\n"
      "ap admin team-\n");
  struct Token {
    std::string token;
    int role;  // 0 reader, 1 writer, 2 admin; -1 unauthenticated
    bool prefixed;
  };
  const std::vector<Token> tokens = {{"", -1, false}, {"bogus", -1, false}, {"r", 0, false},
                                     {"w", 1, false}, {"a", 2, false},      {"rp", 0, true},
                                     {"wp", 1, true}, {"ap", 2, true}};
  int created = 0;
  // A fresh scene (made by the unscoped admin) named inside or outside the prefixes.
  auto fresh_scene = [&](bool inside) {
    const std::string name = absl::StrCat(inside ? "team-" : "other-", ++created);
    EXPECT_TRUE(CreateScene(name, v1::DURABILITY_NONE, "a").ok());
    return name;
  };
  using Call = std::function<grpc::Status(const std::string& token, const std::string& scene)>;
  struct Rpc {
    std::string name;
    int role;
    bool scoped;  // names a scene
    Call call;
  };
  const std::vector<Rpc> rpcs = {
      {"CreateScene", 2, true,
       [&](const std::string& token, const std::string& scene) {
         // A new name, not the fresh scene itself.
         return CreateScene(absl::StrCat(scene, "-new"), v1::DURABILITY_NONE, token);
       }},
      {"DeleteScene", 2, true,
       [&](const std::string& token, const std::string& scene) {
         v1::DeleteSceneRequest request;
         request.set_scene(scene);
         v1::DeleteSceneResponse response;
         return stub_->DeleteScene(Context(token).get(), request, &response);
       }},
      {"GetScene", 0, true,
       [&](const std::string& token, const std::string& scene) {
         v1::GetSceneResponse response;
         return stub_->GetScene(Context(token).get(),
                                Parse<v1::GetSceneRequest>(absl::StrCat("scene: '", scene, "'")),
                                &response);
       }},
      {"UpsertBodies", 1, true,
       [&](const std::string& token, const std::string& scene) {
         v1::WriteResponse response;
         return stub_->UpsertBodies(
             Context(token).get(),
             Parse<v1::UpsertBodiesRequest>(absl::StrCat(
                 "scene: '", scene, "' bodies { id: 1 shape { sphere { radius: 1 } } }")),
             &response);
       }},
      {"RemoveBodies", 1, true,
       [&](const std::string& token, const std::string& scene) {
         v1::WriteResponse response;
         return stub_->RemoveBodies(
             Context(token).get(),
             Parse<v1::RemoveBodiesRequest>(absl::StrCat("scene: '", scene, "'")), &response);
       }},
      {"GetBodies", 0, true,
       [&](const std::string& token, const std::string& scene) {
         v1::GetBodiesResponse response;
         return stub_->GetBodies(Context(token).get(),
                                 Parse<v1::GetBodiesRequest>(absl::StrCat("scene: '", scene, "'")),
                                 &response);
       }},
      {"Raycast", 0, true,
       [&](const std::string& token, const std::string& scene) {
         v1::QueryResponse response;
         return stub_->Raycast(
             Context(token).get(),
             Parse<v1::RaycastRequest>(
                 absl::StrCat("scene: '", scene, "' ray { direction { x: 1 } max_distance: 10 }")),
             &response);
       }},
      {"SphereCast", 0, true,
       [&](const std::string& token, const std::string& scene) {
         v1::QueryResponse response;
         return stub_->SphereCast(
             Context(token).get(),
             Parse<v1::SphereCastRequest>(absl::StrCat(
                 "scene: '", scene, "' cast { direction { x: 1 } max_distance: 10 radius: 1 }")),
             &response);
       }},
      {"Overlap", 0, true,
       [&](const std::string& token, const std::string& scene) {
         v1::QueryResponse response;
         return stub_->Overlap(
             Context(token).get(),
             Parse<v1::OverlapRequest>(
                 absl::StrCat("scene: '", scene, "' overlap { shape { sphere { radius: 1 } } }")),
             &response);
       }},
      {"ListScenes", 0, false,
       [&](const std::string& token, const std::string&) {
         v1::ListScenesResponse response;
         grpc::Status status =
             stub_->ListScenes(Context(token).get(), v1::ListScenesRequest(), &response);
         // A prefixed token sees only its scenes.
         const bool prefixed = token == "rp" || token == "wp" || token == "ap";
         for (const v1::SceneInfo& scene : response.scenes()) {
           if (prefixed) {
             EXPECT_TRUE(absl::StartsWith(scene.name(), "team-")) << scene.name();
           }
         }
         return status;
       }},
      {"GetServerStats", 2, false,
       [&](const std::string& token, const std::string&) {
         v1::GetServerStatsResponse response;
         return stub_->GetServerStats(Context(token).get(), v1::GetServerStatsRequest(), &response);
       }},
      // Streams: a role too low ends the stream; a scene outside the prefixes is the error of
      // its batch (code 7), reported here as PERMISSION_DENIED.
      {"UpdateStream", 1, true,
       [&](const std::string& token, const std::string& scene) {
         auto context = Context(token);
         auto stream = stub_->UpdateStream(context.get());
         stream->Write(Parse<v1::UpdateBatch>(absl::StrCat(
             "scene: '", scene, "' ops { upsert { id: 2 shape { sphere { radius: 1 } } } }")));
         stream->WritesDone();
         v1::UpdateAck ack;
         const bool answered = stream->Read(&ack);
         grpc::Status status = stream->Finish();
         if (!status.ok() || !answered) return status;
         if (ack.error().code() == 7) {
           return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, ack.error().message());
         }
         return grpc::Status::OK;
       }},
      {"QueryStream", 0, true,
       [&](const std::string& token, const std::string& scene) {
         auto context = Context(token);
         auto stream = stub_->QueryStream(context.get());
         stream->Write(
             Parse<v1::QueryBatch>(absl::StrCat("scene: '", scene, "' queries { point { } }")));
         stream->WritesDone();
         v1::QueryBatchResult result;
         const bool answered = stream->Read(&result);
         grpc::Status status = stream->Finish();
         if (!status.ok() || !answered) return status;
         if (result.error().code() == 7) {
           return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, result.error().message());
         }
         return grpc::Status::OK;
       }},
  };
  for (const Rpc& rpc : rpcs) {
    for (const Token& token : tokens) {
      for (bool inside : {true, false}) {
        if (!rpc.scoped && !inside) continue;
        SCOPED_TRACE(absl::StrCat(rpc.name, " with token \"", token.token, "\" on a scene ",
                                  inside ? "inside" : "outside", " the prefixes"));
        const std::string scene = fresh_scene(inside);
        const grpc::Status status = rpc.call(token.token, scene);
        if (token.role < 0) {
          EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
          EXPECT_TRUE(absl::StartsWith(status.error_message(), "authorization"))
              << status.error_message();
        } else if (token.role < rpc.role || (rpc.scoped && token.prefixed && !inside)) {
          EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
              << status.error_message();
        } else {
          EXPECT_NE(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
              << status.error_message();
          EXPECT_NE(status.error_code(), grpc::StatusCode::UNAUTHENTICATED)
              << status.error_message();
        }
      }
    }
  }
}

// Tokens never reach the log, whether they are accepted or refused.
TEST_F(ServerTest, TokensNeverAppearInTheLog) {
  std::ostringstream captured;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(captured);
  auto logger = std::make_shared<spdlog::logger>("capture", sink);
  logger->set_level(spdlog::level::trace);
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(logger);
  Start("secret-admin-token-1 admin\nsecret-reader-token-2 reader team-\n");
  EXPECT_TRUE(CreateScene("team-a", v1::DURABILITY_NONE, "secret-admin-token-1").ok());
  EXPECT_FALSE(CreateScene("team-b", v1::DURABILITY_NONE, "secret-reader-token-2").ok());
  EXPECT_FALSE(CreateScene("team-c", v1::DURABILITY_NONE, "secret-wrong-token-3").ok());
  server_->Shutdown().IgnoreError();
  spdlog::set_default_logger(previous);
  const std::string log = captured.str();
  EXPECT_FALSE(log.empty());
  for (const char* secret :
       {"secret-admin-token-1", "secret-reader-token-2", "secret-wrong-token-3"}) {
    EXPECT_FALSE(absl::StrContains(log, secret)) << log;
  }
}

TEST_F(ServerTest, ShutdownDrainsOpenStreamsAndKeepsAcknowledgedWrites) {
  Start();
  ASSERT_TRUE(CreateScene("a", v1::DURABILITY_ALWAYS).ok());
  auto context = Context();
  auto stream = stub_->UpdateStream(context.get());
  ASSERT_TRUE(stream->Write(Parse<v1::UpdateBatch>(
      "scene: 'a' ops { upsert { id: 1 shape { sphere { radius: 1 } } } }")));
  v1::UpdateAck ack;
  ASSERT_TRUE(stream->Read(&ack));
  EXPECT_EQ(ack.version(), 1u);
  // The stream stays open: Shutdown must still return after the drain deadline.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(server_->Shutdown().ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_FALSE(stream->Read(&ack));
  stream->Finish();

  // A new server on the same directory finds the body.
  Start();
  v1::GetBodiesResponse bodies;
  ASSERT_TRUE(
      stub_->GetBodies(Context().get(), Parse<v1::GetBodiesRequest>("scene: 'a'"), &bodies).ok());
  EXPECT_EQ(bodies.bodies_size(), 1);
}

TEST(IsLoopbackAddress, AcceptsOnlyAddressesReachableFromThisMachine) {
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1:50051"));
  EXPECT_TRUE(IsLoopbackAddress("127.1.2.3:0"));
  EXPECT_TRUE(IsLoopbackAddress("localhost:1"));
  EXPECT_TRUE(IsLoopbackAddress("[::1]:50051"));
  EXPECT_TRUE(IsLoopbackAddress("unix:/tmp/collide.sock"));
  EXPECT_FALSE(IsLoopbackAddress("0.0.0.0:50051"));
  EXPECT_FALSE(IsLoopbackAddress("[::]:50051"));
  EXPECT_FALSE(IsLoopbackAddress("10.0.0.1:50051"));
  EXPECT_FALSE(IsLoopbackAddress("example.com:50051"));
  EXPECT_FALSE(IsLoopbackAddress("127.0.0.1.example.com:1"));
}

TEST(CollideServer, RefusesARemoteAddressWithoutTokens) {
  TempDir dir;
  ServerOptions options;
  options.address = "0.0.0.0:0";
  options.data_dir = dir.File("data");
  absl::StatusOr<std::unique_ptr<CollideServer>> server = CollideServer::Start(options);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace collide
