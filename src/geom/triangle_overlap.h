#pragma once

#include "geom/penetration.h"
#include "geom/pose.h"
#include "geom/shapes.h"
#include "geom/triangle.h"

namespace collide {

// Overlap and penetration of a posed sphere, box or capsule with one closed triangle (both sides;
// a triangle of zero area is its segment or point). The triangle and the pose are in one frame
// (a mesh's local frame). Touching counts as overlapping.

/// True when the shape at `pose` and the triangle share a point. Sphere: the triangle's point
/// nearest the centre within the radius; capsule: the segment's distance to the triangle within
/// the radius; box: no separating axis among the box's 3 face normals, the triangle's normal and
/// the 9 crosses of their edges (Akenine-Moller's 13 axes).
bool OverlapTriangle(const Shape& shape, const Pose& pose, const Triangle& t);

/// The minimum translation that separates the shape (B) from the triangle (A): true when they
/// overlap, with `depth` the shortest distance the shape must move to only touch the triangle,
/// `normal` the unit direction it moves (out of the triangle, towards the shape) and `point` a
/// point of the triangle where they touch after the move. Round shapes whose core (centre or
/// segment) is apart from the triangle: radius - distance along the direction from the triangle's
/// nearest point; cores that meet the triangle and boxes: the least overlap over the separating
/// axes of the pair (the face normals of their Minkowski difference: the triangle's normal, the
/// box's faces, the crosses of edges), plus the radius for a capsule. A core exactly on the
/// triangle's plane leaves along the front normal.
bool PenetrateTriangle(const Shape& shape, const Pose& pose, const Triangle& t, Penetration* out);

}  // namespace collide
