#pragma once

#include <cstdint>

#include "geom/triangle.h"
#include "geom/vec3.h"

namespace collide {

// Distances to one closed triangle (triangle.h): from a point and from a segment. Coordinates
// are in any one frame; callers pass them relative to an origin near the query so that they stay
// small. Triangles of zero area are handled as the segment or point they are.

/// The part of a triangle a nearest point lies on: its face (inside), an edge (strictly between
/// its ends) or a vertex.
enum class TriangleFeature : uint8_t {
  kFace = 0,
  kEdgeAB = 1,
  kEdgeBC = 2,
  kEdgeCA = 3,
  kVertexA = 4,
  kVertexB = 5,
  kVertexC = 6,
};

/// A point of a triangle and the feature it lies on.
struct TrianglePoint {
  Vec3 point{};
  TriangleFeature feature = TriangleFeature::kFace;
};

/// The point of the triangle nearest to `p`, and its feature. The triangle's plane is taken from
/// its double precision normal and the point projected onto it; when the projection lies outside
/// the triangle (or the triangle has no area) the nearest point of its three edges is the answer.
/// Near an edge the two ways give points within rounding of each other, so the point is
/// continuous in `p`.
TrianglePoint NearestTrianglePoint(const Vec3& p, const Triangle& t);

/// NearestTrianglePoint for a caller that has the triangle's unit normal already
/// (TriangleUnitNormal with a zero fallback: zero for a triangle of zero area).
TrianglePoint NearestTrianglePoint(const Vec3& p, const Triangle& t, const Vec3& unit_normal);

/// The point of NearestTrianglePoint alone.
inline Vec3 ClosestPointOnTriangle(const Vec3& p, const Triangle& t) {
  return NearestTrianglePoint(p, t).point;
}

/// The closest points of a segment and a triangle.
struct SegmentTrianglePoints {
  /// The point of the segment and the point of the triangle; equal when they meet.
  Vec3 on_segment{};
  Vec3 on_triangle{};
  /// |on_segment - on_triangle|^2.
  float distance_squared = 0.0f;
  /// True when the segment meets the closed triangle.
  bool intersects = false;
  /// Where `on_segment` lies: 0 at p0, 1 at p1.
  float segment_param = 0.0f;
  /// The feature `on_triangle` lies on.
  TriangleFeature feature = TriangleFeature::kFace;
};

/// The closest points of the segment [p0, p1] (a point when p0 == p1) and the triangle: 0 when
/// the segment crosses the triangle, otherwise the least of the segment's end points against the
/// triangle and the segment against each edge (where the minimum of two disjoint convex sets, a
/// segment and a triangle, is always found).
SegmentTrianglePoints ClosestSegmentTriangle(const Vec3& p0, const Vec3& p1, const Triangle& t);

/// True when `q`, a point of the triangle's plane, lies in the closed triangle: on the inner side
/// of (or on) each edge about the unit normal `n`. Rounding decides within an ulp of an edge.
bool PointInTriangle(const Vec3& q, const Triangle& t, const Vec3& n);

}  // namespace collide
