// Ticks through the real collide-server process and the C++ client: batches tagged with ticks
// (WithTick), queries at past ticks (AtTick), a batch waiting for a version another connection
// writes (WithMinVersion), and a restart, after which the current tick survives but the ticks
// before it are OUT_OF_RANGE.

#include <chrono>
#include <csignal>
#include <memory>
#include <string>
#include <thread>

#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using client::AtTick;
using client::MakeBody;
using client::MakePose;
using client::MakeRaycast;
using client::MakeRaycastQuery;
using client::MakeSetPoseOp;
using client::MakeSphere;
using client::MakeUpsertOp;
using client::MakeVec3;
using client::WithMinVersion;
using client::WithTick;

// Moves body 1 to x in a batch of `tick`.
v1::UpdateBatch MoveAt(uint64_t tick, float x) {
  v1::UpdateBatch batch;
  batch.set_scene("arena");
  *batch.add_ops() = MakeSetPoseOp(1, MakePose(MakeVec3(x, 0, 0)));
  return WithTick(batch, tick);
}

// A ray along +x of length 20 from the origin.
v1::Query Ray(uint64_t request_id) {
  return MakeRaycastQuery(request_id, MakeRaycast(MakeVec3(0, 0, 0), MakeVec3(1, 0, 0), 20));
}

TEST(History, PastTicksMinVersionsAndARestartThroughTheClient) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(IsOk(server));
  {
    auto client = (*server)->NewClient();
    v1::SceneOptions options;
    options.set_history_ticks(16);
    ASSERT_TRUE(IsOk(client->CreateScene("arena", options)));
    auto writer = client->OpenUpdateStream("arena", 0);
    ASSERT_TRUE(IsOk(writer));
    v1::UpdateBatch create;
    create.set_scene("arena");
    *create.add_ops() = MakeUpsertOp(MakeBody(1, MakeSphere(1), MakePose(MakeVec3(5, 0, 0))));
    ASSERT_TRUE(IsOk((*writer)->Apply(WithTick(create, 10))));
    // Ticks 11..20: the body walks away from the ray's reach (x = 5 + 3 (t - 10)).
    for (uint64_t t = 11; t <= 20; ++t) {
      auto ack = (*writer)->Apply(MoveAt(t, 5.0f + 3.0f * static_cast<float>(t - 10)));
      ASSERT_TRUE(IsOk(ack));
      ASSERT_FALSE(ack->has_error()) << ack->error().message();
    }
    auto below = (*writer)->Apply(MoveAt(19, 0));
    ASSERT_TRUE(IsOk(below));
    EXPECT_EQ(below->error().code(), 3);

    auto stream = client->OpenQueryStream("arena");
    ASSERT_TRUE(IsOk(stream));
    v1::QueryBatch batch;
    batch.set_scene("arena");
    *batch.add_queries() = Ray(1);                    // now: x = 35, out of reach
    *batch.add_queries() = AtTick(Ray(2), 10);        // x = 5: hit at 4
    *batch.add_queries() = AtTick(Ray(3), 12, 0.5f);  // x = 12.5: hit at 11.5
    *batch.add_queries() = AtTick(Ray(4), 3);         // before the scene's first tick
    auto result = (*stream)->Run(batch);
    ASSERT_TRUE(IsOk(result));
    ASSERT_EQ(result->results_size(), 4);
    EXPECT_EQ(result->results(0).hits_size(), 0);
    ASSERT_EQ(result->results(1).hits_size(), 1);
    EXPECT_FLOAT_EQ(result->results(1).hits(0).distance(), 4.0f);
    ASSERT_EQ(result->results(2).hits_size(), 1);
    EXPECT_FLOAT_EQ(result->results(2).hits(0).distance(), 11.5f);
    EXPECT_EQ(result->results(3).error().code(), 11);
    EXPECT_EQ(result->results(3).error().message(),
              "queries[3].at_tick: tick 3 is not retained (retained: 5..20)");

    // A batch asking for the next version is answered once another connection writes it.
    const uint64_t next = result->version() + 1;
    std::thread other([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      auto other_client = (*server)->NewClient();
      auto other_writer = other_client->OpenUpdateStream("arena", 0);
      ASSERT_TRUE(IsOk(other_writer));
      ASSERT_TRUE(IsOk((*other_writer)->Apply(MoveAt(21, 8))));
      ASSERT_TRUE(IsOk((*other_writer)->Finish()));
    });
    v1::QueryBatch wait;
    wait.set_scene("arena");
    *wait.add_queries() = Ray(5);
    auto waited = (*stream)->Run(WithMinVersion(wait, next));
    other.join();
    ASSERT_TRUE(IsOk(waited));
    EXPECT_EQ(waited->version(), next);
    ASSERT_EQ(waited->results(0).hits_size(), 1);
    EXPECT_FLOAT_EQ(waited->results(0).hits(0).distance(), 7.0f);
    ASSERT_TRUE(IsOk((*stream)->Finish()));
    ASSERT_TRUE(IsOk((*writer)->Finish()));
  }

  auto exit_code = (*server)->Stop(SIGTERM);
  ASSERT_TRUE(IsOk(exit_code));
  ASSERT_TRUE(IsOk((*server)->Restart()));
  auto client = (*server)->NewClient();
  auto info = client->GetScene("arena");
  ASSERT_TRUE(IsOk(info));
  EXPECT_EQ(info->options().history_ticks(), 16u);
  EXPECT_EQ(info->stats().tick(), 21u);
  EXPECT_EQ(info->stats().oldest_tick(), 21u);
  auto stream = client->OpenQueryStream("arena");
  ASSERT_TRUE(IsOk(stream));
  v1::QueryBatch batch;
  batch.set_scene("arena");
  *batch.add_queries() = AtTick(Ray(1), 20);
  *batch.add_queries() = AtTick(Ray(2), 21);
  auto result = (*stream)->Run(batch);
  ASSERT_TRUE(IsOk(result));
  EXPECT_EQ(result->results(0).error().message(),
            "queries[0].at_tick: tick 20 is not retained (retained: 21..21)");
  ASSERT_EQ(result->results(1).hits_size(), 1);
  EXPECT_FLOAT_EQ(result->results(1).hits(0).distance(), 7.0f);
  ASSERT_TRUE(IsOk((*stream)->Finish()));
}

}  // namespace
}  // namespace collide::integration
