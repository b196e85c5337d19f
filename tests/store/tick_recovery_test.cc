// Ticks are durable: update records carry the tick their batch named and snapshots the scene's
// current tick, so a restart (by log replay or from a snapshot) restores the current tick and
// the scene's history_ticks option. The history itself is not durable: after a restart only
// the current tick and later ones can be queried.

#include <string>

#include "gtest/gtest.h"
#include "store/database.h"
#include "store/log_codec.h"
#include "store/store_testing.h"

namespace collide {
namespace {

UpdateBatch MoveAt(uint64_t tick, float x) {
  UpdateBatch batch;
  batch.tick = tick;
  batch.ops.push_back(SetPoseOp(1, Pose{.position = {x, 0, 0}}));
  return batch;
}

std::unique_ptr<Database> MustOpen(const std::string& dir) {
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(dir, DatabaseOptions{});
  EXPECT_TRUE(db.ok()) << db.status();
  return db.ok() ? *std::move(db) : nullptr;
}

TEST(TickRecovery, UpdateRecordsCarryTheTickAndRecordsWithoutOneDecodeWithoutOne) {
  absl::StatusOr<DecodedRecord> with =
      DecodeLogRecord(EncodeUpdateRecord("s", ClientTag{}, 3, MoveAt(17, 1.0f)));
  ASSERT_TRUE(with.ok()) << with.status();
  ASSERT_TRUE(with->batch.tick.has_value());
  EXPECT_EQ(*with->batch.tick, 17u);
  UpdateBatch untagged = MoveAt(0, 1.0f);
  untagged.tick.reset();
  absl::StatusOr<DecodedRecord> without =
      DecodeLogRecord(EncodeUpdateRecord("s", ClientTag{}, 3, untagged));
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_FALSE(without->batch.tick.has_value());
}

TEST(TickRecovery, SceneOptionsKeepHistoryTicksAndDefaultWhenAbsent) {
  storage::v1::SceneOptions proto;
  EncodeSceneOptions(SceneOptions{.history_ticks = 9}, &proto);
  EXPECT_EQ(DecodeSceneOptions(proto)->history_ticks, 9u);
  proto.clear_history_ticks();
  EXPECT_EQ(DecodeSceneOptions(proto)->history_ticks, SceneOptions{}.history_ticks);
}

TEST(TickRecovery, ARestartRestoresTheCurrentTickByReplayAndFromASnapshot) {
  for (bool checkpoint : {false, true}) {
    SCOPED_TRACE(checkpoint ? "from a snapshot" : "by replay");
    TempDir dir;
    {
      auto db = MustOpen(dir.path());
      ASSERT_TRUE(db->CreateScene("arena", SceneOptions{.history_ticks = 16}).ok());
      UpdateBatch create;
      create.tick = 3;
      create.ops.push_back(UpsertOp(BodyDesc{.id = 1, .shape = Sphere{1}}));
      ASSERT_TRUE(db->ApplyAndWait("arena", ClientTag{}, create).ok());
      for (uint64_t t = 4; t <= 40; ++t) {
        ASSERT_TRUE(db->ApplyAndWait("arena", ClientTag{}, MoveAt(t, float(t))).ok());
      }
      const SceneStats stats = (*db->GetScene("arena"))->Stats();
      EXPECT_EQ(stats.tick, 40u);
      EXPECT_EQ(stats.oldest_tick, 25u);
      if (checkpoint) {
        ASSERT_TRUE(db->Checkpoint().ok());
      }
      ASSERT_TRUE(db->Close().ok());
    }
    auto db = MustOpen(dir.path());
    std::shared_ptr<const Scene> arena = *db->GetScene("arena");
    EXPECT_EQ(arena->options().history_ticks, 16u);
    const SceneStats stats = arena->Stats();
    EXPECT_EQ(stats.tick, 40u);
    EXPECT_EQ(stats.oldest_tick, 40u);  // the history before the restart is gone
    // Ticks go on from where they were.
    EXPECT_EQ(db->ApplyAndWait("arena", ClientTag{}, MoveAt(39, 0.0f)).status().code(),
              absl::StatusCode::kInvalidArgument);
    ASSERT_TRUE(db->ApplyAndWait("arena", ClientTag{}, MoveAt(41, 0.0f)).ok());
    EXPECT_EQ(arena->Stats().oldest_tick, 40u);
    ASSERT_TRUE(db->Close().ok());
  }
}

}  // namespace
}  // namespace collide
