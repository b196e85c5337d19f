// The watertight ray-triangle test (src/geom/triangle.h): hand-made edge cases (shared edges and
// vertices, both windings, the inclusive max distance, parallel rays), closed meshes crossed
// through their edges and vertices (every line through a closed surface crosses it an even number
// of times, so a crossing counted twice or not at all shows), and random rays against the
// double-precision plane + barycentric oracle of tests/geom/triangle_oracle.h.

#include "geom/triangle.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

#include "geom/oracle.h"
#include "geom/oracle_test_util.h"
#include "geom/triangle_oracle.h"

namespace collide {
namespace {

using oracle::CaseRng;
using oracle::DVec3;
using oracle::Failures;
using oracle::Str;

constexpr uint32_t kSeed = 0x7A1A0001;

// The number of triangles of `tris` the ray hits within max_distance.
int CountHits(const std::vector<Triangle>& tris, const Vec3& origin, const Vec3& dir,
              float max_distance) {
  const WatertightRay r = MakeWatertightRay(origin, dir);
  int hits = 0;
  for (const Triangle& t : tris) {
    float d;
    if (!IsDegenerate(t.a, t.b, t.c) && RayTriangle(r, t.a, t.b, t.c, max_distance, &d)) ++hits;
  }
  return hits;
}

std::vector<Triangle> UnitSquare(bool flip_second) {
  const Vec3 p00{0, 0, 0}, p10{1, 0, 0}, p11{1, 1, 0}, p01{0, 1, 0};
  std::vector<Triangle> tris = {{p00, p10, p11}, {p00, p11, p01}};
  if (flip_second) std::swap(tris[1].b, tris[1].c);
  return tris;
}

TEST(RayTriangle, HitsTheFrontAndTheBackAtTheSameDistance) {
  const Triangle t{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  for (float side : {1.0f, -1.0f}) {
    const WatertightRay r = MakeWatertightRay({0.25f, 0.25f, 3.0f * side}, {0, 0, -side});
    float d = -1.0f, det = 0.0f;
    ASSERT_TRUE(RayTriangle(r, t.a, t.b, t.c, 10.0f, &d, &det)) << side;
    EXPECT_EQ(d, 3.0f);
    // Counter-clockwise seen from +z: the front; from -z: the back.
    EXPECT_EQ(det > 0.0f, side > 0.0f);
  }
}

TEST(RayTriangle, MaxDistanceIsInclusive) {
  const Triangle t{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  const WatertightRay r = MakeWatertightRay({0.25f, 0.25f, 2.0f}, {0, 0, -1});
  float d;
  EXPECT_TRUE(RayTriangle(r, t.a, t.b, t.c, 2.0f, &d));
  EXPECT_FALSE(RayTriangle(r, t.a, t.b, t.c, std::nextafter(2.0f, 0.0f), &d));
  EXPECT_FALSE(RayTriangle(r, t.a, t.b, t.c, 0.0f, &d));
}

TEST(RayTriangle, BehindTheOriginIsAMiss) {
  const Triangle t{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  const WatertightRay r = MakeWatertightRay({0.25f, 0.25f, 2.0f}, {0, 0, 1});
  float d;
  EXPECT_FALSE(RayTriangle(r, t.a, t.b, t.c, 100.0f, &d));
}

TEST(RayTriangle, ParallelRaysMissEvenInThePlane) {
  const Triangle t{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  float d;
  for (const Vec3& o : {Vec3{-1, 0.25f, 0}, Vec3{-1, 0.25f, 0.5f}, Vec3{0.1f, 0.1f, 0}}) {
    const WatertightRay r = MakeWatertightRay(o, {1, 0, 0});
    EXPECT_FALSE(RayTriangle(r, t.a, t.b, t.c, 100.0f, &d)) << Str(o);
  }
}

TEST(RayTriangle, AnAxisRayThroughASharedDiagonalHitsExactlyOneTriangle) {
  // The diagonal (0,0)-(1,1) holds every (s, s): exact floats on the shared edge.
  for (bool flip : {false, true}) {
    const std::vector<Triangle> tris = UnitSquare(flip);
    for (float s : {0.5f, 0.25f, 0.75f, 0.1f, 1.0f / 3.0f, 0.999f, 1e-3f}) {
      for (float side : {1.0f, -1.0f}) {
        EXPECT_EQ(CountHits(tris, {s, s, side}, {0, 0, -side}, 10.0f), 1)
            << "s=" << s << " side=" << side << " flip=" << flip;
      }
    }
  }
}

TEST(RayTriangle, AnAxisRayThroughASharedVertexOfAFanHitsExactlyOneTriangle) {
  // Fans of k triangles about a centre vertex, planar and as a shallow cone, both windings.
  for (int k : {3, 4, 5, 6, 8, 12}) {
    for (float lift : {0.0f, 0.5f, -0.25f}) {
      for (bool flip : {false, true}) {
        std::vector<Triangle> fan;
        const Vec3 centre{0.25f, -0.5f, lift};
        for (int i = 0; i < k; ++i) {
          const double a0 = 2.0 * std::numbers::pi * i / k;
          const double a1 = 2.0 * std::numbers::pi * (i + 1) / k;
          Triangle t{centre,
                     {static_cast<float>(0.25 + std::cos(a0)),
                      static_cast<float>(-0.5 + std::sin(a0)), 0.0f},
                     {static_cast<float>(0.25 + std::cos(a1)),
                      static_cast<float>(-0.5 + std::sin(a1)), 0.0f}};
          if (flip && i % 2 == 1) std::swap(t.b, t.c);
          fan.push_back(t);
        }
        for (float side : {1.0f, -1.0f}) {
          EXPECT_EQ(CountHits(fan, {centre.x, centre.y, 5.0f * side}, {0, 0, -side}, 20.0f), 1)
              << "k=" << k << " lift=" << lift << " flip=" << flip << " side=" << side;
        }
      }
    }
  }
}

// A closed triangulated cube of half size `h` about `c`, the diagonals of its faces in both
// directions (alternating), vertices rotated by `q`.
std::vector<Triangle> ClosedCube(const Vec3& c, float h, const Quat& q) {
  Vec3 v[8];
  for (int i = 0; i < 8; ++i) {
    const Vec3 local{(i & 1) ? h : -h, (i & 2) ? h : -h, (i & 4) ? h : -h};
    v[i] = c + Rotate(q, local);
  }
  const int quads[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                           {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  std::vector<Triangle> tris;
  for (int f = 0; f < 6; ++f) {
    const int* qd = quads[f];
    if (f % 2 == 0) {
      tris.push_back({v[qd[0]], v[qd[1]], v[qd[2]]});
      tris.push_back({v[qd[0]], v[qd[2]], v[qd[3]]});
    } else {
      tris.push_back({v[qd[0]], v[qd[1]], v[qd[3]]});
      tris.push_back({v[qd[1]], v[qd[2]], v[qd[3]]});
    }
  }
  return tris;
}

// A closed sphere: an octahedron subdivided `levels` times, projected to radius `r` about `c`.
std::vector<Triangle> ClosedSphere(const Vec3& c, float r, int levels) {
  std::vector<std::array<DVec3, 3>> tris;
  const DVec3 px{1, 0, 0}, nx{-1, 0, 0}, py{0, 1, 0}, ny{0, -1, 0}, pz{0, 0, 1}, nz{0, 0, -1};
  tris = {{px, py, pz}, {py, nx, pz}, {nx, ny, pz}, {ny, px, pz},
          {py, px, nz}, {nx, py, nz}, {ny, nx, nz}, {px, ny, nz}};
  for (int l = 0; l < levels; ++l) {
    std::vector<std::array<DVec3, 3>> next;
    for (const auto& t : tris) {
      const DVec3 ab = oracle::Normalized(t[0] + t[1]);
      const DVec3 bc = oracle::Normalized(t[1] + t[2]);
      const DVec3 ca = oracle::Normalized(t[2] + t[0]);
      next.push_back({t[0], ab, ca});
      next.push_back({ab, t[1], bc});
      next.push_back({ca, bc, t[2]});
      next.push_back({ab, bc, ca});
    }
    tris.swap(next);
  }
  // Vertices rounded once, so shared vertices are the same floats in every triangle.
  std::vector<Triangle> out;
  for (const auto& t : tris) {
    Triangle f;
    Vec3* corners[3] = {&f.a, &f.b, &f.c};
    for (int i = 0; i < 3; ++i) *corners[i] = c + oracle::ToFloat(t[i] * r);
    out.push_back(f);
  }
  return out;
}

// Lines through closed surfaces cross them an even number of times (a ray that starts outside
// and goes far beyond); aimed through a vertex or an edge point towards an interior point, the
// line crosses the surface transversally there, so a convex surface is hit exactly twice.
TEST(RayTriangle, LinesThroughTheVerticesAndEdgesOfClosedMeshesHitExactlyTwice) {
  Failures failures;
  int64_t rays = 0;
  for (int mesh = 0; mesh < 40; ++mesh) {
    std::mt19937 rng = CaseRng(kSeed, static_cast<uint64_t>(mesh));
    const bool far = mesh % 4 == 3;
    const Vec3 centre = far ? Vec3{1e5f, -1e5f, 3e4f} : oracle::RandomUnit(rng) * 3.0f;
    const float size = static_cast<float>(oracle::LogUniform(rng, 0.05, 50.0));
    std::vector<Triangle> tris = mesh % 2 == 0
                                     ? ClosedCube(centre, size, oracle::RandomRotation(rng))
                                     : ClosedSphere(centre, size, 1 + mesh % 3);
    for (int i = 0; i < 400; ++i) {
      const Triangle& t = tris[oracle::Index(rng, static_cast<int>(tris.size()))];
      // A vertex, or a point of an edge (rounded: within an ulp of it).
      const double s = oracle::Index(rng, 3) == 0 ? 0.0 : oracle::Uniform(rng, 0.0, 1.0);
      const Vec3 aim = oracle::ToFloat(oracle::ToDouble(t.a) +
                                       (oracle::ToDouble(t.b) - oracle::ToDouble(t.a)) * s);
      // Towards an interior point near the centre.
      const Vec3 inside = centre + oracle::RandomUnit(rng) * (0.3f * size);
      const Vec3 dir = Normalize(inside - aim);
      const Vec3 origin = aim - dir * (4.0f * size);
      const int hits = CountHits(tris, origin, dir, 20.0f * size);
      ++rays;
      if (hits != 2) {
        failures.Add("hits " + std::to_string(hits) + ", expected 2",
                     "mesh " + std::to_string(mesh) + " ray " + std::to_string(i) + " origin " +
                         Str(origin) + " dir " + Str(dir));
      }
    }
  }
  EXPECT_EQ(failures.count(), 0) << "of " << rays << " rays (seed " << kSeed << ")";
}

// A staircase: a closed, non-convex solid (an extruded step profile), crossed through random
// vertices and edge points in random directions: every line crosses it an even number of times.
TEST(RayTriangle, LinesThroughAClosedStaircaseCrossItAnEvenNumberOfTimes) {
  // The profile in (x, y): steps of width 1 and height 0.5, extruded along z by 2. Every vertex
  // of a cap is a vertex of the profile and the other way round (no T-junction).
  const int steps = 5;
  auto height = [&](int column) { return 0.5f * static_cast<float>(steps - column); };
  std::vector<Vec3> profile;  // counter-clockwise
  for (int i = 0; i <= steps; ++i) profile.push_back({static_cast<float>(i), 0, 0});
  for (int i = steps; i >= 1; --i) {
    profile.push_back({static_cast<float>(i), height(i - 1), 0});
    profile.push_back({static_cast<float>(i - 1), height(i - 1), 0});
  }
  // (steps, 0) is followed by (steps, height(steps - 1)); (0, height(0)) closes back to (0, 0).
  std::vector<Triangle> tris;
  const size_t n = profile.size();
  const Vec3 depth{0, 0, 2};
  for (size_t i = 0; i < n; ++i) {
    const Vec3 a = profile[i], b = profile[(i + 1) % n];
    tris.push_back({a, b, b + depth});
    tris.push_back({a, b + depth, a + depth});
  }
  // The caps, column by column: column i is the polygon (i, 0), (i + 1, 0), (i + 1, h(i + 1)),
  // (i + 1, h(i)), (i, h(i)) (the last column a rectangle), fanned from (i, 0).
  for (int i = 0; i < steps; ++i) {
    const float x0 = static_cast<float>(i), x1 = static_cast<float>(i + 1);
    for (float z : {0.0f, 2.0f}) {
      const Vec3 a{x0, 0, z}, b{x1, 0, z}, top_left{x0, height(i), z}, top_right{x1, height(i), z};
      if (i + 1 < steps) {
        const Vec3 mid{x1, height(i + 1), z};
        tris.push_back({a, b, mid});
        tris.push_back({a, mid, top_right});
      } else {
        tris.push_back({a, b, top_right});
      }
      tris.push_back({a, top_right, top_left});
    }
  }
  Failures failures;
  std::mt19937 rng = CaseRng(kSeed, 1000);
  int64_t odd = 0;
  for (int i = 0; i < 20000; ++i) {
    const Triangle& t = tris[oracle::Index(rng, static_cast<int>(tris.size()))];
    const double s = oracle::Index(rng, 3) == 0 ? 0.0 : oracle::Uniform(rng, 0.0, 1.0);
    const Vec3 aim = oracle::ToFloat(oracle::ToDouble(t.a) +
                                     (oracle::ToDouble(t.b) - oracle::ToDouble(t.a)) * s);
    const Vec3 dir = oracle::RandomUnit(rng);
    const Vec3 origin = aim - dir * 20.0f;
    const int hits = CountHits(tris, origin, dir, 40.0f);
    if (hits % 2 != 0) {
      ++odd;
      failures.Add("odd hit count " + std::to_string(hits),
                   "ray " + std::to_string(i) + " origin " + Str(origin) + " dir " + Str(dir));
    }
  }
  EXPECT_EQ(odd, 0) << "seed " << kSeed;
}

TEST(RayTriangleOracle, RandomRaysAgreeWithThePlaneAndBarycentricOracle) {
  Failures failures;
  int64_t cases = 0, hits = 0, near = 0;
  oracle::ErrorStats distance_stats;
  for (int i = 0; i < 200000; ++i) {
    std::mt19937 rng = CaseRng(kSeed + 7, static_cast<uint64_t>(i));
    const char* kind = "";
    const double scale = oracle::LogUniform(rng, 0.01, 100.0);
    Triangle t = oracle::RandomTriangle(rng, scale, &kind);
    if (IsDegenerate(t.a, t.b, t.c)) continue;  // never hit (the mesh layer skips them)
    const bool far = oracle::Chance(rng, 0.2);
    const Vec3 offset = far ? Vec3{-1e5f, 5e4f, 1e5f} : Vec3{};
    t = {t.a + offset, t.b + offset, t.c + offset};
    // Aim at a point of the triangle (inside, on an edge or at a vertex) or anywhere near it.
    double u = oracle::Uniform(rng, 0, 1), v = oracle::Uniform(rng, 0, 1);
    if (u + v > 1) u = 1 - u, v = 1 - v;
    const int aim_kind = oracle::Index(rng, 5);
    if (aim_kind == 1) v = 0;           // on edge ab
    if (aim_kind == 2) u = 0, v = 0;    // vertex a
    if (aim_kind == 3) u = 1.2, v = 0;  // outside
    const DVec3 da = oracle::ToDouble(t.a), db = oracle::ToDouble(t.b), dc = oracle::ToDouble(t.c);
    DVec3 aim = da + (db - da) * u + (dc - da) * v;
    if (aim_kind == 4) aim = aim + oracle::ToDouble(oracle::RandomUnit(rng)) * scale;
    const Vec3 dir = oracle::RandomUnit(rng);
    const double back = oracle::LogUniform(rng, 1e-3, 10.0) * scale;
    const Vec3 origin = oracle::ToFloat(aim - oracle::ToDouble(dir) * back);
    const float max_distance =
        oracle::Chance(rng, 0.1) ? static_cast<float>(back) : static_cast<float>(100.0 * scale);
    const WatertightRay r = MakeWatertightRay(origin, dir);
    float d = -1.0f;
    const bool got = RayTriangle(r, t.a, t.b, t.c, max_distance, &d);
    const oracle::RayTriangleOracle want =
        oracle::RayTriangleByPlane(oracle::ToDouble(origin), oracle::ToDouble(dir), max_distance,
                                   oracle::DTriangle{da, db, dc});
    ++cases;
    // Tolerance: the sheared coordinates are a few roundings of values up to the magnitude of
    // the triangle relative to the origin; in the plane that error grows by 1 / cosine.
    const double magnitude = oracle::MaxAbs(oracle::ToDouble(origin)) + scale;
    const double local = scale + back;
    const double tol = oracle::PositionTolerance(magnitude, local);
    const double cosine = std::fmax(want.cosine, 1e-30);
    const bool boundary = std::fabs(want.margin) <= 4.0 * tol / cosine ||
                          std::fabs(want.t - max_distance) <= 4.0 * tol / cosine ||
                          std::fabs(want.t) <= 4.0 * tol / cosine || want.cosine < 1e-3;
    if (boundary) {
      ++near;
      continue;
    }
    const std::string context = std::string(kind) + " case " + std::to_string(i) + " tri " +
                                Str(t.a) + " " + Str(t.b) + " " + Str(t.c) + " origin " +
                                Str(origin) + " dir " + Str(dir) + " max " + Str(max_distance);
    if (got != want.hits) {
      failures.Add(std::string("hit ") + (got ? "yes" : "no") + ", oracle " +
                       (want.hits ? "yes" : "no") + " (t " + Str(want.t) + ", margin " +
                       Str(want.margin) + ")",
                   context);
      continue;
    }
    if (got) {
      ++hits;
      // The distance is a weighted mean of the vertices' distances along the ray, weighted by
      // the edge functions, whose rounding (~eps L^2 for vertices within L of the origin) is
      // relative to the projected area (|n| cosine, |n| twice the area): a sliver's distance is
      // ill-conditioned in every float formulation, by up to the triangle's extent H along the
      // ray times eps L^2 / (|n| cosine).
      const DVec3 o = oracle::ToDouble(origin), dd = oracle::ToDouble(dir);
      const DVec3 rel[3] = {da - o, db - o, dc - o};
      double L = 0.0, zlo = 1e300, zhi = -1e300;
      for (const DVec3& p : rel) {
        L = std::fmax(L, oracle::Length(p));
        zlo = std::fmin(zlo, oracle::Dot(p, dd));
        zhi = std::fmax(zhi, oracle::Dot(p, dd));
      }
      const double area2 = oracle::Length(oracle::Cross(db - da, dc - da));
      const double err = std::fabs(d - want.t);
      const double t_tol =
          4.0 * tol / cosine + 32.0 * oracle::kFloatEps * L * L * (zhi - zlo) / (area2 * cosine);
      distance_stats.Add(err, t_tol);
      if (err > t_tol) {
        failures.Add("distance " + Str(d) + ", oracle " + Str(want.t), context);
      }
    }
  }
  EXPECT_EQ(failures.count(), 0) << "seed " << kSeed + 7;
  EXPECT_GT(hits, cases / 10);
  std::printf("ray-triangle: %lld cases, %lld clear hits, %lld near a boundary\n",
              static_cast<long long>(cases), static_cast<long long>(hits),
              static_cast<long long>(near));
  oracle::PrintSummary("RayTriangle.distance", cases, distance_stats);
}

}  // namespace
}  // namespace collide
