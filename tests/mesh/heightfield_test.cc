// Heightfields (src/mesh/heightfield.h, heightfield_query.h): validation as data at every bound,
// the quantisation's error bound and pyramid, and every query against the same heightfield
// turned into a triangle list (HeightfieldShape::CellTriangle for every cell), by brute force:
// rays with the same watertight test (exactly the same triangle and distance), and rays, sphere
// casts, overlaps, nearest points and regions against the double-precision oracles of
// tests/geom/triangle_oracle.h. Random grids of several sizes (odd, even, 2 x 2, long and thin),
// holes, spacings, poses and scales, far from the origin.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "bvh/simd_level.h"
#include "geom/bounds.h"
#include "geom/oracle.h"
#include "geom/oracle_test_util.h"
#include "geom/triangle_cast.h"
#include "geom/triangle_distance.h"
#include "geom/triangle_oracle.h"
#include "geom/triangle_overlap.h"
#include "mesh/heightfield_query.h"

namespace collide {
namespace {

using oracle::CaseRng;
using oracle::DVec3;
using oracle::Failures;
using oracle::Str;

constexpr uint32_t kSeed = 0x4EF10001;
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

struct Grid {
  uint32_t rows = 0, columns = 0;
  float sx = 1.0f, sz = 1.0f;
  std::vector<float> heights;
  std::vector<uint8_t> holes;
  HeightfieldDesc desc() const {
    HeightfieldDesc d;
    d.rows = rows;
    d.columns = columns;
    d.spacing_x = sx;
    d.spacing_z = sz;
    d.heights = heights;
    d.holes = holes;
    return d;
  }
};

Grid RandomGrid(std::mt19937& rng, uint32_t rows, uint32_t columns, bool holes) {
  Grid g;
  g.rows = rows;
  g.columns = columns;
  g.sx = static_cast<float>(oracle::LogUniform(rng, 0.25, 4.0));
  g.sz = oracle::Chance(rng, 0.5) ? g.sx : static_cast<float>(oracle::LogUniform(rng, 0.25, 4.0));
  const double a = oracle::Uniform(rng, 0, 6), b = oracle::Uniform(rng, 0, 6);
  const double amp = oracle::LogUniform(rng, 0.1, 20.0);
  for (uint32_t i = 0; i < rows; ++i) {
    for (uint32_t j = 0; j < columns; ++j) {
      double h =
          amp * std::sin(0.3 * i + a) * std::cos(0.23 * j + b) + 0.3 * amp * std::sin(i * j * 0.01);
      if (oracle::Chance(rng, 0.02)) h += oracle::Uniform(rng, -amp, amp);  // spikes
      if (oracle::Chance(rng, 0.02)) h = 0.0;                               // flat patches
      g.heights.push_back(static_cast<float>(h));
    }
  }
  if (holes) {
    g.holes.assign(static_cast<size_t>(rows - 1) * (columns - 1), 0);
    for (uint8_t& h : g.holes) h = oracle::Chance(rng, 0.1) ? 1 : 0;
  }
  return g;
}

// Every triangle of the built heightfield (holes left out), by index.
struct Triangles {
  std::vector<Triangle> tris;
  std::vector<uint32_t> ids;
};
Triangles AllTriangles(const HeightfieldShape& hf) {
  Triangles t;
  for (uint32_t i = 0; i < hf.cell_rows(); ++i) {
    for (uint32_t j = 0; j < hf.cell_columns(); ++j) {
      if (hf.IsHole(i, j)) continue;
      for (uint32_t k = 0; k < 2; ++k) {
        t.tris.push_back(hf.CellTriangle(i, j, k));
        t.ids.push_back(hf.TriangleIndex(i, j, k));
      }
    }
  }
  return t;
}

// ---------------------------------------------------------------------------------------------
// Validation.

TEST(ValidateHeightfield, RefusesEveryBadFieldByName) {
  std::vector<float> h(6, 0.0f);
  HeightfieldDesc d;
  d.rows = 2;
  d.columns = 3;
  d.heights = h;
  EXPECT_EQ(ValidateHeightfield(d), std::nullopt);
  auto problem = [&](HeightfieldDesc bad) { return ValidateHeightfield(bad); };
  HeightfieldDesc bad = d;
  bad.rows = 1;
  bad.columns = 1;
  EXPECT_EQ(problem(bad),
            (HeightfieldError{HeightfieldField::kRows, 1, HeightfieldProblem::kTooFewSamples}));
  bad = d;
  bad.columns = 1;
  EXPECT_EQ(problem(bad)->field, HeightfieldField::kColumns);
  bad = d;
  bad.columns = uint64_t{1} << 32;
  EXPECT_EQ(problem(bad), (HeightfieldError{HeightfieldField::kColumns, uint64_t{1} << 32,
                                            HeightfieldProblem::kTooManySamplesOnASide}));
  bad = d;
  bad.rows = UINT64_MAX;
  EXPECT_EQ(problem(bad)->problem, HeightfieldProblem::kTooManySamplesOnASide);
  bad = d;
  bad.rows = kMaxHeightfieldSide;
  bad.columns = kMaxHeightfieldSide;
  EXPECT_EQ(problem(bad)->problem, HeightfieldProblem::kTooManySamples);
  for (float s : {0.0f, -1.0f, kNan, std::numeric_limits<float>::infinity(), 1e30f}) {
    bad = d;
    bad.spacing_x = s;
    EXPECT_EQ(problem(bad)->field, HeightfieldField::kSpacingX) << s;
    bad = d;
    bad.spacing_z = s;
    EXPECT_EQ(problem(bad)->field, HeightfieldField::kSpacingZ) << s;
  }
  std::vector<float> short_heights(5, 0.0f);
  bad = d;
  bad.heights = short_heights;
  EXPECT_EQ(problem(bad),
            (HeightfieldError{HeightfieldField::kHeights, 5, HeightfieldProblem::kWrongCount}));
  for (float v : {kNan, std::numeric_limits<float>::infinity(), 2e9f, -1e30f}) {
    std::vector<float> hh(6, 0.0f);
    hh[4] = v;
    bad = d;
    bad.heights = hh;
    EXPECT_EQ(problem(bad)->index, 4u) << v;
    EXPECT_EQ(problem(bad)->field, HeightfieldField::kHeights);
  }
  std::vector<uint8_t> holes(3, 0);
  bad = d;
  bad.holes = holes;
  EXPECT_EQ(problem(bad),
            (HeightfieldError{HeightfieldField::kHoles, 3, HeightfieldProblem::kWrongCount}));
  std::vector<uint8_t> right(2, 1);
  bad = d;
  bad.holes = right;
  EXPECT_EQ(problem(bad), std::nullopt);
  for (int f = 0; f <= static_cast<int>(HeightfieldField::kHoles); ++f) {
    EXPECT_FALSE(HeightfieldFieldName(static_cast<HeightfieldField>(f)).empty());
  }
  for (int p = 0; p <= static_cast<int>(HeightfieldProblem::kTooLarge); ++p) {
    EXPECT_FALSE(HeightfieldProblemReason(static_cast<HeightfieldProblem>(p)).empty());
  }
}

TEST(HeightfieldShape, QuantisesWithinItsStatedErrorAndThePyramidBoundsEveryCell) {
  for (auto [rows, columns] : {std::pair{2u, 2u}, {3u, 7u}, {64u, 65u}, {129u, 33u}, {2u, 300u}}) {
    std::mt19937 rng = CaseRng(kSeed, rows * 1000 + columns);
    const Grid g = RandomGrid(rng, rows, columns, true);
    const HeightfieldShape hf = HeightfieldShape::Build(g.desc());
    const auto [lo, hi] = std::minmax_element(g.heights.begin(), g.heights.end());
    // Half a level of 65535 over the range, plus float rounding of the heights.
    const double bound = (*hi - *lo) / 131070.0 + 4e-7 * std::fmax(std::fabs(*lo), std::fabs(*hi));
    EXPECT_LE(hf.max_quantization_error(), bound) << rows << "x" << columns;
    for (uint32_t i = 0; i < rows; ++i) {
      for (uint32_t j = 0; j < columns; ++j) {
        EXPECT_LE(std::fabs(hf.Height(i, j) - g.heights[i * columns + j]),
                  hf.max_quantization_error());
      }
    }
    // Every cell that is not a hole lies within its ancestors' ranges.
    for (uint32_t i = 0; i < hf.cell_rows(); ++i) {
      for (uint32_t j = 0; j < hf.cell_columns(); ++j) {
        uint32_t cmin, cmax;
        hf.CellRange(i, j, &cmin, &cmax);
        if (cmin > cmax) {
          EXPECT_TRUE(hf.IsHole(i, j));
          continue;
        }
        for (int l = 1; l <= hf.levels(); ++l) {
          uint32_t nmin, nmax;
          hf.NodeRange(l, i >> l, j >> l, &nmin, &nmax);
          EXPECT_LE(nmin, cmin);
          EXPECT_GE(nmax, cmax);
        }
      }
    }
    uint32_t tmin, tmax;
    hf.NodeRange(hf.levels(), 0, 0, &tmin, &tmax);
    EXPECT_EQ(hf.level_rows(hf.levels()), 1u);
    EXPECT_EQ(hf.level_columns(hf.levels()), 1u);
    // At most 4 bytes per sample, pyramid and holes included (the object's own size aside).
    const double per = static_cast<double>(hf.MemoryBytes() - sizeof(HeightfieldShape)) /
                       (static_cast<double>(rows) * columns);
    if (rows * columns >= 4096) {
      EXPECT_LE(per, 4.0) << rows << "x" << columns;
    }
  }
}

TEST(HeightfieldShape, AFlatFieldStoresItsOneHeightExactly) {
  Grid g;
  g.rows = 4;
  g.columns = 5;
  g.heights.assign(20, 12.375f);
  const HeightfieldShape hf = HeightfieldShape::Build(g.desc());
  EXPECT_EQ(hf.max_quantization_error(), 0.0f);
  EXPECT_EQ(hf.Height(3, 4), 12.375f);
  MeshHit h;
  ASSERT_TRUE(Raycast(hf, ScaledPose{}, Ray{{1.5f, 20, 1.5f}, {0, -1, 0}, 100}, &h));
  EXPECT_EQ(h.distance, 20.0f - 12.375f);
  EXPECT_EQ(h.normal, (Vec3{0, 1, 0}));
  EXPECT_FALSE(h.back_face);
}

// ---------------------------------------------------------------------------------------------
// Rays against brute force.

std::vector<SimdLevel> Levels() {
  std::vector<SimdLevel> out;
  for (SimdLevel l : {SimdLevel::kSse, SimdLevel::kAvx2, SimdLevel::kAvx512}) {
    if (SimdLevelSupported(l)) out.push_back(l);
  }
  return out;
}

struct LevelGuard {
  SimdLevel saved = ActiveSimdLevel();
  ~LevelGuard() { SetSimdLevel(saved); }
};

ScaledPose RandomPose(std::mt19937& rng) {
  ScaledPose p;
  p.pose.rotation = oracle::Index(rng, 3) == 0 ? Quat::Identity() : oracle::RandomRotation(rng);
  p.pose.position =
      oracle::Index(rng, 5) == 0 ? Vec3{1e5f, -5e4f, 1e5f} : oracle::RandomUnit(rng) * 20.0f;
  const float scales[] = {1.0f, 1.0f, 0.5f, 2.0f, 3.0f};
  p.scale = scales[oracle::Index(rng, 5)];
  return p;
}

Ray RandomRay(std::mt19937& rng, const HeightfieldShape& hf, const ScaledPose& pose,
              const Triangles& all, const char** kind) {
  const Aabb& b = hf.local_bounds();
  Vec3 aim;
  const int pick = oracle::Index(rng, 4);
  if (pick == 0 && !all.tris.empty()) {
    *kind = "at a vertex";
    aim = all.tris[static_cast<size_t>(oracle::Index(rng, static_cast<int>(all.tris.size())))].b;
  } else if (pick == 1 && !all.tris.empty()) {
    *kind = "at an edge";
    const Triangle& t =
        all.tris[static_cast<size_t>(oracle::Index(rng, static_cast<int>(all.tris.size())))];
    aim = oracle::ToFloat(oracle::ToDouble(t.a) + (oracle::ToDouble(t.c) - oracle::ToDouble(t.a)) *
                                                      oracle::Uniform(rng, 0, 1));
  } else {
    *kind = "anywhere";
    aim = b.min + Mul(b.max - b.min, Vec3{static_cast<float>(oracle::Uniform(rng, -0.1, 1.1)),
                                          static_cast<float>(oracle::Uniform(rng, 0, 1)),
                                          static_cast<float>(oracle::Uniform(rng, -0.1, 1.1))});
  }
  Vec3 dir = oracle::RandomUnit(rng);
  if (oracle::Index(rng, 6) == 0) dir = Vec3{0, -1, 0};  // straight down (walls of cells parallel)
  if (oracle::Index(rng, 8) == 0) dir = Normalize(Vec3{dir.x, 0.0f, dir.z});  // horizontal
  const float back = static_cast<float>(oracle::Uniform(rng, 0, 40));
  const Vec3 world_aim = ToWorldPoint(pose, aim);
  const Vec3 world_dir = ToWorldVector(pose, dir);
  return Ray{world_aim - world_dir * (back * pose.scale), world_dir,
             (oracle::Chance(rng, 0.1) ? back : 500.0f) * pose.scale};
}

TEST(HeightfieldRaycast, AgreesWithBruteForceOverItsTrianglesOnEveryInstructionSet) {
  LevelGuard guard;
  Failures failures;
  int64_t rays = 0, hits = 0;
  const std::pair<uint32_t, uint32_t> sizes[] = {{2, 2},   {3, 3},   {17, 9},   {64, 64},
                                                 {2, 100}, {100, 3}, {129, 130}};
  for (size_t si = 0; si < std::size(sizes); ++si) {
    std::mt19937 rng = CaseRng(kSeed + 1, si);
    const Grid g = RandomGrid(rng, sizes[si].first, sizes[si].second, si % 2 == 1);
    const HeightfieldShape hf = HeightfieldShape::Build(g.desc());
    const Triangles all = AllTriangles(hf);
    for (int i = 0; i < 2500; ++i) {
      std::mt19937 r = CaseRng(kSeed + 2, si * 100000 + static_cast<uint64_t>(i));
      const ScaledPose pose = RandomPose(r);
      const char* kind = "";
      const Ray ray = RandomRay(r, hf, pose, all, &kind);
      // Brute force on the same local ray.
      const Vec3 o = ToLocalPoint(pose, ray.origin);
      const Vec3 d = ToLocalVector(pose, ray.direction);
      const WatertightRay w = MakeWatertightRay(o, d);
      bool want = false;
      float want_t = 0.0f;
      uint32_t want_id = 0;
      std::vector<uint32_t> want_all;
      for (size_t k = 0; k < all.tris.size(); ++k) {
        const Triangle& t = all.tris[k];
        float tt;
        if (!RayTriangle(w, t.a, t.b, t.c, ray.max_distance / pose.scale, &tt)) continue;
        want_all.push_back(all.ids[k]);
        if (!want || tt < want_t || (tt == want_t && all.ids[k] < want_id)) {
          want = true;
          want_t = tt;
          want_id = all.ids[k];
        }
      }
      std::sort(want_all.begin(), want_all.end());
      ++rays;
      hits += want;
      const std::string context = std::to_string(g.rows) + "x" + std::to_string(g.columns) +
                                  " ray " + std::to_string(i) + " (" + kind + ") " + Str(ray) +
                                  " pose " + Str(pose.pose) + " scale " + Str(pose.scale);
      for (SimdLevel level : Levels()) {
        SetSimdLevel(level);
        MeshHit h;
        const bool got = Raycast(hf, pose, ray, &h);
        if (got != want ||
            (got && (h.triangle != want_id ||
                     h.distance != std::fmin(want_t * pose.scale, ray.max_distance)))) {
          failures.Add(std::string(SimdLevelName(level)) + ": got " +
                           (got ? std::to_string(h.triangle) + " at " + Str(h.distance)
                                : std::string("miss")) +
                           ", brute force " +
                           (want ? std::to_string(want_id) + " at " + Str(want_t * pose.scale)
                                 : std::string("miss")),
                       context);
          continue;
        }
        MeshHit any;
        const bool got_any = RaycastAny(hf, pose, ray, &any);
        if (got_any != want ||
            (got_any && !std::binary_search(want_all.begin(), want_all.end(), any.triangle))) {
          failures.Add("any disagrees", context);
        }
        std::vector<uint32_t> got_all;
        RaycastAll(hf, pose, ray, [&](const MeshHit& x) {
          got_all.push_back(x.triangle);
          return ray.max_distance;
        });
        std::sort(got_all.begin(), got_all.end());
        if (got_all != want_all) {
          failures.Add("all: " + std::to_string(got_all.size()) + " vs brute force " +
                           std::to_string(want_all.size()),
                       context);
        }
      }
    }
  }
  EXPECT_EQ(failures.count(), 0) << "seed " << kSeed + 2;
  EXPECT_GT(hits, rays / 4);
}

// A heightfield without holes is a closed sheet: a vertical line through any point of it
// (vertices and edges included) crosses it exactly once.
TEST(HeightfieldRaycast, VerticalRaysThroughSamplesAndEdgesHitExactlyOnce) {
  std::mt19937 rng = CaseRng(kSeed + 3, 0);
  const Grid g = RandomGrid(rng, 33, 41, false);
  const HeightfieldShape hf = HeightfieldShape::Build(g.desc());
  int checked = 0;
  for (uint32_t i = 0; i + 1 < g.rows; ++i) {
    for (uint32_t j = 0; j + 1 < g.columns; ++j) {
      // The sample, the middle of the cell's edges and of its diagonal (exact floats when the
      // spacing is a power of two... and close to them otherwise: either way once).
      const Vec3 s = hf.Sample(i, j), e = hf.Sample(i + 1, j + 1);
      for (const Vec3& p : {s, 0.5f * (s + e), Vec3{0.5f * (s.x + e.x), 0, s.z},
                            Vec3{s.x, 0, 0.5f * (s.z + e.z)}}) {
        for (float dir : {-1.0f, 1.0f}) {
          const Ray ray{{p.x, dir < 0 ? 1e3f : -1e3f, p.z}, {0, dir, 0}, 4e3f};
          int count = 0;
          RaycastAll(hf, ScaledPose{}, ray, [&](const MeshHit&) {
            ++count;
            return ray.max_distance;
          });
          // Points on the grid's border edges belong to one triangle or none (the edge rule):
          // only interior ones must hit.
          const bool interior = p.x > 0.0f && p.z > 0.0f && p.x < hf.local_bounds().max.x &&
                                p.z < hf.local_bounds().max.z;
          if (interior) {
            EXPECT_EQ(count, 1) << Str(ray);
            ++checked;
          } else {
            EXPECT_LE(count, 1) << Str(ray);
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 4000);
}

// ---------------------------------------------------------------------------------------------
// Casts, overlaps, nearest points and regions against brute force over the triangles with the
// per-triangle functions (themselves checked against the oracles in tests/geom) and the oracle.

TEST(HeightfieldQueries, SphereCastsOverlapsNearestPointsAndRegionsAgreeWithBruteForce) {
  Failures failures;
  int64_t cases = 0;
  for (int gi = 0; gi < 6; ++gi) {
    std::mt19937 rng = CaseRng(kSeed + 4, static_cast<uint64_t>(gi));
    const uint32_t rows = 2 + static_cast<uint32_t>(oracle::Index(rng, 40));
    const uint32_t columns = 2 + static_cast<uint32_t>(oracle::Index(rng, 40));
    const Grid g = RandomGrid(rng, rows, columns, gi % 2 == 0);
    const HeightfieldShape hf = HeightfieldShape::Build(g.desc());
    const Triangles all = AllTriangles(hf);
    for (int i = 0; i < 400; ++i) {
      std::mt19937 r = CaseRng(kSeed + 5, static_cast<uint64_t>(gi) * 100000 + i);
      const ScaledPose pose = RandomPose(r);
      const char* kind = "";
      const Ray path = RandomRay(r, hf, pose, all, &kind);
      const float radius = static_cast<float>(oracle::LogUniform(r, 0.05, 3.0)) * pose.scale;
      ++cases;
      const std::string context = std::to_string(rows) + "x" + std::to_string(columns) + " case " +
                                  std::to_string(i) + " " + Str(path) + " radius " + Str(radius) +
                                  " pose " + Str(pose.pose) + " scale " + Str(pose.scale);
      // Sphere cast: the local cast against every triangle, by the same per-triangle test and
      // start rule, must give the same first contact (distance and triangle, ties to the lowest).
      {
        const Vec3 o = ToLocalPoint(pose, path.origin);
        const Vec3 d = ToLocalVector(pose, path.direction);
        const float r_local = radius / pose.scale;
        bool start = false, found = false;
        float best_t = 0.0f, best_d2 = 0.0f;
        uint32_t best_id = 0;
        for (size_t k = 0; k < all.tris.size(); ++k) {
          const float d2 = DistanceSquared(ClosestPointOnTriangle(o, all.tris[k]), o);
          if (d2 <= r_local * r_local) {
            if (!start || d2 < best_d2 || (d2 == best_d2 && all.ids[k] < best_id)) {
              start = found = true;
              best_t = 0.0f;
              best_d2 = d2;
              best_id = all.ids[k];
            }
          }
        }
        if (!start) {
          for (size_t k = 0; k < all.tris.size(); ++k) {
            TriangleContact c;
            if (!SphereCastTriangle(o, d, r_local, path.max_distance / pose.scale, all.tris[k],
                                    &c)) {
              continue;
            }
            if (!found || c.t < best_t || (c.t == best_t && all.ids[k] < best_id)) {
              found = true;
              best_t = c.t;
              best_id = all.ids[k];
            }
          }
        }
        MeshHit h;
        const bool got = SphereCast(hf, pose, path, radius, &h);
        if (got != found) {
          failures.Add(std::string("sphere cast: ") + (got ? "hit" : "miss") + ", brute force " +
                           (found ? "hit" : "miss"),
                       context);
        } else if (got &&
                   (h.triangle != best_id || h.start_overlapping != start ||
                    std::fabs(h.distance - best_t * pose.scale) > 1e-6f * (1.0f + h.distance))) {
          failures.Add("sphere cast: triangle " + std::to_string(h.triangle) + " at " +
                           Str(h.distance) + ", brute force " + std::to_string(best_id) + " at " +
                           Str(best_t * pose.scale),
                       context);
        }
      }
      // Overlap, penetration and nearest point of a ball at the path's origin, and a region.
      {
        const Shape shapes[3] = {Sphere{radius}, Box{Vec3{radius, 0.5f * radius, radius}},
                                 Capsule{0.5f * radius, radius}};
        const Shape& shape = shapes[oracle::Index(r, 3)];
        const Pose sp{oracle::RandomRotation(r), path.origin};
        Shape ls;
        Pose lp;
        ToLocalShape(pose, shape, sp, &ls, &lp);
        std::vector<uint32_t> want, got;
        for (size_t k = 0; k < all.tris.size(); ++k) {
          if (OverlapTriangle(ls, lp, all.tris[k])) want.push_back(all.ids[k]);
        }
        OverlapAll(hf, pose, shape, sp, false, [&](const MeshContact& c) {
          got.push_back(c.triangle);
          return true;
        });
        std::sort(want.begin(), want.end());
        std::sort(got.begin(), got.end());
        if (got != want) {
          failures.Add("overlap: " + std::to_string(got.size()) + " triangles, brute force " +
                           std::to_string(want.size()) + " (" + Str(shape) + ")",
                       context);
        }
        if (Overlap(hf, pose, shape, sp) != !want.empty()) failures.Add("overlap any", context);
        MeshContact deepest;
        if (Penetrate(hf, pose, shape, sp, &deepest)) {
          Penetration best;
          uint32_t best_id = 0;
          bool have = false;
          for (size_t k = 0; k < all.tris.size(); ++k) {
            Penetration p;
            if (!PenetrateTriangle(ls, lp, all.tris[k], &p)) continue;
            if (!have || p.depth > best.depth || (p.depth == best.depth && all.ids[k] < best_id)) {
              have = true;
              best = p;
              best_id = all.ids[k];
            }
          }
          if (!have || deepest.triangle != best_id ||
              std::fabs(deepest.depth - best.depth * pose.scale) > 1e-5f * (1 + deepest.depth)) {
            failures.Add("penetrate: triangle " + std::to_string(deepest.triangle) + " depth " +
                             Str(deepest.depth) + ", brute force " + std::to_string(best_id) +
                             " depth " + Str(best.depth * pose.scale),
                         context);
          }
        } else if (!want.empty()) {
          failures.Add("penetrate misses an overlap", context);
        }
        // Nearest point within a reach, against the double oracle over every triangle.
        const Vec3 q = ToLocalPoint(pose, path.origin);
        double oracle_d = std::numeric_limits<double>::infinity();
        for (const Triangle& t : all.tris) {
          oracle_d = std::fmin(
              oracle_d, oracle::PointTriangleDistance(oracle::ToDouble(q), oracle::ToDouble(t)));
        }
        const float reach = 5.0f * pose.scale;
        MeshPoint np;
        const bool near = ClosestPoint(hf, pose, path.origin, reach, &np);
        const double tol = 1e-4 * (1.0 + oracle_d) * pose.scale +
                           oracle::PositionTolerance(oracle::MaxAbs(oracle::ToDouble(path.origin)),
                                                     10.0 * pose.scale);
        if (near != (oracle_d * pose.scale <= reach)) {
          if (std::fabs(oracle_d * pose.scale - reach) > tol) {
            failures.Add("nearest: found " + std::to_string(near) + ", oracle distance " +
                             Str(oracle_d * pose.scale),
                         context);
          }
        } else if (near && std::fabs(np.distance - oracle_d * pose.scale) > tol) {
          failures.Add(
              "nearest: distance " + Str(np.distance) + ", oracle " + Str(oracle_d * pose.scale),
              context);
        }
        // A region: the box of the shape.
        const Aabb region = Bounds(shape, sp);
        Shape rs;
        Pose rp;
        ToLocalShape(pose, Box{HalfExtents(region)}, Pose{Quat::Identity(), Center(region)}, &rs,
                     &rp);
        std::vector<uint32_t> want_region, got_region;
        for (size_t k = 0; k < all.tris.size(); ++k) {
          if (OverlapTriangle(rs, rp, all.tris[k])) want_region.push_back(all.ids[k]);
        }
        RegionAll(hf, pose, region, [&](const MeshContact& c) {
          got_region.push_back(c.triangle);
          return true;
        });
        std::sort(want_region.begin(), want_region.end());
        std::sort(got_region.begin(), got_region.end());
        if (got_region != want_region) failures.Add("region disagrees", context);
        if (AnyInRegion(hf, pose, region) != !want_region.empty()) {
          failures.Add("any in region disagrees", context);
        }
      }
    }
  }
  EXPECT_EQ(failures.count(), 0) << "seed " << kSeed + 5;
  EXPECT_GT(cases, 2000);
}

TEST(HeightfieldQueries, HolesHaveNoTriangles) {
  Grid g;
  g.rows = 3;
  g.columns = 3;
  g.heights.assign(9, 0.0f);
  g.holes = {1, 0, 0, 1};
  const HeightfieldShape hf = HeightfieldShape::Build(g.desc());
  MeshHit h;
  EXPECT_FALSE(Raycast(hf, ScaledPose{}, Ray{{0.5f, 5, 0.25f}, {0, -1, 0}, 10}, &h));
  EXPECT_TRUE(Raycast(hf, ScaledPose{}, Ray{{1.5f, 5, 0.25f}, {0, -1, 0}, 10}, &h));
  EXPECT_EQ(h.triangle, hf.TriangleIndex(0, 1, 1));
  EXPECT_FALSE(Overlap(hf, ScaledPose{}, Sphere{0.1f}, Pose{{}, {0.5f, 0, 0.5f}}));
  EXPECT_TRUE(Overlap(hf, ScaledPose{}, Sphere{0.1f}, Pose{{}, {1.5f, 0, 0.5f}}));
}

}  // namespace
}  // namespace collide
