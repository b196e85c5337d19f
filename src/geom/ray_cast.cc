#include "geom/ray_cast.h"

#include "geom/internal/cast_kernels.h"

namespace collide {
namespace {

using cast_internal::AssertValidPath;
using cast_internal::LocalContact;

// The hit of a ray that starts inside or on the surface of the shape.
inline void StartInside(const Ray& ray, CastHit* hit) {
  hit->distance = 0.0f;
  hit->point = ray.origin;
  hit->normal = -ray.direction;
  hit->start_overlapping = true;
}

}  // namespace

bool Raycast(const Sphere& sphere, const Pose& pose, const Ray& ray, CastHit* hit) {
  AssertValidPath(ray);
  // Rotation does not matter for a ball: work relative to its centre, in world axes.
  const Vec3 m = ray.origin - pose.position;
  if (cast_internal::BallContains(m, sphere.radius)) {
    StartInside(ray, hit);
    return true;
  }
  LocalContact c;
  if (!cast_internal::CastBall(m, ray.direction, sphere.radius, 0.0f, ray.max_distance, &c)) {
    return false;
  }
  *hit = cast_internal::Translated(pose.position, c);
  return true;
}

bool Raycast(const Box& box, const Pose& pose, const Ray& ray, CastHit* hit) {
  AssertValidPath(ray);
  // Local frame: subtract the position first so that far from the world origin the offset
  // keeps its precision, then undo the rotation.
  const Vec3 o = InverseTransformPoint(pose, ray.origin);
  if (cast_internal::BoxContains(o, box.half_extents, 0.0f)) {
    StartInside(ray, hit);
    return true;
  }
  const Vec3 d = InverseTransformVector(pose, ray.direction);
  LocalContact c;
  if (!cast_internal::CastBox(o, d, box.half_extents, 0.0f, ray.max_distance, &c)) return false;
  *hit = cast_internal::ToWorld(pose, c);
  return true;
}

bool Raycast(const Capsule& capsule, const Pose& pose, const Ray& ray, CastHit* hit) {
  AssertValidPath(ray);
  const Vec3 o = InverseTransformPoint(pose, ray.origin);
  if (cast_internal::CapsuleContains<1>(o, capsule.half_height, capsule.radius)) {
    StartInside(ray, hit);
    return true;
  }
  const Vec3 d = InverseTransformVector(pose, ray.direction);
  LocalContact c;
  if (!cast_internal::CastCapsule(o, d, capsule.half_height, capsule.radius, 0.0f, ray.max_distance,
                                  &c)) {
    return false;
  }
  *hit = cast_internal::ToWorld(pose, c);
  return true;
}

bool Raycast(const Shape& shape, const Pose& pose, const Ray& ray, CastHit* hit) {
  return Visit(shape, [&](const auto& s) { return Raycast(s, pose, ray, hit); });
}

}  // namespace collide
