// Disk use stays bounded under an endless stream of pose updates: 1,000,000 moves on a
// 1,000-body scene (1,000 batches of 1,000) leave the data directory under
//   2 x segment_bytes          (the segment being written + the one a snapshot covers in part)
// + snapshot_min_log_bytes     (log written since the last snapshot before the next is due)
// + 2 x snapshot size          (old and new snapshot while one replaces the other)
// + 2 MiB                      (log written while a snapshot is being taken)
// with segment_bytes = snapshot_min_log_bytes = 1 MiB: 5.1 MiB, while the stream writes ~32 MB.
// The log itself is held near max_log_bytes = 2 MiB by backpressure (DatabaseOptions), so this
// holds even when the maintenance thread gets little CPU.

#include <cstdio>
#include <random>

#include "gtest/gtest.h"
#include "store/database.h"
#include "store/store_testing.h"

namespace collide {
namespace {

TEST(DiskBound, AMillionPoseUpdatesStayUnderTheBound) {
  TempDir dir;
  DatabaseOptions options;
  options.durability = DurabilityPolicy::kNone;
  options.segment_bytes = 1 << 20;
  options.snapshot_min_log_bytes = 1 << 20;
  // Past this the writer's acknowledgements wait for the maintenance pass that snapshots and
  // trims, so the bound holds however the maintenance thread is scheduled.
  options.max_log_bytes = 2 << 20;
  constexpr int kBodies = 1000, kBatches = 1000;
  absl::StatusOr<std::unique_ptr<Database>> opened = Database::Open(dir.path(), options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  Database& db = **opened;
  ASSERT_TRUE(db.CreateScene("arena", SceneOptions{}).ok());
  UpdateBatch create;
  for (int id = 0; id < kBodies; ++id) {
    create.ops.push_back(UpsertOp(BodyDesc{.id = static_cast<uint64_t>(id), .shape = Sphere{1}}));
  }
  ASSERT_TRUE(db.ApplyAndWait("arena", ClientTag{}, create).ok());

  std::mt19937 rng(5);
  std::uniform_real_distribution<float> coordinate(-1000.0f, 1000.0f);
  uint64_t written = 0, largest = 0, snapshot = 0;
  UpdateBatch batch;
  for (int b = 0; b < kBatches; ++b) {
    batch.ops.clear();
    for (int id = 0; id < kBodies; ++id) {
      batch.ops.push_back(
          SetPoseOp(id, Pose{.position = Vec3{coordinate(rng), coordinate(rng), coordinate(rng)}}));
    }
    absl::StatusOr<ApplyAck> ack = db.ApplyAndWait("arena", ClientTag{}, batch);
    ASSERT_TRUE(ack.ok()) << ack.status();
    if (b % 10 == 0) largest = std::max(largest, DirectoryBytes(dir.path()));
  }
  ASSERT_TRUE(db.Flush().ok());
  const StoreStats stats = db.stats();
  written = stats.log_bytes;  // what is left; the total written is in the printout below
  snapshot = stats.snapshot_bytes;
  const uint64_t final_bytes = DirectoryBytes(dir.path());
  largest = std::max(largest, final_bytes);
  const uint64_t bound = 2 * options.segment_bytes + options.snapshot_min_log_bytes +
                         2 * std::max<uint64_t>(snapshot, 64 << 10) + (2 << 20);
  std::printf(
      "disk bound: 1,000,000 pose updates (log records ~%.1f MB in total); data directory "
      "%.2f MiB at the end, %.2f MiB at most; bound %.2f MiB; %llu snapshots, %llu "
      "segments deleted, snapshot %.1f KiB, log left %.2f MiB\n",
      static_cast<double>(kBatches) * 30.0 * kBodies / 1e6, final_bytes / 1048576.0,
      largest / 1048576.0, bound / 1048576.0,
      static_cast<unsigned long long>(stats.snapshots_written),
      static_cast<unsigned long long>(stats.segments_deleted), snapshot / 1024.0,
      written / 1048576.0);
  EXPECT_LE(largest, bound);
  EXPECT_GT(stats.snapshots_written, 10u);
  EXPECT_TRUE(stats.maintenance_error.ok()) << stats.maintenance_error;
  ASSERT_TRUE(db.Close().ok());

  // The bounded directory still holds the whole state.
  absl::StatusOr<std::unique_ptr<Database>> reopened = Database::Open(dir.path(), options);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  std::shared_ptr<const Scene> scene = *(*reopened)->GetScene("arena");
  EXPECT_EQ(scene->version(), 1u + kBatches);
  EXPECT_EQ(scene->GetBody(kBodies - 1)->pose.position, batch.ops.back().pose.position);
}

}  // namespace
}  // namespace collide
