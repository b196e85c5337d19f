#pragma once

#include "geom/cast.h"
#include "geom/pose.h"
#include "geom/shapes.h"

namespace collide {

// Ray casts against one posed shape. Each returns true and fills `*hit` when the ray touches the
// closed shape within [0, ray.max_distance]; `*hit` is untouched on a miss. A ray starting
// inside (or on the surface of) the shape hits at distance 0 with normal = -ray.direction and
// start_overlapping = true. Grazing (tangent) rays hit.

/// Ray against a sphere: solve |m + t d|^2 = r^2 with m = origin - centre.
bool Raycast(const Sphere& sphere, const Pose& pose, const Ray& ray, CastHit* hit);
/// Ray against a box, by slabs in the box's local frame; the normal is the entered face's.
bool Raycast(const Box& box, const Pose& pose, const Ray& ray, CastHit* hit);
/// Ray against a capsule: the infinite cylinder about the segment, then the end caps.
bool Raycast(const Capsule& capsule, const Pose& pose, const Ray& ray, CastHit* hit);
/// Ray against any shape.
bool Raycast(const Shape& shape, const Pose& pose, const Ray& ray, CastHit* hit);

}  // namespace collide
