// The world's tree upkeep under motion: FinishUpdates keeps each tree's SAH cost within its
// stated bound of a fresh build however long the bodies keep moving, and the query form tight
// after every batch.
#include "query/collision_world.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bvh/simd_level.h"
#include "geom/ray_cast.h"
#include "query/collector.h"
#include "query/query_engine.h"

namespace collide {
namespace {

// The tree's SAH cost (its shape, boxes tight: FinishUpdates may leave them loose) over that of
// a fresh binned-SAH build of the same leaves.
float CostOverFreshBuild(const DynamicTree& tree) {
  DynamicTree tight = tree;
  tight.Refit();
  DynamicTree fresh = tree;
  fresh.Rebuild();
  return tight.SahCost() / fresh.SahCost();
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

// The closest hit of `ray` over `handles`' bodies, each tested on its own: true when there is
// one, its distance in `*best` (which starts at the ray's reach).
bool BruteForceClosest(const CollisionWorld& world, const std::vector<BodyHandle>& handles,
                       const Ray& ray, float* best) {
  bool hit = false;
  for (BodyHandle h : handles) {
    CastHit cast;
    const Body& b = world.body(h);
    if (Raycast(b.shape, b.pose, ray, &cast) && cast.distance <= *best) {
      *best = cast.distance;
      hit = true;
    }
  }
  return hit;
}

// A ball of radius 0.3 to 1.3 somewhere in the cube [0, side]^3.
BodyDesc RandomBall(std::mt19937& rng, uint64_t id, float side, BodyKind kind) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const float radius = 0.3f + u(rng);
  const Vec3 at{side * u(rng), side * u(rng), side * u(rng)};
  return BodyDesc{.id = id, .shape = Sphere{radius}, .pose = Pose{.position = at}, .kind = kind};
}

// Casts `rays` random rays up through a 30-unit cube and checks each closest hit against a brute
// force over `handles`' bodies (same distance, bit for bit, and a hit exactly when there is one).
void ExpectRaysMatchBruteForce(const CollisionWorld& world, const std::vector<BodyHandle>& handles,
                               std::mt19937& rng, int rays, float max_distance) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int r = 0; r < rays; ++r) {
    const Vec3 origin{30 * u(rng), 30 * u(rng), -5};
    const Vec3 dir = Normalize(Vec3{u(rng) - 0.5f, u(rng) - 0.5f, 1});
    const Ray ray{.origin = origin, .direction = dir, .max_distance = max_distance};
    ClosestHitCollector c(ray.max_distance);
    Raycast(world, ray, QueryFilter{}, c);
    float best = ray.max_distance;
    const bool hit = BruteForceClosest(world, handles, ray, &best);
    ASSERT_EQ(c.has_hit(), hit) << "ray " << r;
    if (hit) {
      ASSERT_EQ(c.hit().distance, best) << "ray " << r;
    }
  }
}

// A ray running along a face of a box, with a zero component of either sign in its direction
// (a client may send -0.0), lies in the box's slab on that axis: every SIMD level's tree walk
// keeps the box, and the ray finds what a brute force over the bodies finds.
TEST(CollisionWorld, ARayAlongAFaceFindsTheBoxWhateverTheSignOfItsZeroComponents) {
  CollisionWorld world;
  std::vector<BodyDesc> descs;
  std::vector<BodyHandle> handles;
  // A grid of unit boxes (cubes of side 1, their faces on integer planes), enough for several
  // levels of the tree.
  for (int i = 0; i < 512; ++i) {
    BodyDesc d;
    d.id = static_cast<uint64_t>(i);
    d.shape = Box{{0.5f, 0.5f, 0.5f}};
    d.pose.position = {2.0f * static_cast<float>(i % 8) + 0.5f,
                       2.0f * static_cast<float>(i / 8 % 8) + 0.5f,
                       2.0f * static_cast<float>(i / 64) + 0.5f};
    descs.push_back(d);
  }
  handles.resize(descs.size());
  world.AddBulk(descs, handles);
  world.FinishUpdates();
  const SimdLevel saved = ActiveSimdLevel();
  int hits = 0;
  for (SimdLevel level : {SimdLevel::kSse, SimdLevel::kAvx2, SimdLevel::kAvx512}) {
    if (!SimdLevelSupported(level)) continue;
    SetSimdLevel(level);
    SCOPED_TRACE(std::string(SimdLevelName(level)));
    for (int axis = 0; axis < 3; ++axis) {
      for (float zero : {0.0f, -0.0f}) {
        for (float plane : {2.0f, 3.0f}) {  // a box's min face, then its max face
          for (float sign : {1.0f, -1.0f}) {
            // Along `axis + 1`, in the plane `plane` of axis `axis`, through the middle of the
            // boxes on the third axis; the zero component is on `axis`.
            const int along = (axis + 1) % 3;
            const int third = (axis + 2) % 3;
            float o[3], d[3];
            o[axis] = plane;
            o[along] = sign > 0 ? -5.0f : 25.0f;
            o[third] = 4.5f;
            d[axis] = zero;
            d[along] = sign;
            d[third] = 0.0f;
            const Ray ray{.origin = {o[0], o[1], o[2]},
                          .direction = {d[0], d[1], d[2]},
                          .max_distance = 100.0f};
            ClosestHitCollector c(ray.max_distance);
            Raycast(world, ray, QueryFilter{}, c);
            float best = ray.max_distance;
            const bool hit = BruteForceClosest(world, handles, ray, &best);
            SCOPED_TRACE(testing::Message() << "axis " << axis << " zero " << zero << " plane "
                                            << plane << " sign " << sign);
            EXPECT_TRUE(hit);  // the brute force grazes the faces
            ASSERT_EQ(c.has_hit(), hit);
            if (hit) {
              EXPECT_EQ(c.hit().distance, best);
            }
            hits += hit;
          }
        }
      }
    }
  }
  SetSimdLevel(saved);
  EXPECT_GT(hits, 0);
}

TEST(CollisionWorld, SahCostStaysWithinItsBoundOfAFreshBuildUnderMotion) {
  constexpr int kRounds = 60;
  // Left alone (no rebuild), the random walk ages the tree well past the bounds below, so the
  // bounded runs are held by the upkeep, not by a workload too gentle to age anything.
  // The rebuilds run at once here (in the background, a build installs a few batches after
  // the check that started it, as threads are scheduled).
  const float unbounded = WorstCostRatioUnderMotion(
      CollisionWorldOptions{.rebuild_cost_ratio = 1e9f, .rebuild_in_background = false}, kRounds);
  for (float bound : {CollisionWorldOptions{}.rebuild_cost_ratio, 1.3f}) {
    SCOPED_TRACE("rebuild_cost_ratio " + std::to_string(bound));
    EXPECT_GT(unbounded, bound + 0.1f);
    // The bound holds against the cost right after the last build; a fresh build of the moved
    // bodies may differ from that by a few percent as the scene's layout drifts.
    const float worst = WorstCostRatioUnderMotion(
        CollisionWorldOptions{.rebuild_cost_ratio = bound, .rebuild_in_background = false},
        kRounds);
    EXPECT_LE(worst, bound + 0.05f);
    EXPECT_GE(worst, 1.0f);
  }
}

// Moves of a few bodies per batch leave the binary tree's boxes stale (its refit waits for the
// quality check, a new leaf or a new shape of the tree) while the 8-wide form the queries walk is
// tight after every FinishUpdates (Validate checks each of its boxes is its children's union),
// and every ray finds what a brute force over the bodies finds.
TEST(CollisionWorld, TheQueryFormIsTightAfterEveryBatchWhileTheBinaryTreeWaitsForItsRefit) {
  constexpr int kBodies = 2000;
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  CollisionWorld world;
  std::vector<BodyHandle> handles;
  for (int i = 0; i < kBodies; ++i) {
    handles.push_back(
        world.Add(BodyDesc{.id = static_cast<uint64_t>(i),
                           .shape = Sphere{0.2f + 0.5f * u(rng)},
                           .pose = Pose{.position = {30 * u(rng), 30 * u(rng), 30 * u(rng)}}}));
  }
  world.FinishUpdates();
  auto loose = [&] {
    DynamicTree tight = world.tree(BodyKind::kDynamic);
    tight.Refit();
    return world.tree(BodyKind::kDynamic).SahCost() > tight.SahCost();
  };
  bool was_loose = false;
  for (int batch = 0; batch < 40; ++batch) {
    for (int k = 0; k < 20; ++k) {
      const BodyHandle h = handles[static_cast<size_t>(rng() % kBodies)];
      Pose pose = world.body(h).pose;
      pose.position += Vec3{2 * u(rng) - 1, 2 * u(rng) - 1, 2 * u(rng) - 1};
      world.SetPose(h, pose);
    }
    if (batch % 10 == 9) {
      // A new body keeps the query form's shape (it takes a free slot of the form, or waits in
      // the secondary structure), and the binary tree, which only stages the next collapse,
      // still waits for its refit (the rays below find the new body).
      const int32_t nodes = world.tree(BodyKind::kDynamic).wide_form().NodeCount();
      handles.push_back(world.Add(BodyDesc{.id = static_cast<uint64_t>(kBodies + batch),
                                           .shape = Sphere{0.5f},
                                           .pose = Pose{.position = {15, 15, 15}}}));
      EXPECT_EQ(world.tree(BodyKind::kDynamic).wide_form().NodeCount(), nodes) << batch;
    }
    world.FinishUpdates();
    ASSERT_TRUE(world.Validate()) << "batch " << batch;
    ASSERT_TRUE(world.tree(BodyKind::kDynamic).IsOptimized());
    was_loose = was_loose || loose();
    SCOPED_TRACE("batch " + std::to_string(batch));
    ExpectRaysMatchBruteForce(world, handles, rng, 50, 50.0f);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_TRUE(was_loose) << "every batch refit the binary tree";
}

// A move writes its leaf's exact box and marks the leaf; FinishUpdates refits the query form
// above the marked leaves once per batch. Over batches that move the same bodies again and again
// (so a mark must be cleared and taken anew), some twice in one batch, reshape some, move static
// bodies too, and add and remove bodies between moves: after each FinishUpdates every leaf box of
// the query form is its body's exact box and every node box the exact union of its children
// (Validate), and rays and box overlaps find what a brute force over the bodies finds.
TEST(CollisionWorld, EveryMarkedLeafIsExactAfterEachBatchsRefit) {
  // Over kBackgroundRebuildMin dynamic bodies: the rebuilds run in the background, installed
  // whenever they are done, and the answers must not depend on when.
  constexpr int kBodies = 3000;
  constexpr uint32_t kSeed = 4242;
  std::mt19937 rng(kSeed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  auto random_shape = [&]() -> Shape {
    const float s = 0.2f + 0.6f * u(rng);
    switch (rng() % 3) {
      case 0:
        return Sphere{s};
      case 1:
        return Box{{s, 0.5f * s, 0.8f * s}};
      default:
        return Capsule{.radius = 0.5f * s, .half_height = s};
    }
  };
  CollisionWorld world;
  std::vector<BodyHandle> handles;
  auto add = [&](uint64_t id) {
    handles.push_back(
        world.Add(BodyDesc{.id = id,
                           .shape = random_shape(),
                           .pose = Pose{.position = {30 * u(rng), 30 * u(rng), 30 * u(rng)}},
                           .kind = id % 5 == 0 ? BodyKind::kStatic : BodyKind::kDynamic}));
  };
  for (int i = 0; i < kBodies; ++i) add(static_cast<uint64_t>(i));
  uint64_t next_id = kBodies;
  world.FinishUpdates();
  auto move = [&](BodyHandle h, float step) {
    Pose pose = world.body(h).pose;
    pose.position +=
        Vec3{step * (2 * u(rng) - 1), step * (2 * u(rng) - 1), step * (2 * u(rng) - 1)};
    world.SetPose(h, pose);
  };
  for (int batch = 0; batch < 30; ++batch) {
    SCOPED_TRACE("seed " + std::to_string(kSeed) + " batch " + std::to_string(batch));
    // The first hundred bodies move in every batch, twice in every third one.
    for (int i = 0; i < 100; ++i) {
      move(handles[static_cast<size_t>(i)], 0.5f);
      if (batch % 3 == 0) move(handles[static_cast<size_t>(i)], 0.5f);
    }
    // Some batches move nearly everything (the refit's sweep), the rest a few (its heap).
    const int others = batch % 4 == 1 ? static_cast<int>(handles.size()) : 30;
    for (int k = 0; k < others; ++k) {
      move(handles[static_cast<size_t>(rng() % handles.size())], batch % 7 == 6 ? 20.0f : 1.0f);
    }
    for (int k = 0; k < 3; ++k) {
      world.SetShape(handles[100 + static_cast<size_t>(rng() % 200)], random_shape());
    }
    if (batch % 5 == 4) {
      // A removal and an addition between the moves of one batch.
      const size_t gone = 300 + static_cast<size_t>(rng() % (handles.size() - 300));
      world.Remove(handles[gone]);
      handles[gone] = handles.back();
      handles.pop_back();
      add(next_id++);
      move(handles[5], 1.0f);
    }
    world.FinishUpdates();
    ASSERT_TRUE(world.tree(BodyKind::kDynamic).IsOptimized());
    ASSERT_TRUE(world.tree(BodyKind::kStatic).IsOptimized());
    ASSERT_TRUE(world.Validate());
    ExpectRaysMatchBruteForce(world, handles, rng, 40, 60.0f);
    if (::testing::Test::HasFatalFailure()) return;
    for (int r = 0; r < 40; ++r) {
      // Every body whose exact box meets a query box is a candidate of the tree holding it, and
      // no other body is.
      const Vec3 at{30 * u(rng), 30 * u(rng), 30 * u(rng)};
      const Aabb query{at - Vec3{2, 2, 2}, at + Vec3{2, 2, 2}};
      std::vector<uint32_t> found;
      std::vector<uint32_t> expected;
      for (BodyKind kind : {BodyKind::kDynamic, BodyKind::kStatic}) {
        world.tree(kind).QueryAabb(query, ~0u, [&](uint32_t user, int32_t) {
          found.push_back(user);
          return true;
        });
      }
      for (BodyHandle h : handles) {
        if (Overlaps(world.BoundsOf(world.body(h)), query)) {
          expected.push_back(static_cast<uint32_t>(h));
        }
      }
      std::sort(found.begin(), found.end());
      std::sort(expected.begin(), expected.end());
      ASSERT_EQ(found, expected) << "box " << r;
    }
  }
}

// The static pruner: level geometry loaded over many small batches (and some of it removed
// again) leaves the static tree a fresh binned-SAH build after every batch, where the same
// bodies inserted one by one into the dynamic tree age it well past that.
TEST(CollisionWorld, TheStaticTreeIsAFreshBuildAfterEveryBatchThatAddsOrRemovesStatics) {
  std::mt19937 rng(515);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  CollisionWorld world;
  std::vector<BodyHandle> statics;
  std::vector<BodyHandle> dynamics;
  for (int batch = 0; batch < 40; ++batch) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    for (int i = 0; i < 40; ++i) {
      // A street of buildings laid out batch by batch, the same in both trees.
      const Vec3 at{2.0f * static_cast<float>(batch) + u(rng), 60 * u(rng), 3 * u(rng)};
      const Vec3 half{0.2f + u(rng), 0.2f + 2 * u(rng), 0.5f + 3 * u(rng)};
      for (BodyKind kind : {BodyKind::kStatic, BodyKind::kDynamic}) {
        BodyHandle h = world.Add(BodyDesc{.id = static_cast<uint64_t>(batch * 100 + i),
                                          .shape = Box{half},
                                          .pose = Pose{.position = at},
                                          .kind = kind});
        (kind == BodyKind::kStatic ? statics : dynamics).push_back(h);
      }
    }
    if (batch % 8 == 7) {
      for (int k = 0; k < 10; ++k) {
        const size_t gone = static_cast<size_t>(rng() % statics.size());
        world.Remove(statics[gone]);
        statics[gone] = statics.back();
        statics.pop_back();
      }
    }
    world.FinishUpdates();
    ASSERT_TRUE(world.Validate());
    EXPECT_LE(CostOverFreshBuild(world.tree(BodyKind::kStatic)), 1.0001f);
  }
  // Under kBackgroundRebuildMin bodies each build ran at once; the same bodies added to the
  // dynamic tree (rebuilt only when a decay check finds it past the bound) are not a fresh build.
  ASSERT_LT(world.tree(BodyKind::kStatic).ProxyCount(), kBackgroundRebuildMin);
  EXPECT_GT(CostOverFreshBuild(world.tree(BodyKind::kDynamic)), 1.02f);
}

// A large static tree changed by a batch is rebuilt in the background; the next batches install
// the build, and it answers like a fresh one.
TEST(CollisionWorld, ALargeStaticTreeChangedByABatchIsRebuiltInTheBackground) {
  std::mt19937 rng(616);
  CollisionWorld world;
  auto desc = [&](uint64_t id) { return RandomBall(rng, id, 80.0f, BodyKind::kStatic); };
  std::vector<BodyDesc> descs;
  for (int i = 0; i < 3 * kBackgroundRebuildMin / 2; ++i) descs.push_back(desc(i));
  std::vector<BodyHandle> handles(descs.size());
  world.AddBulk(descs, handles);
  ASSERT_FALSE(world.tree(BodyKind::kStatic).BackgroundRebuildPending());
  // Unchanged membership: no build.
  world.FinishUpdates();
  EXPECT_FALSE(world.tree(BodyKind::kStatic).BackgroundRebuildPending());
  for (int i = 0; i < 200; ++i) world.Add(desc(descs.size() + i));
  world.FinishUpdates();
  EXPECT_TRUE(world.tree(BodyKind::kStatic).BackgroundRebuildPending());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (world.tree(BodyKind::kStatic).BackgroundRebuildPending() &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    world.FinishUpdates();
  }
  ASSERT_FALSE(world.tree(BodyKind::kStatic).BackgroundRebuildPending());
  ASSERT_TRUE(world.Validate());
  EXPECT_LE(CostOverFreshBuild(world.tree(BodyKind::kStatic)), 1.01f);
}

// Dynamic bodies added one by one into a large tree keep its query form's shape: they take free
// slots of the form, then wait in the secondary structure; once that holds half its most, a
// background rebuild starts, and its install takes them all into the main form. The world stays
// valid and finds every body by rays at each step.
TEST(CollisionWorld, BodiesAddedIntoALargeTreeWaitInTheSecondaryUntilABackgroundBuildTakesThem) {
  std::mt19937 rng(717);
  CollisionWorld world;
  auto desc = [&](uint64_t id) { return RandomBall(rng, id, 60.0f, BodyKind::kDynamic); };
  std::vector<BodyDesc> descs;
  for (int i = 0; i < 3 * kBackgroundRebuildMin / 2; ++i) descs.push_back(desc(i));
  std::vector<BodyHandle> handles(descs.size());
  world.AddBulk(descs, handles);
  const DynamicTree& tree = world.tree(BodyKind::kDynamic);
  const int32_t nodes = tree.wide_form().NodeCount();
  ASSERT_FALSE(tree.BackgroundRebuildPending());
  uint64_t id = descs.size();
  // A batch of a few bodies at a time, until the secondary structure starts a build.
  for (int batch = 0; batch < 500 && !tree.BackgroundRebuildPending(); ++batch) {
    for (int k = 0; k < 4; ++k) handles.push_back(world.Add(desc(id++)));
    world.FinishUpdates();
    ASSERT_TRUE(world.Validate()) << "batch " << batch;
    if (!tree.BackgroundRebuildPending()) {
      ASSERT_EQ(tree.wide_form().NodeCount(), nodes) << "batch " << batch;
      ASSERT_LT(tree.SecondaryCount(), tree.MaxSecondary() / 2);
    }
    if (batch % 25 == 0) {
      SCOPED_TRACE("batch " + std::to_string(batch));
      ExpectRaysMatchBruteForce(world, handles, rng, 50, 70.0f);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  ASSERT_TRUE(tree.BackgroundRebuildPending()) << "no build started";
  EXPECT_GE(tree.SecondaryCount(), tree.MaxSecondary() / 2);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (tree.BackgroundRebuildPending() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    world.FinishUpdates();
  }
  ASSERT_FALSE(tree.BackgroundRebuildPending());
  EXPECT_EQ(tree.SecondaryCount(), 0);
  ASSERT_TRUE(world.Validate());
  ExpectRaysMatchBruteForce(world, handles, rng, 200, 70.0f);
}

}  // namespace
}  // namespace collide
