// The traversal kernels of every SIMD level (bvh/simd_level.h, bvh/internal/wide_kernels.h)
// against brute force over the boxes, and against the baseline's own visits: random scenes and
// queries from fixed seeds plus the edge cases (touching and tangent paths, paths parallel to a
// slab and starting on its plane, zero-size boxes, starts inside, far from the origin). A level
// the CPU lacks is skipped with a message.

#include "bvh/simd_level.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "bvh/dynamic_tree.h"
#include "bvh/simd_levels.h"
#include "bvh/tree_oracle.h"

namespace collide {
namespace {

using testing::CastOracle;
using testing::kAllSimdLevels;
using testing::OracleHit;
using testing::OracleProxy;
using testing::OverlapOracle;
using testing::RandomBox;
using testing::RandomDirection;
using testing::ScopedSimdLevel;
using testing::SimdLevelParamName;
using testing::SimdLevelTest;
using testing::Uniform;

TEST(SimdLevel, NamesParseBackAndTheBestLevelIsSupported) {
  for (SimdLevel level : kAllSimdLevels) {
    SimdLevel parsed = SimdLevel::kSse;
    ASSERT_TRUE(ParseSimdLevel(SimdLevelName(level), &parsed)) << SimdLevelName(level);
    EXPECT_EQ(parsed, level);
  }
  for (const char* bad : {"", "auto", "AVX2", "avx", "sse2", "avx512f", " sse", "avx2 "}) {
    SimdLevel parsed = SimdLevel::kAvx2;
    EXPECT_FALSE(ParseSimdLevel(bad, &parsed)) << '"' << bad << '"';
    EXPECT_EQ(parsed, SimdLevel::kAvx2) << "unchanged on failure";
  }
  EXPECT_TRUE(SimdLevelSupported(SimdLevel::kSse));
  EXPECT_TRUE(SimdLevelSupported(BestSimdLevel()));
  // Levels are ordered: the CPU has every level up to its best, none above.
  for (SimdLevel level : kAllSimdLevels) {
    EXPECT_EQ(SimdLevelSupported(level), level <= BestSimdLevel()) << SimdLevelName(level);
  }
}

TEST(SimdLevel, SettingALevelTheCpuLacksChangesNothing) {
  const SimdLevel before = ActiveSimdLevel();
  for (SimdLevel level : kAllSimdLevels) {
    ScopedSimdLevel scoped(level);
    EXPECT_EQ(scoped.ok(), SimdLevelSupported(level));
    EXPECT_EQ(ActiveSimdLevel(), scoped.ok() ? level : before) << SimdLevelName(level);
  }
  EXPECT_EQ(ActiveSimdLevel(), before);
}

// One leaf visit: the proxy and the max distance the kernel passed.
struct Visit {
  int32_t proxy;
  float max_distance;
  bool operator==(const Visit&) const = default;
};

// A scene with every edge case in it, margin 0 so the fat boxes are the boxes given.
class EdgeScene {
 public:
  explicit EdgeScene(uint32_t seed) : rng_(seed), tree_({.fat_margin = 0.0f}) {
    // Random boxes in a cube of half side 40, some flat or zero-size on some axes.
    for (int i = 0; i < 2500; ++i) {
      Aabb b = RandomBox(rng_, 40.0f, 3.0f);
      if (i % 7 == 0) b.max.y = b.min.y;  // flat
      if (i % 11 == 0) b.max = b.min;     // a point
      Add(b);
    }
    // A row of unit boxes sharing faces along x (touching).
    for (int i = 0; i < 20; ++i) {
      const float x = static_cast<float>(i);
      Add({{x, 50, 50}, {x + 1, 51, 51}});
    }
    // Duplicates.
    for (int i = 0; i < 5; ++i) Add({{-60, -60, -60}, {-59, -59, -59}});
    // A cluster far from the origin.
    for (int i = 0; i < 300; ++i) {
      Aabb b = RandomBox(rng_, 200.0f, 20.0f);
      const Vec3 far{1e6f, -1e6f, 5e5f};
      Add({b.min + far, b.max + far});
    }
    tree_.Optimize();
  }

  const DynamicTree& tree() const { return tree_; }
  const std::vector<OracleProxy>& live() const { return live_; }
  std::mt19937& rng() { return rng_; }

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

 private:
  void Add(const Aabb& b) {
    const uint32_t category = (live_.size() % 9 == 8) ? 0u : (1u << (live_.size() % 5));
    const int32_t proxy = tree_.CreateProxy(b, static_cast<uint32_t>(live_.size()), category);
    live_.push_back({proxy, b, static_cast<uint32_t>(live_.size()), category});
  }

  std::mt19937 rng_;
  DynamicTree tree_;
  std::vector<OracleProxy> live_;
};

// A path of the edge cases or a random one.
struct Path {
  Vec3 origin;
  Vec3 dir;
  float max_distance;
  Vec3 half_extent;
  uint32_t mask;
};

Path MakePath(EdgeScene& scene, int i) {
  std::mt19937& rng = scene.rng();
  const std::vector<OracleProxy>& live = scene.live();
  const Aabb& box = live[rng() % live.size()].tight;
  Path p{.origin = {Uniform(rng, -45, 45), Uniform(rng, -45, 45), Uniform(rng, -45, 45)},
         .dir = RandomDirection(rng),
         .max_distance = Uniform(rng, 0.0f, 120.0f),
         .half_extent = {},
         .mask = scene.RandomMask()};
  Vec3 axis{};
  axis[static_cast<int>(rng() % 3)] = rng() % 2 ? 1.0f : -1.0f;
  switch (i % 8) {
    case 0:  // random
      break;
    case 1:  // starts inside a box
      p.origin = (box.min + box.max) * 0.5f;
      break;
    case 2:  // parallel to two slabs, starting on a corner (on their planes)
      p.origin = box.min;
      p.dir = axis;
      break;
    case 3:  // tangent: along a face of the touching row
      p.origin = {-5, 51, 50.5f};
      p.dir = {1, 0, 0};
      p.max_distance = 40;
      break;
    case 4:  // through a point box's exact position, along an axis
      p.origin = box.min - axis * 3.0f;
      p.dir = axis;
      break;
    case 5:  // far from the origin
      p.origin = Vec3{1e6f, -1e6f, 5e5f} +
                 Vec3{Uniform(rng, -250, 250), Uniform(rng, -250, 250), Uniform(rng, -250, 250)};
      p.max_distance = Uniform(rng, 0.0f, 600.0f);
      break;
    case 6:  // zero length
      p.max_distance = 0.0f;
      p.origin = box.min;
      break;
    default:  // a swept box (same entry tests, the growth folded into the origins)
      p.half_extent = {Uniform(rng, 0, 2), Uniform(rng, 0, 2), Uniform(rng, 0, 2)};
      break;
  }
  return p;
}

// The visits of one cast at the active level; `clip` makes it a closest-box query.
std::vector<Visit> CastVisits(const DynamicTree& tree, const Path& p, bool clip) {
  std::vector<Visit> visits;
  tree.SweptCast(p.origin, p.dir, p.max_distance, p.half_extent, p.mask,
                 [&](uint32_t, int32_t proxy, float max_distance) {
                   visits.push_back({proxy, max_distance});
                   if (!clip) return max_distance;
                   float t0, t1;
                   RayAabbInterval(testing::Grow(tree.FatAabb(proxy), p.half_extent), p.origin,
                                   testing::Reciprocal(p.dir), max_distance, &t0, &t1);
                   return std::max(t0, 0.0f);
                 });
  return visits;
}

class WideKernels : public SimdLevelTest {};

TEST_P(WideKernels, CastsMatchBruteForceAndTheBaselineVisitForVisit) {
  for (uint32_t seed : {7u, 8u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    EdgeScene scene(seed);
    ASSERT_TRUE(scene.tree().IsOptimized());
    int hits = 0;
    for (int i = 0; i < 1600; ++i) {
      const Path p = MakePath(scene, i);
      SCOPED_TRACE("path " + std::to_string(i));
      const std::vector<Visit> all = CastVisits(scene.tree(), p, /*clip=*/false);
      const std::vector<Visit> closest = CastVisits(scene.tree(), p, /*clip=*/true);
      {
        ScopedSimdLevel baseline(SimdLevel::kSse);
        ASSERT_TRUE(baseline.ok());
        ASSERT_EQ(all, CastVisits(scene.tree(), p, false)) << "differs from the baseline";
        ASSERT_EQ(closest, CastVisits(scene.tree(), p, true)) << "differs from the baseline";
      }
      if (p.half_extent == Vec3{}) {
        // Rays: exactly the boxes brute force finds, once each.
        std::vector<int32_t> got;
        for (const Visit& v : all) got.push_back(v.proxy);
        std::sort(got.begin(), got.end());
        const std::vector<OracleHit> want =
            CastOracle(scene.tree(), scene.live(), p.origin, p.dir, p.max_distance, {}, p.mask);
        std::vector<int32_t> want_ids;
        for (const OracleHit& h : want) want_ids.push_back(h.proxy);
        ASSERT_EQ(got, want_ids);
        hits += !want.empty();
        // The closest query reaches the nearest box.
        if (!want.empty()) {
          float nearest = p.max_distance;
          for (const OracleHit& h : want) nearest = std::min(nearest, h.t);
          bool reached = false;
          for (const Visit& v : closest) {
            for (const OracleHit& h : want) reached |= h.proxy == v.proxy && h.t == nearest;
          }
          ASSERT_TRUE(reached);
        }
      }
    }
    EXPECT_GT(hits, 400) << "the paths do meet boxes";
  }
}

TEST_P(WideKernels, BoxQueriesMatchBruteForce) {
  EdgeScene scene(11);
  std::mt19937& rng = scene.rng();
  for (int i = 0; i < 1500; ++i) {
    Aabb box = RandomBox(rng, 45.0f, 4.0f);
    if (i % 5 == 1) box = scene.live()[rng() % scene.live().size()].tight;  // touching itself
    if (i % 5 == 2) box.max = box.min;                                      // a point
    if (i % 5 == 3) box = {{3, 51, 50}, {3, 51, 50}};  // the shared face of two touching boxes
    if (i % 5 == 4) {
      const Vec3 far{1e6f, -1e6f, 5e5f};
      box = RandomBox(rng, 220.0f, 30.0f);
      box = {box.min + far, box.max + far};
    }
    const uint32_t mask = scene.RandomMask();
    std::vector<int32_t> got;
    scene.tree().QueryAabb(box, mask, [&](uint32_t, int32_t proxy) {
      got.push_back(proxy);
      return true;
    });
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got, OverlapOracle(scene.tree(), scene.live(), box, mask)) << "query " << i;
  }
}

TEST_P(WideKernels, CastBatchVisitsWhatEachCastVisitsAlone) {
  EdgeScene scene(21);
  std::vector<Path> paths;
  std::vector<BatchCast> casts;
  for (int i = 0; i < 400; ++i) {
    paths.push_back(MakePath(scene, i));
    const Path& p = paths.back();
    casts.push_back({.origin = p.origin,
                     .unit_dir = p.dir,
                     .max_distance = i % 13 == 0 ? -1.0f : p.max_distance,
                     .half_extent = p.half_extent,
                     .mask = p.mask});
  }
  for (bool clip : {false, true}) {
    std::vector<std::vector<Visit>> together(casts.size());
    scene.tree().CastBatch(
        casts,
        [&](size_t i, uint32_t, int32_t proxy, float max_distance) {
          together[i].push_back({proxy, max_distance});
          if (!clip) return max_distance;
          float t0, t1;
          RayAabbInterval(testing::Grow(scene.tree().FatAabb(proxy), casts[i].half_extent),
                          casts[i].origin, testing::Reciprocal(casts[i].unit_dir), max_distance,
                          &t0, &t1);
          return std::max(t0, 0.0f);
        },
        [](uint32_t) {});
    size_t visits = 0;
    for (size_t i = 0; i < casts.size(); ++i) {
      Path p = paths[i];
      p.max_distance = casts[i].max_distance;
      EXPECT_EQ(together[i], CastVisits(scene.tree(), p, clip)) << "cast " << i;
      visits += together[i].size();
    }
    EXPECT_GT(visits, casts.size() / 4) << "the casts do reach leaves";
  }
}

INSTANTIATE_TEST_SUITE_P(Levels, WideKernels, ::testing::ValuesIn(kAllSimdLevels),
                         SimdLevelParamName);

}  // namespace
}  // namespace collide
