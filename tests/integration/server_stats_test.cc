// GetServerStats against a real server: the build, start time and memory of the process, and
// the per-scene figures, bounded by max_scenes and filtered by the caller's token.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "collide/version.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using client::MakeBody;
using client::MakePose;
using client::MakeSphere;
using client::MakeStaticBody;
using client::MakeVec3;

std::vector<std::string> NamesOf(const v1::GetServerStatsResponse& stats) {
  std::vector<std::string> names;
  for (const v1::ServerSceneStats& scene : stats.scene_stats()) names.push_back(scene.name());
  return names;
}

TEST(ServerStats, ReportsTheBuildTheProcessAndEveryScene) {
  const absl::Time before = absl::Now();
  auto server = ServerProcess::Start();
  ASSERT_TRUE(IsOk(server));
  std::unique_ptr<client::Client> client = (*server)->NewClient();
  for (const char* name : {"charlie", "alpha", "bravo"}) {
    ASSERT_TRUE(IsOk(client->CreateScene(name)));
  }
  ASSERT_TRUE(IsOk(client->UpsertBodies(
      "bravo",
      std::vector<v1::Body>{MakeBody(1, MakeSphere(1), MakePose(MakeVec3(0, 0, 0))),
                            MakeBody(2, MakeSphere(1), MakePose(MakeVec3(5, 0, 0))),
                            MakeStaticBody(3, MakeSphere(1), MakePose(MakeVec3(9, 0, 0)))})));
  v1::UpdateBatch moves;
  moves.set_scene("bravo");
  moves.set_tick(7);
  *moves.add_ops() = client::MakeSetPoseOp(1, MakePose(MakeVec3(0, 1, 0)));
  auto writer = client->OpenUpdateStream("bravo", /*client_id=*/1);
  ASSERT_TRUE(IsOk(writer));
  absl::StatusOr<v1::UpdateAck> ack = (*writer)->Apply(moves);
  ASSERT_TRUE(IsOk(ack));
  ASSERT_FALSE(ack->has_error()) << ack->error().message();
  ASSERT_TRUE(IsOk((*writer)->Finish()));

  absl::StatusOr<v1::GetServerStatsResponse> stats = client->GetServerStats();
  ASSERT_TRUE(IsOk(stats));
  EXPECT_EQ(stats->server_version(), kVersion);
  EXPECT_EQ(stats->server_commit(), kCommit);
  EXPECT_EQ(stats->build_type(), kBuildType);
  // Started after `before` (to the second) and not after now.
  const absl::Time after = absl::Now();
  EXPECT_GE(stats->start_time_unix_seconds(), absl::ToUnixSeconds(before) - 1);
  EXPECT_LE(stats->start_time_unix_seconds(), absl::ToUnixSeconds(after));
  EXPECT_LE(stats->uptime_seconds(),
            static_cast<uint64_t>(absl::ToInt64Seconds(after - before)) + 1);
  // The server's own VmRSS, as the test reads it from outside (memory moves between the two
  // reads, not by a factor of two).
  const uint64_t rss = (*server)->RssBytes();
  EXPECT_GT(stats->resident_memory_bytes(), rss / 2);
  EXPECT_LT(stats->resident_memory_bytes(), rss * 2);

  EXPECT_EQ(stats->scenes(), 3u);
  EXPECT_EQ(stats->scenes_omitted(), 0u);
  EXPECT_EQ(NamesOf(*stats), (std::vector<std::string>{"alpha", "bravo", "charlie"}));
  // Each scene's figures are GetScene's.
  for (const v1::ServerSceneStats& scene : stats->scene_stats()) {
    SCOPED_TRACE(scene.name());
    absl::StatusOr<v1::SceneInfo> info = client->GetScene(scene.name());
    ASSERT_TRUE(IsOk(info));
    EXPECT_EQ(scene.body_count(), info->stats().body_count());
    EXPECT_EQ(scene.static_body_count(), info->stats().static_body_count());
    EXPECT_EQ(scene.version(), info->stats().version());
    EXPECT_EQ(scene.tick(), info->stats().tick());
    EXPECT_EQ(scene.memory_bytes(), info->stats().memory_bytes());
    EXPECT_LE(scene.history_bytes(), scene.memory_bytes());
  }
  const v1::ServerSceneStats& bravo = stats->scene_stats(1);
  EXPECT_EQ(bravo.body_count(), 3u);
  EXPECT_EQ(bravo.static_body_count(), 1u);
  EXPECT_EQ(bravo.version(), 2u);
  EXPECT_EQ(bravo.tick(), 7u);
  EXPECT_GT(bravo.history_bytes(), 0u);
  // Two records logged for bravo (no snapshot yet: far below the threshold), one (its
  // creation) for alpha.
  EXPECT_GT(bravo.log_bytes(), stats->scene_stats(0).log_bytes());
  EXPECT_EQ(stats->scene_stats(0).body_count(), 0u);
}

TEST(ServerStats, MaxScenesBoundsTheListAndCountsTheRest) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(IsOk(server));
  std::unique_ptr<client::Client> client = (*server)->NewClient();
  for (const char* name : {"d", "b", "a", "c"}) ASSERT_TRUE(IsOk(client->CreateScene(name)));

  struct Case {
    std::optional<uint32_t> max_scenes;
    std::vector<std::string> listed;
  };
  for (const Case& c : std::vector<Case>{
           {std::nullopt, {"a", "b", "c", "d"}},
           {0u, {}},
           {1u, {"a"}},
           {3u, {"a", "b", "c"}},
           {4u, {"a", "b", "c", "d"}},
           {1000u, {"a", "b", "c", "d"}},
           {1001u, {"a", "b", "c", "d"}},
           {UINT32_MAX, {"a", "b", "c", "d"}},
       }) {
    SCOPED_TRACE(c.max_scenes.has_value() ? std::to_string(*c.max_scenes) : "absent");
    absl::StatusOr<v1::GetServerStatsResponse> stats = client->GetServerStats(c.max_scenes);
    ASSERT_TRUE(IsOk(stats));
    EXPECT_EQ(NamesOf(*stats), c.listed);
    EXPECT_EQ(stats->scenes_omitted(), 4 - c.listed.size());
    EXPECT_EQ(stats->scenes(), 4u);
  }
}

TEST(ServerStats, ListsOnlyTheScenesTheTokenMaySee) {
  ServerConfig config;
  config.token_file_contents = "admin-token admin\nteam-admin admin team-\nreader-token reader\n";
  auto server = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(server));
  std::unique_ptr<client::Client> admin = (*server)->NewClient("admin-token");
  for (const char* name : {"team-a", "other", "team-b"}) {
    ASSERT_TRUE(IsOk(admin->CreateScene(name)));
  }
  absl::StatusOr<v1::GetServerStatsResponse> all = admin->GetServerStats();
  ASSERT_TRUE(IsOk(all));
  EXPECT_EQ(NamesOf(*all), (std::vector<std::string>{"other", "team-a", "team-b"}));

  absl::StatusOr<v1::GetServerStatsResponse> team =
      (*server)->NewClient("team-admin")->GetServerStats(1);
  ASSERT_TRUE(IsOk(team));
  EXPECT_EQ(NamesOf(*team), (std::vector<std::string>{"team-a"}));
  EXPECT_EQ(team->scenes_omitted(), 1u);  // team-b; "other" is not the token's to count

  EXPECT_TRUE(HasError((*server)->NewClient("reader-token")->GetServerStats().status(),
                       absl::StatusCode::kPermissionDenied, ""));
}

}  // namespace
}  // namespace collide::integration
