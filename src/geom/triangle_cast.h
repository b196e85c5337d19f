#pragma once

#include "geom/triangle.h"
#include "geom/vec3.h"

namespace collide {

/// Where a ball cast against one triangle first touches it, in the triangle's frame.
struct TriangleContact {
  /// Distance the ball's centre has moved along the unit direction.
  float t = 0.0f;
  /// The point of the triangle touched (for a ball that starts touching: the point of the
  /// triangle nearest its centre).
  Vec3 point{};
  /// Unit normal out of the triangle towards the ball's centre at contact: the direction from
  /// `point` to the centre; a face contact's is the face normal on the ball's side.
  Vec3 normal{};
};

/// A ball of `radius` > 0 whose centre moves along origin + t * direction (unit), t in
/// [0, max_t], against the closed triangle; the ball must start apart from it (its centre
/// further than `radius` from the triangle: the caller handles a start overlapping). Returns true
/// and the first contact: a face contact when the ball reaches the triangle's plane (at
/// |signed distance| = radius) over the triangle, otherwise the first contact with an edge (the
/// capsule of `radius` about it) or a vertex (the end balls of those capsules). Both sides of the
/// triangle count; a triangle of zero area is the segment or point it is.
bool SphereCastTriangle(const Vec3& origin, const Vec3& direction, float radius, float max_t,
                        const Triangle& t, TriangleContact* out);

}  // namespace collide
