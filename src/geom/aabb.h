#pragma once

#include <algorithm>

#include "geom/vec3.h"

namespace collide {

/// An axis-aligned bounding box in world coordinates; valid when min <= max on every axis.
struct Aabb {
  Vec3 min{};
  Vec3 max{};
  friend constexpr bool operator==(const Aabb&, const Aabb&) = default;
};

constexpr Vec3 Center(const Aabb& b) { return 0.5f * (b.min + b.max); }
constexpr Vec3 HalfExtents(const Aabb& b) { return 0.5f * (b.max - b.min); }

/// The smallest box containing both.
constexpr Aabb Union(const Aabb& a, const Aabb& b) {
  return {Min(a.min, b.min), Max(a.max, b.max)};
}

/// `b` grown by `margin` on every side.
constexpr Aabb Expand(const Aabb& b, float margin) {
  Vec3 m{margin, margin, margin};
  return {b.min - m, b.max + m};
}

/// Half the surface area (the SAH cost metric; the factor 2 cancels in comparisons).
constexpr float HalfArea(const Aabb& b) {
  Vec3 d = b.max - b.min;
  return d.x * d.y + d.y * d.z + d.z * d.x;
}

/// The largest absolute coordinate of the box: every point of it lies within this distance of
/// the origin on each axis.
inline float Magnitude(const Aabb& b) { return MaxComponent(Max(Abs(b.min), Abs(b.max))); }

/// True when the closed boxes share at least one point (interval test on each axis; Ericson,
/// Real-Time Collision Detection, 4.2).
constexpr bool Overlaps(const Aabb& a, const Aabb& b) {
  return a.min.x <= b.max.x && b.min.x <= a.max.x && a.min.y <= b.max.y && b.min.y <= a.max.y &&
         a.min.z <= b.max.z && b.min.z <= a.max.z;
}

/// True when `inner` lies inside the closed box `outer`.
constexpr bool Contains(const Aabb& outer, const Aabb& inner) {
  return outer.min.x <= inner.min.x && outer.min.y <= inner.min.y && outer.min.z <= inner.min.z &&
         inner.max.x <= outer.max.x && inner.max.y <= outer.max.y && inner.max.z <= outer.max.z;
}

/// True when the point lies inside the closed box.
constexpr bool Contains(const Aabb& b, const Vec3& p) {
  return b.min.x <= p.x && p.x <= b.max.x && b.min.y <= p.y && p.y <= b.max.y && b.min.z <= p.z &&
         p.z <= b.max.z;
}

/// The point of the box closest to `p` (clamping on each axis; Ericson 5.1).
constexpr Vec3 ClosestPoint(const Aabb& b, const Vec3& p) { return Clamp(p, b.min, b.max); }

/// True when the sphere (centre `c`, radius `r`) and the box share a point:
/// the squared distance from `c` to the box is at most r^2 (no square root; Ericson 5.2).
constexpr bool OverlapsSphere(const Aabb& b, const Vec3& c, float r) {
  return DistanceSquared(ClosestPoint(b, c), c) <= r * r;
}

/// The parametric interval of a ray against a box by the slab test.
///
/// `origin` is the ray start, `inv_dir` the component-wise reciprocal of its direction (±inf for
/// a zero component). On return true, [*t_enter, *t_exit] is the part of [0, t_max] inside the
/// closed box. A ray lying exactly on a slab plane with a zero component is inside it.
inline bool RayAabbInterval(const Aabb& b, const Vec3& origin, const Vec3& inv_dir, float t_max,
                            float* t_enter, float* t_exit) {
  float t0 = 0.0f;
  float t1 = t_max;
  for (int i = 0; i < 3; ++i) {
    float lo = (b.min[i] - origin[i]) * inv_dir[i];
    float hi = (b.max[i] - origin[i]) * inv_dir[i];
    // 0 * inf = NaN when the origin lies on a slab plane of a zero-direction axis; every
    // comparison with NaN is false, so the bounds are kept and the plane counts as inside.
    if (lo > hi) std::swap(lo, hi);
    t0 = lo > t0 ? lo : t0;
    t1 = hi < t1 ? hi : t1;
  }
  *t_enter = t0;
  *t_exit = t1;
  return t0 <= t1;
}

}  // namespace collide
