#pragma once

#include <algorithm>
#include <cmath>

namespace collide {

/// A 3-vector of float32: a point or a direction, in any consistent length unit.
struct Vec3 {
  float x = 0.0f;
  float y = 0.0f;
  float z = 0.0f;

  /// Component by index: 0 = x, 1 = y, 2 = z.
  constexpr float operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }
  constexpr float& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }

  constexpr Vec3& operator+=(const Vec3& o) {
    x += o.x;
    y += o.y;
    z += o.z;
    return *this;
  }
  constexpr Vec3& operator-=(const Vec3& o) {
    x -= o.x;
    y -= o.y;
    z -= o.z;
    return *this;
  }
  constexpr Vec3& operator*=(float s) {
    x *= s;
    y *= s;
    z *= s;
    return *this;
  }
  friend constexpr bool operator==(const Vec3&, const Vec3&) = default;
};

constexpr Vec3 operator+(const Vec3& a, const Vec3& b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
constexpr Vec3 operator-(const Vec3& a, const Vec3& b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
constexpr Vec3 operator-(const Vec3& a) { return {-a.x, -a.y, -a.z}; }
constexpr Vec3 operator*(const Vec3& a, float s) { return {a.x * s, a.y * s, a.z * s}; }
constexpr Vec3 operator*(float s, const Vec3& a) { return {a.x * s, a.y * s, a.z * s}; }
constexpr Vec3 operator/(const Vec3& a, float s) { return {a.x / s, a.y / s, a.z / s}; }

/// Component-wise product.
constexpr Vec3 Mul(const Vec3& a, const Vec3& b) { return {a.x * b.x, a.y * b.y, a.z * b.z}; }
constexpr float Dot(const Vec3& a, const Vec3& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
constexpr Vec3 Cross(const Vec3& a, const Vec3& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
constexpr float LengthSquared(const Vec3& a) { return Dot(a, a); }
inline float Length(const Vec3& a) { return std::sqrt(Dot(a, a)); }
inline float Distance(const Vec3& a, const Vec3& b) { return Length(a - b); }
constexpr float DistanceSquared(const Vec3& a, const Vec3& b) { return LengthSquared(a - b); }

/// The unit vector along `a`; `a` must be non-zero (returns `a` unchanged when it is zero).
inline Vec3 Normalize(const Vec3& a) {
  float len = Length(a);
  return len > 0.0f ? a * (1.0f / len) : a;
}

constexpr Vec3 Min(const Vec3& a, const Vec3& b) {
  return {std::min(a.x, b.x), std::min(a.y, b.y), std::min(a.z, b.z)};
}
constexpr Vec3 Max(const Vec3& a, const Vec3& b) {
  return {std::max(a.x, b.x), std::max(a.y, b.y), std::max(a.z, b.z)};
}
inline Vec3 Abs(const Vec3& a) { return {std::fabs(a.x), std::fabs(a.y), std::fabs(a.z)}; }
/// Component-wise clamp of `a` to [lo, hi].
constexpr Vec3 Clamp(const Vec3& a, const Vec3& lo, const Vec3& hi) { return Min(Max(a, lo), hi); }
constexpr float MaxComponent(const Vec3& a) { return std::max(a.x, std::max(a.y, a.z)); }
constexpr float MinComponent(const Vec3& a) { return std::min(a.x, std::min(a.y, a.z)); }
inline bool IsFinite(const Vec3& a) {
  return std::isfinite(a.x) && std::isfinite(a.y) && std::isfinite(a.z);
}

/// Some unit vector perpendicular to the unit vector `n`.
inline Vec3 AnyPerpendicular(const Vec3& n) {
  // Cross with the axis least aligned with n, so the result is never tiny.
  Vec3 a = Abs(n);
  Vec3 axis =
      (a.x <= a.y && a.x <= a.z) ? Vec3{1, 0, 0} : (a.y <= a.z ? Vec3{0, 1, 0} : Vec3{0, 0, 1});
  return Normalize(Cross(n, axis));
}

}  // namespace collide
