#pragma once

// Small helpers shared by the hand-made ray-cast and sphere-cast tests.

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <ostream>

#include "geom/cast.h"
#include "geom/pose.h"
#include "geom/quat.h"
#include "geom/vec3.h"

namespace collide {

inline std::ostream& operator<<(std::ostream& os, const Vec3& v) {
  return os << "(" << v.x << ", " << v.y << ", " << v.z << ")";
}

namespace cast_test {

/// Tolerance for results near the world origin (coordinates up to ~20). float32 has a relative
/// precision of 6e-8; the kernels take a few roundings of values of magnitude ~20, so errors
/// stay below ~1e-5 and 1e-5 still rejects any real mistake in the geometry.
inline constexpr float kTol = 1e-5f;

/// Tolerance for world points near +-1e5, where one float ulp is 2^-7 = 0.0078: the input
/// coordinates themselves only carry that precision, so allow a few ulps.
inline constexpr float kFarTol = 4.0f * 0.0078125f;

/// The unit vector of axis `i` times `sign`.
inline Vec3 Axis(int i, float sign = 1.0f) {
  Vec3 v{};
  v[i] = sign;
  return v;
}

inline Ray MakeRay(const Vec3& origin, const Vec3& direction, float max_distance) {
  return Ray{origin, direction, max_distance};
}

inline Pose At(const Vec3& position, const Quat& rotation = Quat::Identity()) {
  return Pose{rotation, position};
}

/// The rotation by `degrees` about the unit `axis`.
inline Quat Degrees(const Vec3& axis, float degrees) {
  return QuatFromAxisAngle(axis, degrees * std::numbers::pi_v<float> / 180.0f);
}

inline ::testing::AssertionResult VecNear(const Vec3& actual, const Vec3& expected, float tol) {
  Vec3 d = Abs(actual - expected);
  if (d.x <= tol && d.y <= tol && d.z <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "got " << actual << ", expected " << expected << " within " << tol;
}

/// A CastHit filled with values no cast produces, to check that a miss leaves it untouched.
inline CastHit Sentinel() { return CastHit{-123.0f, Vec3{-7, -7, -7}, Vec3{-7, -7, -7}, true}; }

inline bool SameHit(const CastHit& a, const CastHit& b) {
  return a.distance == b.distance && a.point == b.point && a.normal == b.normal &&
         a.start_overlapping == b.start_overlapping;
}

}  // namespace cast_test
}  // namespace collide
