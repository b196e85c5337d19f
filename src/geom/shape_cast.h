#pragma once

#include "geom/pose.h"
#include "geom/shapes.h"
#include "geom/vec3.h"

namespace collide {

/// Where a translated shape first touches another shape.
struct ShapeCastHit {
  /// The fraction of the translation, in [0, 1], at which the shapes first touch.
  float fraction = 0.0f;
  /// The contact point on the target's surface at that moment, world frame. Where the shapes
  /// first touch along an edge or a face, some point of that contact region.
  Vec3 point{};
  /// Unit normal out of the target towards the moving shape at `point`, world frame (for a
  /// start overlap: the separating (MTV) direction).
  Vec3 normal{};
  /// True when the shapes overlap (or touch) before the translation starts (fraction 0).
  bool start_overlapping = false;
};

/// The continuous test of a translation: `moving`, kept at `start.rotation`, slides linearly
/// from `start.position` to `start.position + translation` past the static `target` at
/// `target_pose`. Returns true and fills `*hit` when the closed shapes touch at some fraction
/// in [0, 1]; false when they stay apart all the way (a shape that crosses the target within
/// the step is found however thin the target and however long the step: no tunnelling).
///
/// Method: the distance between two convex shapes under a linear translation is a convex
/// function d(f) of the fraction, with slope translation . (-normal). Pairs with a round shape
/// (sphere, capsule) advance conservatively from f = 0 by Newton steps
/// f += d(f) / (closing speed), which never step past the first contact of a convex function
/// and stop once d <= a relative tolerance of 1e-6 of the shapes' size (or the shapes separate
/// for good: d'(f) >= 0, or f > 1). Box against box uses the separating axes of the two boxes
/// (their Minkowski difference's face normals): on each axis the projections overlap during
/// one interval of f, and the shapes touch exactly during the intersection of those intervals,
/// so the first contact is the latest entry (no iteration).
bool ShapeCast(const Shape& moving, const Pose& start, const Vec3& translation, const Shape& target,
               const Pose& target_pose, ShapeCastHit* hit);

}  // namespace collide
