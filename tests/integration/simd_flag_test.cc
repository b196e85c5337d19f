// --simd over the real server: bad values stop it with a message naming the flag; each level
// either starts (the start-up log names it) and answers a QueryStream batch of every query kind
// byte for byte as the server with --simd=sse does, or is refused as one the CPU lacks.

#include <cstdint>
#include <memory>
#include <random>
#include <string>

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

constexpr char kScene[] = "simd";
constexpr uint32_t kSeed = 20261128;

TEST(SimdFlag, BadValuesStopTheServerWithAClearMessage) {
  for (const char* flag :
       {"--simd=", "--simd=garbage", "--simd=AVX2", "--simd=sse2", "--simd=avx512f", "--simd=-1",
        "--simd=18446744073709551615", "--simd=nan", "--simd=avx2,sse", "--simd= sse"}) {
    ServerConfig config;
    config.extra_flags = {flag};
    auto server = ServerProcess::Start(config);
    ASSERT_FALSE(server.ok()) << flag;
    // Refused by the flag parser, which lists the values.
    EXPECT_TRUE(absl::StrContains(server.status().message(),
                                  "flag 'simd'; must be auto, sse, avx2 or avx512"))
        << flag << ": " << server.status().message();
    EXPECT_FALSE(absl::StrContains(server.status().message(), "signal")) << flag;
  }
}

// 2,000 bodies of every shape, some rotated, in a cube of side 60.
void Populate(client::Client& client) {
  v1::SceneOptions options;
  options.set_durability(v1::DURABILITY_NONE);
  ASSERT_TRUE(IsOk(client.CreateScene(kScene, options)));
  std::mt19937 rng(kSeed);
  auto uniform = [&](float lo, float hi) {
    return std::uniform_real_distribution<float>(lo, hi)(rng);
  };
  v1::UpdateBatch batch;
  batch.set_scene(kScene);
  for (uint64_t id = 1; id <= 2000; ++id) {
    const v1::Vec3 position = MakeVec3(uniform(0, 60), uniform(0, 60), uniform(0, 60));
    const v1::Pose pose =
        id % 4 == 0 ? MakePose(position, client::MakeQuat(0.0f, 0.70710677f, 0.0f, 0.70710677f))
                    : MakePose(position);
    const v1::Shape shape = id % 3 == 0   ? client::MakeSphere(uniform(0.2f, 1.5f))
                            : id % 3 == 1 ? client::MakeBox(uniform(0.2f, 1.f), 0.5f, 0.7f)
                                          : client::MakeCapsule(0.4f, uniform(0.f, 1.f));
    *batch.add_ops() = client::MakeUpsertOp(MakeBody(id, shape, pose));
  }
  auto writer = client.OpenUpdateStream(kScene, 0);
  ASSERT_TRUE(IsOk(writer));
  ASSERT_TRUE(IsOk((*writer)->Apply(batch)));
  EXPECT_TRUE(IsOk((*writer)->Finish()));
}

// Rays (some along an axis), sphere casts, overlaps and point queries in every mode.
v1::QueryBatch RandomBatch(int count) {
  std::mt19937 rng(kSeed + 1);
  auto uniform = [&](float lo, float hi) {
    return std::uniform_real_distribution<float>(lo, hi)(rng);
  };
  v1::QueryBatch batch;
  batch.set_scene(kScene);
  for (int i = 0; i < count; ++i) {
    const auto id = static_cast<uint64_t>(i) + 1;
    const v1::Vec3 origin = MakeVec3(uniform(0, 60), uniform(0, 60), uniform(0, 60));
    const v1::Vec3 direction =
        i % 7 == 0 ? MakeVec3(0, 0, i % 2 == 0 ? 1.0f : -1.0f)
                   : MakeVec3(uniform(-1, 1), uniform(-1, 1), uniform(-1, 1) + 0.01f);
    const auto mode = static_cast<v1::Mode>(i % 3);
    switch (i % 4) {
      case 0:
      case 1:
        *batch.add_queries() =
            client::MakeRaycastQuery(id, client::MakeRaycast(origin, direction, 50), mode);
        break;
      case 2:
        *batch.add_queries() = client::MakeSphereCastQuery(
            id, client::MakeSphereCast(origin, direction, 50, uniform(0.1f, 1.f)), mode);
        break;
      default:
        *batch.add_queries() = client::MakeOverlapQuery(
            id, client::MakeOverlap(client::MakeSphere(uniform(0.5f, 3.f)), MakePose(origin)), mode,
            i % 2 == 0);
        break;
    }
  }
  return batch;
}

TEST(SimdFlag, EveryLevelAnswersAsTheBaselineOrIsRefusedAsMissing) {
  std::string want;
  int started = 0;
  for (const char* level : {"sse", "avx2", "avx512", "auto"}) {
    ServerConfig config;
    config.extra_flags = {std::string("--simd=") + level, "--max_answer_bytes=2000000",
                          "--log_level=info"};
    auto server = ServerProcess::Start(config);
    if (!server.ok()) {
      // Only a level the CPU lacks may be refused, and never the baseline or auto.
      EXPECT_NE(std::string(level), "sse");
      EXPECT_NE(std::string(level), "auto");
      EXPECT_TRUE(absl::StrContains(server.status().message(), "--simd: this CPU lacks"))
          << level << ": " << server.status().message();
      continue;
    }
    ++started;
    if (std::string(level) != "auto") {
      EXPECT_TRUE(absl::StrContains((*server)->Logs(), std::string("simd ") + level + " (best"))
          << (*server)->Logs();
    }
    std::unique_ptr<client::Client> client = (*server)->NewClient();
    Populate(*client);
    if (HasFatalFailure()) return;
    auto stream = client->OpenQueryStream(kScene);
    ASSERT_TRUE(IsOk(stream));
    const v1::QueryBatch batch = RandomBatch(400);
    auto answer = (*stream)->Run(batch);
    ASSERT_TRUE(IsOk(answer)) << level;
    ASSERT_TRUE(IsOk(client::BatchStatus(*answer))) << level;
    ASSERT_EQ(answer->results_size(), batch.queries_size()) << level;
    int hits = 0;
    for (const v1::QueryResult& r : answer->results()) hits += r.hits_size();
    EXPECT_GT(hits, 200) << level;
    if (want.empty()) {
      want = answer->SerializeAsString();
    } else {
      EXPECT_TRUE(answer->SerializeAsString() == want) << "--simd=" << level;
    }
    EXPECT_TRUE(IsOk((*stream)->Finish()));
  }
  EXPECT_GE(started, 2);
}

}  // namespace
}  // namespace collide::integration
