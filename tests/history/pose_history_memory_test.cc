// The history's memory after a load and a burst: a load into empty slots records no entry per
// body and no index of the bodies it created; a burst (a tick moving every body) records one
// entry per body, and once its tick has left the window the records give that room back (a
// steady stream of small ticks must not pin the burst's capacity for as long as the scene
// lives), and the states the history answers stay exact.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "geom/pose.h"
#include "geom/shapes.h"
#include "history/pose_history.h"
#include "query/collision_world.h"

namespace collide {
namespace {

Pose At(float x, float y, float z) { return Pose{.position = Vec3{x, y, z}}; }

// Creates bodies 0..poses.size()-1 (spheres of `radius` at `poses`) in one batch of `history`'s
// current tick, as a load does; returns their handles.
std::vector<BodyHandle> Load(CollisionWorld& world, PoseHistory& history,
                             const std::vector<Pose>& poses, float radius) {
  std::vector<BodyHandle> handles;
  for (size_t i = 0; i < poses.size(); ++i) {
    handles.push_back(world.Add(BodyDesc{.id = i, .shape = Sphere{radius}, .pose = poses[i]}));
    history.AfterCreate(world, handles.back());
  }
  history.EndBatch(world);
  world.FinishUpdates();
  return handles;
}

// `n` poses along x, one unit apart.
std::vector<Pose> InARow(int n) {
  std::vector<Pose> poses;
  for (int i = 0; i < n; ++i) poses.push_back(At(static_cast<float>(i), 0, 0));
  return poses;
}

TEST(PoseHistoryMemory, ABurstsRecordsGiveBackTheirRoomOnceItsTickLeavesTheWindow) {
  constexpr int kBodies = 10000;
  constexpr uint32_t kRetained = 8;
  constexpr uint64_t kTicks = 3 * kRetained;
  constexpr int kMovesPerTick = 50;
  CollisionWorld world;
  PoseHistory history(kRetained, /*start_tick=*/0, /*segment_ticks=*/2);
  // poses[t][i]: body i's pose at the end of tick t.
  std::vector<std::vector<Pose>> poses(kTicks + 1, std::vector<Pose>(kBodies));
  for (int i = 0; i < kBodies; ++i) {
    poses[1][i] = At(static_cast<float>(i % 100) * 3.0f, static_cast<float>(i / 100) * 3.0f, 0);
  }
  // A load into empty slots records nothing per body but its tick of birth, and no index of the
  // created bodies: its segment closes and the next one copies them.
  history.AdvanceTo(1);
  const std::vector<BodyHandle> handles = Load(world, history, poses[1], 1.0f);
  history.AdvanceTo(2);
  EXPECT_EQ(history.EntryCount(), 0u);
  EXPECT_LT(history.IndexBytes(), kBodies * size_t{8});
  EXPECT_FALSE(history.StateAt(world, handles[9], 0).alive);
  EXPECT_TRUE(history.StateAt(world, handles[9], 1).alive);

  // A burst: every body moves in tick 2 (an undo record each).
  poses[2] = poses[1];
  for (int i = 0; i < kBodies; ++i) {
    poses[2][i].position.z = 1.0f;
    history.BeforeMove(world, handles[i]);
    world.SetPose(handles[i], poses[2][i]);
  }
  history.EndBatch(world);
  world.FinishUpdates();
  const size_t burst = history.MemoryBytes() - history.IndexBytes();

  for (uint64_t t = 3; t <= kTicks; ++t) {
    history.AdvanceTo(t);
    poses[t] = poses[t - 1];
    for (int k = 0; k < kMovesPerTick; ++k) {
      const int i = static_cast<int>((t * 7919 + static_cast<uint64_t>(k) * 104729) % kBodies);
      poses[t][i].position.z = static_cast<float>(t) + 0.25f * static_cast<float>(k);
      history.BeforeMove(world, handles[i]);
      world.SetPose(handles[i], poses[t][i]);
    }
    history.EndBatch(world);
    world.FinishUpdates();
  }
  const size_t settled = history.MemoryBytes() - history.IndexBytes();
  // The burst's records (an entry of at least 48 bytes per body) are gone; the per-slot chain
  // heads stay. Without giving the capacity back, `settled` would be `burst` or more.
  EXPECT_LT(settled, burst - kBodies * size_t{48})
      << "burst " << burst << " bytes, settled " << settled;
  EXPECT_EQ(history.EntryCount(), (kRetained - 1) * static_cast<size_t>(kMovesPerTick));

  // Every body's state at every retained tick is still the one it had then.
  ASSERT_EQ(history.oldest_tick(), kTicks + 1 - kRetained);
  for (uint64_t t = history.oldest_tick(); t <= kTicks; ++t) {
    for (int i = 0; i < kBodies; ++i) {
      const PastBody past = history.StateAt(world, handles[i], t);
      ASSERT_TRUE(past.alive) << "body " << i << " tick " << t;
      ASSERT_EQ(past.body.pose.position.x, poses[t][i].position.x) << "body " << i << " tick " << t;
      ASSERT_EQ(past.body.pose.position.y, poses[t][i].position.y) << "body " << i << " tick " << t;
      ASSERT_EQ(past.body.pose.position.z, poses[t][i].position.z) << "body " << i << " tick " << t;
    }
  }
}

TEST(PoseHistoryMemory, ASteadyStreamOfLargeTicksKeepsItsRoom) {
  // Ticks of 6,000 moves each (above the room every record keeps): the records are reused as
  // they are, with no allocation after the window has filled once.
  constexpr int kBodies = 6000;
  constexpr uint32_t kRetained = 4;
  CollisionWorld world;
  PoseHistory history(kRetained, /*start_tick=*/0, /*segment_ticks=*/1);
  const std::vector<BodyHandle> handles = Load(world, history, InARow(kBodies), 0.5f);
  size_t after_fill = 0;
  for (uint64_t t = 1; t <= 4 * kRetained; ++t) {
    history.AdvanceTo(t);
    for (int i = 0; i < kBodies; ++i) {
      history.BeforeMove(world, handles[i]);
      world.SetPose(handles[i], At(static_cast<float>(i), static_cast<float>(t), 0));
    }
    history.EndBatch(world);
    world.FinishUpdates();
    const size_t records = history.MemoryBytes() - history.IndexBytes();
    if (t == 2 * kRetained) after_fill = records;
    if (t > 2 * kRetained) {
      EXPECT_EQ(records, after_fill) << "tick " << t;
    }
  }
  EXPECT_EQ(history.StateAt(world, handles[17], 4 * kRetained - 1).body.pose.position.y,
            static_cast<float>(4 * kRetained - 1));
}

TEST(PoseHistoryMemory, ALoadsIndexGoesOnceNoTickOfTheWindowChangedAndComesBackWithAChange) {
  constexpr int kBodies = 3000;
  constexpr uint32_t kRetained = 8;
  CollisionWorld world;
  PoseHistory history(kRetained, /*start_tick=*/0, /*segment_ticks=*/2);
  const std::vector<BodyHandle> handles = Load(world, history, InARow(kBodies), 0.5f);
  ASSERT_EQ(history.SegmentCount(), 1u);
  const Aabb everything{.min = Vec3{-10, -10, -10}, .max = Vec3{kBodies + 10.0f, 10, 10}};
  // Which bodies a query over everything finds at tick `t` (alive then, by the history).
  auto found_at = [&](uint64_t t) {
    int n = 0;
    history.QueryCandidates(world, t, everything, ~0u,
                            [&](BodyHandle slot, uint32_t generation, uint64_t anchor) {
                              const PastBody past = history.StateFrom(world, slot, t, anchor);
                              n += past.alive && past.generation == generation;
                              return true;
                            });
    return n;
  };
  // While the load's tick is retained, the index answers for it: nothing before it.
  history.AdvanceTo(kRetained - 1);
  EXPECT_EQ(history.SegmentCount(), 1u);
  EXPECT_EQ(found_at(0), kBodies);
  // The window has passed with no change: the index goes, the world answers every tick.
  history.AdvanceTo(kRetained);
  EXPECT_EQ(history.SegmentCount(), 0u);
  EXPECT_EQ(history.IndexBytes(), 0u);
  for (uint64_t t = history.oldest_tick(); t <= history.tick(); ++t) {
    EXPECT_EQ(found_at(t), kBodies) << "tick " << t;
  }
  // A move opens an index again; the tick before still sees the old pose.
  history.AdvanceTo(kRetained + 1);
  history.BeforeMove(world, handles[5]);
  world.SetPose(handles[5], At(5.0f, 100.0f, 0));
  history.EndBatch(world);
  world.FinishUpdates();
  EXPECT_EQ(history.SegmentCount(), 1u);
  EXPECT_EQ(history.StateAt(world, handles[5], kRetained).body.pose.position.y, 0.0f);
  EXPECT_EQ(history.StateAt(world, handles[5], kRetained + 1).body.pose.position.y, 100.0f);
  EXPECT_EQ(found_at(kRetained), kBodies);
  int at_old_place = 0;
  history.QueryCandidates(world, kRetained,
                          Aabb{.min = Vec3{4.9f, -0.1f, -0.1f}, .max = Vec3{5.1f, 0.1f, 0.1f}}, ~0u,
                          [&](BodyHandle slot, uint32_t, uint64_t anchor) {
                            at_old_place += slot == handles[5] &&
                                            history.StateFrom(world, slot, kRetained, anchor).alive;
                            return true;
                          });
  EXPECT_EQ(at_old_place, 1);
}

}  // namespace
}  // namespace collide
