#pragma once

#include "geom/pose.h"
#include "geom/shapes.h"

namespace collide {

// Boolean overlap tests for every pair of shapes. Closed shapes: touching counts as overlap.
// Each pair is exact (no GJK tolerance); symmetric overloads take the arguments either way.

bool Overlap(const Sphere& a, const Pose& pa, const Sphere& b, const Pose& pb);
/// Sphere against box: clamp the centre in the box frame, compare the squared distance with
/// r^2 (Ericson 5.2).
bool Overlap(const Sphere& a, const Pose& pa, const Box& b, const Pose& pb);
bool Overlap(const Sphere& a, const Pose& pa, const Capsule& b, const Pose& pb);
bool Overlap(const Box& a, const Pose& pa, const Sphere& b, const Pose& pb);
/// Box against box: AABB interval test when both are axis aligned, otherwise the 15-axis
/// separating-axis test with the parallel-edge guard (seeds 001, 002).
bool Overlap(const Box& a, const Pose& pa, const Box& b, const Pose& pb);
/// Box against capsule: the segment's distance to the box against the radius.
bool Overlap(const Box& a, const Pose& pa, const Capsule& b, const Pose& pb);
bool Overlap(const Capsule& a, const Pose& pa, const Sphere& b, const Pose& pb);
bool Overlap(const Capsule& a, const Pose& pa, const Box& b, const Pose& pb);
bool Overlap(const Capsule& a, const Pose& pa, const Capsule& b, const Pose& pb);
/// Any pair, dispatched through a table indexed by both shape types.
bool Overlap(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb);

}  // namespace collide
