// collide-server's log from a real run: the slow-query lines (--slow_query_ms), the access log
// (--log_level=debug: one line per call) and the lifecycle events, and what never reaches it
// (tokens); bad --slow_query_ms values stop the server before it serves.

#include <signal.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using client::MakeBody;
using client::MakePose;
using client::MakeSphere;
using client::MakeVec3;

constexpr char kAdminToken[] = "adm-7f3e9c2b51d04a8e";
constexpr char kReaderToken[] = "rdr-0b64d1e97a3c52f8";

// The lines of `log` that contain `text`.
std::vector<std::string> LinesWith(const std::string& log, absl::string_view text) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (absl::StrContains(line, text)) lines.emplace_back(line);
  }
  return lines;
}

// The text of every line the server logged, after a graceful stop (so that nothing is left in
// a buffer).
class ServerLogsTest : public ::testing::Test {
 protected:
  static std::string RunWorkloadAndStop(const std::vector<std::string>& flags) {
    ServerConfig config;
    config.token_file_contents = absl::StrCat(kAdminToken, " admin\n", kReaderToken, " reader\n");
    config.extra_flags = flags;
    auto server = ServerProcess::Start(config);
    EXPECT_TRUE(IsOk(server));
    if (!server.ok()) return "";
    std::unique_ptr<client::Client> admin = (*server)->NewClient(kAdminToken);
    std::unique_ptr<client::Client> reader = (*server)->NewClient(kReaderToken);
    // 1: CreateScene arena, 2: UpsertBodies (version 1).
    EXPECT_TRUE(IsOk(admin->CreateScene("arena")));
    EXPECT_TRUE(IsOk(admin->UpsertBodies(
        "arena", std::vector<v1::Body>{MakeBody(1, MakeSphere(1), MakePose(MakeVec3(0, 0, 5))),
                                       MakeBody(2, MakeSphere(1), MakePose(MakeVec3(0, 0, 9)))})));
    // 3: a QueryStream with one batch of two ray casts and an overlap.
    {
      auto session = reader->OpenQueryStream("arena");
      EXPECT_TRUE(IsOk(session));
      if (session.ok()) {
        v1::QueryBatch batch;
        batch.set_scene("arena");
        const v1::Raycast up = client::MakeRaycast(MakeVec3(0, 0, 0), MakeVec3(0, 0, 1), 100);
        *batch.add_queries() = client::MakeRaycastQuery(1, up);
        *batch.add_queries() = client::MakeOverlapQuery(
            2, client::MakeOverlap(MakeSphere(3), MakePose(MakeVec3(0, 0, 5))));
        *batch.add_queries() = client::MakeRaycastQuery(3, up);
        absl::StatusOr<v1::QueryBatchResult> result = (*session)->Run(batch);
        EXPECT_TRUE(IsOk(result));
        EXPECT_TRUE(IsOk((*session)->Finish()));
      }
    }
    // 4: a unary Raycast.
    v1::RaycastRequest ray;
    ray.set_scene("arena");
    *ray.mutable_ray() = client::MakeRaycast(MakeVec3(0, 0, 0), MakeVec3(0, 0, 1), 100);
    EXPECT_TRUE(IsOk(reader->Raycast(ray)));
    // 5: GetScene of a scene that does not exist: NOT_FOUND.
    EXPECT_TRUE(HasError(reader->GetScene("nowhere").status(), absl::StatusCode::kNotFound, ""));
    // 6: GetServerStats with a reader's token: PERMISSION_DENIED.
    EXPECT_TRUE(
        HasError(reader->GetServerStats().status(), absl::StatusCode::kPermissionDenied, ""));
    // 7: DeleteScene arena.
    EXPECT_TRUE(IsOk(admin->DeleteScene("arena")));
    admin.reset();
    reader.reset();
    absl::StatusOr<int> exit_code = (*server)->Stop(SIGTERM);
    EXPECT_TRUE(IsOk(exit_code));
    return (*server)->Logs();
  }
};

TEST_F(ServerLogsTest, SlowQueriesAccessLinesAndLifecycleEvents) {
  const std::string log = RunWorkloadAndStop({"--log_level=debug", "--slow_query_ms=0.000001"});

  // Every batch and unary query is slow at one nanosecond: one line each, at warn.
  std::vector<std::string> slow = LinesWith(log, "slow query: ");
  ASSERT_EQ(slow.size(), 2u) << log;
  EXPECT_TRUE(absl::StrContains(slow[0], "[warning]")) << slow[0];
  EXPECT_TRUE(absl::StrContains(
      slow[0], "rpc QueryStream, scene \"arena\", 3 queries (raycast 2, overlap 1), "))
      << slow[0];
  EXPECT_TRUE(absl::EndsWith(slow[0], " ms, version 1")) << slow[0];
  EXPECT_TRUE(absl::StrContains(slow[1], "rpc Raycast, scene \"arena\", 1 queries (raycast 1), "))
      << slow[1];
  EXPECT_TRUE(absl::EndsWith(slow[1], " ms, version 1")) << slow[1];

  // One access line per collide.v1 call, in the order they ended, with the call's code.
  std::vector<std::string> access = LinesWith(log, "access: method /collide.v1.Collide/");
  const std::vector<std::string> expected = {
      "CreateScene, scene \"arena\", code OK,",
      "UpsertBodies, scene \"arena\", code OK,",
      "QueryStream, scene \"arena\", code OK,",
      "Raycast, scene \"arena\", code OK,",
      "GetScene, scene \"nowhere\", code NOT_FOUND,",
      "GetServerStats, scene -, code PERMISSION_DENIED,",
      "DeleteScene, scene \"arena\", code OK,",
  };
  ASSERT_EQ(access.size(), expected.size()) << log;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_TRUE(absl::StrContains(access[i], "/collide.v1.Collide/" + expected[i])) << access[i];
    EXPECT_TRUE(absl::StrContains(access[i], "[debug]")) << access[i];
    EXPECT_TRUE(absl::StrContains(access[i], ", peer ipv4:127.0.0.1:")) << access[i];
  }
  // Bytes: every request but GetServerStats' (an empty message) has some; only answered calls
  // send a message back.
  for (size_t i : {0, 1, 2, 3, 4, 6}) {
    EXPECT_FALSE(absl::StrContains(access[i], ", bytes in 0,")) << access[i];
  }
  EXPECT_TRUE(absl::EndsWith(access[4], ", out 0")) << access[4];
  EXPECT_TRUE(absl::EndsWith(access[5], ", bytes in 0, out 0")) << access[5];
  for (size_t i : {0, 1, 2, 3}) {
    EXPECT_FALSE(absl::EndsWith(access[i], ", out 0")) << access[i];
  }

  // Lifecycle events at info.
  EXPECT_EQ(LinesWith(log, "created scene \"arena\"").size(), 1u) << log;
  EXPECT_EQ(LinesWith(log, "deleted scene \"arena\"").size(), 1u) << log;
  std::vector<std::string> recovery = LinesWith(log, "recovery finished: 0 scenes, ");
  ASSERT_EQ(recovery.size(), 1u) << log;
  EXPECT_TRUE(absl::StrContains(recovery[0], "[info]")) << recovery[0];

  // Tokens never reach the log.
  EXPECT_FALSE(absl::StrContains(log, kAdminToken)) << log;
  EXPECT_FALSE(absl::StrContains(log, kReaderToken)) << log;
  EXPECT_FALSE(absl::StrContains(log, "7f3e9c2b")) << log;
}

TEST_F(ServerLogsTest, NoSlowQueryOrAccessLinesByDefault) {
  const std::string log = RunWorkloadAndStop({"--log_level=info"});
  EXPECT_TRUE(LinesWith(log, "slow query: ").empty()) << log;
  EXPECT_TRUE(LinesWith(log, "access: ").empty()) << log;
  EXPECT_EQ(LinesWith(log, "created scene \"arena\"").size(), 1u) << log;
  EXPECT_FALSE(absl::StrContains(log, kAdminToken)) << log;
}

TEST_F(ServerLogsTest, AThresholdNoQueryReachesLogsNothing) {
  // A day: no query of this workload takes that long.
  const std::string log = RunWorkloadAndStop({"--slow_query_ms=86400000"});
  EXPECT_TRUE(LinesWith(log, "slow query: ").empty()) << log;
}

TEST(ServerLogsSnapshot, ASnapshotIsLoggedWithItsSceneAndSize) {
  ServerConfig config;
  config.extra_flags = {"--log_level=info"};
  auto server = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(server));
  std::unique_ptr<client::Client> client = (*server)->NewClient();
  ASSERT_TRUE(IsOk(client->CreateScene("bulk")));
  // Past the store's 4 MiB of log records since the last snapshot (about 35 bytes a body).
  constexpr int kBatches = 3;
  constexpr int kBodiesPerBatch = 60000;
  for (int b = 0; b < kBatches; ++b) {
    std::vector<v1::Body> bodies;
    for (int i = 0; i < kBodiesPerBatch; ++i) {
      const int id = b * kBodiesPerBatch + i + 1;
      bodies.push_back(MakeBody(
          static_cast<uint64_t>(id), MakeSphere(0.5f),
          MakePose(MakeVec3(static_cast<float>(id % 1000), static_cast<float>(id / 1000), 0))));
    }
    ASSERT_TRUE(IsOk(client->UpsertBodies("bulk", bodies)));
  }
  // The maintenance thread snapshots the scene soon after; wait for its line (20 s at most).
  std::vector<std::string> lines;
  for (int i = 0; i < 200 && lines.empty(); ++i) {
    lines = LinesWith((*server)->Logs(), "snapshot of scene \"bulk\": ");
    if (lines.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_FALSE(lines.empty()) << (*server)->Logs();
  EXPECT_TRUE(absl::StrContains(lines[0], "[info]")) << lines[0];
  EXPECT_TRUE(absl::StrContains(lines[0], " bytes, ")) << lines[0];
  EXPECT_TRUE(absl::EndsWith(lines[0], " ms")) << lines[0];
  // The snapshot holds every body: more than 5 bytes each.
  const size_t at = lines[0].find("\": ") + 3;
  uint64_t bytes = 0;
  ASSERT_TRUE(absl::SimpleAtoi(lines[0].substr(at, lines[0].find(' ', at) - at), &bytes))
      << lines[0];
  EXPECT_GT(bytes, uint64_t{kBatches} * kBodiesPerBatch * 5) << lines[0];
}

TEST(ServerLogsFlags, BadSlowQueryMsValuesStopTheServerBeforeItServes) {
  for (const char* value : {"-1", "-0.5", "86400000.5", "1e300", "inf", "nan", "abc", "", "1ms"}) {
    ServerConfig config;
    config.extra_flags = {absl::StrCat("--slow_query_ms=", value)};
    auto server = ServerProcess::Start(config);
    ASSERT_FALSE(server.ok()) << value;
    EXPECT_TRUE(absl::StrContains(server.status().message(), "slow_query_ms"))
        << value << ": " << server.status().message();
  }
  for (const char* value : {"0", "0.000001", "250", "86400000"}) {
    ServerConfig config;
    config.extra_flags = {absl::StrCat("--slow_query_ms=", value)};
    EXPECT_TRUE(IsOk(ServerProcess::Start(config))) << value;
  }
}

}  // namespace
}  // namespace collide::integration
