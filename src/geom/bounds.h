#pragma once

#include "geom/aabb.h"
#include "geom/pose.h"
#include "geom/shapes.h"

namespace collide {

/// The tight world AABB of a posed sphere.
Aabb Bounds(const Sphere& s, const Pose& pose);
/// The tight world AABB of a posed box, by Arvo's method (Graphics Gems; Ericson 4.2):
/// centre = R·c + t, half extents = |R|·e.
Aabb Bounds(const Box& b, const Pose& pose);
/// The tight world AABB of a posed capsule: the segment's end points' box grown by the radius.
Aabb Bounds(const Capsule& c, const Pose& pose);
/// The tight world AABB of any posed shape.
Aabb Bounds(const Shape& s, const Pose& pose);

}  // namespace collide
