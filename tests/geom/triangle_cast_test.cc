// Sphere casts against one triangle (src/geom/triangle_cast.h) against the oracle of
// tests/geom/triangle_oracle.h: the first root of phi(t) = dist(o + t d, T) - r, found by golden
// section and bisection on the exact point-triangle distance (a conservative advancement's
// answer). Random triangles of every kind, casts aimed at faces, edges and vertices or anywhere,
// grazing ones included, at the origin and 1e5 away; plus hand-made face, edge and vertex
// contacts.

#include "geom/triangle_cast.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "geom/oracle.h"
#include "geom/oracle_test_util.h"
#include "geom/triangle_distance.h"
#include "geom/triangle_oracle.h"

namespace collide {
namespace {

using oracle::CaseRng;
using oracle::DVec3;
using oracle::Failures;
using oracle::Str;

constexpr uint32_t kSeed = 0x7A1A0003;

TEST(SphereCastTriangle, FaceEdgeAndVertexContacts) {
  const Triangle t{{0, 0, 0}, {2, 0, 0}, {0, 2, 0}};
  TriangleContact c;
  // Face, from either side.
  ASSERT_TRUE(SphereCastTriangle({0.5f, 0.5f, 5}, {0, 0, -1}, 1.0f, 10.0f, t, &c));
  EXPECT_FLOAT_EQ(c.t, 4.0f);
  EXPECT_EQ(c.normal, (Vec3{0, 0, 1}));
  ASSERT_TRUE(SphereCastTriangle({0.5f, 0.5f, -5}, {0, 0, 1}, 1.0f, 10.0f, t, &c));
  EXPECT_FLOAT_EQ(c.t, 4.0f);
  EXPECT_EQ(c.normal, (Vec3{0, 0, -1}));
  // Edge: sliding along -y towards the edge y = 0 in the plane.
  ASSERT_TRUE(SphereCastTriangle({1, -5, 0}, {0, 1, 0}, 1.0f, 10.0f, t, &c));
  EXPECT_FLOAT_EQ(c.t, 4.0f);
  EXPECT_NEAR(c.point.y, 0.0f, 1e-6f);
  EXPECT_NEAR(c.normal.y, -1.0f, 1e-6f);
  // Vertex: along the diagonal towards (0, 0, 0) from below-left.
  const Vec3 d = Normalize(Vec3{1, 1, 0});
  ASSERT_TRUE(SphereCastTriangle(Vec3{-5, -5, 0}, d, 1.0f, 20.0f, t, &c));
  EXPECT_NEAR(c.t, 5.0f * std::sqrt(2.0f) - 1.0f, 1e-5f);
  EXPECT_NEAR(Length(c.point), 0.0f, 1e-6f);
  // Moving away, and too short.
  EXPECT_FALSE(SphereCastTriangle({0.5f, 0.5f, 5}, {0, 0, 1}, 1.0f, 10.0f, t, &c));
  EXPECT_FALSE(SphereCastTriangle({0.5f, 0.5f, 5}, {0, 0, -1}, 1.0f, 3.9f, t, &c));
  // A degenerate triangle (a segment along x) is touched as the segment.
  const Triangle seg{{0, 0, 0}, {2, 0, 0}, {1, 0, 0}};
  ASSERT_TRUE(SphereCastTriangle({1, 0, 5}, {0, 0, -1}, 1.0f, 10.0f, seg, &c));
  EXPECT_FLOAT_EQ(c.t, 4.0f);
}

TEST(SphereCastTriangleOracle, RandomCastsAgreeWithBisectionOnTheDistance) {
  Failures failures;
  oracle::ErrorStats gap_stats;
  int64_t cases = 0, hits = 0, near = 0;
  for (int i = 0; i < 100000; ++i) {
    std::mt19937 rng = CaseRng(kSeed, static_cast<uint64_t>(i));
    const char* kind = "";
    const double scale = oracle::LogUniform(rng, 0.01, 100.0);
    Triangle t = oracle::RandomTriangle(rng, scale, &kind);
    const bool far = oracle::Chance(rng, 0.2);
    const Vec3 offset = far ? Vec3{1e5f, 1e5f, -1e5f} : Vec3{};
    t = {t.a + offset, t.b + offset, t.c + offset};
    const float radius = static_cast<float>(
        oracle::LogUniform(rng, far ? std::fmax(0.05, scale * 0.01) : scale * 1e-3, scale * 3));
    // Aim at a point of the triangle (a vertex, an edge, inside) or nearby.
    double u = oracle::Uniform(rng, 0, 1), v = oracle::Uniform(rng, 0, 1);
    if (u + v > 1) u = 1 - u, v = 1 - v;
    const int aim_kind = oracle::Index(rng, 4);
    if (aim_kind == 1) v = 0;
    if (aim_kind == 2) u = 0, v = 0;
    const oracle::DTriangle dt = oracle::ToDouble(t);
    DVec3 aim = dt.a + (dt.b - dt.a) * u + (dt.c - dt.a) * v;
    if (aim_kind == 3) {
      aim = aim + oracle::ToDouble(oracle::RandomUnit(rng)) * (radius * oracle::Uniform(rng, 0, 2));
    }
    const Vec3 dir = oracle::RandomUnit(rng);
    const double back = radius + oracle::LogUniform(rng, 1e-3, 10.0) * scale;
    const Vec3 origin = oracle::ToFloat(aim - oracle::ToDouble(dir) * back);
    const float max_t = static_cast<float>(oracle::Chance(rng, 0.1) ? back * 0.9 : back * 5);
    const DVec3 o = oracle::ToDouble(origin), dd = oracle::ToDouble(dir);
    const oracle::TriangleCastOracle want = oracle::SphereCastByDistance(o, dd, max_t, radius, dt);
    const double magnitude = oracle::MaxAbs(o) + scale + radius;
    const double tol = oracle::PositionTolerance(magnitude, 4.0 * (scale + radius + back));
    if (want.start_gap <= 4.0 * tol) continue;  // the caller's case (start overlapping)
    ++cases;
    const std::string context = std::string(kind) + " case " + std::to_string(i) + " tri " +
                                Str(t.a) + " " + Str(t.b) + " " + Str(t.c) + " origin " +
                                Str(origin) + " dir " + Str(dir) + " radius " + Str(radius) +
                                " max " + Str(max_t);
    TriangleContact c;
    const bool got = SphereCastTriangle(origin, dir, radius, max_t, t, &c);
    // Near-boundary: a graze (the minimum gap within tolerance of 0) or a contact within
    // tolerance of max_t.
    auto phi = [&](double s) { return oracle::PointTriangleDistance(o + dd * s, dt) - radius; };
    const bool boundary = std::fabs(want.min_gap) <= 4.0 * tol ||
                          (want.hits && std::fabs(want.t_hit - max_t) <= 1e-3 * scale) ||
                          std::fabs(phi(max_t)) <= 4.0 * tol;
    if (got != want.hits) {
      if (boundary) {
        ++near;
        continue;
      }
      failures.Add(
          std::string("hit ") + (got ? "yes" : "no") + ", oracle " +
              (want.hits ? "yes at " + Str(want.t_hit) : "no (min gap " + Str(want.min_gap) + ")"),
          context);
      continue;
    }
    if (!got) continue;
    ++hits;
    // The contact: the centre then is `radius` from the triangle (phi = 0 within tolerance);
    // nothing before it is within reach (phi > 0 a tolerance earlier, unless the approach is so
    // shallow that phi is flat); the point lies on the triangle and the normal points from it to
    // the centre.
    const double gap = std::fabs(phi(c.t));
    gap_stats.Add(gap, 4.0 * tol);
    const DVec3 centre = o + dd * static_cast<double>(c.t);
    const double on = oracle::PointTriangleDistance(oracle::ToDouble(c.point), dt);
    const DVec3 to_centre = oracle::Normalized(centre - oracle::ToDouble(c.point));
    const double normal_err = oracle::Length(to_centre - oracle::ToDouble(c.normal));
    if (gap > 4.0 * tol) {
      failures.Add(
          "contact gap " + Str(phi(c.t)) + " at t " + Str(c.t) + ", oracle t " + Str(want.t_hit),
          context);
    } else if (c.t > want.t_hit + 1e-3 * scale && phi(want.t_hit + 1e-3 * scale) < -4.0 * tol) {
      failures.Add("late contact " + Str(c.t) + ", oracle " + Str(want.t_hit), context);
    } else if (on > 4.0 * tol) {
      failures.Add("contact point off the triangle by " + Str(on), context);
    } else if (normal_err > 1e-3 && radius > 1e3 * tol) {
      failures.Add("normal " + Str(c.normal) + " error " + Str(normal_err), context);
    }
  }
  EXPECT_EQ(failures.count(), 0) << "seed " << kSeed;
  EXPECT_GT(hits, cases / 10);
  std::printf("sphere-cast-triangle: %lld cases, %lld hits, %lld near-boundary disagreements\n",
              static_cast<long long>(cases), static_cast<long long>(hits),
              static_cast<long long>(near));
  oracle::PrintSummary("SphereCastTriangle.gap", cases, gap_stats);
}

}  // namespace
}  // namespace collide
