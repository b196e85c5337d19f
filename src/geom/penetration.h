#pragma once

#include "geom/pose.h"
#include "geom/shapes.h"
#include "geom/vec3.h"

namespace collide {

/// The minimum translation that separates two overlapping shapes A and B.
struct Penetration {
  /// The penetration depth (>= 0): the shortest distance B must move to only touch A.
  float depth = 0.0f;
  /// Unit minimum translation direction, pointing out of A towards B: moving B by
  /// depth * normal leaves the two touching.
  Vec3 normal{};
  /// The contact point on A's surface: where A and B touch once B has moved by depth * normal,
  /// so `point` lies on A's surface and `point - depth * normal` on B's.
  Vec3 point{};
};

// Penetration for every pair. Each returns true and fills `*out` when the closed shapes overlap
// (touching gives depth 0); `*out` is untouched otherwise. Depth and direction are exact for
// every pair (the separating-axis set is complete for boxes and box-segment pairs).

bool Penetrate(const Sphere& a, const Pose& pa, const Sphere& b, const Pose& pb, Penetration* out);
bool Penetrate(const Sphere& a, const Pose& pa, const Box& b, const Pose& pb, Penetration* out);
bool Penetrate(const Sphere& a, const Pose& pa, const Capsule& b, const Pose& pb, Penetration* out);
bool Penetrate(const Box& a, const Pose& pa, const Sphere& b, const Pose& pb, Penetration* out);
bool Penetrate(const Box& a, const Pose& pa, const Box& b, const Pose& pb, Penetration* out);
bool Penetrate(const Box& a, const Pose& pa, const Capsule& b, const Pose& pb, Penetration* out);
bool Penetrate(const Capsule& a, const Pose& pa, const Sphere& b, const Pose& pb, Penetration* out);
bool Penetrate(const Capsule& a, const Pose& pa, const Box& b, const Pose& pb, Penetration* out);
bool Penetrate(const Capsule& a, const Pose& pa, const Capsule& b, const Pose& pb,
               Penetration* out);
/// Any pair, dispatched through a table indexed by both shape types.
bool Penetrate(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, Penetration* out);

}  // namespace collide
