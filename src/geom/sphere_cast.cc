#include "geom/sphere_cast.h"

#include <cassert>

#include "geom/closest_point.h"
#include "geom/internal/cast_kernels.h"
#include "geom/ray_cast.h"

namespace collide {
namespace {

using cast_internal::AssertValidPath;
using cast_internal::LocalContact;

// The hit of a ball that overlaps or touches the target at the start: the closest surface point
// and the separating direction out of the target (the target's outward normal there).
template <typename S>
void StartOverlapping(const S& shape, const Pose& pose, const Ray& path, CastHit* hit) {
  const ClosestPointResult cp = ClosestPoint(shape, pose, path.origin);
  hit->distance = 0.0f;
  hit->point = cp.point;
  hit->normal = cp.normal;
  hit->start_overlapping = true;
}

}  // namespace

bool SphereCast(const Sphere& sphere, const Pose& pose, const Ray& path, float radius,
                CastHit* hit) {
  AssertValidPath(path);
  assert(radius >= 0.0f && "radius must be >= 0");
  if (radius == 0.0f) return Raycast(sphere, pose, path, hit);  // a ball of radius 0 is a ray
  // A ball of radius r touches the sphere of radius R when its centre is within R + r of the
  // sphere's centre: a ray against the sphere of radius R + r (Ericson 5.5).
  const Vec3 m = path.origin - pose.position;
  if (cast_internal::BallContains(m, sphere.radius + radius)) {
    StartOverlapping(sphere, pose, path, hit);
    return true;
  }
  LocalContact c;
  if (!cast_internal::CastBall(m, path.direction, sphere.radius, radius, path.max_distance, &c)) {
    return false;
  }
  *hit = cast_internal::Translated(pose.position, c);
  return true;
}

bool SphereCast(const Box& box, const Pose& pose, const Ray& path, float radius, CastHit* hit) {
  AssertValidPath(path);
  assert(radius >= 0.0f && "radius must be >= 0");
  if (radius == 0.0f) return Raycast(box, pose, path, hit);  // a ball of radius 0 is a ray
  const Vec3 o = InverseTransformPoint(pose, path.origin);
  if (cast_internal::BoxContains(o, box.half_extents, radius)) {
    StartOverlapping(box, pose, path, hit);
    return true;
  }
  const Vec3 d = InverseTransformVector(pose, path.direction);
  LocalContact c;
  if (!cast_internal::CastBox(o, d, box.half_extents, radius, path.max_distance, &c)) {
    return false;
  }
  *hit = cast_internal::ToWorld(pose, c);
  return true;
}

bool SphereCast(const Capsule& capsule, const Pose& pose, const Ray& path, float radius,
                CastHit* hit) {
  AssertValidPath(path);
  assert(radius >= 0.0f && "radius must be >= 0");
  if (radius == 0.0f) return Raycast(capsule, pose, path, hit);  // a ball of radius 0 is a ray
  // The capsule grown by r is the capsule of radius R + r about the same segment.
  const Vec3 o = InverseTransformPoint(pose, path.origin);
  if (cast_internal::CapsuleContains<1>(o, capsule.half_height, capsule.radius + radius)) {
    StartOverlapping(capsule, pose, path, hit);
    return true;
  }
  const Vec3 d = InverseTransformVector(pose, path.direction);
  LocalContact c;
  if (!cast_internal::CastCapsule(o, d, capsule.half_height, capsule.radius, radius,
                                  path.max_distance, &c)) {
    return false;
  }
  *hit = cast_internal::ToWorld(pose, c);
  return true;
}

bool SphereCast(const Shape& shape, const Pose& pose, const Ray& path, float radius, CastHit* hit) {
  return Visit(shape, [&](const auto& s) { return SphereCast(s, pose, path, radius, hit); });
}

}  // namespace collide
