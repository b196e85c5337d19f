#include "bvh/dynamic_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "bvh/simd_levels.h"
#include "bvh/tree_oracle.h"

namespace collide {
namespace {

using testing::CastOracle;
using testing::Grow;
using testing::OracleHit;
using testing::OracleProxy;
using testing::OverlapOracle;
using testing::RandomBox;
using testing::RandomDirection;
using testing::Reciprocal;
using testing::Uniform;

// A tree plus the brute-force list of its live proxies, driven by one seeded generator.
class Harness {
 public:
  Harness(uint32_t seed, float half_world, float max_half, float margin = 0.1f)
      : rng_(seed), half_world_(half_world), max_half_(max_half), tree_({.fat_margin = margin}) {}

  DynamicTree& tree() { return tree_; }
  std::mt19937& rng() { return rng_; }
  std::vector<OracleProxy>& live() { return live_; }

  uint32_t RandomCategory() {
    int k = static_cast<int>(rng_() % 6);
    return k == 5 ? 0u : (1u << k);  // one category in six is 0: never hit
  }
  uint32_t RandomMask() {
    switch (rng_() % 4) {
      case 0:
        return ~0u;
      case 1:
        return 1u;
      case 2:
        return 0x6u;
      default:
        return static_cast<uint32_t>(rng_());
    }
  }

  void Create() { Create(RandomBox(rng_, half_world_, max_half_), RandomCategory()); }
  void Create(const Aabb& tight, uint32_t category) {
    uint32_t user = next_user_++;
    int32_t proxy = tree_.CreateProxy(tight, user, category);
    ASSERT_TRUE(tree_.IsLiveProxy(proxy));
    for (const OracleProxy& p : live_) ASSERT_NE(p.proxy, proxy) << "id handed out twice";
    live_.push_back({proxy, tight, user, category});
  }
  void DestroyAt(size_t i) {
    tree_.DestroyProxy(live_[i].proxy);
    EXPECT_FALSE(tree_.IsLiveProxy(live_[i].proxy));
    live_[i] = live_.back();
    live_.pop_back();
  }
  // Moves proxy i by a random step up to `step` per axis.
  void MoveAt(size_t i, float step, bool enlarge = false) {
    OracleProxy& p = live_[i];
    float dx = Uniform(rng_, -step, step);
    float dy = Uniform(rng_, -step, step);
    float dz = Uniform(rng_, -step, step);
    Vec3 d{dx, dy, dz};
    Aabb moved{p.tight.min + d, p.tight.max + d};
    Aabb old_fat = tree_.FatAabb(p.proxy);
    bool escaped = !Contains(old_fat, moved);
    bool changed = enlarge ? tree_.EnlargeProxy(p.proxy, moved) : tree_.MoveProxy(p.proxy, moved);
    EXPECT_EQ(changed, escaped);
    if (!changed) {
      EXPECT_EQ(tree_.FatAabb(p.proxy), old_fat);
    }
    EXPECT_TRUE(Contains(tree_.FatAabb(p.proxy), moved));
    p.tight = moved;
  }

  // Moves proxy i by a random step up to `step` per axis, writing its exact box (SetProxyBox).
  void MarkAt(size_t i, float step) {
    OracleProxy& p = live_[i];
    const Vec3 d{Uniform(rng_, -step, step), Uniform(rng_, -step, step),
                 Uniform(rng_, -step, step)};
    p.tight = Aabb{p.tight.min + d, p.tight.max + d};
    tree_.SetProxyBox(p.proxy, p.tight);
    EXPECT_EQ(tree_.FatAabb(p.proxy), p.tight);
  }

  void ExpectValid() {
    const char* why = "";
    ASSERT_TRUE(tree_.Validate(&why)) << why;
    ASSERT_EQ(tree_.ProxyCount(), static_cast<int32_t>(live_.size()));
    for (const OracleProxy& p : live_) {
      ASSERT_EQ(tree_.UserData(p.proxy), p.user);
      ASSERT_EQ(tree_.CategoryBits(p.proxy), p.category);
      ASSERT_TRUE(Contains(tree_.FatAabb(p.proxy), p.tight));
    }
  }

  // A ray origin: mostly random, sometimes exactly on a corner of a live box (slab planes).
  Vec3 RandomOrigin() {
    if (!live_.empty() && rng_() % 4 == 0) {
      return tree_.FatAabb(live_[rng_() % live_.size()].proxy).min;
    }
    float x = Uniform(rng_, -1.1f * half_world_, 1.1f * half_world_);
    float y = Uniform(rng_, -1.1f * half_world_, 1.1f * half_world_);
    float z = Uniform(rng_, -1.1f * half_world_, 1.1f * half_world_);
    return {x, y, z};
  }
  // A direction: mostly random, sometimes along an axis (zero components).
  Vec3 RandomDir() {
    if (rng_() % 4 == 0) {
      Vec3 d{};
      d[static_cast<int>(rng_() % 3)] = (rng_() % 2) ? 1.0f : -1.0f;
      return d;
    }
    return RandomDirection(rng_);
  }

  void CheckBoxQuery() {
    Aabb box = RandomBox(rng_, half_world_, 0.05f * half_world_);
    uint32_t mask = RandomMask();
    std::vector<int32_t> got;
    tree_.QueryAabb(box, mask, [&](uint32_t user, int32_t proxy) {
      EXPECT_EQ(user, tree_.UserData(proxy));
      got.push_back(proxy);
      return true;
    });
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got, OverlapOracle(tree_, live_, box, mask));
  }

  // Every box the ray enters, with its entry distance, when the callback never clips.
  void CheckRayAllHits() {
    Vec3 origin = RandomOrigin();
    Vec3 dir = RandomDir();
    float max_distance = Uniform(rng_, 0.0f, half_world_);
    uint32_t mask = RandomMask();
    Vec3 inv = Reciprocal(dir);
    std::vector<OracleHit> got;
    tree_.Raycast(origin, dir, max_distance, mask, [&](uint32_t user, int32_t proxy, float max_d) {
      EXPECT_EQ(max_d, max_distance);
      float t0, t1;
      EXPECT_TRUE(RayAabbInterval(tree_.FatAabb(proxy), origin, inv, max_d, &t0, &t1));
      got.push_back({proxy, t0});
      return max_d;
    });
    std::sort(got.begin(), got.end(),
              [](const OracleHit& a, const OracleHit& b) { return a.proxy < b.proxy; });
    std::vector<OracleHit> want = CastOracle(tree_, live_, origin, dir, max_distance, {}, mask);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].proxy, want[i].proxy);
      ASSERT_EQ(got[i].t, want[i].t);
    }
  }

  // Closest hit, each box standing for its body: clip at the entry distance.
  void CheckRayClosest() {
    Vec3 origin = RandomOrigin();
    Vec3 dir = RandomDir();
    float max_distance = Uniform(rng_, 0.0f, half_world_);
    uint32_t mask = RandomMask();
    Vec3 inv = Reciprocal(dir);
    float best = max_distance;
    bool hit = false;
    tree_.Raycast(origin, dir, max_distance, mask, [&](uint32_t, int32_t proxy, float max_d) {
      EXPECT_LE(max_d, max_distance);
      float t0, t1;
      // Only boxes entered within the current (clipped) range are reported.
      EXPECT_TRUE(RayAabbInterval(tree_.FatAabb(proxy), origin, inv, max_d, &t0, &t1));
      hit = true;
      best = std::min(best, t0);
      return t0;
    });
    std::vector<OracleHit> want = CastOracle(tree_, live_, origin, dir, max_distance, {}, mask);
    ASSERT_EQ(hit, !want.empty());
    if (hit) {
      float want_best = max_distance;
      for (const OracleHit& h : want) want_best = std::min(want_best, h.t);
      ASSERT_EQ(best, want_best);
    }
  }

  // Swept boxes: the reported set lies between the casts of slightly smaller and larger boxes
  // (the tree folds the growth into the origin, which rounds differently).
  void CheckSwept() {
    Vec3 origin = RandomOrigin();
    Vec3 dir = RandomDir();
    float max_distance = Uniform(rng_, 0.0f, half_world_);
    uint32_t mask = RandomMask();
    float hx = Uniform(rng_, 0.05f, 0.05f * half_world_ + 0.1f);
    float hy = rng_() % 2 ? hx : Uniform(rng_, 0.05f, 0.05f * half_world_ + 0.1f);
    float hz = rng_() % 2 ? hx : Uniform(rng_, 0.05f, 0.05f * half_world_ + 0.1f);
    Vec3 he{hx, hy, hz};
    std::vector<int32_t> got;
    tree_.SweptCast(origin, dir, max_distance, he, mask, [&](uint32_t, int32_t proxy, float max_d) {
      got.push_back(proxy);
      return max_d;
    });
    std::sort(got.begin(), got.end());
    ASSERT_TRUE(std::adjacent_find(got.begin(), got.end()) == got.end()) << "reported twice";
    float delta = 1e-5f * (1.0f + 2.0f * half_world_);
    Vec3 d{delta, delta, delta};
    auto must = CastOracle(tree_, live_, origin, dir, max_distance, he - d, mask);
    auto may = CastOracle(tree_, live_, origin, dir, max_distance, he + d, mask);
    for (const OracleHit& h : must) {
      ASSERT_TRUE(std::binary_search(got.begin(), got.end(), h.proxy)) << "missed " << h.proxy;
    }
    std::vector<int32_t> may_ids;
    for (const OracleHit& h : may) may_ids.push_back(h.proxy);
    for (int32_t p : got) {
      ASSERT_TRUE(std::binary_search(may_ids.begin(), may_ids.end(), p)) << "extra " << p;
    }
  }

  // Runs `count` queries of each kind on the tree as it is, then on its 8-wide form with the
  // kernels of each SIMD level the CPU has (bvh/simd_level.h; simd_level_test.cc says which
  // levels a CPU lacks).
  void CheckQueries(int count) {
    for (bool optimized : {false, true}) {
      SCOPED_TRACE(optimized ? "8-wide form" : "binary tree");
      if (optimized) {
        tree_.Optimize();
        ASSERT_TRUE(tree_.IsOptimized());
        ASSERT_NO_FATAL_FAILURE(ExpectValid());
      }
      for (SimdLevel level : testing::kAllSimdLevels) {
        testing::ScopedSimdLevel scoped(level);
        if (!scoped.ok()) continue;
        SCOPED_TRACE(std::string("simd ") + std::string(SimdLevelName(level)));
        for (int i = 0; i < count; ++i) {
          ASSERT_NO_FATAL_FAILURE(CheckBoxQuery());
          ASSERT_NO_FATAL_FAILURE(CheckRayAllHits());
          ASSERT_NO_FATAL_FAILURE(CheckRayClosest());
          ASSERT_NO_FATAL_FAILURE(CheckSwept());
        }
        if (!optimized) break;  // the binary tree has no SIMD kernels
      }
    }
  }

 private:
  std::mt19937 rng_;
  float half_world_;
  float max_half_;
  DynamicTree tree_;
  std::vector<OracleProxy> live_;
  uint32_t next_user_ = 1000;
};

std::string SeedTrace(uint32_t seed) { return "seed=" + std::to_string(seed); }

TEST(DynamicTree, EmptyTreeIsValidAndFindsNothing) {
  DynamicTree tree;
  EXPECT_TRUE(tree.Validate());
  EXPECT_EQ(tree.ProxyCount(), 0);
  EXPECT_EQ(tree.Height(), 0);
  EXPECT_EQ(tree.SahCost(), 0.0f);
  int calls = 0;
  tree.QueryAabb(Aabb{{-1e6f, -1e6f, -1e6f}, {1e6f, 1e6f, 1e6f}}, ~0u, [&](uint32_t, int32_t) {
    ++calls;
    return true;
  });
  tree.Raycast({0, 0, 0}, {1, 0, 0}, 1e6f, ~0u, [&](uint32_t, int32_t, float d) {
    ++calls;
    return d;
  });
  tree.Rebuild();
  tree.Refit();
  tree.RebuildEnlarged();
  EXPECT_TRUE(tree.Validate());
  EXPECT_EQ(calls, 0);
}

TEST(DynamicTree, SingleProxyLivesAtTheRoot) {
  DynamicTree tree({.fat_margin = 0.5f});
  int32_t p = tree.CreateProxy({{0, 0, 0}, {1, 1, 1}}, 7, 1);
  EXPECT_TRUE(tree.Validate());
  EXPECT_EQ(tree.FatAabb(p), (Aabb{{-0.5f, -0.5f, -0.5f}, {1.5f, 1.5f, 1.5f}}));
  std::vector<uint32_t> users;
  tree.QueryAabb({{1.2f, 1.2f, 1.2f}, {2, 2, 2}}, ~0u, [&](uint32_t u, int32_t) {
    users.push_back(u);
    return true;
  });
  EXPECT_EQ(users, std::vector<uint32_t>{7});
  float seen = -1;
  tree.Raycast({-5, 0.5f, 0.5f}, {1, 0, 0}, 10, ~0u, [&](uint32_t, int32_t, float d) {
    seen = d;
    return d;
  });
  EXPECT_EQ(seen, 10.0f);
  int calls = 0;
  tree.Raycast({-5, 0.5f, 0.5f}, {1, 0, 0}, 10, 2u, [&](uint32_t, int32_t, float d) {
    ++calls;
    return d;
  });
  EXPECT_EQ(calls, 0) << "masked out";
  EXPECT_FALSE(tree.MoveProxy(p, {{0.2f, 0.2f, 0.2f}, {1.2f, 1.2f, 1.2f}}));
  EXPECT_TRUE(tree.MoveProxy(p, {{5, 5, 5}, {6, 6, 6}}));
  EXPECT_TRUE(tree.EnlargeProxy(p, {{9, 9, 9}, {10, 10, 10}}));
  tree.Refit();
  EXPECT_TRUE(tree.Validate());
  tree.DestroyProxy(p);
  EXPECT_TRUE(tree.Validate());
  EXPECT_EQ(tree.ProxyCount(), 0);
}

TEST(DynamicTree, ValidAfterEveryMutationAndMatchesBruteForce) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(SeedTrace(seed));
    Harness h(seed, 50.0f, 3.0f);
    for (int i = 0; i < 1000; ++i) {
      h.Create();
      ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
    }
    ASSERT_NO_FATAL_FAILURE(h.CheckQueries(40));
    for (int op = 0; op < 3000; ++op) {
      size_t i = h.rng()() % h.live().size();
      switch (h.rng()() % 8) {
        case 0:
          h.DestroyAt(i);
          break;
        case 1:
          h.Create();
          break;
        case 2: {
          uint32_t category = h.RandomCategory();
          h.tree().SetCategoryBits(h.live()[i].proxy, category);
          h.live()[i].category = category;
          break;
        }
        case 3:
          h.MoveAt(i, 20.0f);  // far: always re-inserted
          break;
        default:
          h.MoveAt(i, 0.3f);
          break;
      }
      ASSERT_NO_FATAL_FAILURE(h.ExpectValid()) << "op " << op;
      if (op % 500 == 499) {
        ASSERT_NO_FATAL_FAILURE(h.CheckQueries(20));
      }
    }
    // Drain to empty, one removal at a time.
    while (!h.live().empty()) {
      h.DestroyAt(h.rng()() % h.live().size());
      ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
    }
    EXPECT_EQ(h.tree().InternalNodeCount(), 0);
  }
}

TEST(DynamicTree, LargeSetsMatchBruteForceThroughMovesRebuildsAndRefits) {
  for (uint32_t seed : {11u, 12u}) {
    SCOPED_TRACE(SeedTrace(seed));
    Harness h(seed, 120.0f, 1.5f);
    for (int i = 0; i < 20000; ++i) h.Create();
    ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
    ASSERT_NO_FATAL_FAILURE(h.CheckQueries(15));

    // Every proxy moves a little, three ticks, re-inserting.
    for (int tick = 0; tick < 3; ++tick) {
      for (size_t i = 0; i < h.live().size(); ++i) h.MoveAt(i, 0.5f);
      ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
    }
    ASSERT_NO_FATAL_FAILURE(h.CheckQueries(15));

    // Enlarge + refit.
    for (int tick = 0; tick < 2; ++tick) {
      for (size_t i = 0; i < h.live().size(); ++i) h.MoveAt(i, 0.5f, /*enlarge=*/true);
      ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
      ASSERT_NO_FATAL_FAILURE(h.CheckQueries(5));  // correct while marked
      h.tree().Refit();
      ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
    }
    ASSERT_NO_FATAL_FAILURE(h.CheckQueries(10));

    // Enlarge a tenth + partial rebuild.
    for (size_t i = 0; i < h.live().size(); i += 10) h.MoveAt(i, 3.0f, /*enlarge=*/true);
    ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
    h.tree().RebuildEnlarged();
    ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
    ASSERT_NO_FATAL_FAILURE(h.CheckQueries(10));

    // Enlarge everything + partial rebuild (the whole tree).
    for (size_t i = 0; i < h.live().size(); ++i) h.MoveAt(i, 0.5f, /*enlarge=*/true);
    h.tree().RebuildEnlarged();
    ASSERT_NO_FATAL_FAILURE(h.ExpectValid());

    // Removals and insertions after the rebuilds, then a full rebuild that keeps the ids.
    for (int i = 0; i < 3000; ++i) h.DestroyAt(h.rng()() % h.live().size());
    for (int i = 0; i < 2000; ++i) h.Create();
    ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
    h.tree().Rebuild();
    ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
    ASSERT_NO_FATAL_FAILURE(h.CheckQueries(15));

    // Mixed: enlarge some, then move others (re-inserting into a marked tree), then refit.
    for (size_t i = 0; i < h.live().size(); i += 3) h.MoveAt(i, 1.0f, /*enlarge=*/true);
    for (size_t i = 1; i < h.live().size(); i += 3) h.MoveAt(i, 1.0f);
    for (int i = 0; i < 500; ++i) h.DestroyAt(h.rng()() % h.live().size());
    for (int i = 0; i < 500; ++i) h.Create();
    ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
    ASSERT_NO_FATAL_FAILURE(h.CheckQueries(5));
    h.tree().Refit();
    ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
    ASSERT_NO_FATAL_FAILURE(h.CheckQueries(5));
  }
}

TEST(DynamicTree, BulkBuildAssignsProxiesInOrderAndMatchesBruteForce) {
  const uint32_t seed = 21;
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937 rng(seed);
  const int n = 50000;
  std::vector<Aabb> boxes(n);
  std::vector<uint32_t> users(n);
  std::vector<uint32_t> categories(n);
  for (int i = 0; i < n; ++i) {
    boxes[i] = RandomBox(rng, 200.0f, 2.0f);
    users[i] = 5000u + static_cast<uint32_t>(i);
    categories[i] = 1u << (rng() % 3);
  }
  Harness h(seed, 200.0f, 2.0f);
  // Some proxies before the build, which replaces them.
  for (int i = 0; i < 100; ++i) h.Create();
  std::vector<int32_t> proxies(n);
  h.tree().Build(boxes, users, categories, proxies);
  h.live().clear();
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(proxies[i], i);
    h.live().push_back({proxies[i], boxes[i], users[i], categories[i]});
  }
  ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
  EXPECT_EQ(h.tree().InternalNodeCount(), n - 1);
  ASSERT_NO_FATAL_FAILURE(h.CheckQueries(10));
  // A binned SAH build of uniform boxes is close to balanced.
  EXPECT_LT(h.tree().Height(), 40);
  const float built_cost = h.tree().SahCost();
  EXPECT_GE(built_cost, 1.0f);

  // Mutations after a build.
  for (int i = 0; i < 1000; ++i) h.DestroyAt(h.rng()() % h.live().size());
  for (int i = 0; i < 1000; ++i) h.Create();
  for (size_t i = 0; i < h.live().size(); i += 7) h.MoveAt(i, 5.0f);
  ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
  ASSERT_NO_FATAL_FAILURE(h.CheckQueries(5));

  // Building again over fewer boxes and over none.
  h.tree().Build(std::span(boxes).first(3), std::span(users).first(3),
                 std::span(categories).first(3), std::span(proxies).first(3));
  EXPECT_TRUE(h.tree().Validate());
  EXPECT_EQ(h.tree().ProxyCount(), 3);
  h.tree().Build({}, {}, {}, {});
  EXPECT_TRUE(h.tree().Validate());
  EXPECT_EQ(h.tree().ProxyCount(), 0);
}

TEST(DynamicTree, RebuildLowersTheSahCostOfAnAgedTree) {
  Harness h(31, 100.0f, 1.0f);
  for (int i = 0; i < 5000; ++i) h.Create();
  // Age the tree: large enlarge moves refitted in place, never restructured.
  for (int tick = 0; tick < 5; ++tick) {
    for (size_t i = 0; i < h.live().size(); ++i) h.MoveAt(i, 10.0f, /*enlarge=*/true);
    h.tree().Refit();
  }
  ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
  float aged = h.tree().SahCost();
  h.tree().Rebuild();
  ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
  float rebuilt = h.tree().SahCost();
  EXPECT_LT(rebuilt, 0.7f * aged) << "aged " << aged << " rebuilt " << rebuilt;
  ASSERT_NO_FATAL_FAILURE(h.CheckQueries(10));
}

class RayCallback : public ::testing::TestWithParam<bool> {};

TEST_P(RayCallback, CanClipStopAndContinue) {
  // Ten unit boxes along +x at x = 10, 20, ..., 100, margin 0; GetParam(): 8-wide form.
  DynamicTree tree({.fat_margin = 0.0f});
  std::vector<int32_t> ids;
  for (int i = 1; i <= 10; ++i) {
    float x = 10.0f * static_cast<float>(i);
    ids.push_back(tree.CreateProxy({{x - 0.5f, -0.5f, -0.5f}, {x + 0.5f, 0.5f, 0.5f}},
                                   static_cast<uint32_t>(i), 1u));
  }
  if (GetParam()) tree.Optimize();
  ASSERT_EQ(tree.IsOptimized(), GetParam());
  ASSERT_TRUE(tree.Validate());
  const Vec3 origin{0, 0, 0};
  const Vec3 dir{1, 0, 0};

  // Continue: returning the max distance sees every box within range.
  std::vector<uint32_t> seen;
  tree.Raycast(origin, dir, 1000.0f, ~0u, [&](uint32_t u, int32_t, float d) {
    EXPECT_EQ(d, 1000.0f);
    seen.push_back(u);
    return d;
  });
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen.size(), 10u);

  // The range limits what is seen: boxes entered at <= 55 are those at 10..50.
  seen.clear();
  tree.Raycast(origin, dir, 55.0f, ~0u, [&](uint32_t u, int32_t, float d) {
    seen.push_back(u);
    return d;
  });
  EXPECT_EQ(seen.size(), 5u);

  // Clip: a hit at the entry distance hides every box behind it; near boxes come first here,
  // so exactly one box is seen.
  seen.clear();
  tree.Raycast(origin, dir, 1000.0f, ~0u, [&](uint32_t u, int32_t proxy, float d) {
    seen.push_back(u);
    return tree.FatAabb(proxy).min.x;
  });
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(*std::min_element(seen.begin(), seen.end()), 1u);
  for (uint32_t u : seen) EXPECT_LE(u, 1u) << "a box behind the clip was reported";

  // Clip to 35: boxes entered at <= 35 may still come (10, 20, 30), none after.
  seen.clear();
  tree.Raycast(origin, dir, 1000.0f, ~0u, [&](uint32_t u, int32_t, float d) {
    seen.push_back(u);
    return 35.0f;
  });
  for (uint32_t u : seen) EXPECT_LE(u, 3u);

  // A box entered exactly at the clipped distance is still reported (ties stay visible).
  seen.clear();
  tree.Raycast(origin, dir, 1000.0f, ~0u, [&](uint32_t u, int32_t, float d) {
    seen.push_back(u);
    return 39.5f;  // the fourth box is entered at 39.5
  });
  EXPECT_NE(std::find(seen.begin(), seen.end(), 4u), seen.end());

  // Stop: a negative result ends the query at once.
  int calls = 0;
  tree.Raycast(origin, dir, 1000.0f, ~0u, [&](uint32_t, int32_t, float d) {
    ++calls;
    return calls == 3 ? -1.0f : d;
  });
  EXPECT_EQ(calls, 3);
  calls = 0;
  tree.SweptCast(origin, dir, 1000.0f, {0.1f, 0.1f, 0.1f}, ~0u, [&](uint32_t, int32_t, float) {
    ++calls;
    return -1.0f;
  });
  EXPECT_EQ(calls, 1);
  calls = 0;
  tree.QueryAabb({{0, -1, -1}, {1000, 1, 1}}, ~0u, [&](uint32_t, int32_t) {
    ++calls;
    return calls < 4;
  });
  EXPECT_EQ(calls, 4);

  // Clip to 0: only boxes containing the origin remain, and there is none here.
  calls = 0;
  tree.Raycast(origin, dir, 1000.0f, ~0u, [&](uint32_t, int32_t, float) {
    ++calls;
    return 0.0f;
  });
  EXPECT_EQ(calls, 1);

  // A ray starting inside a box enters it at 0.
  float entered = -1.0f;
  tree.Raycast({10, 0, 0}, dir, 1000.0f, ~0u, [&](uint32_t u, int32_t proxy, float) {
    float t0, t1;
    RayAabbInterval(tree.FatAabb(proxy), {10, 0, 0}, Reciprocal(dir), 1000.0f, &t0, &t1);
    if (u == 1) {
      entered = t0;
    }
    return 0.0f;
  });
  EXPECT_EQ(entered, 0.0f);
}

INSTANTIATE_TEST_SUITE_P(BinaryAndWide, RayCallback, ::testing::Bool());

TEST(DynamicTree, OptimizeIsKeptBySmallMovesAndDroppedByChanges) {
  Harness h(71, 50.0f, 1.0f, /*margin=*/0.5f);
  for (int i = 0; i < 500; ++i) h.Create();
  h.tree().Optimize();
  ASSERT_TRUE(h.tree().IsOptimized());
  // A move inside the fat box changes nothing.
  OracleProxy& p = h.live()[0];
  EXPECT_FALSE(h.tree().MoveProxy(p.proxy, p.tight));
  EXPECT_TRUE(h.tree().IsOptimized());
  h.MoveAt(1, 10.0f);
  EXPECT_FALSE(h.tree().IsOptimized());
  ASSERT_NO_FATAL_FAILURE(h.CheckQueries(10));  // optimizes again
  h.tree().SetCategoryBits(h.live()[2].proxy, 8u);
  h.live()[2].category = 8u;
  EXPECT_FALSE(h.tree().IsOptimized());
  h.tree().Optimize();
  h.DestroyAt(3);
  EXPECT_FALSE(h.tree().IsOptimized());
  h.tree().Optimize();
  h.MoveAt(4, 10.0f, /*enlarge=*/true);
  EXPECT_FALSE(h.tree().IsOptimized());
  ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
  ASSERT_NO_FATAL_FAILURE(h.CheckQueries(10));
  // Two proxies: the root has leaves only.
  DynamicTree small;
  small.CreateProxy({{0, 0, 0}, {1, 1, 1}}, 1, 1);
  small.Optimize();
  EXPECT_TRUE(small.Validate());
  small.CreateProxy({{3, 0, 0}, {4, 1, 1}}, 2, 1);
  small.Optimize();
  EXPECT_TRUE(small.Validate());
  int calls = 0;
  small.Raycast({-1, 0.5f, 0.5f}, {1, 0, 0}, 10.0f, ~0u, [&](uint32_t, int32_t, float d) {
    ++calls;
    return d;
  });
  EXPECT_EQ(calls, 2);
}

TEST(DynamicTree, ZeroSizeBoxesAndDuplicatesAreFound) {
  for (uint32_t seed : {41u, 42u}) {
    SCOPED_TRACE(SeedTrace(seed));
    Harness h(seed, 20.0f, 0.0f, /*margin=*/0.0f);  // points, no margin
    for (int i = 0; i < 1500; ++i) {
      h.Create();
      // Duplicates: every tenth box is created three times.
      if (i % 10 == 0) {
        Aabb b = h.live().back().tight;
        h.Create(b, 1u);
        h.Create(b, 2u);
      }
    }
    ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
    ASSERT_NO_FATAL_FAILURE(h.CheckQueries(30));
    // Rays along an axis exactly through a point hit it and its duplicates.
    const OracleProxy& p = h.live()[30];
    const Vec3 point = p.tight.min;
    std::vector<int32_t> got;
    h.tree().Raycast(point - Vec3{5, 0, 0}, {1, 0, 0}, 10.0f, ~0u,
                     [&](uint32_t, int32_t proxy, float d) {
                       got.push_back(proxy);
                       return d;
                     });
    EXPECT_NE(std::find(got.begin(), got.end(), p.proxy), got.end());
    // Point query boxes.
    got.clear();
    h.tree().QueryAabb({point, point}, ~0u, [&](uint32_t, int32_t proxy) {
      got.push_back(proxy);
      return true;
    });
    EXPECT_NE(std::find(got.begin(), got.end(), p.proxy), got.end());
    h.tree().Rebuild();
    ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
    ASSERT_NO_FATAL_FAILURE(h.CheckQueries(20));
  }
}

TEST(DynamicTree, HugeCoordinatesWork) {
  const uint32_t seed = 51;
  SCOPED_TRACE(SeedTrace(seed));
  Harness h(seed, 1e5f, 50.0f);
  for (int i = 0; i < 3000; ++i) h.Create();
  // A few at the far corners.
  h.Create({{-1e5f, -1e5f, -1e5f}, {-1e5f + 1, -1e5f + 1, -1e5f + 1}}, 1u);
  h.Create({{1e5f - 1, 1e5f - 1, 1e5f - 1}, {1e5f, 1e5f, 1e5f}}, 1u);
  ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
  ASSERT_NO_FATAL_FAILURE(h.CheckQueries(30));
  for (size_t i = 0; i < h.live().size(); ++i) h.MoveAt(i, 100.0f);
  ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
  ASSERT_NO_FATAL_FAILURE(h.CheckQueries(20));
  h.tree().Rebuild();
  ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
  ASSERT_NO_FATAL_FAILURE(h.CheckQueries(20));
}

TEST(DynamicTree, IdenticalBoxesNeedAGrowingStackAndAllAreFound) {
  // Identical boxes give no SAH preference: the tree degenerates. Queries with a tiny inline
  // stack must spill and still report every box once.
  for (bool bulk : {false, true}) {
    SCOPED_TRACE(bulk ? "bulk" : "incremental");
    DynamicTree tree;
    const int n = 4000;
    const Aabb box{{1, 1, 1}, {2, 2, 2}};
    if (bulk) {
      std::vector<Aabb> boxes(n, box);
      std::vector<uint32_t> users(n, 0);
      std::vector<uint32_t> categories(n, 1);
      std::vector<int32_t> proxies(n);
      tree.Build(boxes, users, categories, proxies);
    } else {
      for (int i = 0; i < n; ++i) tree.CreateProxy(box, 0, 1);
    }
    const char* why = "";
    ASSERT_TRUE(tree.Validate(&why)) << why;
    std::vector<int> count(n, 0);
    tree.QueryAabb<1>(box, ~0u, [&](uint32_t, int32_t proxy) {
      ++count[proxy];
      return true;
    });
    for (int i = 0; i < n; ++i) ASSERT_EQ(count[i], 1) << "proxy " << i;
    std::fill(count.begin(), count.end(), 0);
    tree.Raycast<1>({0, 1.5f, 1.5f}, {1, 0, 0}, 10.0f, ~0u, [&](uint32_t, int32_t proxy, float d) {
      ++count[proxy];
      return d;
    });
    for (int i = 0; i < n; ++i) ASSERT_EQ(count[i], 1) << "proxy " << i;
    std::fill(count.begin(), count.end(), 0);
    tree.SweptCast<2>({0, 0, 0}, {1, 0, 0}, 10.0f, {1, 1, 1}, ~0u,
                      [&](uint32_t, int32_t proxy, float d) {
                        ++count[proxy];
                        return d;
                      });
    for (int i = 0; i < n; ++i) ASSERT_EQ(count[i], 1) << "proxy " << i;
    // The 8-wide form, with a one-entry inline stack.
    tree.Optimize();
    ASSERT_TRUE(tree.Validate(&why)) << why;
    std::fill(count.begin(), count.end(), 0);
    tree.QueryAabb<1>(box, ~0u, [&](uint32_t, int32_t proxy) {
      ++count[proxy];
      return true;
    });
    tree.Raycast<1>({0, 1.5f, 1.5f}, {1, 0, 0}, 10.0f, ~0u, [&](uint32_t, int32_t proxy, float d) {
      ++count[proxy];
      return d;
    });
    for (int i = 0; i < n; ++i) ASSERT_EQ(count[i], 2) << "proxy " << i;
    // The default stack too.
    int total = 0;
    tree.QueryAabb(box, ~0u, [&](uint32_t, int32_t) {
      ++total;
      return true;
    });
    EXPECT_EQ(total, n);
  }
}

TEST(TraversalStack, SpillsToTheHeapAndKeepsEveryEntry) {
  TraversalStack<int32_t, 4> stack;
  for (int32_t i = 0; i < 4; ++i) stack.Push(i);
  EXPECT_FALSE(stack.Spilled());
  for (int32_t i = 4; i < 10000; ++i) stack.Push(i);
  EXPECT_TRUE(stack.Spilled());
  EXPECT_EQ(stack.Size(), 10000u);
  for (int32_t i = 9999; i >= 0; --i) ASSERT_EQ(stack.Pop(), i);
  EXPECT_TRUE(stack.Empty());
  stack.Push(5);
  EXPECT_EQ(stack.Pop(), 5);
}

TEST(DynamicTree, MaskedSubtreesAreSkipped) {
  // Two clusters with different categories: a query masked to one never visits the other.
  DynamicTree tree;
  for (int i = 0; i < 200; ++i) {
    float x = static_cast<float>(i % 20);
    float y = static_cast<float>(i / 20);
    tree.CreateProxy({{x, y, 0}, {x + 0.5f, y + 0.5f, 0.5f}}, static_cast<uint32_t>(i),
                     i < 100 ? 1u : 2u);
  }
  ASSERT_TRUE(tree.Validate());
  const Aabb everything{{-100, -100, -100}, {100, 100, 100}};
  int seen = 0;
  tree.QueryAabb(everything, 2u, [&](uint32_t u, int32_t) {
    EXPECT_GE(u, 100u);
    ++seen;
    return true;
  });
  EXPECT_EQ(seen, 100);
  seen = 0;
  tree.QueryAabb(everything, 4u, [&](uint32_t, int32_t) {
    ++seen;
    return true;
  });
  EXPECT_EQ(seen, 0);
  // Changing categories updates the unions.
  for (int32_t p = 0; p < 200; p += 2) tree.SetCategoryBits(p, 4u);
  ASSERT_TRUE(tree.Validate());
  tree.QueryAabb(everything, 4u, [&](uint32_t, int32_t p) {
    EXPECT_EQ(p % 2, 0);
    ++seen;
    return true;
  });
  EXPECT_EQ(seen, 100);
}

TEST(DynamicTree, ProxyIdsAreReusedAfterDestruction) {
  DynamicTree tree;
  int32_t a = tree.CreateProxy({{0, 0, 0}, {1, 1, 1}}, 1, 1);
  int32_t b = tree.CreateProxy({{2, 0, 0}, {3, 1, 1}}, 2, 1);
  tree.DestroyProxy(a);
  EXPECT_FALSE(tree.IsLiveProxy(a));
  int32_t c = tree.CreateProxy({{4, 0, 0}, {5, 1, 1}}, 3, 1);
  EXPECT_EQ(c, a);
  EXPECT_TRUE(tree.IsLiveProxy(b));
  EXPECT_EQ(tree.UserData(c), 3u);
  EXPECT_FALSE(tree.IsLiveProxy(kNullProxy));
  EXPECT_TRUE(tree.Validate());
}

TEST(DynamicTree, StatsDescribeTheTree) {
  Harness h(61, 100.0f, 1.0f);
  for (int i = 0; i < 1000; ++i) h.Create();
  DynamicTree& tree = h.tree();
  EXPECT_EQ(tree.ProxyCount(), 1000);
  EXPECT_EQ(tree.InternalNodeCount(), 999);
  EXPECT_GE(tree.Height(), 10);  // at least log2(1000)
  EXPECT_LT(tree.Height(), 40);
  EXPECT_GE(tree.MemoryBytes(), 999u * 64u + 1000u * sizeof(Aabb));
  EXPECT_GT(tree.SahCost(), 1.0f);
  EXPECT_TRUE(std::isfinite(tree.SahCost()));
}

TEST(DynamicTree, MemoryPartsAddUpAndBuildScratchIsFreed) {
  Harness h(62, 100.0f, 1.0f);
  for (int i = 0; i < 5000; ++i) h.Create();
  DynamicTree& tree = h.tree();
  tree.Rebuild();
  tree.Optimize();
  const TreeMemory m = tree.Memory();
  EXPECT_EQ(m.Total(), tree.MemoryBytes());
  // A build's scratch (about 100 bytes per proxy) is not kept once the build is done.
  EXPECT_EQ(m.scratch, 0u);
  // The pools grow by half (an eighth from 65,536 entries), not double: at most 1.5 x the slots
  // in use (plus the first 16).
  EXPECT_LE(m.nodes, (4999u * 3 / 2 + 16) * (64u + 12u));
  EXPECT_LE(m.leaves, (5000u * 3 / 2 + 16) * (sizeof(Aabb) + 12u));
  EXPECT_GE(m.nodes, 4999u * 64u);
  // The 8-wide form is about a fifth of the binary nodes (its bottom nodes are not all full),
  // and its capacity is no longer reserved for half of them.
  EXPECT_GT(m.wide, 0u);
  EXPECT_LE(m.wide, (4999u / 4 + 16) * sizeof(WideTree::Node));
}

}  // namespace
}  // namespace collide

namespace collide {
namespace {

// One callback call of a cast: which proxy, with which current max distance.
struct Visit {
  int32_t proxy;
  float max_distance;
  friend bool operator==(const Visit&, const Visit&) = default;
};

// CastBatch must make, for every cast, exactly the calls SweptCast makes for it alone, in the same
// order, whatever the callbacks do (go on, clip at a distance, stop), on the 8-wide form and on
// the binary tree.
TEST(DynamicTree, CastBatchVisitsWhatEachCastVisitsAlone) {
  for (int mode = 0; mode < 3; ++mode) {
    const bool optimized = mode < 2;
    SCOPED_TRACE(mode == 0 ? "8-wide form" : mode == 1 ? "with a secondary structure" : "binary");
    Harness h(4242, 20.0f, 2.0f);
    for (int i = 0; i < 3000; ++i) h.Create();
    if (optimized) {
      h.tree().Optimize();
      if (mode == 1) {
        // Proxies created and removed since the collapse (in free slots of the form, and once
        // those on their way are taken, in the secondary structure): the casts walk the main
        // form, then the secondary structure.
        for (int k = 0; k < 5000 && h.tree().SecondaryCount() < 60; ++k) h.Create();
        for (int k = 0; k < 100; ++k) h.DestroyAt(h.rng()() % h.live().size());
        h.tree().Optimize();
        ASSERT_GT(h.tree().SecondaryCount(), 20);
      }
      ASSERT_TRUE(h.tree().IsOptimized());
    } else {
      h.MoveAt(0, 10.0f);
      ASSERT_FALSE(h.tree().IsOptimized());
    }
    std::mt19937& rng = h.rng();
    std::vector<BatchCast> casts(200);
    for (size_t i = 0; i < casts.size(); ++i) {
      const float r = i % 3 == 0 ? 0.0f : Uniform(rng, 0.0f, 1.5f);
      casts[i] = BatchCast{.origin = RandomBox(rng, 20.0f, 0.0f).min,
                           .unit_dir = RandomDirection(rng),
                           .max_distance = i % 17 == 0 ? -1.0f : Uniform(rng, 0.0f, 60.0f),
                           .half_extent = Vec3{r, r, r},
                           .mask = h.RandomMask()};
    }
    // The callback's answer depends only on (cast, proxy): every third proxy clips the cast to
    // where its box is entered, one in 50 stops the cast, the rest go on.
    auto answer = [](size_t cast, int32_t proxy, float max_distance, float clip) -> float {
      const uint32_t key = static_cast<uint32_t>(cast * 7919 + static_cast<size_t>(proxy) * 31);
      if (key % 50 == 0) return -1.0f;
      if (key % 3 == 0) return std::min(max_distance, clip);
      return max_distance;
    };
    auto clip_of = [&](const BatchCast& c, int32_t proxy) {
      float t0, t1;
      const Aabb grown = Grow(h.tree().FatAabb(proxy), c.half_extent);
      RayAabbInterval(grown, c.origin, Reciprocal(c.unit_dir), 1e9f, &t0, &t1);
      return std::max(t0, 0.0f);
    };
    std::vector<std::vector<Visit>> alone(casts.size()), together(casts.size());
    for (size_t i = 0; i < casts.size(); ++i) {
      const BatchCast& c = casts[i];
      h.tree().SweptCast(c.origin, c.unit_dir, c.max_distance, c.half_extent, c.mask,
                         [&](uint32_t, int32_t proxy, float max_distance) {
                           alone[i].push_back({proxy, max_distance});
                           return answer(i, proxy, max_distance, clip_of(c, proxy));
                         });
    }
    int prefetches = 0;
    h.tree().CastBatch(
        casts,
        [&](size_t i, uint32_t, int32_t proxy, float max_distance) {
          together[i].push_back({proxy, max_distance});
          return answer(i, proxy, max_distance, clip_of(casts[i], proxy));
        },
        [&](uint32_t) { ++prefetches; });
    size_t visits = 0;
    for (size_t i = 0; i < casts.size(); ++i) {
      EXPECT_EQ(together[i], alone[i]) << "cast " << i;
      visits += alone[i].size();
    }
    EXPECT_GT(visits, casts.size());  // the casts do reach leaves
    if (optimized) {
      EXPECT_GE(prefetches, static_cast<int>(visits));
    }
  }
}

}  // namespace
}  // namespace collide

namespace collide {
namespace {

// Moves that grow leaves in place and category changes leave the binary structure alone, so
// Optimize refits the 8-wide form instead of rebuilding it; the refitted form must answer every
// query as brute force does, round after round, and a structural change in between must fall
// back to a full build.
TEST(DynamicTree, RefittedWideFormAnswersLikeBruteForce) {
  Harness h(9090, 30.0f, 2.0f, /*margin=*/0.2f);
  for (int i = 0; i < 3000; ++i) h.Create();
  h.tree().Optimize();
  ASSERT_TRUE(h.tree().IsOptimized());
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    for (int k = 0; k < 300; ++k) {
      const size_t i = h.rng()() % h.live().size();
      h.MoveAt(i, 1.5f, /*enlarge=*/true);
      if (k % 7 == 0) {
        const uint32_t category = h.RandomCategory();
        h.tree().SetCategoryBits(h.live()[i].proxy, category);
        h.live()[i].category = category;
      }
    }
    if (round == 3) {  // a structural change: the next Optimize rebuilds
      h.DestroyAt(0);
      h.Create();
    }
    EXPECT_FALSE(h.tree().IsOptimized());
    h.tree().Refit();
    ASSERT_NO_FATAL_FAILURE(h.CheckQueries(40));
  }
}

// A batch that moves every leaf (a tick loop's) refits the 8-wide form in one sweep over all its
// nodes instead of a heap of the marked ones: the same form, checked against brute force.
TEST(DynamicTree, WideFormRefittedAfterEveryLeafMovedAnswersLikeBruteForce) {
  Harness h(9191, 30.0f, 2.0f, /*margin=*/0.1f);
  for (int i = 0; i < 2000; ++i) h.Create();
  h.tree().Optimize();
  ASSERT_TRUE(h.tree().IsOptimized());
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    for (size_t i = 0; i < h.live().size(); ++i) {
      h.MoveAt(i, 0.5f, /*enlarge=*/true);
      // Some leaves move twice in the batch, and some change category.
      if (i % 5 == 0) h.MoveAt(i, 0.5f, /*enlarge=*/true);
      if (i % 11 == 0) {
        const uint32_t category = h.RandomCategory();
        h.tree().SetCategoryBits(h.live()[i].proxy, category);
        h.live()[i].category = category;
      }
    }
    ASSERT_NO_FATAL_FAILURE(h.CheckQueries(40));
  }
}

// A build started in the background installs over everything done to the tree while it ran:
// marked moves (some twice, some after the last batch), destroyed proxies (some of the snapshot's
// slots taken again by new ones), new proxies and new categories. Between batches the queries run
// on the old shape; after the install the tree holds the same proxies with their current boxes
// and categories, valid, and answers like brute force.
TEST(DynamicTree, BackgroundRebuildInstallsOverEveryChangeMadeWhileItRan) {
  Harness h(5150, 40.0f, 2.0f);
  for (int i = 0; i < 3000; ++i) h.Create();
  h.tree().Optimize();
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE("seed 5150 round " + std::to_string(round));
    for (size_t i = 0; i < h.live().size(); ++i) h.MarkAt(i, 0.5f);
    h.tree().Optimize();
    h.tree().StartBackgroundRebuild();
    ASSERT_TRUE(h.tree().BackgroundRebuildPending());
    for (int batch = 0; batch < 3; ++batch) {
      for (int k = 0; k < 300; ++k) h.MarkAt(h.rng()() % h.live().size(), 1.0f);
      for (int k = 0; k < 50; ++k) h.DestroyAt(h.rng()() % h.live().size());
      for (int k = 0; k < 60; ++k) h.Create();
      for (int k = 0; k < 20; ++k) {
        OracleProxy& p = h.live()[h.rng()() % h.live().size()];
        p.category = h.RandomCategory();
        h.tree().SetCategoryBits(p.proxy, p.category);
      }
      h.tree().Optimize();
      ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
      ASSERT_NO_FATAL_FAILURE(h.CheckQueries(10));
    }
    // Marks taken after the last batch, not yet refitted, at the install.
    for (int k = 0; k < 200; ++k) h.MarkAt(h.rng()() % h.live().size(), 1.0f);
    ASSERT_TRUE(h.tree().FinishBackgroundRebuild(/*wait=*/true));
    ASSERT_FALSE(h.tree().BackgroundRebuildPending());
    ASSERT_FALSE(h.tree().FinishBackgroundRebuild(/*wait=*/true));
    ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
    h.tree().Optimize();
    ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
    ASSERT_NO_FATAL_FAILURE(h.CheckQueries(40));
  }
}

// The leaves an 8-wide tree holds (reachable from its root).
int WideLeafCount(const WideTree& tree) {
  if (!tree.HasRoot()) return 0;
  int leaves = 0;
  std::vector<int32_t> stack{tree.root()};
  while (!stack.empty()) {
    const WideTree::Node& node = tree.node(stack.back());
    stack.pop_back();
    for (int i = 0; i < WideTree::kWidth; ++i) {
      if (node.child[i] == std::numeric_limits<int32_t>::min()) continue;
      if (node.child[i] < 0) {
        ++leaves;
      } else {
        stack.push_back(node.child[i]);
      }
    }
  }
  return leaves;
}

// Creations and removals keep the 8-wide form's shape: a removed leaf's slot is emptied, a new
// proxy takes a free slot on its way down the form or, once those are taken, waits in the
// secondary structure (some moved, refiltered or removed again in the batch that made them), and
// every query on every SIMD level answers as brute force does, batch after batch, with no
// collapse. Past the most the secondary holds, Optimize collapses and every proxy is in the main
// form again. A tree emptied down to its last leaves keeps answering too.
TEST(DynamicTree, CreationsAndRemovalsKeepTheWideShapeAndAnswerLikeBruteForce) {
  Harness h(6060, 30.0f, 2.0f, /*margin=*/0.0f);
  for (int i = 0; i < 3000; ++i) h.Create();
  h.tree().Optimize();
  const int32_t nodes = h.tree().wide_form().NodeCount();
  ASSERT_EQ(h.tree().SecondaryCount(), 0);
  ASSERT_EQ(h.tree().MaxSecondary(), 256);
  int placed_in_form = 0;
  for (int batch = 0; batch < 12; ++batch) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const int in_form = WideLeafCount(h.tree().wide_form());
    const int32_t in_secondary = h.tree().SecondaryCount();
    for (int k = 0; k < 300; ++k) h.MarkAt(h.rng()() % h.live().size(), 1.0f);
    for (int k = 0; k < 15; ++k) h.DestroyAt(h.rng()() % h.live().size());
    // Many new proxies in the first batches: the free slots on their way run out, and the
    // later ones wait in the secondary structure.
    for (int k = 0; k < (batch < 4 ? 150 : 20); ++k) h.Create();
    // The newest proxies: one moved, one refiltered, one removed again in the same batch.
    h.MarkAt(h.live().size() - 1, 1.0f);
    OracleProxy& refiltered = h.live()[h.live().size() - 2];
    refiltered.category = h.RandomCategory();
    h.tree().SetCategoryBits(refiltered.proxy, refiltered.category);
    h.DestroyAt(h.live().size() - 3);
    h.tree().Optimize();
    ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
    EXPECT_EQ(h.tree().wide_form().NodeCount(), nodes) << "the form was collapsed";
    ASSERT_EQ(WideLeafCount(h.tree().wide_form()) + h.tree().SecondaryCount(),
              static_cast<int>(h.live().size()));
    // The form lost at most the 16 removed, so the rest of the change is what it took.
    placed_in_form += WideLeafCount(h.tree().wide_form()) - (in_form - 16);
    EXPECT_GE(h.tree().SecondaryCount(), in_secondary - 16);
    ASSERT_NO_FATAL_FAILURE(h.CheckQueries(15));
  }
  EXPECT_GT(placed_in_form, 100) << "new proxies took no free slots of the form";
  EXPECT_GT(h.tree().SecondaryCount(), 10) << "no new proxy waited in the secondary structure";
  // One more than the secondary holds (of them, some removed again: the list is no longer kept).
  while (h.tree().SecondaryCount() < h.tree().MaxSecondary()) h.Create();
  ASSERT_EQ(h.tree().SecondaryCount(), h.tree().MaxSecondary());
  for (int k = 0; k < 30; ++k) h.Create();
  for (int k = 0; k < 10; ++k) h.DestroyAt(h.live().size() - 1 - 2 * static_cast<size_t>(k));
  h.tree().Optimize();
  EXPECT_EQ(h.tree().SecondaryCount(), 0);
  EXPECT_FALSE(h.tree().secondary_form().HasRoot());
  ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
  ASSERT_NO_FATAL_FAILURE(h.CheckQueries(20));

  // A small tree: nodes of the form emptied entirely, then too few leaves for a form at all.
  Harness small(6161, 10.0f, 1.0f, /*margin=*/0.0f);
  for (int i = 0; i < 40; ++i) small.Create();
  small.tree().Optimize();
  for (int k = 0; k < 6; ++k) small.Create();
  while (small.live().size() > 8) small.DestroyAt(0);
  small.tree().Optimize();
  ASSERT_NO_FATAL_FAILURE(small.ExpectValid());
  ASSERT_NO_FATAL_FAILURE(small.CheckQueries(30));
  while (small.live().size() > 1) {
    small.DestroyAt(small.rng()() % small.live().size());
    small.tree().Optimize();
    ASSERT_NO_FATAL_FAILURE(small.ExpectValid());
    ASSERT_NO_FATAL_FAILURE(small.CheckQueries(10));
  }
}

// A region cleared of every proxy leaves nodes of the form with no children, their parents' slots
// empty; new proxies in that region take those slots. Then batches that move every leaf refit
// the form in one sweep over all its nodes, the emptied ones included, which must not empty their
// former slots again: each batch leaves the form valid and answering like brute force.
TEST(DynamicTree, ASweepRefitKeepsTheLeavesThatTookTheSlotsOfEmptiedNodes) {
  Harness h(6262, 30.0f, 1.5f, /*margin=*/0.0f);
  for (int i = 0; i < 3000; ++i) h.Create();
  h.tree().Optimize();
  const int32_t nodes = h.tree().wide_form().NodeCount();
  for (size_t i = h.live().size(); i-- > 0;) {
    if (h.live()[i].tight.min.x < -18.0f) h.DestroyAt(i);
  }
  h.tree().Optimize();
  ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
  std::uniform_real_distribution<float> x(-30.0f, -19.0f);
  std::uniform_real_distribution<float> yz(-30.0f, 30.0f);
  for (int k = 0; k < 400; ++k) {
    const Vec3 at{x(h.rng()), yz(h.rng()), yz(h.rng())};
    h.Create(Aabb{at, at + Vec3{1.0f, 1.0f, 1.0f}}, h.RandomCategory());
  }
  h.tree().Optimize();
  ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
  ASSERT_EQ(h.tree().wide_form().NodeCount(), nodes);
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    for (size_t i = 0; i < h.live().size(); ++i) h.MarkAt(i, 0.3f);
    h.tree().Optimize();
    ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
    ASSERT_NO_FATAL_FAILURE(h.CheckQueries(20));
  }
}

// Seeded random batches over every way the form keeps its shape and every way it is rebuilt:
// moves of every leaf (the sweep refit) or of a few (the refit by depth), removals scattered or of
// a whole region (nodes emptied), creations scattered or in one region (free slots, then the
// secondary structure, past its most a collapse), category changes, background rebuilds
// started and installed at any point. After each batch the tree is valid and every query on every
// SIMD level answers as brute force does.
TEST(DynamicTree, RandomBatchesOfEveryChangeKeepTheFormExact) {
  for (uint32_t seed : {7001u, 7002u, 7003u}) {
    SCOPED_TRACE(SeedTrace(seed));
    Harness h(seed, 25.0f, 1.5f, /*margin=*/0.0f);
    for (int i = 0; i < 2500; ++i) h.Create();
    h.tree().Optimize();
    std::mt19937& rng = h.rng();
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    for (int batch = 0; batch < 40; ++batch) {
      SCOPED_TRACE("batch " + std::to_string(batch));
      if (rng() % 3 == 0) {
        for (size_t i = 0; i < h.live().size(); ++i) h.MarkAt(i, 0.5f);
      } else {
        for (int k = 0; k < 50; ++k) h.MarkAt(rng() % h.live().size(), 1.0f);
      }
      if (rng() % 4 == 0) {
        // Every proxy in a random slab of the world goes.
        const int axis = static_cast<int>(rng() % 3);
        const float from = -25.0f + 45.0f * unit(rng);
        for (size_t i = h.live().size(); i-- > 0 && h.live().size() > 40;) {
          const float c = h.live()[i].tight.min[axis];
          if (c >= from && c < from + 5.0f) h.DestroyAt(i);
        }
      } else {
        for (int k = 0, n = static_cast<int>(rng() % 40); k < n; ++k) {
          h.DestroyAt(rng() % h.live().size());
        }
      }
      if (rng() % 3 == 0) {
        // New proxies crowded into one region.
        const Vec3 at{-25.0f + 45.0f * unit(rng), -25.0f + 45.0f * unit(rng),
                      -25.0f + 45.0f * unit(rng)};
        for (int k = 0, n = static_cast<int>(rng() % 300); k < n; ++k) {
          const Vec3 p = at + Vec3{5 * unit(rng), 5 * unit(rng), 5 * unit(rng)};
          h.Create(Aabb{p, p + Vec3{0.5f, 0.5f, 0.5f}}, h.RandomCategory());
        }
      } else {
        for (int k = 0, n = static_cast<int>(rng() % 60); k < n; ++k) h.Create();
      }
      for (int k = 0; k < 10; ++k) {
        OracleProxy& p = h.live()[rng() % h.live().size()];
        p.category = h.RandomCategory();
        h.tree().SetCategoryBits(p.proxy, p.category);
      }
      if (rng() % 5 == 0) h.tree().StartBackgroundRebuild();
      if (rng() % 4 == 0) h.tree().FinishBackgroundRebuild(/*wait=*/rng() % 2 == 0);
      h.tree().Optimize();
      ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
      ASSERT_NO_FATAL_FAILURE(h.CheckQueries(4));
    }
    h.tree().FinishBackgroundRebuild(/*wait=*/true);
  }
}

// Every leaf of the snapshot destroyed before the install: the tree is the new proxies only.
TEST(DynamicTree, BackgroundRebuildWhoseLeavesAreAllGoneKeepsOnlyTheNewOnes) {
  Harness h(6262, 20.0f, 2.0f);
  for (int i = 0; i < 200; ++i) h.Create();
  h.tree().StartBackgroundRebuild();
  while (!h.live().empty()) h.DestroyAt(0);
  for (int i = 0; i < 30; ++i) h.Create();
  ASSERT_TRUE(h.tree().FinishBackgroundRebuild(/*wait=*/true));
  ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
  h.tree().Optimize();
  ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
  ASSERT_NO_FATAL_FAILURE(h.CheckQueries(40));
}

// Checks that `wide` (with `parent_at`) is an 8-wide form of `tree`: every live proxy is a leaf
// exactly once with its fat box and category, each internal slot holds its child node's slots
// and names the node whose parent_at points back at it, and nodes are in preorder.
void ExpectWideFormOf(const DynamicTree& tree, const WideTree& wide,
                      const std::vector<int32_t>& parent_at) {
  ASSERT_TRUE(wide.HasRoot());
  ASSERT_EQ(parent_at.size(), static_cast<size_t>(wide.NodeCount()));
  EXPECT_EQ(parent_at[wide.root()], -1);
  std::vector<int> seen(static_cast<size_t>(tree.ProxyCount()) * 4 + 64, 0);
  int leaves = 0;
  for (int32_t w = 0; w < wide.NodeCount(); ++w) {
    const WideTree::Node& node = wide.node(w);
    for (int i = 0; i < WideTree::kWidth; ++i) {
      const int32_t child = node.child[i];
      if (child == std::numeric_limits<int32_t>::min()) continue;
      const Aabb box{{node.min_x[i], node.min_y[i], node.min_z[i]},
                     {node.max_x[i], node.max_y[i], node.max_z[i]}};
      if (child < 0) {
        const int32_t proxy = ~child;
        ASSERT_TRUE(tree.IsLiveProxy(proxy));
        ASSERT_LT(static_cast<size_t>(proxy), seen.size());
        ++seen[proxy];
        ++leaves;
        EXPECT_EQ(box.min, tree.FatAabb(proxy).min);
        EXPECT_EQ(box.max, tree.FatAabb(proxy).max);
        EXPECT_EQ(node.category[i], tree.CategoryBits(proxy));
        continue;
      }
      ASSERT_GT(child, w) << "preorder";
      ASSERT_LT(child, wide.NodeCount());
      EXPECT_EQ(parent_at[child], w * WideTree::kWidth + i);
      const WideTree::Node& below = wide.node(child);
      for (int j = 0; j < WideTree::kWidth; ++j) {
        if (below.child[j] == std::numeric_limits<int32_t>::min()) continue;
        EXPECT_TRUE(Contains(box, Aabb{{below.min_x[j], below.min_y[j], below.min_z[j]},
                                       {below.max_x[j], below.max_y[j], below.max_z[j]}}));
        EXPECT_EQ(below.category[j] & ~node.category[i], 0u);
      }
    }
  }
  EXPECT_EQ(leaves, tree.ProxyCount());
  for (int32_t p = 0; p < static_cast<int32_t>(seen.size()); ++p) {
    if (tree.IsLiveProxy(p)) {
      EXPECT_EQ(seen[p], 1) << "proxy " << p;
    }
  }
}

TEST(DynamicTree, CopyWideMatchesTheOptimizedFormAndCollapsesAChangedTree) {
  const uint32_t seed = 77;
  SCOPED_TRACE(SeedTrace(seed));
  Harness h(seed, 100.0f, 2.0f);
  WideTree copy;
  std::vector<int32_t> parent_at;
  h.tree().CopyWide(&copy, &parent_at);
  EXPECT_FALSE(copy.HasRoot());
  h.Create();
  h.tree().CopyWide(&copy, &parent_at);
  EXPECT_FALSE(copy.HasRoot()) << "a single proxy has no 8-wide form";
  for (int i = 0; i < 3000; ++i) h.Create();
  h.tree().Optimize();
  ASSERT_TRUE(h.tree().IsOptimized());
  h.tree().CopyWide(&copy, &parent_at);
  ASSERT_NO_FATAL_FAILURE(ExpectWideFormOf(h.tree(), copy, parent_at));
  EXPECT_EQ(copy.NodeCount(), h.tree().wide_form().NodeCount());
  // Changed since Optimize: collapsed from the binary tree, which is left as it was.
  for (size_t i = 0; i < h.live().size(); i += 5) h.MoveAt(i, 10.0f);
  for (int i = 0; i < 200; ++i) h.DestroyAt(h.rng()() % h.live().size());
  ASSERT_FALSE(h.tree().IsOptimized());
  h.tree().CopyWide(&copy, &parent_at);
  ASSERT_NO_FATAL_FAILURE(ExpectWideFormOf(h.tree(), copy, parent_at));
  EXPECT_FALSE(h.tree().IsOptimized());
  ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
}

}  // namespace
}  // namespace collide

namespace collide {
namespace {

// The SAH cost from its definition, computed from the proxies' fat boxes alone: each internal
// node's box is the union of the fat boxes of the leaves below it (recomputed here, not read
// from the tree), plus every leaf's box, over the root's box. The tree's stored boxes equal
// those unions exactly when it is tight (after Refit, or when only MoveProxy changed it).
// With `over_leaves`, the same sum over the leaves' areas instead (AreaOverLeafArea).
double BruteForceSahCost(const DynamicTree& tree, bool over_leaves = false) {
  std::vector<int32_t> order;
  std::vector<std::pair<int32_t, int32_t>> ranges;
  tree.SubtreeLeafRanges(&order, &ranges);
  if (order.empty()) return 0.0;
  auto half_area = [](const Aabb& b) {
    const double x = double(b.max.x) - b.min.x;
    const double y = double(b.max.y) - b.min.y;
    const double z = double(b.max.z) - b.min.z;
    return x * y + y * z + z * x;
  };
  Aabb root = tree.FatAabb(order[0]);
  double leaves = 0.0;
  for (int32_t proxy : order) {
    root = Union(root, tree.FatAabb(proxy));
    leaves += half_area(tree.FatAabb(proxy));
  }
  const double root_area = half_area(root);
  if (ranges.empty()) return 1.0;
  double internal = 0.0;
  for (auto [begin, end] : ranges) {
    Aabb box = tree.FatAabb(order[begin]);
    for (int32_t i = begin + 1; i < end; ++i) box = Union(box, tree.FatAabb(order[i]));
    internal += half_area(box);
  }
  // The root is one of the internal nodes: sum = root + every other node + every leaf.
  return (internal + leaves) / (over_leaves ? leaves : root_area);
}

// The shape the tree reports: every live proxy once, one range of at least two leaves per
// internal node, the root's range first and covering everything, ranges nested.
void ExpectShapeOf(const DynamicTree& tree) {
  std::vector<int32_t> order;
  std::vector<std::pair<int32_t, int32_t>> ranges;
  tree.SubtreeLeafRanges(&order, &ranges);
  ASSERT_EQ(order.size(), static_cast<size_t>(tree.ProxyCount()));
  std::vector<int32_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  ASSERT_TRUE(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
  for (int32_t proxy : order) ASSERT_TRUE(tree.IsLiveProxy(proxy));
  if (tree.ProxyCount() < 2) {
    ASSERT_TRUE(ranges.empty());
    return;
  }
  ASSERT_EQ(ranges.size(), static_cast<size_t>(tree.InternalNodeCount()));
  ASSERT_EQ(ranges[0], (std::pair<int32_t, int32_t>{0, tree.ProxyCount()}));
  for (auto [begin, end] : ranges) ASSERT_GE(end - begin, 2);
}

TEST(DynamicTree, SahCostMatchesTheDefinitionOverTheTreesShape) {
  Harness h(4242, 50.0f, 2.0f);
  EXPECT_EQ(BruteForceSahCost(h.tree()), 0.0);
  h.Create();
  ASSERT_NO_FATAL_FAILURE(ExpectShapeOf(h.tree()));
  EXPECT_EQ(h.tree().SahCost(), 1.0f);
  EXPECT_EQ(h.tree().AreaOverLeafArea(), 1.0f);
  for (int i = 0; i < 3000; ++i) h.Create();
  auto expect_cost = [&](const char* when) {
    SCOPED_TRACE(when);
    ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
    ASSERT_NO_FATAL_FAILURE(ExpectShapeOf(h.tree()));
    const double want = BruteForceSahCost(h.tree());
    EXPECT_GT(want, 1.0);
    EXPECT_NEAR(h.tree().SahCost(), want, 1e-4 * want);
    const double want_over_leaves = BruteForceSahCost(h.tree(), /*over_leaves=*/true);
    EXPECT_GT(want_over_leaves, 1.0);
    EXPECT_NEAR(h.tree().AreaOverLeafArea(), want_over_leaves, 1e-4 * want_over_leaves);
  };
  expect_cost("after insertions");
  for (size_t i = 0; i < h.live().size(); i += 3) h.MoveAt(i, 4.0f);
  for (int i = 0; i < 500; ++i) h.DestroyAt(h.rng()() % h.live().size());
  expect_cost("after moves and removals");
  for (size_t i = 0; i < h.live().size(); ++i) h.MoveAt(i, 3.0f, /*enlarge=*/true);
  {
    // Enlarged but not refitted: the stored boxes are loose, never smaller than the unions.
    ASSERT_NO_FATAL_FAILURE(h.ExpectValid());
    EXPECT_GT(h.tree().SahCost(), BruteForceSahCost(h.tree()) * (1.0 + 1e-4));
  }
  h.tree().Refit();
  expect_cost("after refit");
  h.tree().Rebuild();
  expect_cost("after rebuild");
}

}  // namespace
}  // namespace collide
