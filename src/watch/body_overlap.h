#pragma once

// Internal helpers of the watch layer: the exact tests of a body against a fence's shape and
// against another body, for every kind of body (a shape, or an asset it places).

#include "geom/overlap.h"
#include "geom/penetration.h"
#include "mesh/scaled_pose.h"
#include "query/asset_narrow.h"
#include "query/collision_world.h"

namespace collide::watch_internal {

// True when `body` (of `world`) and the shape at `pose` share a point.
inline bool BodyOverlapsShape(const CollisionWorld& world, const Body& body, const Shape& shape,
                              const Pose& pose) {
  if (body.asset == kNoAsset) return Overlap(body.shape, body.pose, shape, pose);
  return AssetOverlap(world.asset(body.asset), ScaledPose{body.pose, body.scale}, shape, pose);
}

// True when two bodies share a point. Two bodies that both place assets (a mesh against a mesh
// or a heightfield) are never reported: contact watches ignore such pairs.
inline bool BodiesOverlap(const CollisionWorld& world, const Body& a, const Body& b) {
  if (a.asset != kNoAsset && b.asset != kNoAsset) return false;
  if (a.asset != kNoAsset) return BodyOverlapsShape(world, a, b.shape, b.pose);
  return BodyOverlapsShape(world, b, a.shape, a.pose);
}

// The penetration of the fence's shape (A, at `pose`) and `body` (B), as geom's Penetrate
// reports it: the normal out of the fence towards the body, the point on the fence's surface.
inline bool PenetrateShapeBody(const CollisionWorld& world, const Shape& shape, const Pose& pose,
                               const Body& body, Penetration* out) {
  if (body.asset == kNoAsset) return Penetrate(shape, pose, body.shape, body.pose, out);
  MeshContact contact;
  if (!AssetPenetrate(world.asset(body.asset), ScaledPose{body.pose, body.scale}, shape, pose,
                      &contact)) {
    return false;
  }
  // The asset's contact moves the fence out along contact.normal; seen from the fence, the body
  // moves out along -normal, and the fence's surface point is the triangle's point before it.
  out->depth = contact.depth;
  out->normal = -contact.normal;
  out->point = contact.point - contact.depth * contact.normal;
  return true;
}

// The box of a body's motion in a batch: at `before`, slid at its old rotation to `after`'s
// position, and at `after` (the final rotation).
inline Aabb BodyMotionBox(const CollisionWorld& world, const Body& before, const Pose& after) {
  Body at = before;
  const Aabb start = world.BoundsOf(at);
  at.pose = Pose{before.pose.rotation, after.position};
  const Aabb slid = world.BoundsOf(at);
  at.pose = after;
  return Union(Union(start, slid), world.BoundsOf(at));
}

}  // namespace collide::watch_internal
