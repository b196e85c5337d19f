#pragma once

// Small helpers shared by the hand-made bounds, closest-point, overlap and penetration tests.

#include <gtest/gtest.h>

#include <cmath>
#include <iterator>

#include "geom/cast_test_util.h"
#include "geom/closest_point.h"
#include "geom/penetration.h"
#include "geom/pose.h"
#include "geom/quat.h"
#include "geom/shapes.h"
#include "geom/vec3.h"

namespace collide::narrow_test {

using cast_test::At;
using cast_test::Axis;
using cast_test::Degrees;
using cast_test::kFarTol;
using cast_test::kTol;
using cast_test::VecNear;

/// A point far from the origin, where one float ulp is 2^-7 (coordinates in [65536, 131072)).
inline constexpr Vec3 kFar{1.0e5f, -1.0e5f, 1.0e5f};

/// The world offsets every table test runs at: the origin and far away.
struct Place {
  Vec3 offset;
  /// Tolerance for positions and lengths there (see cast_test_util.h).
  float tol;
  const char* name;
};
inline constexpr Place kPlaces[] = {{Vec3{}, kTol, "origin"}, {kFar, kFarTol, "far"}};

/// The rotations every table test loops over: identity, quarter and half turns, and an
/// arbitrary one.
inline const Quat* Rotations(int* count) {
  static const Quat kRotations[] = {
      Quat::Identity(),
      Degrees({1, 0, 0}, 90.0f),
      Degrees({0, 1, 0}, 90.0f),
      Degrees({0, 0, 1}, 180.0f),
      Normalize(Quat{0.3f, -0.5f, 0.2f, 0.78f}),
  };
  *count = static_cast<int>(std::size(kRotations));
  return kRotations;
}

/// A Penetration filled with values no query produces, to check that a miss leaves it alone.
inline Penetration PenetrationSentinel() {
  return Penetration{-123.0f, Vec3{-7, -7, -7}, Vec3{-7, -7, -7}};
}
inline bool SamePenetration(const Penetration& a, const Penetration& b) {
  return a.depth == b.depth && a.normal == b.normal && a.point == b.point;
}

/// Checks the contract of penetration.h for one result: a unit normal, `point` on A's surface,
/// `point - depth * normal` on B's, and B moved by depth * normal only touching A (its
/// remaining penetration is within `tol`).
template <typename A, typename B>
::testing::AssertionResult HoldsContract(const A& a, const Pose& pa, const B& b, const Pose& pb,
                                         const Penetration& p, float tol) {
  if (!(p.depth >= 0.0f)) return ::testing::AssertionFailure() << "depth " << p.depth;
  if (std::fabs(Length(p.normal) - 1.0f) > 1e-5f) {
    return ::testing::AssertionFailure() << "normal " << p.normal << " is not unit";
  }
  const float on_a = ClosestPoint(a, pa, p.point).signed_distance;
  if (std::fabs(on_a) > tol) {
    return ::testing::AssertionFailure()
           << "point " << p.point << " is " << on_a << " from A's surface";
  }
  const Vec3 on_b_point = p.point - p.depth * p.normal;
  const float on_b = ClosestPoint(b, pb, on_b_point).signed_distance;
  if (std::fabs(on_b) > tol) {
    return ::testing::AssertionFailure()
           << "point - depth * normal " << on_b_point << " is " << on_b << " from B's surface";
  }
  Pose moved = pb;
  moved.position = pb.position + p.depth * p.normal;
  Penetration after;
  if (Penetrate(a, pa, b, moved, &after) && after.depth > tol) {
    return ::testing::AssertionFailure()
           << "B moved by depth * normal still penetrates by " << after.depth;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace collide::narrow_test
