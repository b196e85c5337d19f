// Sphere casts, overlaps (boolean, deepest, every contact), nearest points and regions against
// posed meshes (src/mesh/mesh_query.h), on every mesh kind of tests/mesh/mesh_test_util.h with
// random poses and scales: the tree's answers against brute force over every triangle with the
// same per-triangle functions (the walk must drop nothing and break ties to the lowest index),
// and against the double-precision oracles (conservative advancement on the exact point-triangle
// distance for casts; the exact distance for nearest points), every instruction set the CPU has
// giving the same answers.

#include "mesh/mesh_query.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
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
#include "mesh/mesh_test_util.h"

namespace collide {
namespace {

using mesh_test::TestMesh;
using oracle::CaseRng;
using oracle::DVec3;
using oracle::Failures;
using oracle::Str;

constexpr uint32_t kSeed = 0x3E5B0010;

ScaledPose RandomMeshPose(std::mt19937& rng) {
  const float scales[] = {1.0f, 1.0f, 0.5f, 2.0f, 3.0f};
  ScaledPose p;
  p.pose.rotation = oracle::Index(rng, 3) == 0 ? Quat::Identity() : oracle::RandomRotation(rng);
  p.pose.position = oracle::Index(rng, 4) == 0 ? Vec3{} : oracle::RandomUnit(rng) * 30.0f;
  p.scale = scales[oracle::Index(rng, 5)];
  return p;
}

// A path near the mesh: towards a random vertex, edge point or anywhere around it.
Ray RandomPath(std::mt19937& rng, const TestMesh& tm, const ScaledPose& pose) {
  const Triangle t = tm.triangle(static_cast<uint32_t>(oracle::Index(rng, tm.triangle_count())));
  DVec3 aim = oracle::ToDouble(t.a);
  const int pick = oracle::Index(rng, 3);
  if (pick == 1) aim = aim + (oracle::ToDouble(t.b) - aim) * oracle::Uniform(rng, 0, 1);
  if (pick == 2) aim = aim + oracle::ToDouble(oracle::RandomUnit(rng)) * oracle::Uniform(rng, 0, 5);
  const Vec3 dir = oracle::RandomUnit(rng);
  const float back = static_cast<float>(oracle::Uniform(rng, 0, 15));
  return Ray{ToWorldPoint(pose, oracle::ToFloat(aim)) - dir * (back * pose.scale), dir,
             (oracle::Chance(rng, 0.15) ? back : 60.0f) * pose.scale};
}

TEST(MeshQueries, SphereCastsAgreeWithBruteForceAndTheDistanceOracle) {
  std::mt19937 build_rng = CaseRng(kSeed, 0);
  const std::vector<TestMesh> meshes = mesh_test::AllKinds(build_rng);
  Failures failures;
  int64_t cases = 0, hits = 0, starts = 0;
  for (size_t mi = 0; mi < meshes.size(); ++mi) {
    const TestMesh& tm = meshes[mi];
    const MeshShape mesh = MeshShape::Build(tm.view());
    for (int i = 0; i < 400; ++i) {
      std::mt19937 rng = CaseRng(kSeed + 1, mi * 100000 + static_cast<uint64_t>(i));
      const ScaledPose pose = RandomMeshPose(rng);
      const Ray path = RandomPath(rng, tm, pose);
      const float radius = static_cast<float>(oracle::LogUniform(rng, 0.02, 2.0)) * pose.scale;
      const Vec3 o = ToLocalPoint(pose, path.origin);
      const Vec3 d = ToLocalVector(pose, path.direction);
      const float r = radius / pose.scale;
      const float max_t = path.max_distance / pose.scale;
      // Brute force with the per-triangle functions and the query's rules: a start overlap
      // (the nearest triangle within r) wins, else the first contact; ties to the lowest index.
      bool found = false, start = false;
      float best_t = 0.0f, best_d2 = 0.0f;
      uint32_t best_id = 0;
      for (uint32_t k = 0; k < tm.triangle_count(); ++k) {
        const float d2 = DistanceSquared(ClosestPointOnTriangle(o, tm.triangle(k)), o);
        if (d2 <= r * r && (!start || d2 < best_d2 || (d2 == best_d2 && k < best_id))) {
          found = start = true;
          best_d2 = d2;
          best_id = k;
        }
      }
      if (!start) {
        for (uint32_t k = 0; k < tm.triangle_count(); ++k) {
          TriangleContact c;
          if (!SphereCastTriangle(o, d, r, max_t, tm.triangle(k), &c)) continue;
          if (!found || c.t < best_t || (c.t == best_t && k < best_id)) {
            found = true;
            best_t = c.t;
            best_id = k;
          }
        }
      }
      ++cases;
      const std::string context = tm.name + " case " + std::to_string(i) + " " + Str(path) +
                                  " radius " + Str(radius) + " pose " + Str(pose.pose) + " scale " +
                                  Str(pose.scale);
      MeshHit h;
      const bool got = SphereCast(mesh, pose, path, radius, &h);
      if (got != found) {
        failures.Add(
            std::string("hit ") + (got ? "yes" : "no") + ", brute force " + (found ? "yes" : "no"),
            context);
        continue;
      }
      MeshHit any;
      if (SphereCastAny(mesh, pose, path, radius, &any) != found) {
        failures.Add("any disagrees", context);
      }
      if (!got) continue;
      ++hits;
      starts += start;
      if (h.triangle != best_id || h.start_overlapping != start ||
          h.distance != std::fmin(best_t * pose.scale, path.max_distance)) {
        failures.Add("triangle " + std::to_string(h.triangle) + " at " + Str(h.distance) +
                         ", brute force " + std::to_string(best_id) + " at " +
                         Str(best_t * pose.scale),
                     context);
        continue;
      }
      // The oracle: the ball's centre at the reported distance is `radius` from the mesh (the
      // exact distance, minimised over triangles in double), and nowhere nearer before.
      if (!start) {
        const DVec3 od = oracle::ToDouble(o), dd = oracle::ToDouble(d);
        auto gap = [&](double t) {
          double m = std::numeric_limits<double>::infinity();
          const DVec3 p = od + dd * t;
          for (uint32_t k = 0; k < tm.triangle_count(); ++k) {
            m = std::fmin(m, oracle::PointTriangleDistance(p, oracle::ToDouble(tm.triangle(k))));
          }
          return m - r;
        };
        const double tol =
            1e-3 * (1.0 + r) + oracle::PositionTolerance(oracle::MaxAbs(od) + 100.0, 100.0);
        const double at = gap(best_t);
        if (std::fabs(at) > tol) {
          failures.Add("the contact is " + Str(at) + " off the ball's surface", context);
        } else if (best_t > 1e-3 && gap(best_t * 0.99 - 1e-3) < -tol) {
          failures.Add("the ball met the mesh before the reported contact", context);
        }
      }
      // The normal points from the contact point to the centre at contact (where the radius is
      // large against the world coordinates' ulps: far away a small ball's world points are
      // rounded by more than its size).
      const Vec3 centre = path.origin + path.direction * h.distance;
      const double ulp = oracle::FloatUlp(oracle::MaxAbs(oracle::ToDouble(centre)));
      if (radius > 1e3 * ulp && Length(centre - h.point) > 1e-3f * radius &&
          Dot(Normalize(centre - h.point), h.normal) < 0.999f) {
        failures.Add("normal " + Str(h.normal) + " not towards the centre", context);
      }
    }
  }
  EXPECT_EQ(failures.count(), 0) << "seed " << kSeed + 1;
  EXPECT_GT(hits, cases / 4);
  EXPECT_GT(starts, 10);
}

TEST(MeshQueries, OverlapsNearestPointsAndRegionsAgreeWithBruteForce) {
  std::mt19937 build_rng = CaseRng(kSeed, 0);
  const std::vector<TestMesh> meshes = mesh_test::AllKinds(build_rng);
  Failures failures;
  int64_t cases = 0, overlaps = 0;
  for (size_t mi = 0; mi < meshes.size(); ++mi) {
    const TestMesh& tm = meshes[mi];
    const MeshShape mesh = MeshShape::Build(tm.view());
    for (int i = 0; i < 300; ++i) {
      std::mt19937 rng = CaseRng(kSeed + 2, mi * 100000 + static_cast<uint64_t>(i));
      const ScaledPose pose = RandomMeshPose(rng);
      const Ray path = RandomPath(rng, tm, pose);
      const float size = static_cast<float>(oracle::LogUniform(rng, 0.05, 4.0)) * pose.scale;
      const Shape shapes[3] = {Sphere{size}, Box{Vec3{size, 0.3f * size, 0.7f * size}},
                               Capsule{0.4f * size, size}};
      const Shape& shape = shapes[oracle::Index(rng, 3)];
      const Pose sp{oracle::RandomRotation(rng), path.origin};
      Shape ls;
      Pose lp;
      ToLocalShape(pose, shape, sp, &ls, &lp);
      ++cases;
      const std::string context = tm.name + " case " + std::to_string(i) + " " + Str(shape) +
                                  " at " + Str(sp) + " mesh pose " + Str(pose.pose) + " scale " +
                                  Str(pose.scale);
      std::vector<uint32_t> want;
      Penetration deepest{};
      uint32_t deepest_id = 0;
      for (uint32_t k = 0; k < tm.triangle_count(); ++k) {
        if (!OverlapTriangle(ls, lp, tm.triangle(k))) continue;
        want.push_back(k);
        Penetration p;
        if (PenetrateTriangle(ls, lp, tm.triangle(k), &p) &&
            (want.size() == 1 || p.depth > deepest.depth ||
             (p.depth == deepest.depth && k < deepest_id))) {
          deepest = p;
          deepest_id = k;
        }
      }
      overlaps += !want.empty();
      std::vector<uint32_t> got, got_detail;
      OverlapAll(mesh, pose, shape, sp, false, [&](const MeshContact& c) {
        got.push_back(c.triangle);
        return true;
      });
      OverlapAll(mesh, pose, shape, sp, true, [&](const MeshContact& c) {
        got_detail.push_back(c.triangle);
        return true;
      });
      std::sort(got.begin(), got.end());
      std::sort(got_detail.begin(), got_detail.end());
      if (got != want || got_detail != want) {
        failures.Add("overlap: " + std::to_string(got.size()) + " (" +
                         std::to_string(got_detail.size()) + " with detail), brute force " +
                         std::to_string(want.size()),
                     context);
      }
      if (Overlap(mesh, pose, shape, sp) != !want.empty()) {
        failures.Add("overlap (any) disagrees", context);
      }
      MeshContact c;
      const bool pen = Penetrate(mesh, pose, shape, sp, &c);
      if (pen != !want.empty() ||
          (pen && (c.triangle != deepest_id ||
                   std::fabs(c.depth - deepest.depth * pose.scale) > 1e-5f * (1.0f + c.depth)))) {
        failures.Add("penetrate: " +
                         (pen ? std::to_string(c.triangle) + " depth " + Str(c.depth)
                              : std::string("none")) +
                         ", brute force " + std::to_string(deepest_id) + " depth " +
                         Str(deepest.depth * pose.scale),
                     context);
      }
      // Nearest point within a reach, against the exact distance over every triangle.
      const Vec3 q = ToLocalPoint(pose, path.origin);
      double exact = std::numeric_limits<double>::infinity();
      for (uint32_t k = 0; k < tm.triangle_count(); ++k) {
        exact = std::fmin(exact, oracle::PointTriangleDistance(oracle::ToDouble(q),
                                                               oracle::ToDouble(tm.triangle(k))));
      }
      const float reach = 3.0f * pose.scale;
      MeshPoint np;
      const bool near = ClosestPoint(mesh, pose, path.origin, reach, &np);
      const double tol =
          1e-4 * (1.0 + exact) * pose.scale +
          oracle::PositionTolerance(oracle::MaxAbs(oracle::ToDouble(path.origin)) + 1e5 * (mi == 6),
                                    20.0 * pose.scale);
      if (near != (exact * pose.scale <= reach) && std::fabs(exact * pose.scale - reach) > tol) {
        failures.Add("nearest: found " + std::to_string(near) + ", exact distance " +
                         Str(exact * pose.scale),
                     context);
      } else if (near && std::fabs(np.distance - exact * pose.scale) > tol) {
        failures.Add("nearest: " + Str(np.distance) + ", exact " + Str(exact * pose.scale),
                     context);
      }
      // Within a radius: every triangle whose nearest point is within it.
      std::vector<uint32_t> within, within_want;
      WithinRadiusAll(mesh, pose, path.origin, reach, [&](const MeshPoint& p) {
        within.push_back(p.triangle);
        return true;
      });
      const float r_local = reach / pose.scale;
      for (uint32_t k = 0; k < tm.triangle_count(); ++k) {
        if (DistanceSquared(ClosestPointOnTriangle(q, tm.triangle(k)), q) <= r_local * r_local) {
          within_want.push_back(k);
        }
      }
      std::sort(within.begin(), within.end());
      if (within != within_want) {
        failures.Add("within radius: " + std::to_string(within.size()) + ", brute force " +
                         std::to_string(within_want.size()),
                     context);
      }
      // A region (the shape's box) by exact box-triangle tests.
      const Aabb region = Bounds(shape, sp);
      Shape rs;
      Pose rp;
      ToLocalShape(pose, Box{HalfExtents(region)}, Pose{Quat::Identity(), Center(region)}, &rs,
                   &rp);
      std::vector<uint32_t> region_want, region_got;
      for (uint32_t k = 0; k < tm.triangle_count(); ++k) {
        if (OverlapTriangle(rs, rp, tm.triangle(k))) region_want.push_back(k);
      }
      RegionAll(mesh, pose, region, [&](const MeshContact& x) {
        region_got.push_back(x.triangle);
        return true;
      });
      std::sort(region_got.begin(), region_got.end());
      if (region_got != region_want) {
        failures.Add("region: " + std::to_string(region_got.size()) + ", brute force " +
                         std::to_string(region_want.size()),
                     context);
      }
      if (AnyInRegion(mesh, pose, region) != !region_want.empty()) {
        failures.Add("any in region disagrees", context);
      }
    }
  }
  EXPECT_EQ(failures.count(), 0) << "seed " << kSeed + 2;
  EXPECT_GT(overlaps, cases / 10);
}

// Every query's full answer as text, bit for bit (%a), contacts sorted by triangle.
std::string Answers(const MeshShape& mesh, const ScaledPose& pose, const Ray& path, float radius,
                    const Shape& shape, const Pose& sp) {
  auto f = [](float x) {
    char b[32];
    std::snprintf(b, sizeof b, "%a", static_cast<double>(x));
    return std::string(b);
  };
  auto v = [&](const Vec3& x) { return f(x.x) + "," + f(x.y) + "," + f(x.z); };
  std::string out;
  MeshHit h;
  if (SphereCast(mesh, pose, path, radius, &h)) {
    out += "cast " + std::to_string(h.triangle) + " " + f(h.distance) + " " + v(h.point) + " " +
           v(h.normal) + ";";
  }
  std::vector<std::string> contacts;
  OverlapAll(mesh, pose, shape, sp, true, [&](const MeshContact& c) {
    contacts.push_back(std::to_string(c.triangle) + " " + f(c.depth) + " " + v(c.normal) + " " +
                       v(c.point));
    return true;
  });
  MeshContact deepest;
  if (Penetrate(mesh, pose, shape, sp, &deepest)) {
    contacts.push_back("deepest " + std::to_string(deepest.triangle));
  }
  const Aabb region = Bounds(shape, sp);
  RegionAll(mesh, pose, region, [&](const MeshContact& c) {
    contacts.push_back("region " + std::to_string(c.triangle));
    return true;
  });
  MeshPoint np;
  if (ClosestPoint(mesh, pose, path.origin, 3.0f * pose.scale, &np)) {
    contacts.push_back("nearest " + std::to_string(np.triangle) + " " + f(np.distance) + " " +
                       v(np.point));
  }
  WithinRadiusAll(mesh, pose, path.origin, 3.0f * pose.scale, [&](const MeshPoint& p) {
    contacts.push_back("within " + std::to_string(p.triangle) + " " + v(p.point));
    return true;
  });
  std::sort(contacts.begin(), contacts.end());
  for (const std::string& c : contacts) out += c + ";";
  return out;
}

TEST(MeshQueries, EveryInstructionSetGivesTheSameAnswersBitForBit) {
  const SimdLevel saved = ActiveSimdLevel();
  std::vector<SimdLevel> levels;
  for (SimdLevel l : {SimdLevel::kSse, SimdLevel::kAvx2, SimdLevel::kAvx512}) {
    if (SimdLevelSupported(l)) levels.push_back(l);
  }
  std::mt19937 build_rng = CaseRng(kSeed, 0);
  const std::vector<TestMesh> meshes = mesh_test::AllKinds(build_rng);
  Failures failures;
  int64_t answered = 0;
  for (size_t mi = 0; mi < meshes.size(); ++mi) {
    const TestMesh& tm = meshes[mi];
    const MeshShape mesh = MeshShape::Build(tm.view());
    for (int i = 0; i < 300; ++i) {
      std::mt19937 rng = CaseRng(kSeed + 4, mi * 100000 + static_cast<uint64_t>(i));
      const ScaledPose pose = RandomMeshPose(rng);
      const Ray path = RandomPath(rng, tm, pose);
      const float size = static_cast<float>(oracle::LogUniform(rng, 0.05, 3.0)) * pose.scale;
      const Shape shapes[3] = {Sphere{size}, Box{Vec3{size, 0.3f * size, 0.7f * size}},
                               Capsule{0.4f * size, size}};
      const Shape& shape = shapes[oracle::Index(rng, 3)];
      const Pose sp{oracle::RandomRotation(rng), path.origin};
      std::string first;
      for (size_t li = 0; li < levels.size(); ++li) {
        SetSimdLevel(levels[li]);
        const std::string a = Answers(mesh, pose, path, 0.5f * size, shape, sp);
        if (li == 0) {
          first = a;
          answered += !a.empty();
        } else if (a != first) {
          failures.Add(std::string(SimdLevelName(levels[li])) + ": " + a + "\n" +
                           std::string(SimdLevelName(levels[0])) + ": " + first,
                       tm.name + " case " + std::to_string(i));
        }
      }
    }
  }
  SetSimdLevel(saved);
  EXPECT_EQ(failures.count(), 0) << "seed " << kSeed + 4;
  EXPECT_GT(answered, 0);
}

TEST(MeshQueries, BoundsContainThePosedMesh) {
  std::mt19937 build_rng = CaseRng(kSeed, 0);
  for (const TestMesh& tm : mesh_test::AllKinds(build_rng)) {
    const MeshShape mesh = MeshShape::Build(tm.view());
    for (int i = 0; i < 20; ++i) {
      std::mt19937 rng = CaseRng(kSeed + 3, static_cast<uint64_t>(i));
      const ScaledPose pose = RandomMeshPose(rng);
      const Aabb b = Bounds(mesh, pose);
      for (const Vec3& v : tm.vertices) {
        const Vec3 w = ToWorldPoint(pose, v);
        // (The mapping rounds: an ulp of the magnitude.)
        const Aabb grown = Expand(b, 1e-6f * (Magnitude(b) + 1.0f));
        EXPECT_TRUE(Contains(grown, w))
            << tm.name << " " << Str(w) << " " << Str(b.min) << " " << Str(b.max);
      }
    }
  }
}

}  // namespace
}  // namespace collide
