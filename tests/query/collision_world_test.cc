// The world's tree upkeep under motion: FinishUpdates keeps each tree's SAH cost within its
// stated bound of a fresh build however long the bodies keep moving.
#include "query/collision_world.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace collide {
namespace {

// The tree's SAH cost over that of a fresh binned-SAH build of the same leaves.
float CostOverFreshBuild(const DynamicTree& tree) {
  DynamicTree fresh = tree;
  fresh.Rebuild();
  return tree.SahCost() / fresh.SahCost();
}

// Runs `rounds` rounds of random-walk moves of every body (each FinishUpdates'd) over a seeded
// scene of mixed shapes, and returns the largest ratio of the tree's SAH cost to a fresh build
// seen after any round.
float WorstCostRatioUnderMotion(const CollisionWorldOptions& options, int rounds) {
  constexpr int kBodies = 3000;
  constexpr float kSide = 40.0f;
  std::mt19937 rng(2020);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  CollisionWorld world(options);
  std::vector<BodyDesc> descs(kBodies);
  for (int i = 0; i < kBodies; ++i) {
    BodyDesc& d = descs[i];
    d.id = static_cast<uint64_t>(i);
    if (i % 2 == 0) {
      d.shape = Sphere{0.25f + u(rng)};
    } else {
      const float h = 0.25f + u(rng);
      d.shape = Box{{h, 0.5f * h, h}};
    }
    const float x = kSide * u(rng);
    const float y = kSide * u(rng);
    const float z = kSide * u(rng);
    d.pose.position = {x, y, z};
  }
  std::vector<BodyHandle> handles(kBodies);
  world.AddBulk(descs, handles);
  float worst = CostOverFreshBuild(world.tree(BodyKind::kDynamic));
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < kBodies; ++i) {
      Pose pose = world.body(handles[i]).pose;
      const float dx = u(rng) - 0.5f;
      const float dy = u(rng) - 0.5f;
      const float dz = u(rng) - 0.5f;
      pose.position += Vec3{dx, dy, dz};
      world.SetPose(handles[i], pose);
    }
    world.FinishUpdates();
    worst = std::max(worst, CostOverFreshBuild(world.tree(BodyKind::kDynamic)));
  }
  EXPECT_TRUE(world.Validate());
  return worst;
}

TEST(CollisionWorld, SahCostStaysWithinItsBoundOfAFreshBuildUnderMotion) {
  constexpr int kRounds = 60;
  // Left alone (no rebuild), the random walk ages the tree well past the bounds below, so the
  // bounded runs are held by the upkeep, not by a workload too gentle to age anything.
  const float unbounded =
      WorstCostRatioUnderMotion(CollisionWorldOptions{.rebuild_cost_ratio = 1e9f}, kRounds);
  for (float bound : {1.1f, CollisionWorldOptions{}.rebuild_cost_ratio}) {
    SCOPED_TRACE("rebuild_cost_ratio " + std::to_string(bound));
    EXPECT_GT(unbounded, bound + 0.1f);
    // The bound holds against the cost right after the last build; a fresh build of the moved
    // bodies may differ from that by a few percent as the scene's layout drifts.
    const float worst =
        WorstCostRatioUnderMotion(CollisionWorldOptions{.rebuild_cost_ratio = bound}, kRounds);
    EXPECT_LE(worst, bound + 0.05f);
    EXPECT_GE(worst, 1.0f);
  }
}

}  // namespace
}  // namespace collide
