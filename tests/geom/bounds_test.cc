#include "geom/bounds.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "geom/narrow_test_util.h"

namespace collide {
namespace {

using narrow_test::At;
using narrow_test::Axis;
using narrow_test::Degrees;
using narrow_test::kFar;
using narrow_test::kPlaces;
using narrow_test::kTol;
using narrow_test::VecNear;

::testing::AssertionResult BoxNear(const Aabb& actual, const Aabb& expected, float tol) {
  ::testing::AssertionResult lo = VecNear(actual.min, expected.min, tol);
  if (!lo) return lo << " (min)";
  ::testing::AssertionResult hi = VecNear(actual.max, expected.max, tol);
  if (!hi) return hi << " (max)";
  return ::testing::AssertionSuccess();
}

// The eight corners of a posed box, transformed one by one (independently of Arvo's method).
void Corners(const Box& b, const Pose& pose, Vec3 out[8]) {
  for (int i = 0; i < 8; ++i) {
    Vec3 local{(i & 1) ? b.half_extents.x : -b.half_extents.x,
               (i & 2) ? b.half_extents.y : -b.half_extents.y,
               (i & 4) ? b.half_extents.z : -b.half_extents.z};
    out[i] = TransformPoint(pose, local);
  }
}

// ---------------------------------------------------------------------------------------------
// Sphere

TEST(BoundsSphere, IsTheCentrePlusMinusTheRadius) {
  struct Case {
    float radius;
    Vec3 centre;
  };
  const Case cases[] = {
      {1.0f, {0, 0, 0}}, {2.5f, {1, -2, 3}}, {0.0f, {4, 5, 6}}, {0.75f, kFar}, {0.0f, -kFar}};
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "radius " << c.radius << " centre " << c.centre);
    // Rotation must not matter for a ball.
    const Aabb box =
        Bounds(Sphere{c.radius}, At(c.centre, Degrees(Normalize(Vec3{1, 1, 0}), 33.0f)));
    const Vec3 r{c.radius, c.radius, c.radius};
    // One rounding of centre -+ r: exact up to half an ulp of the result.
    EXPECT_EQ(box.min, c.centre - r);
    EXPECT_EQ(box.max, c.centre + r);
  }
}

// ---------------------------------------------------------------------------------------------
// Box

TEST(BoundsBox, IdentityRotationGivesTheBoxItself) {
  const Box b{{1.0f, 2.0f, 0.5f}};
  for (const auto& place : kPlaces) {
    SCOPED_TRACE(place.name);
    const Vec3 c = place.offset + Vec3{3, -1, 2};
    const Aabb box = Bounds(b, At(c));
    // |R| = I exactly for the identity quaternion, so the result is c -+ e with one rounding.
    EXPECT_EQ(box.min, c - b.half_extents);
    EXPECT_EQ(box.max, c + b.half_extents);
  }
}

TEST(BoundsBox, QuarterTurnsSwapTheExtentsOfTheOtherTwoAxes) {
  const Box b{{1.0f, 2.0f, 3.0f}};
  struct Case {
    Vec3 axis;
    Vec3 extents;
  };
  const Case cases[] = {{{1, 0, 0}, {1, 3, 2}}, {{0, 1, 0}, {3, 2, 1}}, {{0, 0, 1}, {2, 1, 3}}};
  for (const auto& place : kPlaces) {
    for (const Case& c : cases) {
      for (float degrees : {90.0f, -90.0f, 270.0f}) {
        SCOPED_TRACE(testing::Message() << place.name << " axis " << c.axis << " " << degrees);
        const Vec3 centre = place.offset + Vec3{-1, 4, 2};
        const Aabb box = Bounds(b, At(centre, Degrees(c.axis, degrees)));
        // cos(90 deg) in float is ~-4e-8, so |R| has entries of that size off the permutation.
        EXPECT_TRUE(BoxNear(box, {centre - c.extents, centre + c.extents}, place.tol));
      }
    }
  }
}

TEST(BoundsBox, HalfTurnsLeaveTheBoundsUnchanged) {
  const Box b{{1.0f, 2.0f, 3.0f}};
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(testing::Message() << "axis " << i);
    const Aabb box = Bounds(b, At({5, 6, 7}, Degrees(Axis(i), 180.0f)));
    EXPECT_TRUE(
        BoxNear(box, {Vec3{5, 6, 7} - b.half_extents, Vec3{5, 6, 7} + b.half_extents}, kTol));
  }
}

TEST(BoundsBox, FortyFiveDegreesAboutZGrowsXAndYByTheDiagonal) {
  const Box b{{1.0f, 2.0f, 3.0f}};
  const Aabb box = Bounds(b, At({}, Degrees({0, 0, 1}, 45.0f)));
  // Both rotated half axes (1, 0) and (0, 2) project onto x and y with a factor 1/sqrt(2).
  const float xy = 3.0f / std::sqrt(2.0f);
  EXPECT_TRUE(BoxNear(box, {{-xy, -xy, -3}, {xy, xy, 3}}, kTol));
}

TEST(BoundsBox, ContainsEveryCornerAndTouchesOnEverySideUnderRandomRotations) {
  std::mt19937 rng(20240611);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_real_distribution<float> size(0.0f, 3.0f);
  for (const auto& place : kPlaces) {
    for (int it = 0; it < 200; ++it) {
      const Box b{{size(rng), size(rng), it % 10 == 0 ? 0.0f : size(rng)}};
      const Quat q = Normalize(Quat{unit(rng), unit(rng), unit(rng), unit(rng)});
      const Pose pose = At(place.offset + Vec3{unit(rng), unit(rng), unit(rng)} * 5.0f, q);
      SCOPED_TRACE(testing::Message() << place.name << " case " << it);
      const Aabb box = Bounds(b, pose);
      Vec3 corners[8];
      Corners(b, pose, corners);
      Vec3 lo = corners[0];
      Vec3 hi = corners[0];
      for (const Vec3& c : corners) {
        lo = Min(lo, c);
        hi = Max(hi, c);
      }
      // Arvo's box is the exact bounds of the corners; the two computations round differently
      // by a few ulps of the coordinates (and of the extents, ~3 at most).
      EXPECT_TRUE(BoxNear(box, {lo, hi}, place.tol));
    }
  }
}

TEST(BoundsBox, ZeroExtentsGiveAPointOrAFlatBox) {
  const Aabb point =
      Bounds(Box{{0, 0, 0}}, At({1, 2, 3}, Degrees(Normalize(Vec3{1, 2, 3}), 40.0f)));
  EXPECT_EQ(point.min, (Vec3{1, 2, 3}));
  EXPECT_EQ(point.max, (Vec3{1, 2, 3}));
  // A square of half side 1 in local XY, turned a quarter about X into the XZ plane.
  const Aabb flat = Bounds(Box{{1, 1, 0}}, At({}, Degrees({1, 0, 0}, 90.0f)));
  EXPECT_TRUE(BoxNear(flat, {{-1, 0, -1}, {1, 0, 1}}, kTol));
}

// ---------------------------------------------------------------------------------------------
// Capsule

TEST(BoundsCapsule, UprightCapsuleSpansTheSegmentPlusTheRadius) {
  for (const auto& place : kPlaces) {
    SCOPED_TRACE(place.name);
    const Vec3 c = place.offset + Vec3{1, 2, 3};
    const Aabb box = Bounds(Capsule{0.5f, 2.0f}, At(c));
    // Rotate(identity, (0, h, 0)) is exact, so only the final sums round.
    EXPECT_EQ(box.min, c - (Vec3{0.5f, 2.5f, 0.5f}));
    EXPECT_EQ(box.max, c + (Vec3{0.5f, 2.5f, 0.5f}));
  }
}

TEST(BoundsCapsule, FollowsTheSegmentWhenTurned) {
  const Capsule cap{0.25f, 1.0f};
  struct Case {
    Quat rotation;
    Vec3 extents;
  };
  const float d = 1.0f / std::sqrt(2.0f);
  const Case cases[] = {
      {Degrees({0, 0, 1}, 90.0f), {1.25f, 0.25f, 0.25f}},   // along X
      {Degrees({1, 0, 0}, 90.0f), {0.25f, 0.25f, 1.25f}},   // along Z
      {Degrees({0, 0, 1}, 180.0f), {0.25f, 1.25f, 0.25f}},  // upside down
      {Degrees({0, 0, 1}, 45.0f), {d + 0.25f, d + 0.25f, 0.25f}},
  };
  for (const auto& place : kPlaces) {
    for (const Case& c : cases) {
      SCOPED_TRACE(testing::Message() << place.name << " extents " << c.extents);
      const Aabb box = Bounds(cap, At(place.offset, c.rotation));
      EXPECT_TRUE(BoxNear(box, {place.offset - c.extents, place.offset + c.extents}, place.tol));
    }
  }
}

TEST(BoundsCapsule, ZeroHalfHeightIsASphereAndZeroRadiusASegment) {
  const Pose pose = At({3, -2, 1}, Degrees(Normalize(Vec3{1, 1, 1}), 70.0f));
  EXPECT_TRUE(BoxNear(Bounds(Capsule{0.5f, 0.0f}, pose), Bounds(Sphere{0.5f}, pose), 0.0f));
  const Aabb segment = Bounds(Capsule{0.0f, 1.0f}, At({}, Degrees({0, 0, 1}, 90.0f)));
  EXPECT_TRUE(BoxNear(segment, {{-1, 0, 0}, {1, 0, 0}}, kTol));
}

TEST(BoundsCapsule, ContainsTheGrownEndPointsUnderRandomRotations) {
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (const auto& place : kPlaces) {
    for (int it = 0; it < 200; ++it) {
      const Capsule cap{std::fabs(unit(rng)) * 2.0f, std::fabs(unit(rng)) * 3.0f};
      const Pose pose = At(place.offset + Vec3{unit(rng), unit(rng), unit(rng)},
                           Normalize(Quat{unit(rng), unit(rng), unit(rng), unit(rng)}));
      SCOPED_TRACE(testing::Message() << place.name << " case " << it);
      const Vec3 p0 = TransformPoint(pose, {0, -cap.half_height, 0});
      const Vec3 p1 = TransformPoint(pose, {0, cap.half_height, 0});
      const Vec3 r{cap.radius, cap.radius, cap.radius};
      EXPECT_TRUE(BoxNear(Bounds(cap, pose), {Min(p0, p1) - r, Max(p0, p1) + r}, place.tol));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Shape

TEST(BoundsShape, DispatchesToTheConcreteShape) {
  const Pose pose = At({1, 2, 3}, Degrees(Normalize(Vec3{0, 1, 1}), 25.0f));
  const Sphere s{1.5f};
  const Box b{{1, 2, 3}};
  const Capsule c{0.5f, 2.0f};
  EXPECT_EQ(Bounds(Shape(s), pose), Bounds(s, pose));
  EXPECT_EQ(Bounds(Shape(b), pose), Bounds(b, pose));
  EXPECT_EQ(Bounds(Shape(c), pose), Bounds(c, pose));
}

}  // namespace
}  // namespace collide
