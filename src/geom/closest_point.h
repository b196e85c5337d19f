#pragma once

#include "geom/pose.h"
#include "geom/shapes.h"
#include "geom/vec3.h"

namespace collide {

/// The point of a shape nearest to a query point, and the signed distance to its surface.
struct ClosestPointResult {
  /// The nearest point on the shape's surface, world frame.
  Vec3 point{};
  /// Distance from the query point to the surface: > 0 outside, < 0 inside (minus the depth),
  /// 0 on the surface.
  float signed_distance = 0.0f;
  /// Unit outward normal of the surface at `point` (for a query point exactly at the deepest
  /// point of a shape, some valid outward direction).
  Vec3 normal{};
};

/// Closest surface point of a sphere to `p`.
ClosestPointResult ClosestPoint(const Sphere& sphere, const Pose& pose, const Vec3& p);
/// Closest surface point of a box to `p`: clamping in the local frame outside (Ericson 5.1), the
/// nearest face inside.
ClosestPointResult ClosestPoint(const Box& box, const Pose& pose, const Vec3& p);
/// Closest surface point of a capsule to `p`: via the closest point of its segment.
ClosestPointResult ClosestPoint(const Capsule& capsule, const Pose& pose, const Vec3& p);
/// Closest surface point of any shape to `p`.
ClosestPointResult ClosestPoint(const Shape& shape, const Pose& pose, const Vec3& p);

}  // namespace collide
