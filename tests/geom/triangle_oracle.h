#pragma once

// A double-precision reference for the triangle functions of src/geom (triangle*.h), written from
// the plainest definitions and not sharing a formula with them:
//
//   - a ray meets a triangle where it meets the triangle's plane (t = (a - o).n / d.n) at a point
//     whose barycentric coordinates, from the 2x2 Gram system, are all >= 0;
//   - the distance from a point to a triangle is the least of the distance to its plane's
//     projection (when the barycentric coordinates of the projection are >= 0) and to its three
//     edges;
//   - a ball cast is the first root of phi(t) = dist(o + t d, T) - r, convex in t (golden section
//     for the minimum, bisection for the root), as a conservative advancement would find it;
//   - a segment's distance is the minimum over the segment of the point distance (convex:
//     golden section);
//   - a box meets a triangle when the triangle, clipped by the box's six planes, keeps a point;
//   - the penetration depth of a convex shape B and a triangle A is the distance from the origin
//     to the boundary of their Minkowski difference, a convex hull whose facets are found by
//     brute force over triples of its vertices.

#include <random>

#include "geom/oracle.h"
#include "geom/shapes.h"
#include "geom/triangle.h"

namespace collide::oracle {

/// A triangle in double.
struct DTriangle {
  DVec3 a{};
  DVec3 b{};
  DVec3 c{};
};
DTriangle ToDouble(const Triangle& t);

/// The ray's meeting with the triangle's plane and its barycentric coordinates there.
struct RayTriangleOracle {
  /// True when the ray meets the closed triangle at some t in [0, max_distance].
  bool hits = false;
  /// The plane's distance along the ray (any sign; inf when parallel).
  double t = 0.0;
  /// The least barycentric coordinate at the plane point (>= 0 inside), times the triangle's
  /// smallest altitude: roughly how far inside (> 0) or outside (< 0) the point is, in length.
  double margin = 0.0;
  /// |d.n|: the cosine between the ray and the normal (0 when parallel).
  double cosine = 0.0;
};
RayTriangleOracle RayTriangleByPlane(const DVec3& origin, const DVec3& direction,
                                     double max_distance, const DTriangle& t);

/// The distance from `p` to the closed triangle, and the nearest point.
double PointTriangleDistance(const DVec3& p, const DTriangle& t, DVec3* nearest = nullptr);

/// The distance from the segment [p0, p1] to the closed triangle (golden section over the
/// segment).
double SegmentTriangleDistance(const DVec3& p0, const DVec3& p1, const DTriangle& t);

/// A ball cast: the first contact distance of a ball of `radius` moving along origin + t d,
/// t in [0, max_distance], with the triangle.
struct TriangleCastOracle {
  double start_gap = 0.0;  // phi(0)
  bool hits = false;
  double t_hit = 0.0;
  double min_gap = 0.0;  // min phi over the path
};
TriangleCastOracle SphereCastByDistance(const DVec3& origin, const DVec3& direction,
                                        double max_distance, double radius, const DTriangle& t);

/// True when the box (half extents `e`, centre and unit axes from `box`) shares a point with the
/// triangle, grown by `grow` (> 0 to accept touching within rounding, < 0 to require a margin).
bool BoxTriangleOverlapByClipping(const PosedShape& box, const DTriangle& t, double grow);

/// The support of the triangle along `n`: max over its vertices of n.v.
double TriangleSupport(const DTriangle& t, const DVec3& n);

/// The penetration depth of the shape B (sphere, box or capsule) and the triangle A, exactly:
/// B is a core C (a point, a segment or a box) grown by a radius r (0 for a box). When C is apart
/// from A the depth is r - dist(C, A) (negative: apart). When C meets A, the origin lies in the
/// polytope P = A - C, the convex hull of the differences of their vertices, and the depth is
/// r plus the distance from the origin to P's boundary: the least offset of P's facet planes,
/// found by trying the plane through every three of the (up to 24) points and keeping those with
/// every point on one side. Only the depth, no direction.
double TrianglePenetrationByHull(const DTriangle& t, const Shape& shape, const Pose& pose);

/// A random triangle near the origin of size ~`scale`: ordinary, sliver, right-angled, with a
/// repeated vertex, collinear, or a single point, labelled in `*kind`.
Triangle RandomTriangle(std::mt19937& rng, double scale, const char** kind);

/// Whether the exact overlap of a round shape (sphere or capsule) at `pose` with the triangle:
/// the distance of its core to the triangle minus its radius (< 0 overlapping).
double RoundGap(const Shape& shape, const Pose& pose, const DTriangle& t);

}  // namespace collide::oracle
