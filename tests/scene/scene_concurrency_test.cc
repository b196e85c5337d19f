// Query threads read a scene while a writer streams batches into it: every read must see one
// whole version. Each batch moves every body to a position derived from the version the batch
// produces (and swaps one marker body), so a reader can check every body it sees against the
// version it read. Run under ThreadSanitizer by scripts/test --tsan.

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "query/batch.h"
#include "query/query_engine.h"
#include "query/run_query.h"
#include "scene/scene.h"

namespace collide {
namespace {

constexpr int kBodies = 200;
constexpr uint64_t kMarkerBase = 1'000'000;

Vec3 PositionAt(uint64_t id, uint64_t version) {
  return Vec3{static_cast<float>(id % 50) * 3.0f + static_cast<float>(version % 7),
              static_cast<float>(id / 50) * 3.0f, static_cast<float>(version % 11)};
}

// The batch that produces `version`: moves every body there, replaces marker version-1 by
// marker version.
UpdateBatch BatchFor(uint64_t version) {
  UpdateBatch batch;
  for (uint64_t id = 0; id < kBodies; ++id) {
    batch.ops.push_back(SetPoseOp(id, Pose{.position = PositionAt(id, version)}));
  }
  if (version > 1) batch.ops.push_back(RemoveOp(kMarkerBase + version - 1));
  batch.ops.push_back(UpsertOp(BodyDesc{.id = kMarkerBase + version, .shape = Sphere{0.25f}}));
  return batch;
}

// Checks every body of `world` against `version`; returns the number of violations.
int CheckWorld(const CollisionWorld& world, uint64_t version) {
  int bad = 0;
  if (world.body_count() != kBodies + 1) ++bad;
  for (BodyHandle h = 0; h < world.slot_count(); ++h) {
    if (!world.IsLive(h)) continue;
    const Body& body = world.body(h);
    if (body.id >= kMarkerBase) {
      bad += body.id != kMarkerBase + version;
    } else {
      bad += !(body.pose.position == PositionAt(body.id, version));
    }
  }
  return bad;
}

TEST(SceneConcurrency, ReadersAlwaysSeeOneWholeVersion) {
  Scene scene("stress", SceneOptions{});
  {
    UpdateBatch first = BatchFor(1);
    for (UpdateOp& op : first.ops) {
      if (op.type == UpdateOpType::kSetPose) {
        op = UpsertOp(BodyDesc{.id = op.body_id, .shape = Sphere{0.5f}, .pose = op.pose});
      }
    }
    ASSERT_TRUE(scene.Apply(first).ok());
  }
  constexpr uint64_t kVersions = 600;
  std::atomic<bool> done{false};
  std::atomic<int> violations{0};
  std::atomic<int64_t> reads{0};

  auto reader = [&](int which) {
    std::vector<QueryHit> hits;
    uint64_t last_seen = 0;
    while (!done.load()) {
      if (which % 2 == 0) {
        scene.Read([&](const CollisionWorld& world, uint64_t version) {
          violations += CheckWorld(world, version);
          violations += version < last_seen;  // versions never go back
          last_seen = version;
          // A region query over everything finds every body of this version.
          Query q;
          q.shape_query =
              RegionQuery{.region = Aabb{Vec3{-1000, -1000, -1000}, Vec3{1000, 1000, 1000}}};
          q.mode = CollectMode::kAll;
          q.max_hits = 1000;
          hits.clear();
          QueryResult r = RunQuery(CurrentTree(world), q, &hits);
          violations += r.hit_count != kBodies + 1;
        });
      } else {
        // Bounded reads with a zero budget: the lock is released between every chunk.
        scene.ReadBounded(20, ReadBudget{.chunk_size = 3, .max_hold = {}},
                          [&](const CollisionWorld& world, uint64_t version, size_t, size_t) {
                            violations += CheckWorld(world, version);
                            violations += version < last_seen;
                            last_seen = version;
                          });
      }
      ++reads;
    }
  };
  std::vector<std::thread> readers;
  for (int i = 0; i < 3; ++i) readers.emplace_back(reader, i);
  for (uint64_t v = 2; v <= kVersions; ++v) {
    absl::StatusOr<ApplyResult> r = scene.Apply(BatchFor(v));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->version, v);
  }
  done = true;
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_TRUE(scene.Validate());
}

TEST(SceneConcurrency, ConcurrentWritersAreSerialised) {
  Scene scene("writers", SceneOptions{});
  std::vector<UpdateOp> create;
  for (uint64_t id = 0; id < 8; ++id) create.push_back(UpsertOp(BodyDesc{.id = id}));
  ASSERT_TRUE(scene.Apply(UpdateBatch{create}).ok());
  constexpr int kWriters = 4;
  constexpr int kBatches = 200;
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 1; i <= kBatches; ++i) {
        UpdateBatch batch{{SetPoseOp(w, Pose{.position = Vec3{static_cast<float>(i), 0, 0}})}};
        absl::StatusOr<ApplyResult> r =
            scene.Apply(batch, ClientTag{.client_id = static_cast<uint64_t>(w + 1),
                                         .sequence = static_cast<uint64_t>(i)});
        failures += !r.ok() || r->duplicate;
      }
    });
  }
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(scene.version(), 1u + kWriters * kBatches);
  for (int w = 0; w < kWriters; ++w) {
    EXPECT_EQ(scene.GetBody(w)->pose.position.x, static_cast<float>(kBatches));
    EXPECT_EQ(scene.GetClientMark(w + 1)->sequence, static_cast<uint64_t>(kBatches));
  }
}

}  // namespace
}  // namespace collide
