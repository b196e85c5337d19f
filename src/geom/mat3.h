#pragma once

#include "geom/vec3.h"

namespace collide {

/// A 3x3 matrix stored as three columns.
struct Mat3 {
  Vec3 c0{1, 0, 0};
  Vec3 c1{0, 1, 0};
  Vec3 c2{0, 0, 1};

  /// Column by index.
  constexpr const Vec3& col(int i) const { return i == 0 ? c0 : (i == 1 ? c1 : c2); }
  /// Row by index.
  constexpr Vec3 row(int i) const { return {c0[i], c1[i], c2[i]}; }
};

/// m * v.
constexpr Vec3 operator*(const Mat3& m, const Vec3& v) {
  return m.c0 * v.x + m.c1 * v.y + m.c2 * v.z;
}
/// transpose(m) * v.
constexpr Vec3 TransposeMul(const Mat3& m, const Vec3& v) {
  return {Dot(m.c0, v), Dot(m.c1, v), Dot(m.c2, v)};
}
constexpr Mat3 Transpose(const Mat3& m) { return {m.row(0), m.row(1), m.row(2)}; }
/// a * b.
constexpr Mat3 operator*(const Mat3& a, const Mat3& b) { return {a * b.c0, a * b.c1, a * b.c2}; }
/// The element-wise absolute value.
inline Mat3 Abs(const Mat3& m) { return {Abs(m.c0), Abs(m.c1), Abs(m.c2)}; }

}  // namespace collide
