#pragma once

// The per-triangle work shared by the queries on meshes (mesh_query.cc) and heightfields
// (heightfield_query.cc): mapping a cast into the asset's frame and back, the candidate test of
// a sphere cast against one triangle with the start-overlapping rule and the tie order, and the
// rounding pads of the local broad phases. Not part of the public API.

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "geom/aabb.h"
#include "geom/bounds.h"
#include "geom/cast.h"
#include "geom/triangle.h"
#include "geom/triangle_cast.h"
#include "geom/triangle_distance.h"
#include "mesh/mesh_hit.h"
#include "mesh/scaled_pose.h"

namespace collide::mesh_internal {

/// The pad of a local broad phase per unit of coordinate magnitude: 64 float ulps (2^-17), as
/// the world's broad phase (query/query_engine.h, kRoundingPadPerMagnitude). Boxes are compared
/// with slab distances computed from shifted origins; the pad keeps every triangle the exact
/// test would touch among the candidates, and the exact test alone decides.
inline constexpr float kPadPerMagnitude = 0x1p-17f;

/// A cast in an asset's local frame.
struct LocalCast {
  Vec3 origin{};
  /// The world direction rotated into the frame (unit to rounding).
  Vec3 direction{};
  /// Its reciprocal, per component (+-inf for a zero component).
  Vec3 inv_direction{};
  /// The world max distance over the scale.
  float max_distance = 0.0f;
};

inline LocalCast ToLocalCast(const ScaledPose& pose, const Ray& ray) {
  LocalCast c;
  c.origin = ToLocalPoint(pose, ray.origin);
  c.direction = ToLocalVector(pose, ray.direction);
  c.inv_direction = Vec3{1.0f / c.direction.x, 1.0f / c.direction.y, 1.0f / c.direction.z};
  c.max_distance = ray.max_distance / pose.scale;
  return c;
}

/// The largest coordinate magnitude a local query at `p` with reach `r` works with in an asset
/// whose local box is `bounds`.
inline float LocalMagnitude(const Aabb& bounds, const Vec3& p, float r) {
  return std::max(Magnitude(bounds), MaxComponent(Abs(p))) + r;
}

/// The half extent of the box a ball of radius `r` sweeps in the local broad phase: the radius
/// and its rounding pad.
inline float SweptReach(const Aabb& bounds, const LocalCast& c, float r) {
  return r + kPadPerMagnitude * LocalMagnitude(bounds, c.origin, r);
}

/// The best candidate of a sphere cast so far. A ball that starts touching a triangle beats any
/// later contact; among those, the triangle nearest the centre; then the lowest index.
struct CastBest {
  bool found = false;
  bool start = false;
  float t = 0.0f;
  /// Start overlaps: the squared distance from the centre to the triangle.
  float d2 = 0.0f;
  uint32_t id = 0;
  /// The contact in the local frame.
  Vec3 point{};
  Vec3 normal{};
};

/// The ball of radius `r` (> 0) cast along `c` within [0, t_max] against `tri` (index `id`):
/// updates `best` when this triangle's contact is better.
inline void CastTriangle(const Triangle& tri, uint32_t id, const LocalCast& c, float r, float t_max,
                         CastBest* best) {
  // The triangle's box grown by r (and its pad) against the path: most candidates end here.
  const float grow =
      r + kPadPerMagnitude * (MaxComponent(Abs(tri.a)) + MaxComponent(Abs(c.origin)) + r);
  const Aabb box = Expand(Aabb{Min(tri.a, Min(tri.b, tri.c)), Max(tri.a, Max(tri.b, tri.c))}, grow);
  float t0, t1;
  if (!RayAabbInterval(box, c.origin, c.inv_direction, t_max, &t0, &t1)) return;
  if (t0 <= 0.0f) {
    // The centre is within reach at the start: a start overlap when the triangle is within r.
    const TrianglePoint tp = NearestTrianglePoint(c.origin, tri);
    const float d2 = DistanceSquared(tp.point, c.origin);
    if (d2 <= r * r) {
      if (!best->start || d2 < best->d2 || (d2 == best->d2 && id < best->id)) {
        best->found = true;
        best->start = true;
        best->t = 0.0f;
        best->d2 = d2;
        best->id = id;
        best->point = tp.point;
        const Vec3 n = TriangleUnitNormal(tri.a, tri.b, tri.c, -c.direction);
        const Vec3 face = Dot(n, c.direction) > 0.0f ? -n : n;
        best->normal = d2 > 0.0f ? Normalize(c.origin - tp.point) : face;
      }
      return;
    }
  }
  if (best->start) return;
  TriangleContact tc;
  if (!SphereCastTriangle(c.origin, c.direction, r, t_max, tri, &tc)) return;
  if (!best->found || tc.t < best->t || (tc.t == best->t && id < best->id)) {
    best->found = true;
    best->t = tc.t;
    best->id = id;
    best->point = tc.point;
    best->normal = tc.normal;
  }
}

/// The world hit of a cast's best candidate.
inline MeshHit CastHitOf(const ScaledPose& pose, const Ray& path, const CastBest& best) {
  MeshHit hit;
  hit.distance = std::fmin(best.t * pose.scale, path.max_distance);
  hit.point = ToWorldPoint(pose, best.point);
  hit.normal = ToWorldVector(pose, best.normal);
  hit.triangle = best.id;
  hit.start_overlapping = best.start;
  return hit;
}

/// The local box of a shape at `pose` (local frame), padded for rounding against an asset whose
/// local box is `bounds`.
inline Aabb PaddedBounds(const Aabb& bounds, const Shape& shape, const Pose& pose) {
  const Aabb b = collide::Bounds(shape, pose);
  return Expand(b, kPadPerMagnitude * std::max(Magnitude(b), Magnitude(bounds)));
}

/// True when the triangle's box meets `box`.
inline bool TriangleBoxOverlaps(const Triangle& t, const Aabb& box) {
  return Overlaps(Aabb{Min(t.a, Min(t.b, t.c)), Max(t.a, Max(t.b, t.c))}, box);
}

/// A contact found in the local frame, in world terms.
inline MeshContact ToWorldContact(const ScaledPose& pose, const MeshContact& local) {
  return MeshContact{local.triangle, local.depth * pose.scale, ToWorldVector(pose, local.normal),
                     ToWorldPoint(pose, local.point)};
}

/// The pad of a point query at `q` with radius `r`.
inline float LocalPad(const Aabb& bounds, const Vec3& q, float r) {
  return kPadPerMagnitude * LocalMagnitude(bounds, q, r);
}

/// The squared search radius of a nearest-point query, padded.
inline float PaddedSquare(const Aabb& bounds, const Vec3& q, float r) {
  const float padded = r + LocalPad(bounds, q, r);
  return padded * padded;
}

/// The nearest point `tp` of triangle `tri` (index `id`) to the local query point `q`, in world
/// terms.
inline MeshPoint ToWorldPoint(const ScaledPose& pose, const Vec3& q, const Triangle& tri,
                              uint32_t id, const TrianglePoint& tp) {
  MeshPoint out;
  out.triangle = id;
  const Vec3 away = q - tp.point;
  const float d = Length(away);
  out.distance = d * pose.scale;
  out.point = ToWorldPoint(pose, tp.point);
  const Vec3 n =
      d > 0.0f ? away * (1.0f / d) : TriangleUnitNormal(tri.a, tri.b, tri.c, Vec3{0, 1, 0});
  out.normal = ToWorldVector(pose, n);
  return out;
}

}  // namespace collide::mesh_internal
