// collide-server's log from a real run: the slow-query lines (--slow_query_ms), the slow-update
// lines (--slow_update_ms), the access log (--log_level=debug: one line per call) and the
// lifecycle events, and what never reaches it (tokens); bad --slow_query_ms and --slow_update_ms
// values stop the server before it serves.

#include <signal.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <utility>
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

// The phases a slow-update line gives, with their values, in the order logged.
std::vector<std::pair<std::string, double>> PhasesOf(absl::string_view line) {
  std::vector<std::pair<std::string, double>> phases;
  const size_t open = line.rfind(" ms (");
  if (open == absl::string_view::npos || !absl::EndsWith(line, ")")) return phases;
  const absl::string_view list = line.substr(open + 5, line.size() - open - 6);
  for (absl::string_view part : absl::StrSplit(list, ", ")) {
    const size_t space = part.rfind(' ');
    double value = -1;
    if (space == absl::string_view::npos || !absl::SimpleAtod(part.substr(space + 1), &value)) {
      return {};
    }
    phases.emplace_back(std::string(part.substr(0, space)), value);
  }
  return phases;
}

// The line's total, in milliseconds (-1 if it has none).
double TotalOf(absl::string_view line) {
  const size_t end = line.rfind(" ms (");
  const size_t start = line.rfind(", ", end);
  double total = -1;
  if (end == absl::string_view::npos || start == absl::string_view::npos ||
      !absl::SimpleAtod(line.substr(start + 2, end - start - 2), &total)) {
    return -1;
  }
  return total;
}

TEST(ServerLogsSlowUpdates, EveryWriteThatReachesTheStoreWithItsPhases) {
  ServerConfig config;
  config.extra_flags = {"--slow_update_ms=0.000001"};
  auto server = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(server));
  std::unique_ptr<client::Client> client = (*server)->NewClient();
  ASSERT_TRUE(IsOk(client->CreateScene("arena")));
  // 1: UpsertBodies, version 1.
  ASSERT_TRUE(IsOk(client->UpsertBodies(
      "arena", std::vector<v1::Body>{MakeBody(1, MakeSphere(1), MakePose(MakeVec3(0, 0, 5))),
                                     MakeBody(2, MakeSphere(1), MakePose(MakeVec3(0, 0, 9)))})));
  // 2: an UpdateStream batch of two moves and a filter change, version 2; 3: one the store
  // refuses (an unknown body).
  {
    auto writer = client->OpenUpdateStream("arena", /*client_id=*/7);
    ASSERT_TRUE(IsOk(writer));
    v1::UpdateBatch moves;
    moves.set_scene("arena");
    *moves.add_ops() = client::MakeSetFilterOp(2, 4, ~0u);
    client::AddMove(1, MakePose(MakeVec3(0, 0, 6)), moves.mutable_moves());
    client::AddMove(2, MakePose(MakeVec3(0, 0, 10)), moves.mutable_moves());
    auto ack = (*writer)->Apply(moves);
    ASSERT_TRUE(IsOk(ack));
    EXPECT_EQ(ack->version(), 2u);
    // One move of body `id` in a batch for `scene`, or of a pose with a NaN, or with one float
    // too many in its columns: the error code of its ack (0: applied).
    enum class Move { kPlain, kNan, kRagged };
    const auto move_error = [&](const std::string& scene, uint64_t id, Move move) -> int {
      v1::UpdateBatch batch;
      batch.set_scene(scene);
      const float x = move == Move::kNan ? std::nanf("") : 0.0f;
      client::AddMove(id, MakePose(MakeVec3(x, 0, 6)), batch.mutable_moves());
      if (move == Move::kRagged) batch.mutable_moves()->add_poses(1.0f);
      absl::StatusOr<v1::UpdateAck> answer = (*writer)->Apply(batch);
      EXPECT_TRUE(IsOk(answer));
      return answer.ok() ? answer->error().code() : -1;
    };
    constexpr int kNotFound = static_cast<int>(absl::StatusCode::kNotFound);
    constexpr int kInvalid = static_cast<int>(absl::StatusCode::kInvalidArgument);
    // 3: an unknown body; 4: a pose the store's validation refuses (NaN).
    EXPECT_EQ(move_error("arena", 99, Move::kPlain), kNotFound);
    EXPECT_EQ(move_error("arena", 1, Move::kNan), kInvalid);
    // Not logged, refused before the store: moves columns of mismatched lengths, a batch for
    // another scene than the stream's.
    EXPECT_EQ(move_error("arena", 1, Move::kRagged), kInvalid);
    EXPECT_NE(move_error("other", 1, Move::kPlain), 0);
    EXPECT_TRUE(IsOk((*writer)->Finish()));
  }
  // 5: RemoveBodies, version 3.
  ASSERT_TRUE(IsOk(client->RemoveBodies("arena", std::vector<uint64_t>{2})));
  client.reset();
  ASSERT_TRUE(IsOk((*server)->Stop(SIGTERM)));
  const std::string log = (*server)->Logs();

  const std::vector<std::string> slow = LinesWith(log, "slow update: ");
  ASSERT_EQ(slow.size(), 5u) << log;
  const std::string kApplied[] = {"writer wait", "validate", "log", "apply", "observers"};
  const struct {
    const char* head;
    bool applied;
  } expected[] = {
      {"rpc UpsertBodies, scene \"arena\", 2 ops, version 1, ", true},
      {"rpc UpdateStream, scene \"arena\", 3 ops, version 2, ", true},
      {"rpc UpdateStream, scene \"arena\", 1 ops, refused NOT_FOUND, ", false},
      {"rpc UpdateStream, scene \"arena\", 1 ops, refused INVALID_ARGUMENT, ", false},
      {"rpc RemoveBodies, scene \"arena\", 1 ops, version 3, ", true},
  };
  for (size_t i = 0; i < slow.size(); ++i) {
    const std::string& line = slow[i];
    EXPECT_TRUE(absl::StrContains(line, "[warning]")) << line;
    EXPECT_TRUE(absl::StrContains(line, expected[i].head)) << line;
    // parse, convert, the scene's phases for an applied batch, then the acknowledgement; each
    // at least 0 and together the total (each printed to the microsecond).
    std::vector<std::string> names = {"parse", "convert"};
    if (expected[i].applied) names.insert(names.end(), std::begin(kApplied), std::end(kApplied));
    names.push_back("acknowledgement");
    const std::vector<std::pair<std::string, double>> phases = PhasesOf(line);
    ASSERT_EQ(phases.size(), names.size()) << line;
    double sum = 0;
    for (size_t k = 0; k < phases.size(); ++k) {
      EXPECT_EQ(phases[k].first, names[k]) << line;
      EXPECT_GE(phases[k].second, 0.0) << line;
      sum += phases[k].second;
    }
    const double total = TotalOf(line);
    EXPECT_GT(total, 0.0) << line;
    EXPECT_NEAR(sum, total, 0.001 * static_cast<double>(phases.size())) << line;
  }
  // A unary call's request is parsed before its handler: its parse is not timed.
  EXPECT_TRUE(absl::StrContains(slow[0], "(parse 0.000, convert ")) << slow[0];
  // Poses and tokens never reach these lines.
  for (const std::string& line : slow) EXPECT_FALSE(absl::StrContains(line, "pose")) << line;
}

TEST(ServerLogsSlowUpdates, NoSlowUpdateLinesByDefaultOrUnderAThresholdNoWriteReaches) {
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{}, std::vector<std::string>{"--slow_update_ms=86400000"}}) {
    ServerConfig config;
    config.extra_flags = flags;
    auto server = ServerProcess::Start(config);
    ASSERT_TRUE(IsOk(server));
    std::unique_ptr<client::Client> client = (*server)->NewClient();
    ASSERT_TRUE(IsOk(client->CreateScene("arena")));
    ASSERT_TRUE(IsOk(client->UpsertBodies(
        "arena", std::vector<v1::Body>{MakeBody(1, MakeSphere(1), MakePose(MakeVec3(0, 0, 5)))})));
    client.reset();
    ASSERT_TRUE(IsOk((*server)->Stop(SIGTERM)));
    EXPECT_TRUE(LinesWith((*server)->Logs(), "slow update: ").empty()) << (*server)->Logs();
  }
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

TEST(ServerLogsFlags, BadSlowQueryAndUpdateMsValuesStopTheServerBeforeItServes) {
  for (const char* flag : {"slow_query_ms", "slow_update_ms"}) {
    for (const char* value : {"-1", "-0.5", "86400000.5", "1e300", "inf", "nan", "abc", "", "1ms",
                              "18446744073709551615"}) {
      ServerConfig config;
      config.extra_flags = {absl::StrCat("--", flag, "=", value)};
      auto server = ServerProcess::Start(config);
      ASSERT_FALSE(server.ok()) << flag << "=" << value;
      EXPECT_TRUE(absl::StrContains(server.status().message(), flag))
          << flag << "=" << value << ": " << server.status().message();
    }
    for (const char* value : {"0", "0.000001", "250", "86400000"}) {
      ServerConfig config;
      config.extra_flags = {absl::StrCat("--", flag, "=", value)};
      EXPECT_TRUE(IsOk(ServerProcess::Start(config))) << flag << "=" << value;
    }
  }
}

}  // namespace
}  // namespace collide::integration
