#pragma once

#include <cmath>

#include "geom/mat3.h"
#include "geom/vec3.h"

namespace collide {

/// A rotation as a unit quaternion (x, y, z, w); w is the scalar part.
struct Quat {
  float x = 0.0f;
  float y = 0.0f;
  float z = 0.0f;
  float w = 1.0f;

  static constexpr Quat Identity() { return {0.0f, 0.0f, 0.0f, 1.0f}; }
  friend constexpr bool operator==(const Quat&, const Quat&) = default;
};

/// The rotation by `angle` radians about the unit vector `axis` (right-handed).
inline Quat QuatFromAxisAngle(const Vec3& axis, float angle) {
  float s = std::sin(0.5f * angle);
  return {axis.x * s, axis.y * s, axis.z * s, std::cos(0.5f * angle)};
}

constexpr float Dot(const Quat& a, const Quat& b) {
  return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}
inline float Length(const Quat& q) { return std::sqrt(Dot(q, q)); }
inline Quat Normalize(const Quat& q) {
  float len = Length(q);
  float s = len > 0.0f ? 1.0f / len : 0.0f;
  return {q.x * s, q.y * s, q.z * s, q.w * s};
}
constexpr Quat Conjugate(const Quat& q) { return {-q.x, -q.y, -q.z, q.w}; }

/// How far from 1 the length of a rotation kept as it is may be: 2^-22, four float ulps at 1.
/// Normalising a quaternion in float or in double leaves its length within about 2^-23 of 1
/// (each component is rounded to float), so every rotation a normalisation produced is taken as
/// unit.
inline constexpr double kUnitRotationSlack = 0x1p-22;

/// The rotation `q` (finite, not zero) as the unit quaternion collide stores. Idempotent, so that
/// a stored rotation survives every path that normalises again (an export imported elsewhere, a
/// move, a replayed log): a quaternion whose length (computed in double) is within
/// kUnitRotationSlack of 1 is returned bit for bit; any other is divided by its length in double,
/// which leaves its length within 2^-24 of 1, so normalising the result returns it unchanged.
inline Quat NormalizeRotation(const Quat& q) {
  const double len =
      std::sqrt(double{q.x} * q.x + double{q.y} * q.y + double{q.z} * q.z + double{q.w} * q.w);
  if (std::fabs(len - 1.0) <= kUnitRotationSlack) return q;
  return {static_cast<float>(q.x / len), static_cast<float>(q.y / len),
          static_cast<float>(q.z / len), static_cast<float>(q.w / len)};
}

/// The composition a * b: rotating by b first, then by a.
constexpr Quat operator*(const Quat& a, const Quat& b) {
  return {a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
          a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
          a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
          a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
}

/// `v` rotated by the unit quaternion `q`.
constexpr Vec3 Rotate(const Quat& q, const Vec3& v) {
  // v' = v + 2w (u x v) + 2 u x (u x v), with u = (x, y, z).
  Vec3 u{q.x, q.y, q.z};
  Vec3 t = 2.0f * Cross(u, v);
  return v + q.w * t + Cross(u, t);
}

/// `v` rotated by the inverse of the unit quaternion `q`.
constexpr Vec3 InverseRotate(const Quat& q, const Vec3& v) { return Rotate(Conjugate(q), v); }

/// The rotation matrix of the unit quaternion `q`; its columns are the rotated basis axes.
constexpr Mat3 ToMat3(const Quat& q) {
  float xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
  float xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
  float wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
  return Mat3{Vec3{1 - 2 * (yy + zz), 2 * (xy + wz), 2 * (xz - wy)},
              Vec3{2 * (xy - wz), 1 - 2 * (xx + zz), 2 * (yz + wx)},
              Vec3{2 * (xz + wy), 2 * (yz - wx), 1 - 2 * (xx + yy)}};
}

}  // namespace collide
