#pragma once

#include <algorithm>

#include "geom/aabb.h"
#include "geom/bounds.h"
#include "geom/cast.h"
#include "geom/closest_point.h"
#include "geom/overlap.h"
#include "geom/penetration.h"
#include "geom/ray_cast.h"
#include "geom/sphere_cast.h"
#include "query/collision_world.h"
#include "query/filter.h"
#include "query/hit.h"

namespace collide {

// The query engine: a broad phase over the world's trees (static first, then dynamic), then the
// exact narrow phase on each candidate the filter accepts, feeding a collector (collector.h)
// whose MaxDistance() clips the traversal. Templates, so the per-candidate path is inlined.
//
// Conservative pruning. The trees compare slab distances, computed in world coordinates from
// the leaf boxes, with the collector's MaxDistance(), a narrow-phase distance computed in the
// body's own frame; box queries compare boxes where the narrow phase compares exact shapes. The
// two round differently, and with tight leaves (fat_margin 0) a body whose box face is its own
// surface (an unrotated box, a sphere's pole) can be entered an ulp after the narrow phase's
// distance to it. Pruning at the current best would then drop a body that ties it (the larger
// id would win a closest query, or take a place in a truncated list) or, at a touching contact,
// one the narrow phase hits. So every broad phase runs with the query padded by RoundingPad of
// the largest coordinate magnitude involved, the world's and the query's: the narrow phase and
// the slab test then cannot disagree about a candidate, and the narrow phase decides alone.

/// The broad-phase pad per unit of coordinate magnitude: 64 float ulps (2^-17). The narrow
/// phase's distances and the slab test's entry distances each err by a few ulps of the
/// magnitudes they compute with; a randomised search over every shape and rotation kind,
/// aiming at the points where a shape touches its bounding box, found their disagreement, in
/// length along the entered axis, below 16 ulps.
inline constexpr float kRoundingPadPerMagnitude = 0x1p-17f;

/// The distance (length units) by which the broad phase pads a query whose coordinates, and
/// those of every body it may meet, lie within `magnitude` of the origin on each axis.
inline float RoundingPad(float magnitude) { return kRoundingPadPerMagnitude * magnitude; }

namespace internal {

// The magnitude a cast from `origin` with a ball of `radius` works at in `world`.
inline float CastMagnitude(const CollisionWorld& world, const Vec3& origin, float radius) {
  return std::max(world.magnitude(), MaxComponent(Abs(origin))) + radius;
}

// The magnitude a box-shaped query of `region` works at in `world`.
inline float RegionMagnitude(const CollisionWorld& world, const Aabb& region) {
  return std::max(world.magnitude(), Magnitude(region));
}

// The kinds in traversal order: statics first, so a closest hit among them clips the walk of
// the (usually larger and changing) dynamic tree.
inline constexpr BodyKind kTraversalOrder[2] = {BodyKind::kStatic, BodyKind::kDynamic};

inline QueryHit ToQueryHit(uint64_t id, const CastHit& hit) {
  return QueryHit{.body_id = id,
                  .distance = hit.distance,
                  .depth = 0.0f,
                  .point = hit.point,
                  .normal = hit.normal,
                  .start_overlapping = hit.start_overlapping};
}

// The common body of ray and sphere casts (a ball of `radius`, 0 for a ray):
// `narrow(body, path, &hit)` runs the exact test.
template <typename Collector, typename Narrow>
void Cast(const CollisionWorld& world, const Ray& path, float radius, const QueryFilter& filter,
          Collector& collector, Narrow&& narrow) {
  const float reach = radius + RoundingPad(CastMagnitude(world, path.origin, radius));
  const Vec3 half_extent{reach, reach, reach};
  for (BodyKind kind : kTraversalOrder) {
    const DynamicTree& tree = world.tree(kind);
    if (tree.ProxyCount() == 0) continue;
    if (collector.Done()) return;
    auto visit = [&](uint32_t user, int32_t /*proxy*/, float max_distance) -> float {
      const Body& body = world.body(static_cast<BodyHandle>(user));
      if (!Accepts(filter, body.id, body.category, body.mask)) return max_distance;
      Ray clipped = path;
      clipped.max_distance = collector.MaxDistance();
      CastHit hit;
      if (narrow(body, clipped, &hit)) {
        collector.Add(ToQueryHit(body.id, hit));
        if (collector.Done()) return -1.0f;
      }
      return collector.MaxDistance();
    };
    tree.SweptCast(path.origin, path.direction, collector.MaxDistance(), half_extent, filter.mask,
                   visit);
  }
}

// The common body of the box-shaped broad phases: `narrow(body, &hit)` decides and fills.
template <typename Collector, typename Narrow>
void Gather(const CollisionWorld& world, const Aabb& region, const QueryFilter& filter,
            Collector& collector, Narrow&& narrow) {
  const Aabb padded = Expand(region, RoundingPad(RegionMagnitude(world, region)));
  for (BodyKind kind : kTraversalOrder) {
    const DynamicTree& tree = world.tree(kind);
    if (tree.ProxyCount() == 0) continue;
    if (collector.Done()) return;
    tree.QueryAabb(padded, filter.mask, [&](uint32_t user, int32_t /*proxy*/) -> bool {
      const Body& body = world.body(static_cast<BodyHandle>(user));
      if (!Accepts(filter, body.id, body.category, body.mask)) return true;
      QueryHit hit{.body_id = body.id};
      if (narrow(body, &hit) && hit.distance <= collector.MaxDistance()) collector.Add(hit);
      return !collector.Done();
    });
  }
}

}  // namespace internal

/// Casts a ray (unit direction, max distance) against the world's bodies.
template <typename Collector>
void CastRay(const CollisionWorld& world, const Ray& ray, const QueryFilter& filter,
             Collector& collector) {
  internal::Cast(world, ray, 0.0f, filter, collector,
                 [](const Body& body, const Ray& r, CastHit* hit) {
                   return RayCast(body.shape, body.pose, r, hit);
                 });
}

/// Casts a ball of `radius` (>= 0) along `path` against the world's bodies.
template <typename Collector>
void CastSphere(const CollisionWorld& world, const Ray& path, float radius,
                const QueryFilter& filter, Collector& collector) {
  internal::Cast(world, path, radius, filter, collector,
                 [radius](const Body& body, const Ray& r, CastHit* hit) {
                   return SphereCast(body.shape, body.pose, r, radius, hit);
                 });
}

/// The bodies a posed shape overlaps (touching counts). With `detail`, each hit carries the
/// penetration depth, the contact point on the body and the direction (out of the body) that
/// moves the query shape out by that depth.
template <typename Collector>
void OverlapShape(const CollisionWorld& world, const Shape& shape, const Pose& pose, bool detail,
                  const QueryFilter& filter, Collector& collector) {
  internal::Gather(world, Bounds(shape, pose), filter, collector,
                   [&](const Body& body, QueryHit* hit) {
                     if (!detail) return Overlap(body.shape, body.pose, shape, pose);
                     Penetration p;
                     if (!Penetrate(body.shape, body.pose, shape, pose, &p)) return false;
                     hit->depth = p.depth;
                     hit->point = p.point;
                     hit->normal = p.normal;
                     return true;
                   });
}

/// The bodies within `radius` (>= 0) of a point, by the distance from the point to each body's
/// surface (0 inside), with the nearest surface point and its outward normal.
template <typename Collector>
void WithinRadius(const CollisionWorld& world, const Vec3& point, float radius,
                  const QueryFilter& filter, Collector& collector) {
  Aabb region = Expand(Aabb{point, point}, radius);
  internal::Gather(world, region, filter, collector, [&](const Body& body, QueryHit* hit) {
    ClosestPointResult c = ClosestPoint(body.shape, body.pose, point);
    if (c.signed_distance > radius) return false;
    hit->distance = std::max(c.signed_distance, 0.0f);
    hit->point = c.point;
    hit->normal = c.normal;
    return true;
  });
}

/// The bodies whose tight bounds overlap an axis-aligned region (bounds only, no exact shape).
template <typename Collector>
void QueryRegion(const CollisionWorld& world, const Aabb& region, const QueryFilter& filter,
                 Collector& collector) {
  internal::Gather(world, region, filter, collector, [&](const Body& body, QueryHit*) {
    return Overlaps(Bounds(body.shape, body.pose), region);
  });
}

}  // namespace collide
