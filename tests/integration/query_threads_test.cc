// --query_threads over the real server: bad values stop it with a clear message; whatever the
// value, a QueryStream batch (mixed kinds and modes, past ticks, queries rejected by conversion
// and by their tick in the middle) gets the same answer, byte for byte, as with one thread, and so
// does a batch that could pass --max_answer_bytes (run in segments).

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_status.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using client::MakeBody;
using client::MakePose;
using client::MakeVec3;

constexpr char kScene[] = "threads";
constexpr uint32_t kSeed = 20261127;

TEST(QueryThreads, BadValuesStopTheServerWithAClearMessage) {
  for (const char* flag :
       {"--query_threads=garbage", "--query_threads=", "--query_threads=-1", "--query_threads=0",
        "--query_threads=1025", "--query_threads=4294967296",
        "--query_threads=18446744073709551615", "--query_threads=1.5"}) {
    ServerConfig config;
    config.extra_flags = {flag};
    auto server = ServerProcess::Start(config);
    ASSERT_FALSE(server.ok()) << flag;
    EXPECT_TRUE(absl::StrContains(server.status().message(), "query_threads"))
        << flag << ": " << server.status().message();
    // Refused, not crashed.
    EXPECT_FALSE(absl::StrContains(server.status().message(), "signal")) << flag;
  }
}

// The same scene on every server: random bodies over ticks 1..6, the last 4 retained.
void Populate(client::Client& client) {
  v1::SceneOptions options;
  options.set_durability(v1::DURABILITY_NONE);
  options.set_history_ticks(4);
  ASSERT_TRUE(IsOk(client.CreateScene(kScene, options)));
  auto writer = client.OpenUpdateStream(kScene, 0);
  ASSERT_TRUE(IsOk(writer));
  std::mt19937 rng(kSeed);
  auto uniform = [&](float lo, float hi) {
    return std::uniform_real_distribution<float>(lo, hi)(rng);
  };
  for (uint64_t tick = 1; tick <= 6; ++tick) {
    v1::UpdateBatch batch;
    batch.set_scene(kScene);
    for (uint64_t id = 1; id <= 600; ++id) {
      if (tick > 1 && id % 5 != tick % 5) continue;
      const v1::Pose pose = MakePose(MakeVec3(uniform(0, 40), uniform(0, 40), uniform(0, 40)));
      if (tick == 1) {
        const v1::Shape shape = id % 3 == 0   ? client::MakeSphere(uniform(0.2f, 1.5f))
                                : id % 3 == 1 ? client::MakeBox(uniform(0.2f, 1.f), 0.5f, 0.7f)
                                              : client::MakeCapsule(0.4f, uniform(0.f, 1.f));
        *batch.add_ops() = client::MakeUpsertOp(MakeBody(id, shape, pose));
      } else {
        *batch.add_ops() = client::MakeSetPoseOp(id, pose);
      }
    }
    ASSERT_TRUE(IsOk((*writer)->Apply(client::WithTick(batch, tick))));
  }
  EXPECT_TRUE(IsOk((*writer)->Finish()));
}

// A batch of `count` queries of every kind and mode; query 7 of every 50 has a NaN direction
// (rejected by conversion), query 13 names tick 1 (not retained), about one in ten names a
// retained past tick.
v1::QueryBatch RandomBatch(int count) {
  std::mt19937 rng(kSeed + static_cast<uint32_t>(count));
  auto uniform = [&](float lo, float hi) {
    return std::uniform_real_distribution<float>(lo, hi)(rng);
  };
  v1::QueryBatch batch;
  batch.set_scene(kScene);
  for (int i = 0; i < count; ++i) {
    const auto id = static_cast<uint64_t>(i) + 1000;
    const v1::Vec3 origin = MakeVec3(uniform(0, 40), uniform(0, 40), uniform(0, 40));
    v1::Vec3 direction = MakeVec3(uniform(-1, 1), uniform(-1, 1), uniform(-1, 1) + 0.01f);
    if (i % 50 == 7) direction.set_x(std::numeric_limits<float>::quiet_NaN());
    const auto mode = static_cast<v1::Mode>(i % 3);
    v1::Query q;
    switch (i % 5) {
      case 0:
      case 1:
        q = client::MakeRaycastQuery(id, client::MakeRaycast(origin, direction, 30), mode);
        break;
      case 2:
        q = client::MakeSphereCastQuery(
            id, client::MakeSphereCast(origin, direction, 30, uniform(0.1f, 1.f)), mode);
        break;
      case 3:
        q = client::MakeOverlapQuery(
            id, client::MakeOverlap(client::MakeSphere(uniform(0.5f, 3.f)), MakePose(origin)), mode,
            i % 2 == 0);
        break;
      default:
        q = client::MakePointQuery(id, client::MakePoint(origin, uniform(0.5f, 3.f)), mode);
        break;
    }
    if (i % 10 == 3) q = client::AtTick(q, 4, i % 20 == 3 ? 0.25f : 0.0f);
    if (i % 50 == 13) q = client::AtTick(q, 1);
    *batch.add_queries() = q;
  }
  return batch;
}

TEST(QueryThreads, EveryThreadCountAnswersAsOneThread) {
  std::string want;
  std::string want_segmented;
  for (const char* threads : {"1", "2", "3", "1024"}) {
    ServerConfig config;
    config.extra_flags = {std::string("--query_threads=") + threads, "--max_answer_bytes=600000"};
    auto server = ServerProcess::Start(config);
    ASSERT_TRUE(IsOk(server)) << threads;
    std::unique_ptr<client::Client> client = (*server)->NewClient();
    Populate(*client);
    if (HasFatalFailure()) return;
    auto stream = client->OpenQueryStream(kScene);
    ASSERT_TRUE(IsOk(stream));
    const v1::QueryBatch batch = RandomBatch(256);
    auto answer = (*stream)->Run(batch);
    ASSERT_TRUE(IsOk(answer)) << threads;
    ASSERT_TRUE(IsOk(client::BatchStatus(*answer))) << threads;
    ASSERT_EQ(answer->results_size(), batch.queries_size()) << threads;
    int errors = 0;
    int hits = 0;
    for (int i = 0; i < answer->results_size(); ++i) {
      const v1::QueryResult& r = answer->results(i);
      EXPECT_EQ(r.request_id(), batch.queries(i).request_id()) << threads << " query " << i;
      const absl::Status status = client::ResultStatus(r);
      if (i % 50 == 7) {
        EXPECT_TRUE(HasError(status, absl::StatusCode::kInvalidArgument, "queries[")) << i;
      } else if (i % 50 == 13) {
        EXPECT_TRUE(HasError(status, absl::StatusCode::kOutOfRange, "queries[")) << i;
      } else {
        EXPECT_TRUE(IsOk(status)) << threads << " query " << i;
      }
      errors += !status.ok();
      hits += r.hits_size();
    }
    EXPECT_EQ(errors, 10) << threads;
    EXPECT_GT(hits, 100) << threads;
    if (want.empty()) {
      want = answer->SerializeAsString();
    } else {
      EXPECT_TRUE(answer->SerializeAsString() == want) << "--query_threads=" << threads;
    }
    // A batch whose largest answer could pass --max_answer_bytes runs in segments (each under
    // the same read, its hits bounded), and is answered the same way whatever the threads.
    const v1::QueryBatch large = RandomBatch(400);
    auto segmented = (*stream)->Run(large);
    ASSERT_TRUE(IsOk(segmented)) << threads;
    ASSERT_TRUE(IsOk(client::BatchStatus(*segmented))) << threads;
    ASSERT_EQ(segmented->results_size(), large.queries_size()) << threads;
    for (int i = 0; i < segmented->results_size(); ++i) {
      EXPECT_EQ(segmented->results(i).request_id(), large.queries(i).request_id()) << i;
    }
    if (want_segmented.empty()) {
      want_segmented = segmented->SerializeAsString();
    } else {
      EXPECT_TRUE(segmented->SerializeAsString() == want_segmented) << threads;
    }
    EXPECT_TRUE(IsOk((*stream)->Finish()));
  }
}

}  // namespace
}  // namespace collide::integration
