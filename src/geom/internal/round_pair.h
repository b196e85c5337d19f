#pragma once

// The closest points of two round shapes (sphere or capsule), shared by overlap.cc and
// penetration.cc so that both answer the overlap question with the same arithmetic. Not part
// of the public API.

#include "geom/pose.h"
#include "geom/internal/segment.h"
#include "geom/shapes.h"
#include "geom/vec3.h"

namespace collide::geom_internal {

/// A sphere or capsule as its core segment c + t u (t in [-1, 1]) and radius, in world axes
/// relative to some origin.
struct RoundShape {
  Vec3 c{};
  Vec3 u{};
  float radius = 0.0f;
};

/// The sphere as a zero-length segment at `centre`.
inline RoundShape MakeRound(const Sphere& s, const Vec3& centre, const Quat&) {
  return {centre, Vec3{}, s.radius};
}
/// The capsule's segment: local Y, half height h, rotated into world axes.
inline RoundShape MakeRound(const Capsule& c, const Vec3& centre, const Quat& rotation) {
  return {centre, Rotate(rotation, Vec3{0.0f, c.half_height, 0.0f}), c.radius};
}

/// A and B relative to A's centre, and their core segments' closest points.
struct RoundPair {
  RoundShape a;
  RoundShape b;
  SegmentPair closest;
};

template <typename A, typename B>
inline RoundPair MakeRoundPair(const A& a, const Pose& pa, const B& b, const Pose& pb) {
  RoundPair p;
  // Relative to A's centre: the offset is computed once, before anything is scaled or rotated.
  p.a = MakeRound(a, Vec3{}, pa.rotation);
  p.b = MakeRound(b, pb.position - pa.position, pb.rotation);
  p.closest = ClosestSegmentSegment(p.a.c, p.a.u, p.b.c, p.b.u);
  return p;
}

/// True when the closed round shapes meet: dist(segments)^2 <= (ra + rb)^2.
inline bool RoundOverlap(const RoundPair& p) {
  const float r = p.a.radius + p.b.radius;
  return p.closest.distance_squared <= r * r;
}

}  // namespace collide::geom_internal
