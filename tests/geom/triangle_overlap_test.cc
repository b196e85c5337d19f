// Overlap and penetration of spheres, boxes and capsules with one triangle
// (src/geom/triangle_overlap.h) against the oracle of tests/geom/triangle_oracle.h: the core's
// exact distance to the triangle (round shapes), the triangle clipped by the box (boxes), and the
// least over a dense sphere of directions of h_T(n) + h_S(-n) (the penetration depth). Random
// triangles of every kind and shapes placed across them, touching them, just apart, deep inside,
// at the origin and 1e5 away.

#include "geom/triangle_overlap.h"

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

constexpr uint32_t kSeed = 0x7A1A0004;

TEST(PenetrateTriangle, SphereOnEitherSideLeavesThroughItsSide) {
  const Triangle t{{-1, -1, 0}, {2, -1, 0}, {-1, 2, 0}};
  Penetration p;
  ASSERT_TRUE(PenetrateTriangle(Sphere{1.0f}, Pose{{}, {0, 0, 0.25f}}, t, &p));
  EXPECT_FLOAT_EQ(p.depth, 0.75f);
  EXPECT_EQ(p.normal, (Vec3{0, 0, 1}));
  ASSERT_TRUE(PenetrateTriangle(Sphere{1.0f}, Pose{{}, {0, 0, -0.25f}}, t, &p));
  EXPECT_EQ(p.normal, (Vec3{0, 0, -1}));
  // Centre on the triangle: the front normal, depth = radius.
  ASSERT_TRUE(PenetrateTriangle(Sphere{1.0f}, Pose{{}, {0, 0, 0}}, t, &p));
  EXPECT_FLOAT_EQ(p.depth, 1.0f);
  EXPECT_EQ(p.normal, (Vec3{0, 0, 1}));
  EXPECT_FALSE(PenetrateTriangle(Sphere{1.0f}, Pose{{}, {0, 0, 1.01f}}, t, &p));
  EXPECT_TRUE(OverlapTriangle(Sphere{1.0f}, Pose{{}, {0, 0, 1.0f}}, t));  // touching
}

TEST(PenetrateTriangle, BoxThroughATriangleLeavesAlongTheShortestAxis) {
  const Triangle t{{-5, -5, 0}, {5, -5, 0}, {-5, 5, 0}};
  Penetration p;
  // A box of half size 1 whose centre is 0.25 above the plane: out by 0.75 along +z (1.25 down).
  ASSERT_TRUE(PenetrateTriangle(Box{{1, 1, 1}}, Pose{{}, {-1, -1, 0.25f}}, t, &p));
  EXPECT_FLOAT_EQ(p.depth, 0.75f);
  EXPECT_EQ(p.normal, (Vec3{0, 0, 1}));
  EXPECT_NEAR(p.point.z, 0.0f, 1e-6f);
  EXPECT_FALSE(OverlapTriangle(Box{{1, 1, 1}}, Pose{{}, {-1, -1, 1.01f}}, t));
}

TEST(PenetrateTriangle, CapsuleAcrossTheTriangle) {
  const Triangle t{{-5, -5, 0}, {5, -5, 0}, {-5, 5, 0}};
  Penetration p;
  // Upright capsule (axis y) lying across the plane z = 0? Its axis is y: rotate it to z.
  const Quat to_z = QuatFromAxisAngle({1, 0, 0}, 1.5707963f);
  ASSERT_TRUE(PenetrateTriangle(Capsule{0.5f, 1.0f}, Pose{to_z, {-1, -1, 0.25f}}, t, &p));
  // The core runs z in [-0.75, 1.25]: up by 0.75 + 0.5.
  EXPECT_NEAR(p.depth, 1.25f, 1e-5f);
  EXPECT_NEAR(p.normal.z, 1.0f, 1e-6f);
}

// A random shape placed near the triangle: across it, touching it, apart by a little or a lot.
struct PairCase {
  Shape shape;
  Pose pose;
};
PairCase RandomPair(std::mt19937& rng, const Triangle& t, double scale, const Vec3& offset) {
  const ShapeType type = static_cast<ShapeType>(oracle::Index(rng, 3));
  Shape shape = oracle::RandomShape(rng, type);
  // Shapes about the triangle's size.
  const float k = static_cast<float>(scale / 30.0);
  if (type == ShapeType::kSphere) shape.sphere.radius = std::fmax(shape.sphere.radius * k, 1e-3f);
  if (type == ShapeType::kBox) shape.box.half_extents = shape.box.half_extents * k;
  if (type == ShapeType::kCapsule) {
    shape.capsule.radius = std::fmax(shape.capsule.radius * k, 1e-3f);
    shape.capsule.half_height *= k;
  }
  double u = oracle::Uniform(rng, 0, 1), v = oracle::Uniform(rng, 0, 1);
  if (u + v > 1) u = 1 - u, v = 1 - v;
  const oracle::DTriangle dt = oracle::ToDouble(t);
  const DVec3 p = dt.a + (dt.b - dt.a) * u + (dt.c - dt.a) * v;
  const DVec3 dir = oracle::ToDouble(oracle::RandomUnit(rng));
  const double reach = oracle::Uniform(rng, 0.0, 1.5) * scale;
  Pose pose{oracle::RandomRotation(rng), oracle::ToFloat(p + dir * reach)};
  (void)offset;
  return {shape, pose};
}

TEST(OverlapTriangleOracle, RandomShapesAgreeWithDistancesAndClipping) {
  Failures failures;
  int64_t cases = 0, overlaps = 0, near = 0;
  for (int i = 0; i < 100000; ++i) {
    std::mt19937 rng = CaseRng(kSeed, static_cast<uint64_t>(i));
    const char* kind = "";
    const double scale = oracle::LogUniform(rng, 0.01, 100.0);
    Triangle t = oracle::RandomTriangle(rng, scale, &kind);
    const bool far = oracle::Chance(rng, 0.2);
    const Vec3 offset = far ? Vec3{-1e5f, -1e5f, 1e5f} : Vec3{};
    if (far && scale < 1.0) continue;
    t = {t.a + offset, t.b + offset, t.c + offset};
    const PairCase pc = RandomPair(rng, t, scale, offset);
    const oracle::DTriangle dt = oracle::ToDouble(t);
    const double magnitude = oracle::MaxAbs(oracle::ToDouble(pc.pose.position)) + 2 * scale;
    const double tol = 8.0 * oracle::PositionTolerance(magnitude, 4.0 * scale);
    const bool got = OverlapTriangle(pc.shape, pc.pose, t);
    bool clearly_in, clearly_out;
    if (pc.shape.type == ShapeType::kBox) {
      const oracle::PosedShape box = oracle::MakePosed(pc.shape, pc.pose);
      clearly_in = oracle::BoxTriangleOverlapByClipping(box, dt, -tol);
      clearly_out = !oracle::BoxTriangleOverlapByClipping(box, dt, tol);
    } else {
      const double gap = oracle::RoundGap(pc.shape, pc.pose, dt);
      clearly_in = gap < -tol;
      clearly_out = gap > tol;
    }
    ++cases;
    if (!clearly_in && !clearly_out) {
      ++near;
      continue;
    }
    overlaps += got;
    if (got != clearly_in) {
      failures.Add(std::string("overlap ") + (got ? "yes" : "no") + ", oracle " +
                       (clearly_in ? "yes" : "no"),
                   std::string(kind) + " case " + std::to_string(i) + " shape " + Str(pc.shape) +
                       " pose " + Str(pc.pose) + " tri " + Str(t.a) + " " + Str(t.b) + " " +
                       Str(t.c));
    }
  }
  EXPECT_EQ(failures.count(), 0) << "seed " << kSeed;
  EXPECT_GT(overlaps, cases / 10);
  std::printf("overlap-triangle: %lld cases, %lld overlaps, %lld near the boundary\n",
              static_cast<long long>(cases), static_cast<long long>(overlaps),
              static_cast<long long>(near));
}

TEST(PenetrateTriangleOracle, DepthIsTheMinkowskiHullDepthAndAttainedAlongTheNormal) {
  Failures failures;
  oracle::ErrorStats depth_stats;
  int64_t cases = 0;
  for (int i = 0; i < 60000; ++i) {
    std::mt19937 rng = CaseRng(kSeed + 1, static_cast<uint64_t>(i));
    const char* kind = "";
    const double scale = oracle::LogUniform(rng, 0.01, 100.0);
    Triangle t = oracle::RandomTriangle(rng, scale, &kind);
    const bool far = oracle::Chance(rng, 0.2);
    if (far && scale < 2.0) continue;  // 256 float ulps at 1e5 (oracle::MinSizeAt)
    const Vec3 offset = far ? Vec3{5e4f, -1e5f, 1e5f} : Vec3{};
    t = {t.a + offset, t.b + offset, t.c + offset};
    const PairCase pc = RandomPair(rng, t, scale, offset);
    Penetration p;
    if (!PenetrateTriangle(pc.shape, pc.pose, t, &p)) continue;
    ++cases;
    const oracle::DTriangle dt = oracle::ToDouble(t);
    const oracle::PosedShape s = oracle::MakePosed(pc.shape, pc.pose);
    const double want = oracle::TrianglePenetrationByHull(dt, pc.shape, pc.pose);
    const DVec3 n = oracle::ToDouble(p.normal);
    // The separation needed along the reported direction: h_T(n) + h_S(-n).
    const double along = oracle::TriangleSupport(dt, n) + oracle::SupportValue(s, -n);
    const double magnitude = oracle::MaxAbs(oracle::ToDouble(pc.pose.position)) + 2 * scale;
    const double tol = 8.0 * oracle::PositionTolerance(magnitude, 4.0 * scale);
    const double err = std::fabs(p.depth - want);
    depth_stats.Add(err, tol);
    const std::string context = std::string(kind) + " case " + std::to_string(i) + " shape " +
                                Str(pc.shape) + " pose " + Str(pc.pose) + " tri " + Str(t.a) + " " +
                                Str(t.b) + " " + Str(t.c) + " depth " + Str(p.depth) + " normal " +
                                Str(p.normal);
    if (std::fabs(oracle::Length(n) - 1.0) > 1e-5) {
      failures.Add("normal not unit", context);
    } else if (err > tol) {
      failures.Add("depth " + Str(p.depth) + ", oracle " + Str(want), context);
    } else if (std::fabs(along - p.depth) > tol) {
      failures.Add("the reported direction needs " + Str(along) + ", not " + Str(p.depth), context);
    } else if (oracle::PointTriangleDistance(oracle::ToDouble(p.point), dt) > tol) {
      failures.Add("contact point off the triangle", context);
    } else {
      // The contact point is on the moved shape's surface.
      Pose moved = pc.pose;
      moved.position = pc.pose.position + p.depth * p.normal;
      const double sdf = oracle::Sdf(oracle::MakePosed(pc.shape, moved), oracle::ToDouble(p.point));
      if (std::fabs(sdf) > 2.0 * tol) {
        failures.Add("contact point " + Str(sdf) + " from the moved shape's surface", context);
      }
    }
  }
  EXPECT_EQ(failures.count(), 0) << "seed " << kSeed + 1;
  EXPECT_GT(cases, 5000);
  oracle::PrintSummary("PenetrateTriangle.depth", cases, depth_stats);
}

}  // namespace
}  // namespace collide
