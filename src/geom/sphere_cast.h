#pragma once

#include "geom/cast.h"
#include "geom/pose.h"
#include "geom/shapes.h"

namespace collide {

// Sphere casts: a ball of `radius` (>= 0) whose centre moves along `path` against one posed
// shape. Each returns true and fills `*hit` when the ball touches the closed shape with its
// centre within [0, path.max_distance] of the path. `hit->distance` is the distance the centre
// has moved at first contact, `hit->point` the contact point on the target's surface and
// `hit->normal` the target's outward normal there. A ball of radius > 0 overlapping (or
// touching) the shape at the start reports distance 0, start_overlapping = true, as `point` the
// target's surface point nearest the ball's centre (the contact of the minimum translation) and
// as normal the separating (MTV) direction, the target's outward normal there: moving the ball
// along it by the penetration depth separates them. Radius 0 is the ray cast (ray_cast.h) in
// every case, bit for bit: a start inside reports the origin and -direction, as a ray does.

/// Against a sphere: a ray against the sphere of radius r1 + r2 (Ericson 5.5).
bool SphereCast(const Sphere& sphere, const Pose& pose, const Ray& path, float radius,
                CastHit* hit);
/// Against a box: a ray against the box rounded by `radius` (faces, edge cylinders, corner
/// balls).
bool SphereCast(const Box& box, const Pose& pose, const Ray& path, float radius, CastHit* hit);
/// Against a capsule: a ray against the capsule of radius r1 + r2.
bool SphereCast(const Capsule& capsule, const Pose& pose, const Ray& path, float radius,
                CastHit* hit);
/// Against any shape.
bool SphereCast(const Shape& shape, const Pose& pose, const Ray& path, float radius, CastHit* hit);

}  // namespace collide
