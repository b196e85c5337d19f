// Distances to a triangle (src/geom/triangle_distance.h) against the double-precision oracle of
// tests/geom/triangle_oracle.h (barycentric projection plus edges; golden section over a
// segment), on random triangles of every kind (ordinary, slivers, collinear, points), query
// points and segments near and far, at the origin and 1e5 away.

#include "geom/triangle_distance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "geom/oracle.h"
#include "geom/oracle_test_util.h"
#include "geom/triangle_oracle.h"

namespace collide {
namespace {

using oracle::CaseRng;
using oracle::DVec3;
using oracle::Failures;
using oracle::Str;

constexpr uint32_t kSeed = 0x7A1A0002;

TEST(ClosestPointOnTriangle, FaceEdgeAndVertexRegions) {
  const Triangle t{{0, 0, 0}, {2, 0, 0}, {0, 2, 0}};
  EXPECT_EQ(ClosestPointOnTriangle({0.5f, 0.5f, 3}, t), (Vec3{0.5f, 0.5f, 0}));
  EXPECT_EQ(ClosestPointOnTriangle({1, -1, -1}, t), (Vec3{1, 0, 0}));
  EXPECT_EQ(ClosestPointOnTriangle({-1, -1, 0}, t), (Vec3{0, 0, 0}));
  EXPECT_EQ(ClosestPointOnTriangle({3, -0.5f, 0}, t), (Vec3{2, 0, 0}));
  // Zero area: a segment, and a point.
  const Triangle seg{{0, 0, 0}, {2, 0, 0}, {1, 0, 0}};
  EXPECT_EQ(ClosestPointOnTriangle({1.5f, 1, 0}, seg), (Vec3{1.5f, 0, 0}));
  const Triangle pt{{1, 2, 3}, {1, 2, 3}, {1, 2, 3}};
  EXPECT_EQ(ClosestPointOnTriangle({0, 0, 0}, pt), (Vec3{1, 2, 3}));
}

TEST(ClosestSegmentTriangle, CrossingTouchingAndApart) {
  const Triangle t{{0, 0, 0}, {2, 0, 0}, {0, 2, 0}};
  SegmentTrianglePoints p = ClosestSegmentTriangle({0.5f, 0.5f, -1}, {0.5f, 0.5f, 1}, t);
  EXPECT_TRUE(p.intersects);
  EXPECT_EQ(p.distance_squared, 0.0f);
  p = ClosestSegmentTriangle({3, 3, 1}, {-3, 3, 1}, t);
  EXPECT_FALSE(p.intersects);
  // The nearest triangle point is the corner (0, 2, 0): 1 away in y and 1 in z.
  EXPECT_NEAR(std::sqrt(p.distance_squared), std::sqrt(2.0), 1e-6);
  // In the plane, through the triangle.
  p = ClosestSegmentTriangle({-1, 0.5f, 0}, {3, 0.5f, 0}, t);
  EXPECT_TRUE(p.intersects);
}

TEST(ClosestPointOnTriangleOracle, RandomPointsAgreeWithTheBarycentricOracle) {
  Failures failures;
  oracle::ErrorStats stats;
  int64_t cases = 0;
  for (int i = 0; i < 200000; ++i) {
    std::mt19937 rng = CaseRng(kSeed, static_cast<uint64_t>(i));
    const char* kind = "";
    const double scale = oracle::LogUniform(rng, 0.01, 100.0);
    Triangle t = oracle::RandomTriangle(rng, scale, &kind);
    const bool far = oracle::Chance(rng, 0.2);
    if (far && scale < 2.0) continue;  // 256 float ulps at 1e5 (oracle::MinSizeAt)
    const Vec3 offset = far ? Vec3{1e5f, -1e5f, 5e4f} : Vec3{};
    t = {t.a + offset, t.b + offset, t.c + offset};
    const double reach = scale * oracle::LogUniform(rng, 1e-4, 10.0);
    const Vec3 p = t.a + oracle::RandomUnit(rng) * static_cast<float>(reach) +
                   (oracle::Chance(rng, 0.5) ? (t.b - t.a) * 0.3f : Vec3{});
    const Vec3 q = ClosestPointOnTriangle(p, t);
    const oracle::DTriangle dt = oracle::ToDouble(t);
    DVec3 nearest;
    const double want = oracle::PointTriangleDistance(oracle::ToDouble(p), dt, &nearest);
    const double got = oracle::Length(oracle::ToDouble(q) - oracle::ToDouble(p));
    const double on = oracle::PointTriangleDistance(oracle::ToDouble(q), dt);
    const double magnitude = oracle::MaxAbs(oracle::ToDouble(p)) + scale;
    const double tol = oracle::PositionTolerance(magnitude, scale + reach);
    ++cases;
    stats.Add(std::fabs(got - want), tol);
    const std::string context = std::string(kind) + " case " + std::to_string(i) + " p " + Str(p) +
                                " tri " + Str(t.a) + " " + Str(t.b) + " " + Str(t.c);
    if (std::fabs(got - want) > tol) {
      failures.Add("distance " + Str(got) + ", oracle " + Str(want), context);
    } else if (on > tol) {
      failures.Add("the point is " + Str(on) + " off the triangle", context);
    }
  }
  EXPECT_EQ(failures.count(), 0) << "seed " << kSeed;
  oracle::PrintSummary("ClosestPointOnTriangle", cases, stats);
}

TEST(ClosestSegmentTriangleOracle, RandomSegmentsAgreeWithGoldenSection) {
  Failures failures;
  oracle::ErrorStats stats;
  int64_t cases = 0;
  for (int i = 0; i < 50000; ++i) {
    std::mt19937 rng = CaseRng(kSeed + 1, static_cast<uint64_t>(i));
    const char* kind = "";
    const double scale = oracle::LogUniform(rng, 0.01, 100.0);
    Triangle t = oracle::RandomTriangle(rng, scale, &kind);
    const bool far = oracle::Chance(rng, 0.2);
    if (far && scale < 2.0) continue;  // 256 float ulps at 1e5 (oracle::MinSizeAt)
    const Vec3 offset = far ? Vec3{-1e5f, 1e5f, 1e5f} : Vec3{};
    t = {t.a + offset, t.b + offset, t.c + offset};
    const Vec3 centre = t.a + oracle::RandomUnit(rng) * static_cast<float>(scale);
    const Vec3 half =
        oracle::RandomUnit(rng) * static_cast<float>(oracle::Chance(rng, 0.1) ? 0.0 : scale * 1.5);
    const Vec3 p0 = centre - half, p1 = centre + half;
    const SegmentTrianglePoints got = ClosestSegmentTriangle(p0, p1, t);
    const oracle::DTriangle dt = oracle::ToDouble(t);
    const double want =
        oracle::SegmentTriangleDistance(oracle::ToDouble(p0), oracle::ToDouble(p1), dt);
    const double d = std::sqrt(static_cast<double>(got.distance_squared));
    const double magnitude = oracle::MaxAbs(oracle::ToDouble(centre)) + 2.0 * scale;
    const double tol = oracle::PositionTolerance(magnitude, 4.0 * scale);
    ++cases;
    stats.Add(std::fabs(d - want), tol);
    const std::string context = std::string(kind) + " case " + std::to_string(i) + " seg " +
                                Str(p0) + " " + Str(p1) + " tri " + Str(t.a) + " " + Str(t.b) +
                                " " + Str(t.c);
    // The points: on the triangle, on the segment, and as far apart as reported.
    const double off_tri = oracle::PointTriangleDistance(oracle::ToDouble(got.on_triangle), dt);
    const double pair =
        oracle::Length(oracle::ToDouble(got.on_segment) - oracle::ToDouble(got.on_triangle));
    if (std::fabs(d - want) > tol) {
      failures.Add("distance " + Str(d) + ", oracle " + Str(want), context);
    } else if (off_tri > tol || std::fabs(pair - d) > 3.0 * tol) {
      // (Each point is rounded once more than the distance, when moved back from the triangle's
      // frame: up to half an ulp per coordinate.)
      failures.Add(
          "points inconsistent: off the triangle by " + Str(off_tri) + ", " + Str(pair) + " apart",
          context);
    }
  }
  EXPECT_EQ(failures.count(), 0) << "seed " << kSeed + 1;
  oracle::PrintSummary("ClosestSegmentTriangle", cases, stats);
}

}  // namespace
}  // namespace collide
