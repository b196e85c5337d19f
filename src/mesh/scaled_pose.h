#pragma once

#include <cmath>

#include "geom/pose.h"
#include "geom/shapes.h"
#include "geom/vec3.h"

namespace collide {

// Where an instance of a mesh or heightfield asset stands: a pose and a uniform scale. The asset
// keeps its tree in its own local frame; a query is mapped into that frame once (subtract the
// position, undo the rotation, divide by the scale), runs there, and its results are mapped back
// (lengths times the scale).
//
// Why uniform scale only. A uniform scale maps a ball to a ball, a box to a box and a capsule to
// a capsule, so every query stays exact in the local frame with its shape divided by the scale.
// A non-uniform scale would turn a ball into an ellipsoid there (and a cast's distances would
// depend on direction): sphere casts and overlaps would need another kernel for every pair, for
// a feature a level rarely needs (an asset can be uploaded already stretched).

/// The smallest and largest scale an instance may have.
inline constexpr float kMinInstanceScale = 1e-3f;
inline constexpr float kMaxInstanceScale = 1e3f;

/// A pose plus a uniform scale: the local point p is at position + rotation * (scale * p).
struct ScaledPose {
  Pose pose{};
  /// Uniform scale, in [kMinInstanceScale, kMaxInstanceScale]; 1 leaves the asset as it is.
  float scale = 1.0f;

  constexpr ScaledPose() = default;
  /// The pose at scale 1.
  constexpr ScaledPose(const Pose& p) : pose(p) {}  // NOLINT
  constexpr ScaledPose(const Pose& p, float s) : pose(p), scale(s) {}
};

/// True when `scale` is a finite scale within [kMinInstanceScale, kMaxInstanceScale].
inline bool IsValidInstanceScale(float scale) {
  return std::isfinite(scale) && scale >= kMinInstanceScale && scale <= kMaxInstanceScale;
}

/// True when the pose does not rotate (the identity quaternion exactly): level geometry usually
/// stands unrotated, and the mappings below then skip the rotation (which would give the same
/// floats: a rotation by the identity quaternion is exact).
inline bool IsUnrotated(const ScaledPose& sp) { return sp.pose.rotation == Quat::Identity(); }

/// The world point `p` in the asset's local frame.
inline Vec3 ToLocalPoint(const ScaledPose& sp, const Vec3& p) {
  const Vec3 d = p - sp.pose.position;
  return (IsUnrotated(sp) ? d : InverseRotate(sp.pose.rotation, d)) * (1.0f / sp.scale);
}
/// The world direction `v` in the asset's local frame (a rotation only: unit stays unit).
inline Vec3 ToLocalVector(const ScaledPose& sp, const Vec3& v) {
  return IsUnrotated(sp) ? v : InverseRotate(sp.pose.rotation, v);
}
/// The local point `p` in world coordinates.
inline Vec3 ToWorldPoint(const ScaledPose& sp, const Vec3& p) {
  const Vec3 q = p * sp.scale;
  return (IsUnrotated(sp) ? q : Rotate(sp.pose.rotation, q)) + sp.pose.position;
}
/// The local direction `v` in world coordinates.
inline Vec3 ToWorldVector(const ScaledPose& sp, const Vec3& v) {
  return IsUnrotated(sp) ? v : Rotate(sp.pose.rotation, v);
}

/// The shape at `pose` (world) as the asset's local frame sees it: its pose relative to the
/// instance and its sizes divided by the scale.
inline void ToLocalShape(const ScaledPose& sp, const Shape& shape, const Pose& pose,
                         Shape* local_shape, Pose* local_pose) {
  const float k = 1.0f / sp.scale;
  local_pose->position = ToLocalPoint(sp, pose.position);
  local_pose->rotation = Conjugate(sp.pose.rotation) * pose.rotation;
  *local_shape = shape;
  switch (shape.type) {
    case ShapeType::kSphere:
      local_shape->sphere.radius = shape.sphere.radius * k;
      break;
    case ShapeType::kBox:
      local_shape->box.half_extents = shape.box.half_extents * k;
      break;
    case ShapeType::kCapsule:
      local_shape->capsule.radius = shape.capsule.radius * k;
      local_shape->capsule.half_height = shape.capsule.half_height * k;
      break;
  }
}

}  // namespace collide
