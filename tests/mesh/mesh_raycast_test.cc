// Rays against posed meshes (src/mesh/mesh_query.h): the tree's answers against brute force over
// every triangle, twice over: with the same watertight test (the tree must find exactly the
// triangle and distance brute force finds: the traversal drops nothing and ties go to the lowest
// index), and with the independent double-precision plane + barycentric oracle
// (tests/geom/triangle_oracle.h). Every mesh kind (random soups with slivers and degenerate
// triangles, a city of boxes, stairs, terrain, thin walls with duplicates, a closed sphere, a
// city 1e5 from the origin), random poses with scales, incoherent rays and rays aimed at
// vertices and edges; every instruction set the CPU has, bit for bit; closest, any and all.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "bvh/simd_level.h"
#include "geom/oracle.h"
#include "geom/oracle_test_util.h"
#include "geom/triangle_oracle.h"
#include "mesh/mesh_query.h"
#include "mesh/mesh_test_util.h"

namespace collide {
namespace {

using mesh_test::TestMesh;
using oracle::CaseRng;
using oracle::DVec3;
using oracle::Failures;
using oracle::Str;

constexpr uint32_t kSeed = 0x3E5B0002;

// The levels this CPU runs.
std::vector<SimdLevel> Levels() {
  std::vector<SimdLevel> out;
  for (SimdLevel l : {SimdLevel::kSse, SimdLevel::kAvx2, SimdLevel::kAvx512}) {
    if (SimdLevelSupported(l)) out.push_back(l);
  }
  return out;
}

// Restores the active level when a test ends.
struct LevelGuard {
  SimdLevel saved = ActiveSimdLevel();
  ~LevelGuard() { SetSimdLevel(saved); }
};

struct BruteHit {
  uint32_t id = 0;
  float t = 0.0f;
  float det = 0.0f;
};

// Every triangle the ray hits, by the same watertight test the kernels run, on the same local
// ray the query computes.
std::vector<BruteHit> BruteHits(const TestMesh& tm, const ScaledPose& pose, const Ray& ray) {
  const Vec3 o = ToLocalPoint(pose, ray.origin);
  const Vec3 d = ToLocalVector(pose, ray.direction);
  const float max_t = ray.max_distance / pose.scale;
  const WatertightRay w = MakeWatertightRay(o, d);
  std::vector<BruteHit> out;
  for (uint32_t i = 0; i < tm.triangle_count(); ++i) {
    const Triangle t = tm.triangle(i);
    if (IsDegenerate(t.a, t.b, t.c)) continue;
    float dist, det;
    if (RayTriangle(w, t.a, t.b, t.c, max_t, &dist, &det)) out.push_back({i, dist, det});
  }
  return out;
}

// The closest of `hits` by (distance, index).
bool Closest(const std::vector<BruteHit>& hits, BruteHit* best) {
  if (hits.empty()) return false;
  *best = hits[0];
  for (const BruteHit& h : hits) {
    if (h.t < best->t || (h.t == best->t && h.id < best->id)) *best = h;
  }
  return true;
}

// A random pose for a mesh of size ~`extent`: rotation, position (sometimes far), scale.
ScaledPose RandomMeshPose(std::mt19937& rng) {
  const float scales[] = {1.0f, 1.0f, 1.0f, 0.5f, 2.0f, 0.01f, 37.5f};
  ScaledPose p;
  p.pose.rotation = oracle::Index(rng, 3) == 0 ? Quat::Identity() : oracle::RandomRotation(rng);
  p.pose.position = oracle::Index(rng, 4) == 0 ? Vec3{} : oracle::RandomUnit(rng) * 50.0f;
  p.scale = scales[oracle::Index(rng, 7)];
  return p;
}

// A random ray for the posed mesh: incoherent through its box, aimed at a random vertex or edge
// point or triangle interior, or axis-aligned; world frame.
Ray RandomRay(std::mt19937& rng, const TestMesh& tm, const ScaledPose& pose, const char** kind) {
  const Triangle t = tm.triangle(static_cast<uint32_t>(oracle::Index(rng, tm.triangle_count())));
  DVec3 aim;
  const int pick = oracle::Index(rng, 4);
  const DVec3 a = oracle::ToDouble(t.a), b = oracle::ToDouble(t.b), c = oracle::ToDouble(t.c);
  if (pick == 0) {
    *kind = "at a vertex";
    aim = a;
  } else if (pick == 1) {
    *kind = "at an edge";
    aim = a + (b - a) * oracle::Uniform(rng, 0, 1);
  } else if (pick == 2) {
    *kind = "at a triangle";
    double u = oracle::Uniform(rng, 0, 1), v = oracle::Uniform(rng, 0, 1);
    if (u + v > 1) u = 1 - u, v = 1 - v;
    aim = a + (b - a) * u + (c - a) * v;
  } else {
    *kind = "incoherent";
    aim = a + oracle::ToDouble(oracle::RandomUnit(rng)) * oracle::Uniform(rng, 0, 20);
  }
  const Vec3 world_aim = ToWorldPoint(pose, oracle::ToFloat(aim));
  Vec3 dir = oracle::RandomUnit(rng);
  if (oracle::Index(rng, 8) == 0) {
    dir = Vec3{};
    dir[oracle::Index(rng, 3)] = oracle::Chance(rng, 0.5) ? 1.0f : -1.0f;
  }
  const float back = static_cast<float>(oracle::Uniform(rng, 0.0, 60.0)) * pose.scale;
  Ray ray;
  ray.origin = world_aim - dir * back;
  ray.direction = dir;
  ray.max_distance = oracle::Chance(rng, 0.1) ? back : 1000.0f * pose.scale;
  return ray;
}

TEST(MeshRaycast, ClosestAnyAndAllAgreeWithBruteForceOverTheSameTest) {
  std::mt19937 build_rng = CaseRng(kSeed, 0);
  const std::vector<TestMesh> meshes = mesh_test::AllKinds(build_rng);
  Failures failures;
  int64_t rays = 0, hits = 0;
  for (size_t mi = 0; mi < meshes.size(); ++mi) {
    const TestMesh& tm = meshes[mi];
    const MeshShape mesh = MeshShape::Build(tm.view());
    for (int i = 0; i < 3000; ++i) {
      std::mt19937 rng = CaseRng(kSeed + 1, mi * 100000 + static_cast<uint64_t>(i));
      const ScaledPose pose = RandomMeshPose(rng);
      const char* kind = "";
      const Ray ray = RandomRay(rng, tm, pose, &kind);
      const std::vector<BruteHit> brute = BruteHits(tm, pose, ray);
      BruteHit want;
      const bool want_hit = Closest(brute, &want);
      const std::string context = tm.name + " ray " + std::to_string(i) + " (" + kind + ") " +
                                  Str(ray) + " scale " + Str(pose.scale) + " pose " +
                                  Str(pose.pose);
      ++rays;
      MeshHit got;
      const bool got_hit = Raycast(mesh, pose, ray, &got);
      if (got_hit != want_hit) {
        failures.Add(std::string("closest: hit ") + (got_hit ? "yes" : "no") + ", brute force " +
                         (want_hit ? "yes" : "no"),
                     context);
        continue;
      }
      MeshHit any;
      const bool any_hit = RaycastAny(mesh, pose, ray, &any);
      if (any_hit != want_hit) failures.Add("any disagrees", context);
      if (any_hit && std::none_of(brute.begin(), brute.end(),
                                  [&](const BruteHit& h) { return h.id == any.triangle; })) {
        failures.Add("any reports a triangle brute force does not hit", context);
      }
      std::vector<uint32_t> all;
      RaycastAll(mesh, pose, ray, [&](const MeshHit& h) {
        all.push_back(h.triangle);
        return ray.max_distance;
      });
      std::vector<uint32_t> brute_ids;
      for (const BruteHit& h : brute) brute_ids.push_back(h.id);
      std::sort(all.begin(), all.end());
      std::sort(brute_ids.begin(), brute_ids.end());
      if (all != brute_ids) {
        failures.Add("all: " + std::to_string(all.size()) + " triangles, brute force " +
                         std::to_string(brute_ids.size()),
                     context);
      }
      if (!got_hit) continue;
      ++hits;
      if (got.triangle != want.id) {
        failures.Add("closest triangle " + std::to_string(got.triangle) + " at " +
                         Str(got.distance) + ", brute force " + std::to_string(want.id) + " at " +
                         Str(want.t * pose.scale),
                     context);
        continue;
      }
      const float want_distance = std::fmin(want.t * pose.scale, ray.max_distance);
      if (got.distance != want_distance) {
        failures.Add("distance " + Str(got.distance) + ", brute force " + Str(want_distance),
                     context);
      }
      if (got.back_face != (want.det < 0.0f)) failures.Add("back_face wrong", context);
      // The normal faces the ray.
      if (Dot(got.normal, ray.direction) > 1e-6f) {
        failures.Add("normal " + Str(got.normal) + " faces away from the ray", context);
      }
      if (std::fabs(Length(got.normal) - 1.0f) > 1e-5f) failures.Add("normal not unit", context);
    }
  }
  EXPECT_EQ(failures.count(), 0) << "seed " << kSeed + 1;
  EXPECT_GT(hits, rays / 4);
  std::printf("mesh rays: %lld rays, %lld hits\n", static_cast<long long>(rays),
              static_cast<long long>(hits));
}

TEST(MeshRaycast, TheClosestHitAgreesWithThePlaneAndBarycentricOracle) {
  std::mt19937 build_rng = CaseRng(kSeed, 0);
  const std::vector<TestMesh> meshes = mesh_test::AllKinds(build_rng);
  Failures failures;
  int64_t rays = 0, compared = 0;
  for (size_t mi = 0; mi < meshes.size(); ++mi) {
    const TestMesh& tm = meshes[mi];
    const MeshShape mesh = MeshShape::Build(tm.view());
    for (int i = 0; i < 1500; ++i) {
      std::mt19937 rng = CaseRng(kSeed + 2, mi * 100000 + static_cast<uint64_t>(i));
      const ScaledPose pose = RandomMeshPose(rng);
      const char* kind = "";
      const Ray ray = RandomRay(rng, tm, pose, &kind);
      // The oracle works on the local ray (the pose's mapping is the query's own step, checked
      // against brute force above): distances in local units.
      const DVec3 o = oracle::ToDouble(ToLocalPoint(pose, ray.origin));
      const DVec3 d = oracle::ToDouble(ToLocalVector(pose, ray.direction));
      const double max_t = ray.max_distance / pose.scale;
      // Clear hits (well inside a triangle) bound the answer; hits near an edge may or may not
      // count.
      double clear_t = std::numeric_limits<double>::infinity();
      std::map<uint32_t, double> possible;
      const double magnitude = oracle::MaxAbs(o) + oracle::MaxAbs(oracle::ToDouble(tm.vertices[0]));
      for (uint32_t k = 0; k < tm.triangle_count(); ++k) {
        const oracle::DTriangle tri = oracle::ToDouble(tm.triangle(k));
        const oracle::RayTriangleOracle r = oracle::RayTriangleByPlane(o, d, max_t * 1.0001, tri);
        if (!std::isfinite(r.t) || r.t < -1.0) continue;
        const double tol =
            64.0 * oracle::PositionTolerance(magnitude, 100.0) / std::fmax(r.cosine, 1e-6);
        if (r.margin > tol && r.t >= tol && r.t <= max_t - tol) {
          clear_t = std::fmin(clear_t, r.t);
        }
        if (r.margin >= -tol && r.t >= -tol && r.t <= max_t + tol) possible[k] = r.t;
      }
      ++rays;
      MeshHit got;
      const bool got_hit = Raycast(mesh, pose, ray, &got);
      const std::string context = tm.name + " ray " + std::to_string(i) + " (" + kind + ") " +
                                  Str(ray) + " scale " + Str(pose.scale);
      if (std::isfinite(clear_t) && !got_hit) {
        failures.Add("miss, the oracle hits at " + Str(clear_t), context);
        continue;
      }
      if (!got_hit) continue;
      const auto it = possible.find(got.triangle);
      if (it == possible.end()) {
        failures.Add("hit triangle " + std::to_string(got.triangle) + " the oracle misses",
                     context);
        continue;
      }
      ++compared;
      const double local = got.distance / pose.scale;
      const double tol = 1e-3 * (1.0 + it->second);
      if (std::fabs(local - it->second) > tol) {
        failures.Add("distance " + Str(local) + " on triangle " + std::to_string(got.triangle) +
                         ", oracle " + Str(it->second),
                     context);
      } else if (local > clear_t + tol) {
        failures.Add("distance " + Str(local) + " beyond the oracle's clear hit at " + Str(clear_t),
                     context);
      }
    }
  }
  EXPECT_EQ(failures.count(), 0) << "seed " << kSeed + 2;
  EXPECT_GT(compared, rays / 4);
}

TEST(MeshRaycast, EveryInstructionSetGivesTheSameAnswersBitForBit) {
  LevelGuard guard;
  const std::vector<SimdLevel> levels = Levels();
  std::mt19937 build_rng = CaseRng(kSeed, 0);
  const std::vector<TestMesh> meshes = mesh_test::AllKinds(build_rng);
  Failures failures;
  for (size_t mi = 0; mi < meshes.size(); ++mi) {
    const MeshShape mesh = MeshShape::Build(meshes[mi].view());
    for (int i = 0; i < 2000; ++i) {
      std::mt19937 rng = CaseRng(kSeed + 3, mi * 100000 + static_cast<uint64_t>(i));
      const ScaledPose pose = RandomMeshPose(rng);
      const char* kind = "";
      const Ray ray = RandomRay(rng, meshes[mi], pose, &kind);
      std::vector<std::string> answers;
      for (SimdLevel level : levels) {
        SetSimdLevel(level);
        MeshHit h;
        std::string a;
        if (Raycast(mesh, pose, ray, &h)) {
          a = std::to_string(h.triangle) + " " + Str(h.distance) + " " + Str(h.point) + " " +
              Str(h.normal);
        }
        MeshHit s;
        if (SphereCast(mesh, pose, ray, 0.3f * pose.scale, &s)) {
          a += " | " + std::to_string(s.triangle) + " " + Str(s.distance);
        }
        answers.push_back(a);
      }
      for (size_t k = 1; k < answers.size(); ++k) {
        if (answers[k] != answers[0]) {
          failures.Add(std::string(SimdLevelName(levels[k])) + ": " + answers[k] + " vs " +
                           std::string(SimdLevelName(levels[0])) + ": " + answers[0],
                       meshes[mi].name + " ray " + std::to_string(i) + " " + Str(ray));
        }
      }
    }
  }
  EXPECT_EQ(failures.count(), 0) << "levels compared: " << levels.size();
}

// Lines through a closed mesh from outside, aimed through its vertices and edge points at an
// interior point, cross it exactly twice: a crossing at a shared edge or vertex counted twice or
// not at all would show in the all-hits count.
TEST(MeshRaycast, RaysThroughSharedEdgesAndVerticesOfClosedMeshesHitOnceEach) {
  Failures failures;
  int64_t rays = 0;
  for (int variant = 0; variant < 3; ++variant) {
    TestMesh tm;
    if (variant == 0) {
      tm = mesh_test::ClosedSphere(5.0f, 3);
    } else {
      tm.name = variant == 1 ? "closed box" : "closed box far away";
      tm.AddBox({-3, -2, -1}, {4, 3, 2});
      if (variant == 2) tm.Translate({1e5f, 1e5f, -1e5f});
    }
    const MeshShape mesh = MeshShape::Build(tm.view());
    Vec3 centre{};
    for (const Vec3& v : tm.vertices) centre += v;
    centre = centre * (1.0f / static_cast<float>(tm.vertices.size()));
    for (int i = 0; i < 5000; ++i) {
      std::mt19937 rng = CaseRng(kSeed + 4, static_cast<uint64_t>(variant * 100000 + i));
      const Triangle t =
          tm.triangle(static_cast<uint32_t>(oracle::Index(rng, tm.triangle_count())));
      const double s = oracle::Index(rng, 3) == 0 ? 0.0 : oracle::Uniform(rng, 0, 1);
      const Vec3 aim = oracle::ToFloat(oracle::ToDouble(t.a) +
                                       (oracle::ToDouble(t.b) - oracle::ToDouble(t.a)) * s);
      const Vec3 inside = centre + oracle::RandomUnit(rng) * 0.5f;
      const Vec3 dir = Normalize(inside - aim);
      const ScaledPose pose;
      const Ray ray{aim - dir * 30.0f, dir, 100.0f};
      int count = 0;
      RaycastAll(mesh, pose, ray, [&](const MeshHit&) {
        ++count;
        return ray.max_distance;
      });
      ++rays;
      if (count != 2) {
        failures.Add("hits " + std::to_string(count) + ", expected 2", tm.name + " " + Str(ray));
      }
    }
    // Axis-aligned rays through the faces' shared diagonals (exact floats on the edge).
    if (variant == 1) {
      for (float u : {-2.0f, -1.0f, 0.0f, 0.5f, 1.0f, 2.5f}) {
        const Ray ray{{u, u * (5.0f / 7.0f), -10.0f}, {0, 0, 1}, 100.0f};
        int count = 0;
        RaycastAll(mesh, ScaledPose{}, ray, [&](const MeshHit&) {
          ++count;
          return ray.max_distance;
        });
        EXPECT_EQ(count, 2) << Str(ray);
      }
    }
  }
  EXPECT_EQ(failures.count(), 0) << "of " << rays << " rays, seed " << kSeed + 4;
}

TEST(MeshRaycast, TiesGoToTheLowestTriangleIndex) {
  TestMesh tm;
  tm.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  // Ten copies of one triangle, and the same triangle reversed; many unrelated ones between.
  for (int i = 0; i < 200; ++i) {
    const float z = 5.0f + static_cast<float>(i);
    tm.AddTriangle({0, 0, z}, {1, 0, z}, {0, 1, z});
  }
  for (int i = 0; i < 10; ++i) tm.indices.insert(tm.indices.end(), {0, 1, 2});
  tm.indices.insert(tm.indices.end(), {0, 2, 1});
  const MeshShape mesh = MeshShape::Build(tm.view());
  MeshHit h;
  ASSERT_TRUE(Raycast(mesh, ScaledPose{}, Ray{{0.2f, 0.2f, -1}, {0, 0, 1}, 100}, &h));
  EXPECT_EQ(h.triangle, 200u);
  EXPECT_EQ(h.distance, 1.0f);
  ASSERT_TRUE(Raycast(mesh, ScaledPose{}, Ray{{0.2f, 0.2f, 2}, {0, 0, -1}, 100}, &h));
  EXPECT_EQ(h.triangle, 200u);
  int count = 0;
  RaycastAll(mesh, ScaledPose{}, Ray{{0.2f, 0.2f, -1}, {0, 0, 1}, 3}, [&](const MeshHit&) {
    ++count;
    return 3.0f;
  });
  EXPECT_EQ(count, 11);
}

TEST(MeshRaycast, DegenerateTrianglesAreNeverHitByRays) {
  TestMesh tm;
  tm.vertices = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {0, 0, 1}};
  tm.indices = {0, 1, 2, 0, 0, 0, 3, 3, 0};  // collinear, a point, a segment
  const MeshShape mesh = MeshShape::Build(tm.view());
  EXPECT_EQ(mesh.degenerate_count(), 3u);
  MeshHit h;
  for (const Ray& r : {Ray{{0.5f, 1, 0}, {0, -1, 0}, 10}, Ray{{0, 1, 0}, {0, -1, 0}, 10},
                       Ray{{0, 1, 0.5f}, {0, -1, 0}, 10}, Ray{{0.5f, 0, -1}, {0, 0, 1}, 10}}) {
    EXPECT_FALSE(Raycast(mesh, ScaledPose{}, r, &h)) << Str(r);
  }
  // A ball touches them.
  EXPECT_TRUE(SphereCast(mesh, ScaledPose{}, Ray{{0.5f, 1, 0}, {0, -1, 0}, 10}, 0.1f, &h));
  EXPECT_NEAR(h.distance, 0.9f, 1e-6f);
}

TEST(MeshRaycast, PoseAndScaleMapDistancesPointsAndNormals) {
  TestMesh tm;
  tm.AddTriangle({-1, -1, 0}, {1, -1, 0}, {-1, 1, 0});
  const MeshShape mesh = MeshShape::Build(tm.view());
  const Quat q = QuatFromAxisAngle({1, 0, 0}, -1.5707963f);  // local +z to world +y
  const ScaledPose pose{Pose{q, {10, 20, 30}}, 2.0f};
  MeshHit h;
  ASSERT_TRUE(Raycast(mesh, pose, Ray{{9, 25, 30}, {0, -1, 0}, 10}, &h));
  EXPECT_NEAR(h.distance, 5.0f, 1e-5f);
  EXPECT_NEAR(h.point.y, 20.0f, 1e-4f);
  EXPECT_NEAR(h.normal.y, 1.0f, 1e-6f);
  EXPECT_FALSE(h.back_face);
  // Beyond the scaled triangle (local x = -1.5 when scaled by 2: world x = 7).
  EXPECT_FALSE(Raycast(mesh, pose, Ray{{7.5f, 25, 30}, {0, -1, 0}, 10}, &h));
  EXPECT_TRUE(Raycast(mesh, pose, Ray{{8.5f, 25, 30}, {0, -1, 0}, 10}, &h));
  // The same from below: the back.
  ASSERT_TRUE(Raycast(mesh, pose, Ray{{9, 15, 30}, {0, 1, 0}, 10}, &h));
  EXPECT_TRUE(h.back_face);
  EXPECT_NEAR(h.normal.y, -1.0f, 1e-6f);
  // max_distance is inclusive and in world units (without a rotation, whose float quaternion
  // moves the local ray by an ulp, the local distance is exact).
  const ScaledPose straight{Pose{Quat::Identity(), {10, 20, 30}}, 2.0f};
  EXPECT_TRUE(Raycast(mesh, straight, Ray{{9, 19, 35}, {0, 0, -1}, 5.0f}, &h));
  EXPECT_EQ(h.distance, 5.0f);
  EXPECT_FALSE(
      Raycast(mesh, straight, Ray{{9, 19, 35}, {0, 0, -1}, std::nextafter(5.0f, 0.0f)}, &h));
}

TEST(MeshRaycast, AnEmptyMeshMissesEverything) {
  const MeshShape mesh;
  MeshHit h;
  EXPECT_FALSE(Raycast(mesh, ScaledPose{}, Ray{{0, 0, 0}, {1, 0, 0}, 10}, &h));
  EXPECT_FALSE(SphereCast(mesh, ScaledPose{}, Ray{{0, 0, 0}, {1, 0, 0}, 10}, 1.0f, &h));
  EXPECT_FALSE(Overlap(mesh, ScaledPose{}, Sphere{1.0f}, Pose{}));
}

}  // namespace
}  // namespace collide
