#include "geom/closest_point.h"

#include <gtest/gtest.h>

#include <cmath>

#include "geom/narrow_test_util.h"

namespace collide {
namespace {

using narrow_test::At;
using narrow_test::Axis;
using narrow_test::Degrees;
using narrow_test::kPlaces;
using narrow_test::kTol;
using narrow_test::Rotations;
using narrow_test::VecNear;

constexpr float kSigns[] = {1.0f, -1.0f};

// The result must describe itself consistently: a unit normal, and p = point + sd * normal
// (the query point lies on the normal line through the surface point).
::testing::AssertionResult SelfConsistent(const ClosestPointResult& r, const Vec3& p, float tol) {
  if (std::fabs(Length(r.normal) - 1.0f) > 1e-5f) {
    return ::testing::AssertionFailure() << "normal " << r.normal << " is not unit";
  }
  return VecNear(r.point + r.signed_distance * r.normal, p, tol);
}

// ---------------------------------------------------------------------------------------------
// Sphere

TEST(ClosestPointSphere, OutsideAndInsideAlongEachAxis) {
  const Sphere s{2.0f};
  for (const auto& place : kPlaces) {
    const Vec3 c = place.offset + Vec3{1, 2, 3};
    for (int i = 0; i < 3; ++i) {
      for (float sign : kSigns) {
        for (float d : {5.0f, 2.0f, 0.5f}) {
          SCOPED_TRACE(testing::Message() << place.name << " axis " << i << sign << " d " << d);
          const Vec3 p = c + Axis(i, sign) * d;
          const ClosestPointResult r =
              ClosestPoint(s, At(c, Degrees(Normalize(Vec3{1, 0, 1}), 30.0f)), p);
          EXPECT_NEAR(r.signed_distance, d - 2.0f, place.tol);
          EXPECT_TRUE(VecNear(r.point, c + Axis(i, sign) * 2.0f, place.tol));
          EXPECT_TRUE(VecNear(r.normal, Axis(i, sign), 1e-6f));
        }
      }
    }
  }
}

TEST(ClosestPointSphere, AtTheCentreIsAFullRadiusDeepWithSomeUnitNormal) {
  const ClosestPointResult r = ClosestPoint(Sphere{1.5f}, At({1, 1, 1}), {1, 1, 1});
  EXPECT_EQ(r.signed_distance, -1.5f);
  EXPECT_TRUE(SelfConsistent(r, {1, 1, 1}, kTol));
}

TEST(ClosestPointSphere, ZeroRadiusIsThePointItself) {
  const ClosestPointResult r = ClosestPoint(Sphere{0.0f}, At({1, 2, 3}), {4, 6, 3});
  EXPECT_NEAR(r.signed_distance, 5.0f, kTol);
  EXPECT_TRUE(VecNear(r.point, {1, 2, 3}, kTol));
  EXPECT_TRUE(VecNear(r.normal, {0.6f, 0.8f, 0.0f}, 1e-6f));
}

// ---------------------------------------------------------------------------------------------
// Box

TEST(ClosestPointBox, FaceEdgeAndCornerRegionsOutside) {
  const Box b{{1.0f, 2.0f, 3.0f}};
  struct Case {
    Vec3 local;    // query point in the box frame
    Vec3 nearest;  // its nearest box point
    float distance;
  };
  const float r2 = std::sqrt(2.0f);
  const Case cases[] = {
      {{3, 0.5f, -1}, {1, 0.5f, -1}, 2.0f},              // +X face
      {{0, -2.5f, 2}, {0, -2, 2}, 0.5f},                 // -Y face
      {{0.5f, 1, 7}, {0.5f, 1, 3}, 4.0f},                // +Z face
      {{2, 3, 0}, {1, 2, 0}, r2},                        // +X+Y edge
      {{-2, 0, -4}, {-1, 0, -3}, r2},                    // -X-Z edge
      {{3, -4, 5}, {1, -2, 3}, 2.0f * std::sqrt(3.0f)},  // corner
  };
  int n;
  const Quat* rotations = Rotations(&n);
  for (const auto& place : kPlaces) {
    for (int k = 0; k < n; ++k) {
      const Pose pose = At(place.offset + Vec3{-2, 1, 4}, rotations[k]);
      for (const Case& c : cases) {
        SCOPED_TRACE(testing::Message() << place.name << " rotation " << k << " at " << c.local);
        const Vec3 p = TransformPoint(pose, c.local);
        const ClosestPointResult r = ClosestPoint(b, pose, p);
        EXPECT_NEAR(r.signed_distance, c.distance, place.tol);
        EXPECT_TRUE(VecNear(r.point, TransformPoint(pose, c.nearest), place.tol));
        // Far away the query point only carries an ulp of 0.0078, so the direction of an
        // offset of length >= 0.5 is good to ~0.016 there; near the origin to a few 1e-7.
        EXPECT_TRUE(VecNear(r.normal, TransformVector(pose, Normalize(c.local - c.nearest)),
                            place.tol == kTol ? 1e-5f : 2e-2f));
      }
    }
  }
}

TEST(ClosestPointBox, InsideGoesOutThroughTheNearestFace) {
  const Box b{{1.0f, 2.0f, 3.0f}};
  struct Case {
    Vec3 local;
    int axis;
    float sign;
    float depth;
  };
  const Case cases[] = {
      {{0.75f, 0, 0}, 0, 1.0f, 0.25f},   {{-0.5f, 0.5f, 1}, 0, -1.0f, 0.5f},
      {{0, 1.875f, 0}, 1, 1.0f, 0.125f}, {{0.1f, -0.2f, -2.5f}, 2, -1.0f, 0.5f},
      {{0, 0, 0}, 0, 1.0f, 1.0f},  // the centre: nearest face X (lowest axis on ties), + side
  };
  for (const auto& place : kPlaces) {
    const Pose pose = At(place.offset, Degrees({0, 1, 0}, 90.0f));
    for (const Case& c : cases) {
      SCOPED_TRACE(testing::Message() << place.name << " at " << c.local);
      const ClosestPointResult r = ClosestPoint(b, pose, TransformPoint(pose, c.local));
      EXPECT_NEAR(r.signed_distance, -c.depth, place.tol);
      Vec3 nearest = c.local;
      nearest[c.axis] = c.sign * b.half_extents[c.axis];
      EXPECT_TRUE(VecNear(r.point, TransformPoint(pose, nearest), place.tol));
      EXPECT_TRUE(VecNear(r.normal, TransformVector(pose, Axis(c.axis, c.sign)), 1e-6f));
    }
  }
}

TEST(ClosestPointBox, OnTheSurfaceIsAtDistanceZero) {
  const Box b{{1.0f, 1.0f, 1.0f}};
  for (const Vec3& p : {Vec3{1, 0.5f, 0}, Vec3{1, 1, 0}, Vec3{-1, -1, -1}, Vec3{0.25f, 0, -1}}) {
    SCOPED_TRACE(testing::Message() << p);
    const ClosestPointResult r = ClosestPoint(b, At({}), p);
    EXPECT_EQ(r.signed_distance, 0.0f);
    EXPECT_EQ(r.point, p);
    EXPECT_TRUE(SelfConsistent(r, p, kTol));
  }
}

TEST(ClosestPointBox, FlatBoxWithAZeroHalfExtent) {
  const Box b{{1.0f, 0.0f, 1.0f}};
  // Above the square: straight down onto it; in its plane: depth 0 with the +Y face.
  const ClosestPointResult above = ClosestPoint(b, At({}), {0.5f, 2.0f, -0.5f});
  EXPECT_NEAR(above.signed_distance, 2.0f, kTol);
  EXPECT_TRUE(VecNear(above.point, {0.5f, 0, -0.5f}, kTol));
  EXPECT_TRUE(VecNear(above.normal, {0, 1, 0}, kTol));
  const ClosestPointResult on = ClosestPoint(b, At({}), {0.5f, 0.0f, 0.25f});
  EXPECT_EQ(on.signed_distance, 0.0f);
  EXPECT_TRUE(VecNear(on.normal, {0, 1, 0}, kTol));
  // A point box is a sphere of radius 0.
  const ClosestPointResult point = ClosestPoint(Box{}, At({1, 1, 1}), {1, 4, 5});
  EXPECT_NEAR(point.signed_distance, 5.0f, kTol);
  EXPECT_TRUE(VecNear(point.point, {1, 1, 1}, kTol));
}

// ---------------------------------------------------------------------------------------------
// Capsule

TEST(ClosestPointCapsule, BesideTheSegmentAndBeyondItsEnds) {
  const Capsule cap{0.5f, 2.0f};
  struct Case {
    Vec3 local;
    Vec3 nearest;
    float distance;
  };
  const Case cases[] = {
      {{3, 1, 0}, {0.5f, 1, 0}, 2.5f},                  // beside
      {{0, -1.5f, -0.25f}, {0, -1.5f, -0.5f}, -0.25f},  // inside, beside the axis
      {{0, 5, 0}, {0, 2.5f, 0}, 2.5f},                  // above the top cap
      {{3, -6, 0}, {0.3f, -2.4f, 0}, 4.5f},             // below, off axis: (3, -4) from the end
      {{0, 2.25f, 0}, {0, 2.5f, 0}, -0.25f},            // inside the top cap
  };
  int n;
  const Quat* rotations = Rotations(&n);
  for (const auto& place : kPlaces) {
    for (int k = 0; k < n; ++k) {
      const Pose pose = At(place.offset + Vec3{1, -3, 2}, rotations[k]);
      for (const Case& c : cases) {
        SCOPED_TRACE(testing::Message() << place.name << " rotation " << k << " at " << c.local);
        const Vec3 p = TransformPoint(pose, c.local);
        const ClosestPointResult r = ClosestPoint(cap, pose, p);
        EXPECT_NEAR(r.signed_distance, c.distance, place.tol);
        EXPECT_TRUE(VecNear(r.point, TransformPoint(pose, c.nearest), place.tol));
        EXPECT_TRUE(SelfConsistent(r, p, place.tol));
      }
    }
  }
}

TEST(ClosestPointCapsule, OnTheSegmentIsARadiusDeepAcrossTheAxis) {
  const Capsule cap{0.75f, 1.0f};
  const Pose pose = At({2, 2, 2}, Degrees({0, 0, 1}, 90.0f));  // segment along world X
  for (float y : {-1.0f, 0.0f, 0.5f, 1.0f}) {
    SCOPED_TRACE(testing::Message() << "y " << y);
    const Vec3 p = TransformPoint(pose, {0, y, 0});
    const ClosestPointResult r = ClosestPoint(cap, pose, p);
    EXPECT_NEAR(r.signed_distance, -0.75f, kTol);
    EXPECT_TRUE(SelfConsistent(r, p, kTol));
    // Any outward direction across the axis is valid.
    EXPECT_NEAR(Dot(r.normal, TransformVector(pose, {0, 1, 0})), 0.0f, 1e-6f);
  }
}

TEST(ClosestPointCapsule, ZeroHalfHeightIsASphere) {
  const Pose pose = At({1, 2, 3}, Degrees({1, 0, 0}, 50.0f));
  for (const Vec3& p : {Vec3{4, 6, 3}, Vec3{1, 2.5f, 3}, Vec3{-1, 0, 0}}) {
    SCOPED_TRACE(testing::Message() << p);
    const ClosestPointResult c = ClosestPoint(Capsule{1.0f, 0.0f}, pose, p);
    const ClosestPointResult s = ClosestPoint(Sphere{1.0f}, pose, p);
    EXPECT_NEAR(c.signed_distance, s.signed_distance, kTol);
    EXPECT_TRUE(VecNear(c.point, s.point, kTol));
  }
}

// ---------------------------------------------------------------------------------------------
// Shape

TEST(ClosestPointShape, DispatchesToTheConcreteShape) {
  const Pose pose = At({1, 2, 3}, Degrees(Normalize(Vec3{0, 1, 1}), 25.0f));
  const Vec3 p{3, -1, 2};
  auto same = [](const ClosestPointResult& a, const ClosestPointResult& b) {
    return a.point == b.point && a.normal == b.normal && a.signed_distance == b.signed_distance;
  };
  EXPECT_TRUE(
      same(ClosestPoint(Shape(Sphere{1.5f}), pose, p), ClosestPoint(Sphere{1.5f}, pose, p)));
  EXPECT_TRUE(
      same(ClosestPoint(Shape(Box{{1, 2, 3}}), pose, p), ClosestPoint(Box{{1, 2, 3}}, pose, p)));
  EXPECT_TRUE(same(ClosestPoint(Shape(Capsule{0.5f, 2}), pose, p),
                   ClosestPoint(Capsule{0.5f, 2}, pose, p)));
}

}  // namespace
}  // namespace collide
