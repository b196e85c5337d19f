// The viewer's sample of answered casts (QuerySampler) is fed by the server's query rpcs, after
// AnswerQueries: unary Raycast and SphereCast and QueryStream batches, present and past ticks,
// through the real server started in process on 127.0.0.1:0 and called through a generated stub.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "collide/v1/collide.grpc.pb.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "scene/query_sampler.h"
#include "server/server.h"

namespace collide {
namespace {

template <typename Message>
Message Parse(const std::string& text) {
  Message message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "collide-samples-XXXXXX");
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

std::unique_ptr<grpc::ClientContext> Context() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  return context;
}

// A scene "a" with history_ticks 8 and body 1 (a unit sphere) at x = 5 in tick 1, moved to
// x = 50 in tick 2.
class QuerySamplesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.address = "127.0.0.1:0";
    options.data_dir = dir_.File("data");
    options.durability = DurabilityPolicy::kNone;
    options.drain_timeout_ms = 500;
    absl::StatusOr<std::unique_ptr<CollideServer>> server = CollideServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
    stub_ = v1::Collide::NewStub(grpc::CreateCustomChannel(
        absl::StrCat("127.0.0.1:", server_->port()), grpc::InsecureChannelCredentials(), args));
    v1::CreateSceneResponse created;
    ASSERT_TRUE(stub_
                    ->CreateScene(Context().get(),
                                  Parse<v1::CreateSceneRequest>(
                                      "scene: 'a' options { history_ticks: 8 durability: "
                                      "DURABILITY_NONE }"),
                                  &created)
                    .ok());
    Update(
        "scene: 'a' tick: 1 ops { upsert { id: 1 shape { sphere { radius: 1 } } "
        "pose { position { x: 5 } } } }");
    Update("scene: 'a' tick: 2 ops { set_pose { id: 1 pose { position { x: 50 } } } }");
    absl::StatusOr<std::shared_ptr<const Scene>> scene = server_->database()->GetScene("a");
    ASSERT_TRUE(scene.ok()) << scene.status();
    scene_ = *std::move(scene);
  }

  void Update(const std::string& text) {
    auto context = Context();
    auto stream = stub_->UpdateStream(context.get());
    ASSERT_TRUE(stream->Write(Parse<v1::UpdateBatch>(text)));
    ASSERT_TRUE(stream->WritesDone());
    v1::UpdateAck ack;
    ASSERT_TRUE(stream->Read(&ack));
    ASSERT_FALSE(ack.has_error()) << ack.error().message();
    ASSERT_TRUE(stream->Finish().ok());
  }

  v1::QueryResponse Raycast(const std::string& ray) {
    v1::QueryResponse response;
    EXPECT_TRUE(
        stub_
            ->Raycast(Context().get(),
                      Parse<v1::RaycastRequest>(absl::StrCat("scene: 'a' ray { ", ray, " }")),
                      &response)
            .ok());
    return response;
  }

  TempDir dir_;
  std::unique_ptr<CollideServer> server_;
  std::unique_ptr<v1::Collide::Stub> stub_;
  std::shared_ptr<const Scene> scene_;
};

constexpr char kAlongX[] = "direction { x: 1 } max_distance: 100";

TEST_F(QuerySamplesTest, TheQueryRpcsOfferTheirCastsOnceTheSceneIsFollowed) {
  QuerySampler& sampler = *server_->query_samples();
  // Answered while no reader follows the scene: not taken.
  ASSERT_EQ(Raycast(kAlongX).hits_size(), 1);
  const uint64_t cursor = sampler.Follow(scene_.get());
  EXPECT_EQ(cursor, 0u);

  const v1::QueryResponse ray = Raycast(absl::StrCat("origin { y: 0.5 } ", kAlongX));
  v1::QueryResponse sphere;
  ASSERT_TRUE(stub_
                  ->SphereCast(Context().get(),
                               Parse<v1::SphereCastRequest>(
                                   absl::StrCat("scene: 'a' cast { radius: 2 ", kAlongX, " }")),
                               &sphere)
                  .ok());
  auto context = Context();
  auto stream = stub_->QueryStream(context.get());
  // A past-tick cast, a point query (not a cast), a cast at a tick not retained (not run), a
  // cast that misses.
  ASSERT_TRUE(stream->Write(Parse<v1::QueryBatch>(absl::StrCat(
      "scene: 'a' queries { request_id: 1 at_tick: 1 raycast { ", kAlongX,
      " } } queries { request_id: 2 point { point { x: 50 } radius: 1 } } "
      "queries { request_id: 3 at_tick: 17 raycast { ",
      kAlongX,
      " } } queries { request_id: 4 raycast { direction { x: -1 } max_distance: 10 } }"))));
  ASSERT_TRUE(stream->WritesDone());
  v1::QueryBatchResult batch;
  ASSERT_TRUE(stream->Read(&batch));
  ASSERT_EQ(batch.results_size(), 4);
  ASSERT_EQ(batch.results(0).hits_size(), 1);
  EXPECT_TRUE(batch.results(2).has_error());
  EXPECT_TRUE(stream->Finish().ok());

  const SampledQueries taken = sampler.After(scene_.get(), cursor, QuerySampler::kMaxKept);
  sampler.Unfollow(scene_.get());
  EXPECT_EQ(taken.dropped, 0u);
  ASSERT_EQ(taken.samples.size(), 4u);
  for (size_t i = 0; i < taken.samples.size(); ++i) {
    EXPECT_EQ(taken.samples[i].sequence, i + 1);
    EXPECT_EQ(taken.samples[i].version, 2u);
  }
  EXPECT_EQ(taken.next, 4u);

  const QuerySample& unary_ray = taken.samples[0];
  EXPECT_FALSE(unary_ray.sphere);
  EXPECT_EQ(unary_ray.origin.y, 0.5f);
  EXPECT_EQ(unary_ray.direction.x, 1.0f);
  EXPECT_EQ(unary_ray.max_distance, 100.0f);
  EXPECT_FALSE(unary_ray.at_tick.has_value());
  ASSERT_EQ(ray.hits_size(), 1);
  EXPECT_EQ(unary_ray.hit_id, ray.hits(0).body_id());
  EXPECT_EQ(unary_ray.hit_distance, ray.hits(0).distance());

  const QuerySample& unary_sphere = taken.samples[1];
  EXPECT_TRUE(unary_sphere.sphere);
  EXPECT_EQ(unary_sphere.radius, 2.0f);
  ASSERT_EQ(sphere.hits_size(), 1);
  EXPECT_EQ(unary_sphere.hit_id, sphere.hits(0).body_id());
  EXPECT_EQ(unary_sphere.hit_distance, sphere.hits(0).distance());

  // The batch's casts that ran, in batch order: the past tick's hit is the body at x = 5.
  const QuerySample& past = taken.samples[2];
  EXPECT_EQ(past.at_tick, 1u);
  EXPECT_EQ(past.hit_id, 1u);
  EXPECT_EQ(past.hit_distance, batch.results(0).hits(0).distance());
  EXPECT_FLOAT_EQ(past.hit_distance, 4.0f);
  const QuerySample& miss = taken.samples[3];
  EXPECT_EQ(miss.direction.x, -1.0f);
  EXPECT_FALSE(miss.at_tick.has_value());
  EXPECT_FALSE(miss.hit_id.has_value());
}

}  // namespace
}  // namespace collide
