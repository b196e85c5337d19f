// Streams under load and at their edges: a sender far ahead of the reader (the server bounds
// what it holds; acks and results still arrive complete and in order), streams cancelled
// mid-flight, and a graceful stop while streams are open.

#include <csignal>
#include <memory>
#include <thread>
#include <vector>

#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_status.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using client::MakePose;
using client::MakeVec3;

constexpr int kPipelinedBatches = 600;

std::unique_ptr<ServerProcess> StartWithScene(std::vector<std::string> flags = {}) {
  ServerConfig config;
  config.extra_flags = std::move(flags);
  auto server = ServerProcess::Start(config);
  EXPECT_TRUE(IsOk(server));
  if (!server.ok()) return nullptr;
  auto client = (*server)->NewClient();
  v1::SceneOptions options;
  options.set_durability(v1::DURABILITY_NONE);
  EXPECT_TRUE(IsOk(client->CreateScene("arena", options)));
  std::vector<v1::Body> bodies;
  for (int i = 1; i <= 10; ++i) {
    bodies.push_back(client::MakeBody(i, client::MakeSphere(0.5f), MakePose(MakeVec3(i, 0, 0))));
  }
  EXPECT_TRUE(IsOk(client->UpsertBodies("arena", bodies)));
  return *std::move(server);
}

TEST(Pipelining, UpdateAcksArriveInOrderWhileTheSenderRunsAhead) {
  auto server = StartWithScene({"--max_inflight_per_stream=8"});
  ASSERT_NE(server, nullptr);
  auto client = server->NewClient();
  auto writer = client->OpenUpdateStream("arena", /*client_id=*/3);
  ASSERT_TRUE(IsOk(writer));
  absl::Status send_status;
  std::thread sender([&] {
    for (int b = 0; b < kPipelinedBatches; ++b) {
      v1::UpdateBatch batch;
      batch.set_scene("arena");
      client::AddMove(1 + b % 10, MakePose(MakeVec3(b % 10 + 1, 0.001f * b, 0)),
                      batch.mutable_moves());
      auto sent = (*writer)->Send(batch);
      if (!sent.ok()) {
        send_status = sent.status();
        return;
      }
    }
  });
  uint64_t version = 1;  // After the upsert.
  for (int b = 0; b < kPipelinedBatches; ++b) {
    auto ack = (*writer)->ReadAck();
    bool ok = ack.ok() && client::AckStatus(*ack).ok();
    EXPECT_TRUE(ok) << "ack " << b << ": "
                    << (ack.ok() ? ack->ShortDebugString() : ack.status().ToString());
    if (!ok) {
      (*writer)->Cancel();  // Unblocks the sender.
      break;
    }
    EXPECT_EQ(ack->client_sequence(), static_cast<uint64_t>(b + 1));
    EXPECT_EQ(ack->version(), ++version);
  }
  sender.join();
  ASSERT_FALSE(HasFailure());
  EXPECT_TRUE(IsOk(send_status));
  EXPECT_TRUE(IsOk((*writer)->Finish()));
  auto scene = client->GetScene("arena");
  ASSERT_TRUE(IsOk(scene));
  EXPECT_EQ(scene->stats().version(), version);
}

TEST(Pipelining, QueryResultsArriveInOrderWhileTheSenderRunsAhead) {
  auto server = StartWithScene({"--max_inflight_per_stream=8"});
  ASSERT_NE(server, nullptr);
  auto client = server->NewClient();
  auto session = client->OpenQueryStream("arena");
  ASSERT_TRUE(IsOk(session));
  absl::Status send_status;
  std::thread sender([&] {
    for (int b = 0; b < kPipelinedBatches; ++b) {
      v1::QueryBatch batch;
      batch.set_scene("arena");
      for (int q = 0; q < 4; ++q) {
        *batch.add_queries() = client::MakeRaycastQuery(
            b * 4 + q + 1,
            client::MakeRaycast(MakeVec3(1 + (b + q) % 10, 0, -5), MakeVec3(0, 0, 1), 10));
      }
      absl::Status sent = (*session)->Send(batch);
      if (!sent.ok()) {
        send_status = sent;
        return;
      }
    }
  });
  for (int b = 0; b < kPipelinedBatches; ++b) {
    auto result = (*session)->Read();
    bool ok = result.ok() && client::BatchStatus(*result).ok() && result->results_size() == 4;
    EXPECT_TRUE(ok) << "batch " << b << ": "
                    << (result.ok() ? result->ShortDebugString() : result.status().ToString());
    if (!ok) {
      (*session)->Cancel();  // Unblocks the sender.
      break;
    }
    EXPECT_EQ(result->version(), 1u);
    for (int q = 0; q < 4; ++q) {
      const v1::QueryResult& answer = result->results(q);
      EXPECT_EQ(answer.request_id(), static_cast<uint64_t>(b * 4 + q + 1));
      EXPECT_EQ(answer.hits_size(), 1);
      if (answer.hits_size() == 1) {
        EXPECT_EQ(answer.hits(0).body_id(), static_cast<uint64_t>(1 + (b + q) % 10));
      }
    }
  }
  sender.join();
  ASSERT_FALSE(HasFailure());
  EXPECT_TRUE(IsOk(send_status));
  EXPECT_TRUE(IsOk((*session)->Finish()));
}

TEST(Pipelining, CancelledStreamsLeaveTheServerServing) {
  auto server = StartWithScene();
  ASSERT_NE(server, nullptr);
  auto client = server->NewClient();
  for (int round = 0; round < 20; ++round) {
    // Batches sent, acks and results never read, streams dropped (cancelled).
    auto writer = client->OpenUpdateStream("arena", /*client_id=*/0);
    ASSERT_TRUE(IsOk(writer));
    auto session = client->OpenQueryStream("arena");
    ASSERT_TRUE(IsOk(session));
    for (int b = 0; b < 5; ++b) {
      v1::UpdateBatch batch;
      batch.set_scene("arena");
      *batch.add_ops() = client::MakeSetPoseOp(1, MakePose(MakeVec3(1, round, b)));
      (*writer)->Send(batch).IgnoreError();
      v1::QueryBatch queries;
      queries.set_scene("arena");
      *queries.add_queries() = client::MakeRaycastQuery(
          1, client::MakeRaycast(MakeVec3(0, 0, 0), MakeVec3(1, 0, 0), 100));
      (*session)->Send(queries).IgnoreError();
    }
  }
  // Still serving; the scene is whole (every applied batch moved body 1 only).
  auto bodies = client->GetBodies("arena");
  ASSERT_TRUE(IsOk(bodies));
  EXPECT_EQ(bodies->bodies_size(), 10);
  auto session = client->OpenQueryStream("arena");
  ASSERT_TRUE(IsOk(session));
  v1::QueryBatch batch;
  batch.set_scene("arena");
  *batch.add_queries() =
      client::MakeRaycastQuery(1, client::MakeRaycast(MakeVec3(2, 0, -5), MakeVec3(0, 0, 1), 10));
  auto result = (*session)->Run(batch);
  ASSERT_TRUE(IsOk(result));
  ASSERT_EQ(result->results_size(), 1);
  ASSERT_EQ(result->results(0).hits_size(), 1);
  EXPECT_EQ(result->results(0).hits(0).body_id(), 2u);
  EXPECT_TRUE(IsOk((*session)->Finish()));
  // Disconnect first: an idle connected channel holds the server's drain for its full deadline.
  session->reset();
  client.reset();
  auto exit_code = server->Stop(SIGTERM);
  ASSERT_TRUE(IsOk(exit_code));
  EXPECT_EQ(*exit_code, 0) << server->Logs();
}

TEST(Pipelining, SigtermWithOpenStreamsExitsCleanlyAfterTheDrainDeadline) {
  auto server = StartWithScene({"--drain_timeout_ms=300"});
  ASSERT_NE(server, nullptr);
  auto client = server->NewClient();
  auto writer = client->OpenUpdateStream("arena", /*client_id=*/9);
  ASSERT_TRUE(IsOk(writer));
  v1::UpdateBatch batch;
  batch.set_scene("arena");
  *batch.add_ops() = client::MakeSetPoseOp(1, MakePose(MakeVec3(1, 1, 1)));
  auto ack = (*writer)->Apply(batch);
  ASSERT_TRUE(IsOk(ack));
  auto session = client->OpenQueryStream("arena");
  ASSERT_TRUE(IsOk(session));
  v1::QueryBatch queries;
  queries.set_scene("arena");
  *queries.add_queries() =
      client::MakeRaycastQuery(1, client::MakeRaycast(MakeVec3(0, 0, 0), MakeVec3(1, 0, 0), 100));
  ASSERT_TRUE(IsOk((*session)->Run(queries)));

  // Both streams stay open on the client side while the server stops.
  auto exit_code = server->Stop(SIGTERM);
  ASSERT_TRUE(IsOk(exit_code));
  EXPECT_EQ(*exit_code, 0) << server->Logs();
  // The streams have ended: reading fails instead of hanging.
  EXPECT_FALSE((*session)->Read().ok());
  EXPECT_FALSE((*session)->Finish().ok());

  // The acknowledged batch survived the stop.
  ASSERT_TRUE(IsOk(server->Restart()));
  auto again = server->NewClient();
  std::vector<uint64_t> ids = {1};
  auto bodies = again->GetBodies("arena", ids);
  ASSERT_TRUE(IsOk(bodies));
  ASSERT_EQ(bodies->bodies_size(), 1);
  EXPECT_FLOAT_EQ(bodies->bodies(0).pose().position().y(), 1.0f);
}

}  // namespace
}  // namespace collide::integration
