#include "geom/bounds.h"

#include <cassert>

#include "geom/mat3.h"
#include "geom/quat.h"

namespace collide {

Aabb Bounds(const Sphere& s, const Pose& pose) {
  assert(s.radius >= 0.0f && "radius must be >= 0");
  const Vec3 r{s.radius, s.radius, s.radius};
  return {pose.position - r, pose.position + r};
}

Aabb Bounds(const Box& b, const Pose& pose) {
  assert(b.half_extents.x >= 0.0f && b.half_extents.y >= 0.0f && b.half_extents.z >= 0.0f &&
         "half extents must be >= 0");
  // Arvo (Graphics Gems, "Transforming Axis-Aligned Bounding Boxes"): the box's centre is the pose
  // origin, so centre = t, and the half extent on world axis i is the sum over the local axes j of
  // |R_ij| e_j, i.e. extents = |R| e.
  const Vec3 extents = Abs(ToMat3(pose.rotation)) * b.half_extents;
  return {pose.position - extents, pose.position + extents};
}

Aabb Bounds(const Capsule& c, const Pose& pose) {
  assert(c.radius >= 0.0f && c.half_height >= 0.0f && "capsule must be valid");
  // The end points are t +- R (0, h, 0); their box is t +- |R (0, h, 0)|, grown by the radius.
  const Vec3 half_axis = Rotate(pose.rotation, Vec3{0.0f, c.half_height, 0.0f});
  const Vec3 extents = Abs(half_axis) + Vec3{c.radius, c.radius, c.radius};
  return {pose.position - extents, pose.position + extents};
}

Aabb Bounds(const Shape& s, const Pose& pose) {
  return Visit(s, [&](const auto& shape) { return Bounds(shape, pose); });
}

}  // namespace collide
