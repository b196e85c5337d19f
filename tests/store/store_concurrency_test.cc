// Queries run while a stream of batches goes through the Database (log, snapshots taken in the
// background, scenes created and deleted alongside): every read sees one whole version. Each
// batch moves every body to a position derived from the version it produces, so a reader
// checks every body against the version it read. Run under ThreadSanitizer by
// scripts/test --tsan.

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "store/database.h"
#include "store/store_testing.h"

namespace collide {
namespace {

constexpr int kBodies = 64;

Vec3 PositionAt(uint64_t id, uint64_t version) {
  return Vec3{static_cast<float>(id), static_cast<float>(version % 1000),
              static_cast<float>((id * 7 + version) % 13)};
}

UpdateBatch MoveAll(uint64_t version) {
  UpdateBatch batch;
  for (uint64_t id = 0; id < kBodies; ++id) {
    batch.ops.push_back(SetPoseOp(id, Pose{.position = PositionAt(id, version)}));
  }
  return batch;
}

TEST(StoreConcurrency, QueriesSeeWholeVersionsWhileBatchesAreLoggedAndSnapshotted) {
  TempDir dir;
  DatabaseOptions options = CrashTestOptions(DurabilityPolicy::kPeriodic);
  absl::StatusOr<std::unique_ptr<Database>> opened = Database::Open(dir.path(), options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  Database& db = **opened;
  ASSERT_TRUE(db.CreateScene("stress", SceneOptions{}).ok());
  UpdateBatch create;
  for (uint64_t id = 0; id < kBodies; ++id) {
    create.ops.push_back(UpsertOp(
        BodyDesc{.id = id, .shape = Sphere{0.5f}, .pose = Pose{.position = PositionAt(id, 1)}}));
  }
  ASSERT_TRUE(db.ApplyAndWait("stress", ClientTag{}, create).ok());

  std::atomic<bool> done{false};
  std::atomic<int> violations{0};
  std::atomic<int64_t> reads{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&] {
      while (!done) {
        absl::StatusOr<std::shared_ptr<const Scene>> scene = db.GetScene("stress");
        if (!scene.ok()) {
          ++violations;
          return;
        }
        (*scene)->Read([&](const CollisionWorld& world, uint64_t version) {
          violations += world.body_count() != kBodies;
          for (BodyHandle h = 0; h < world.slot_count(); ++h) {
            if (!world.IsLive(h)) continue;
            const Body& body = world.body(h);
            violations += !(body.pose.position == PositionAt(body.id, version));
          }
        });
        ++reads;
        db.stats();  // counters are read while the log and maintenance threads change them
      }
    });
  }
  // Scenes come and go meanwhile (structure changes share the log).
  threads.emplace_back([&] {
    for (int i = 0; !done; ++i) {
      const std::string name = "side" + std::to_string(i % 3);
      if (db.CreateScene(name, SceneOptions{}).ok()) {
        db.ApplyAndWait(name, ClientTag{}, UpdateBatch{{UpsertOp(BodyDesc{.id = 1})}})
            .IgnoreError();
        db.DeleteScene(name).IgnoreError();
      }
    }
  });
  constexpr uint64_t kVersions = 1500;
  std::atomic<int> failed_acks{0};
  for (uint64_t v = 2; v <= kVersions; ++v) {
    // Half through the callback API, half blocking.
    if (v % 2 == 0) {
      db.Apply("stress", ClientTag{1, v}, MoveAll(v),
               [&](absl::StatusOr<ApplyAck> ack) { failed_acks += !ack.ok(); });
    } else {
      absl::StatusOr<ApplyAck> ack = db.ApplyAndWait("stress", ClientTag{1, v}, MoveAll(v));
      ASSERT_TRUE(ack.ok()) << ack.status();
      ASSERT_EQ(ack->version, v);
    }
  }
  ASSERT_TRUE(db.Flush().ok());
  done = true;
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_GT(db.stats().snapshots_written, 0u);
  ASSERT_TRUE(db.Close().ok());  // every callback has run once Close returns
  EXPECT_EQ(failed_acks.load(), 0);

  absl::StatusOr<std::unique_ptr<Database>> reopened = Database::Open(dir.path(), options);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  std::shared_ptr<const Scene> scene = *(*reopened)->GetScene("stress");
  EXPECT_EQ(scene->version(), kVersions);
  EXPECT_EQ(scene->GetBody(5)->pose.position, PositionAt(5, kVersions));
}

}  // namespace
}  // namespace collide
