// Ticks, past-tick queries and min_version waits through the real server, started in process on
// 127.0.0.1:0 and called through a generated stub.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "collide/v1/collide.grpc.pb.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "server/rpc/version_wait.h"
#include "server/server.h"

namespace collide {
namespace {

using std::chrono::milliseconds;

template <typename Message>
Message Parse(const std::string& text) {
  Message message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "collide-history-XXXXXX");
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

// A scene "a" with history_ticks 8 and body 1 (a unit sphere) at x = 5 in tick 1, moved to
// x = 50 in tick 2: a ray along +x of length 20 hits it at tick 1 and misses it now.
class HistoryServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.address = "127.0.0.1:0";
    options.data_dir = dir_.File("data");
    options.durability = DurabilityPolicy::kNone;
    options.drain_timeout_ms = 500;
    options.limits.max_version_wait_ms = 300;
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
    EXPECT_EQ(created.scene().options().history_ticks(), 8u);
    ASSERT_EQ(Update("scene: 'a' tick: 1 ops { upsert { id: 1 shape { sphere { radius: 1 } } "
                     "pose { position { x: 5 } } } }")
                  .version(),
              1u);
    ASSERT_EQ(Update("scene: 'a' tick: 2 ops { set_pose { id: 1 pose { position { x: 50 } } } }")
                  .version(),
              2u);
  }

  std::unique_ptr<grpc::ClientContext> Context(milliseconds timeout = milliseconds(20000)) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + timeout);
    return context;
  }

  // Sends one batch through an UpdateStream and returns its ack.
  v1::UpdateAck Update(const std::string& text) {
    auto context = Context();
    auto stream = stub_->UpdateStream(context.get());
    EXPECT_TRUE(stream->Write(Parse<v1::UpdateBatch>(text)));
    EXPECT_TRUE(stream->WritesDone());
    v1::UpdateAck ack;
    EXPECT_TRUE(stream->Read(&ack));
    EXPECT_TRUE(stream->Finish().ok());
    return ack;
  }

  TempDir dir_;
  std::unique_ptr<CollideServer> server_;
  std::unique_ptr<v1::Collide::Stub> stub_;
};

constexpr char kRay[] = "raycast { direction { x: 1 } max_distance: 20 }";

TEST_F(HistoryServerTest, QueriesAtAPastTickSeeThePosesOfThatTick) {
  auto context = Context();
  auto stream = stub_->QueryStream(context.get());
  ASSERT_TRUE(stream->Write(Parse<v1::QueryBatch>(absl::StrCat(
      "scene: 'a' queries { request_id: 1 ", kRay, " } queries { request_id: 2 at_tick: 1 ", kRay,
      " } queries { request_id: 3 at_tick: 1 tick_fraction: 0.5 point { point { x: 27.5 } } } "
      "queries { request_id: 4 at_tick: 17 ",
      kRay, " } queries { request_id: 5 at_tick: 2 tick_fraction: 0.5 ", kRay, " }"))));
  ASSERT_TRUE(stream->WritesDone());
  v1::QueryBatchResult result;
  ASSERT_TRUE(stream->Read(&result));
  ASSERT_EQ(result.results_size(), 5);
  EXPECT_EQ(result.version(), 2u);
  EXPECT_EQ(result.results(0).hits_size(), 0);
  ASSERT_EQ(result.results(1).hits_size(), 1);
  EXPECT_EQ(result.results(1).hits(0).body_id(), 1u);
  EXPECT_FLOAT_EQ(result.results(1).hits(0).distance(), 4.0f);
  // Halfway between x = 5 and x = 50 the body's centre is at 27.5.
  ASSERT_EQ(result.results(2).hits_size(), 1);
  EXPECT_EQ(result.results(2).hits(0).distance(), 0.0f);
  EXPECT_EQ(result.results(3).error().code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_EQ(result.results(3).error().message(),
            "queries[3].at_tick: tick 17 is not retained (retained: 0..2)");
  EXPECT_EQ(result.results(4).error().code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_TRUE(absl::StartsWith(result.results(4).error().message(), "queries[4].tick_fraction: "));
  EXPECT_FALSE(stream->Read(&result));
  EXPECT_TRUE(stream->Finish().ok());

  v1::QueryResponse response;
  auto unary = Parse<v1::RaycastRequest>(
      "scene: 'a' at_tick: 1 ray { direction { x: 1 } max_distance: 20 }");
  ASSERT_TRUE(stub_->Raycast(Context().get(), unary, &response).ok());
  ASSERT_EQ(response.hits_size(), 1);
  EXPECT_EQ(response.hits(0).body_id(), 1u);
  unary.set_at_tick(99);
  grpc::Status status = stub_->Raycast(Context().get(), unary, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_EQ(status.error_message(), "at_tick: tick 99 is not retained (retained: 0..2)");
  unary.set_tick_fraction(1.0f);
  status = stub_->Raycast(Context().get(), unary, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "tick_fraction: "))
      << status.error_message();

  v1::GetSceneResponse scene;
  ASSERT_TRUE(
      stub_->GetScene(Context().get(), Parse<v1::GetSceneRequest>("scene: 'a'"), &scene).ok());
  EXPECT_EQ(scene.scene().stats().tick(), 2u);
  EXPECT_EQ(scene.scene().stats().oldest_tick(), 0u);
}

TEST_F(HistoryServerTest, ABatchBelowTheCurrentTickIsRejectedWithTheTickPath) {
  const v1::UpdateAck ack =
      Update("scene: 'a' tick: 1 ops { set_pose { id: 1 pose { position { x: 6 } } } }");
  EXPECT_EQ(ack.error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(ack.error().message(), "tick: ")) << ack.error().message();
  // Equal amends the current tick.
  EXPECT_EQ(
      Update("scene: 'a' tick: 2 ops { set_pose { id: 1 pose { position { x: 7 } } } }").version(),
      3u);
}

TEST_F(HistoryServerTest, AQueryBatchWithAMinVersionWaitsForIt) {
  auto context = Context();
  auto stream = stub_->QueryStream(context.get());
  ASSERT_TRUE(stream->Write(
      Parse<v1::QueryBatch>(absl::StrCat("scene: 'a' min_version: 3 queries { ", kRay, " }"))));
  // The write that brings version 3 comes later, from another connection; it moves the body
  // back into the ray. The answer can only be at version 3, with the hit, if the server held the
  // batch until that write: a server that answered at once would answer at version 2, where the
  // ray misses. (The pause only makes it likely that the batch is waiting when the write comes;
  // nothing is asserted about how long anything took.)
  std::thread writer([&] {
    std::this_thread::sleep_for(milliseconds(100));
    Update("scene: 'a' tick: 3 ops { set_pose { id: 1 pose { position { x: 8 } } } }");
  });
  v1::QueryBatchResult result;
  ASSERT_TRUE(stream->Read(&result));
  writer.join();
  EXPECT_FALSE(result.has_error()) << result.error().message();
  EXPECT_EQ(result.version(), 3u);
  ASSERT_EQ(result.results(0).hits_size(), 1);
  EXPECT_FLOAT_EQ(result.results(0).hits(0).distance(), 7.0f);
  // A version already there answers at once.
  ASSERT_TRUE(stream->Write(
      Parse<v1::QueryBatch>(absl::StrCat("scene: 'a' min_version: 1 queries { ", kRay, " }"))));
  ASSERT_TRUE(stream->Read(&result));
  EXPECT_EQ(result.version(), 3u);
  ASSERT_TRUE(stream->WritesDone());
  EXPECT_FALSE(stream->Read(&result));
  EXPECT_TRUE(stream->Finish().ok());

  // The unary form.
  std::thread later([&] {
    std::this_thread::sleep_for(milliseconds(100));
    Update("scene: 'a' ops { set_pose { id: 1 pose { position { x: 9 } } } }");
  });
  v1::QueryResponse response;
  ASSERT_TRUE(stub_
                  ->Raycast(Context().get(),
                            Parse<v1::RaycastRequest>("scene: 'a' min_version: 4 ray { direction "
                                                      "{ x: 1 } max_distance: 20 }"),
                            &response)
                  .ok());
  later.join();
  EXPECT_EQ(response.version(), 4u);
  ASSERT_EQ(response.hits_size(), 1);
  EXPECT_FLOAT_EQ(response.hits(0).distance(), 8.0f);
}

TEST_F(HistoryServerTest, AMinVersionNotReachedInTimeIsDeadlineExceeded) {
  // The server's --max_version_wait_ms (300 ms here) bounds the wait of a stream batch.
  auto context = Context();
  auto stream = stub_->QueryStream(context.get());
  ASSERT_TRUE(stream->Write(
      Parse<v1::QueryBatch>(absl::StrCat("scene: 'a' min_version: 99 queries { ", kRay, " }"))));
  ASSERT_TRUE(
      stream->Write(Parse<v1::QueryBatch>(absl::StrCat("scene: 'a' queries { ", kRay, " }"))));
  v1::QueryBatchResult result;
  ASSERT_TRUE(stream->Read(&result));
  EXPECT_EQ(result.error().code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_TRUE(absl::StartsWith(result.error().message(), "min_version: "))
      << result.error().message();
  // The stream goes on.
  ASSERT_TRUE(stream->Read(&result));
  EXPECT_FALSE(result.has_error());
  EXPECT_EQ(result.version(), 2u);
  ASSERT_TRUE(stream->WritesDone());
  EXPECT_TRUE(stream->Finish().ok());

  // A unary query, bounded by the server's limit and by its own deadline.
  v1::QueryResponse response;
  const auto request = Parse<v1::RaycastRequest>(
      "scene: 'a' min_version: 99 ray { direction { x: 1 } max_distance: 20 }");
  grpc::Status status = stub_->Raycast(Context().get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "min_version: ")) << status.error_message();
  // With a deadline before the server's limit, the call's deadline ends it. (The client's own
  // timer ends the call at the client either way, so how long it took says nothing about the
  // server; the server's use of the call deadline is VersionWaitDeadline, tested below.)
  status = stub_->Raycast(Context(milliseconds(100)).get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // The server goes on serving the scene.
  ASSERT_TRUE(
      stub_
          ->Raycast(Context().get(),
                    Parse<v1::RaycastRequest>("scene: 'a' min_version: 2 ray { direction { x: 1 } "
                                              "max_distance: 20 }"),
                    &response)
          .ok());
  EXPECT_EQ(response.version(), 2u);
}

TEST(VersionWaitDeadline, IsTheCallDeadlineOrTheServersLimitWhicheverComesFirst) {
  using std::chrono::system_clock;
  // A call deadline before the limit: the call deadline, exactly.
  const system_clock::time_point soon = system_clock::now() + milliseconds(100);
  EXPECT_EQ(VersionWaitDeadline(soon, 300), soon);
  const system_clock::time_point past = system_clock::now() - milliseconds(1);
  EXPECT_EQ(VersionWaitDeadline(past, 300), past);
  // A later one (or none): the limit from the moment of the call, bracketed by the clock read
  // before and after it.
  for (system_clock::time_point call_deadline :
       {system_clock::now() + std::chrono::seconds(20), system_clock::time_point::max()}) {
    const system_clock::time_point before = system_clock::now();
    const system_clock::time_point wait_until = VersionWaitDeadline(call_deadline, 300);
    const system_clock::time_point after = system_clock::now();
    EXPECT_GE(wait_until, before + milliseconds(300));
    EXPECT_LE(wait_until, after + milliseconds(300));
  }
}

}  // namespace
}  // namespace collide
