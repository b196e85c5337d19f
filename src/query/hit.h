#pragma once

#include <cstdint>

#include "geom/vec3.h"

namespace collide {

/// QueryHit::triangle of a hit on a body that places no asset.
inline constexpr uint32_t kNoTriangle = 0xFFFFFFFFu;

/// One body hit by a query.
struct QueryHit {
  /// The client's id of the hit body.
  uint64_t body_id = 0;
  /// The sort key. Ray and sphere casts: distance along the unit direction to first contact.
  /// Point-radius queries: distance from the point to the body's surface, 0 when inside.
  /// Overlaps and AABB regions: 0 (so their hits are ordered by id).
  float distance = 0.0f;
  /// Overlaps with detail: the penetration depth (the shortest move of the query shape that
  /// separates it from the body). 0 otherwise.
  float depth = 0.0f;
  /// Casts: the contact point on the body's surface; a ray (or a sphere cast of radius 0) that
  /// starts inside the body: the ray's origin; a ball of radius > 0 that starts overlapping: the
  /// body's surface point nearest the ball's centre (see CastHit). Overlaps with detail: the
  /// contact point on the body's surface. Point-radius: the body's surface point nearest the
  /// query point.
  Vec3 point{};
  /// Unit normal out of the hit body (casts: at `point`, or -direction for a ray that starts
  /// inside; overlaps with detail: the minimum translation direction that moves the query shape
  /// out of the body).
  Vec3 normal{};
  /// True when the cast started inside or overlapping the body.
  bool start_overlapping = false;
  /// Rays on an asset body: the ray met the triangle's back (mesh/mesh_hit.h).
  bool back_face = false;
  /// A body that places an asset: the triangle (feature) of the hit (mesh/mesh_hit.h); for the
  /// other bodies kNoTriangle.
  uint32_t triangle = kNoTriangle;
};

/// The (distance, id, triangle) order of multi-hit results: total and reproducible (an asset
/// body's hits, one per triangle, share its id).
inline bool HitBefore(const QueryHit& a, const QueryHit& b) {
  return a.distance < b.distance ||
         (a.distance == b.distance &&
          (a.body_id < b.body_id || (a.body_id == b.body_id && a.triangle < b.triangle)));
}

}  // namespace collide
