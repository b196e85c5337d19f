#pragma once

#include "geom/quat.h"
#include "geom/vec3.h"

namespace collide {

/// A rigid transform: rotate by `rotation`, then translate by `position` (world frame).
struct Pose {
  Quat rotation = Quat::Identity();
  Vec3 position{};
  friend constexpr bool operator==(const Pose&, const Pose&) = default;
};

/// The pose's local point `p` in world coordinates.
constexpr Vec3 TransformPoint(const Pose& pose, const Vec3& p) {
  return Rotate(pose.rotation, p) + pose.position;
}
/// The world point `p` in the pose's local coordinates.
constexpr Vec3 InverseTransformPoint(const Pose& pose, const Vec3& p) {
  return InverseRotate(pose.rotation, p - pose.position);
}
/// The pose's local direction `v` in world coordinates.
constexpr Vec3 TransformVector(const Pose& pose, const Vec3& v) { return Rotate(pose.rotation, v); }
/// The world direction `v` in the pose's local coordinates.
constexpr Vec3 InverseTransformVector(const Pose& pose, const Vec3& v) {
  return InverseRotate(pose.rotation, v);
}

}  // namespace collide
