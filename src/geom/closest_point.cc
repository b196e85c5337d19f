#include "geom/closest_point.h"

#include <cassert>
#include <cmath>

#include "geom/internal/segment.h"

namespace collide {

ClosestPointResult ClosestPoint(const Sphere& sphere, const Pose& pose, const Vec3& p) {
  assert(sphere.radius >= 0.0f && "radius must be >= 0");
  // Rotation does not matter for a ball: work relative to its centre, in world axes.
  const Vec3 d = p - pose.position;
  const float len = Length(d);
  // At the centre every direction is outward; pick +Y.
  const Vec3 n = len > 0.0f ? d * (1.0f / len) : Vec3{0, 1, 0};
  ClosestPointResult out;
  out.point = pose.position + n * sphere.radius;
  out.signed_distance = len - sphere.radius;
  out.normal = n;
  return out;
}

ClosestPointResult ClosestPoint(const Box& box, const Pose& pose, const Vec3& p) {
  const Vec3& e = box.half_extents;
  assert(e.x >= 0.0f && e.y >= 0.0f && e.z >= 0.0f && "half extents must be >= 0");
  // Local frame: subtract the position first (precision far from the origin), then unrotate.
  const Vec3 q = InverseTransformPoint(pose, p);
  const Vec3 clamped = Clamp(q, -e, e);
  const Vec3 d = q - clamped;
  const float len = Length(d);
  Vec3 local_point;
  Vec3 local_normal{};
  float signed_distance;
  if (len > 0.0f) {
    // Outside: the clamped point is the nearest (Ericson 5.1), the normal points from it to p.
    local_point = clamped;
    local_normal = d * (1.0f / len);
    signed_distance = len;
  } else {
    // Inside or on the surface (or outside by so little that |d|^2 underflows): the nearest
    // face is the one with the least e_i - |q_i|; p moves onto it along that axis. Ties go to
    // the lowest axis, q_i = 0 to the + face.
    int axis = 0;
    float best = e.x - std::fabs(q.x);
    for (int i = 1; i < 3; ++i) {
      const float gap = e[i] - std::fabs(q[i]);
      if (gap < best) {
        best = gap;
        axis = i;
      }
    }
    const float sign = q[axis] >= 0.0f ? 1.0f : -1.0f;
    local_point = q;
    local_point[axis] = sign * e[axis];
    local_normal[axis] = sign;
    signed_distance = -std::fmax(best, 0.0f);
  }
  ClosestPointResult out;
  out.point = TransformPoint(pose, local_point);
  out.signed_distance = signed_distance;
  out.normal = TransformVector(pose, local_normal);
  return out;
}

ClosestPointResult ClosestPoint(const Capsule& capsule, const Pose& pose, const Vec3& p) {
  assert(capsule.radius >= 0.0f && capsule.half_height >= 0.0f && "capsule must be valid");
  const Vec3 q = InverseTransformPoint(pose, p);
  // The nearest point of the segment (0, +-h, 0): clamp y. The offset from it has an exactly
  // zero y when q is beside the segment, so the normal is exactly across the axis there.
  const Vec3 axis_point{0.0f, std::clamp(q.y, -capsule.half_height, capsule.half_height), 0.0f};
  const Vec3 d = q - axis_point;
  const float len = Length(d);
  // On the segment itself every direction across the axis is outward; pick local +X.
  const Vec3 n = len > 0.0f ? d * (1.0f / len) : Vec3{1, 0, 0};
  ClosestPointResult out;
  out.point = TransformPoint(pose, axis_point + n * capsule.radius);
  out.signed_distance = len - capsule.radius;
  out.normal = TransformVector(pose, n);
  return out;
}

ClosestPointResult ClosestPoint(const Shape& shape, const Pose& pose, const Vec3& p) {
  return Visit(shape, [&](const auto& s) { return ClosestPoint(s, pose, p); });
}

}  // namespace collide
