#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>

#include "geom/aabb.h"
#include "geom/bounds.h"
#include "geom/cast.h"
#include "geom/closest_point.h"
#include "geom/overlap.h"
#include "geom/penetration.h"
#include "geom/ray_cast.h"
#include "geom/sphere_cast.h"
#include "query/collector.h"
#include "query/collision_world.h"
#include "query/filter.h"
#include "query/hit.h"

namespace collide {

// The query engine: a broad phase over a candidate source, then the exact narrow phase on each
// candidate the filter accepts, feeding a collector (collector.h) whose MaxDistance() clips the
// traversal. Templates, so the per-candidate path is inlined.
//
// Candidate sources. Where the candidates come from, and in which state, is the engine's first
// template parameter (CandidateSource below): CurrentTree, the world's trees now (static first,
// then dynamic), or history/past_tick.h's PastTick, the pose history's index of a past tick
// with each candidate's state at that tick. The casts and box queries below are written once
// for both.
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

/// Where a query's candidates come from. A source has:
///   const CollisionWorld& world() const — the world (its magnitude bounds every state);
///   float growth() const — how far any candidate may reach beyond the box it is indexed by;
///   void Cast(origin, unit_dir, half_extent, mask, collector, visit) — a box of `half_extent`
///       swept from `origin` along `unit_dir` up to collector.MaxDistance(): calls
///       `float visit(const Body& body, float max_distance)` per candidate with the body's state
///       the source stands for (the return value clips the sweep, negative stops it), stopping
///       early once collector.Done();
///   void Gather(box, mask, collector, visit) — the candidates whose boxes overlap `box`:
///       `bool visit(const Body& body)` returns false to stop.
template <typename S>
concept CandidateSource = requires(const S& source) {
  { source.world() } -> std::same_as<const CollisionWorld&>;
  { source.growth() } -> std::convertible_to<float>;
};

namespace internal {

// The kinds in traversal order: statics first, so a closest hit among them clips the walk of
// the (usually larger and changing) dynamic tree.
inline constexpr BodyKind kTraversalOrder[2] = {BodyKind::kStatic, BodyKind::kDynamic};

}  // namespace internal

/// The candidate source of queries at the current tick: the world's trees, statics first.
class CurrentTree {
 public:
  explicit CurrentTree(const CollisionWorld& world) : world_(world) {}

  /// The world queried.
  const CollisionWorld& world() const { return world_; }
  /// Bodies lie in their tight boxes.
  static constexpr float growth() { return 0.0f; }

  /// The bodies of each tree, statics first, whose boxes the swept box meets (CandidateSource).
  template <HitCollector Collector, typename Visit>
  void Cast(const Vec3& origin, const Vec3& unit_dir, const Vec3& half_extent, uint32_t mask,
            const Collector& collector, Visit&& visit) const {
    for (BodyKind kind : internal::kTraversalOrder) {
      const DynamicTree& tree = world_.tree(kind);
      if (tree.ProxyCount() == 0) continue;
      if (collector.Done()) return;
      tree.SweptCast(origin, unit_dir, collector.MaxDistance(), half_extent, mask,
                     [&](uint32_t user, int32_t /*proxy*/, float max_distance) -> float {
                       return visit(world_.body(static_cast<BodyHandle>(user)), max_distance);
                     });
    }
  }

  /// The bodies of each tree, statics first, whose boxes overlap `box` (CandidateSource).
  template <HitCollector Collector, typename Visit>
  void Gather(const Aabb& box, uint32_t mask, const Collector& collector, Visit&& visit) const {
    for (BodyKind kind : internal::kTraversalOrder) {
      const DynamicTree& tree = world_.tree(kind);
      if (tree.ProxyCount() == 0) continue;
      if (collector.Done()) return;
      tree.QueryAabb(box, mask, [&](uint32_t user, int32_t /*proxy*/) -> bool {
        return visit(world_.body(static_cast<BodyHandle>(user)));
      });
    }
  }

 private:
  const CollisionWorld& world_;
};

namespace internal {

// The magnitude a cast from `origin` with a ball of `radius` works at in `world`.
inline float CastMagnitude(const CollisionWorld& world, const Vec3& origin, float radius) {
  return std::max(world.magnitude(), MaxComponent(Abs(origin))) + radius;
}

// The magnitude a box-shaped query of `region` works at in `world`.
inline float RegionMagnitude(const CollisionWorld& world, const Aabb& region) {
  return std::max(world.magnitude(), Magnitude(region));
}

// The half extent of the swept box that finds every body a ball of `radius` may meet along a
// path from `origin`: the ball, grown by the source's growth and padded for rounding.
template <CandidateSource Source>
float CastReach(const Source& source, const Vec3& origin, float radius) {
  const float grow = radius + source.growth();
  return grow + RoundingPad(CastMagnitude(source.world(), origin, grow));
}

inline QueryHit ToQueryHit(uint64_t id, const CastHit& hit) {
  return QueryHit{.body_id = id,
                  .distance = hit.distance,
                  .depth = 0.0f,
                  .point = hit.point,
                  .normal = hit.normal,
                  .start_overlapping = hit.start_overlapping};
}

// The narrow phase of one cast candidate: the filter, then `narrow(body, path clipped to the
// collector, &hit)`; returns the distance the sweep may still go (negative: stop).
template <HitCollector Collector, typename Narrow>
float CastCandidate(const Body& body, float max_distance, const Ray& path,
                    const QueryFilter& filter, Collector& collector, Narrow&& narrow) {
  if (!Accepts(filter, body.id, body.category, body.mask)) return max_distance;
  Ray clipped = path;
  clipped.max_distance = collector.MaxDistance();
  CastHit hit;
  if (narrow(body, clipped, &hit)) {
    collector.Add(ToQueryHit(body.id, hit));
    if (collector.Done()) return -1.0f;
  }
  return collector.MaxDistance();
}

// The common body of ray and sphere casts (a ball of `radius`, 0 for a ray):
// `narrow(body, path, &hit)` runs the exact test.
template <CandidateSource Source, HitCollector Collector, typename Narrow>
void Cast(const Source& source, const Ray& path, float radius, const QueryFilter& filter,
          Collector& collector, Narrow&& narrow) {
  const float reach = CastReach(source, path.origin, radius);
  source.Cast(path.origin, path.direction, Vec3{reach, reach, reach}, filter.mask, collector,
              [&](const Body& body, float max_distance) -> float {
                return CastCandidate(body, max_distance, path, filter, collector, narrow);
              });
}

// The common body of the box-shaped broad phases: `narrow(body, &hit)` decides and fills.
template <CandidateSource Source, HitCollector Collector, typename Narrow>
void Gather(const Source& source, const Aabb& region, const QueryFilter& filter,
            Collector& collector, Narrow&& narrow) {
  const Aabb grown = Expand(region, source.growth());
  const Aabb padded = Expand(grown, RoundingPad(RegionMagnitude(source.world(), grown)));
  source.Gather(padded, filter.mask, collector, [&](const Body& body) -> bool {
    if (!Accepts(filter, body.id, body.category, body.mask)) return true;
    QueryHit hit{.body_id = body.id};
    if (narrow(body, &hit) && hit.distance <= collector.MaxDistance()) collector.Add(hit);
    return !collector.Done();
  });
}

}  // namespace internal

/// Casts a ray (unit direction, max distance) against the source's bodies.
template <CandidateSource Source, HitCollector Collector>
void Raycast(const Source& source, const Ray& ray, const QueryFilter& filter,
             Collector& collector) {
  internal::Cast(source, ray, 0.0f, filter, collector,
                 [](const Body& body, const Ray& r, CastHit* hit) {
                   return Raycast(body.shape, body.pose, r, hit);
                 });
}

/// Casts a ball of `radius` (>= 0) along `path` against the source's bodies.
template <CandidateSource Source, HitCollector Collector>
void SphereCast(const Source& source, const Ray& path, float radius, const QueryFilter& filter,
                Collector& collector) {
  internal::Cast(source, path, radius, filter, collector,
                 [radius](const Body& body, const Ray& r, CastHit* hit) {
                   return SphereCast(body.shape, body.pose, r, radius, hit);
                 });
}

/// The bodies a posed shape overlaps (touching counts). With `detail`, each hit carries the
/// penetration depth, the contact point on the body and the direction (out of the body) that
/// moves the query shape out by that depth.
template <CandidateSource Source, HitCollector Collector>
void OverlapShape(const Source& source, const Shape& shape, const Pose& pose, bool detail,
                  const QueryFilter& filter, Collector& collector) {
  internal::Gather(source, Bounds(shape, pose), filter, collector,
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
template <CandidateSource Source, HitCollector Collector>
void WithinRadius(const Source& source, const Vec3& point, float radius, const QueryFilter& filter,
                  Collector& collector) {
  Aabb region = Expand(Aabb{point, point}, radius);
  internal::Gather(source, region, filter, collector, [&](const Body& body, QueryHit* hit) {
    ClosestPointResult c = ClosestPoint(body.shape, body.pose, point);
    if (c.signed_distance > radius) return false;
    hit->distance = std::max(c.signed_distance, 0.0f);
    hit->point = c.point;
    hit->normal = c.normal;
    return true;
  });
}

/// The bodies whose tight bounds overlap an axis-aligned region (bounds only, no exact shape).
template <CandidateSource Source, HitCollector Collector>
void QueryRegion(const Source& source, const Aabb& region, const QueryFilter& filter,
                 Collector& collector) {
  internal::Gather(source, region, filter, collector, [&](const Body& body, QueryHit*) {
    return Overlaps(Bounds(body.shape, body.pose), region);
  });
}

// The same queries against the world's bodies now (CurrentTree).

/// Raycast over CurrentTree(world).
template <HitCollector Collector>
void Raycast(const CollisionWorld& world, const Ray& ray, const QueryFilter& filter,
             Collector& collector) {
  Raycast(CurrentTree(world), ray, filter, collector);
}

/// SphereCast over CurrentTree(world).
template <HitCollector Collector>
void SphereCast(const CollisionWorld& world, const Ray& path, float radius,
                const QueryFilter& filter, Collector& collector) {
  SphereCast(CurrentTree(world), path, radius, filter, collector);
}

/// OverlapShape over CurrentTree(world).
template <HitCollector Collector>
void OverlapShape(const CollisionWorld& world, const Shape& shape, const Pose& pose, bool detail,
                  const QueryFilter& filter, Collector& collector) {
  OverlapShape(CurrentTree(world), shape, pose, detail, filter, collector);
}

/// WithinRadius over CurrentTree(world).
template <HitCollector Collector>
void WithinRadius(const CollisionWorld& world, const Vec3& point, float radius,
                  const QueryFilter& filter, Collector& collector) {
  WithinRadius(CurrentTree(world), point, radius, filter, collector);
}

/// QueryRegion over CurrentTree(world).
template <HitCollector Collector>
void QueryRegion(const CollisionWorld& world, const Aabb& region, const QueryFilter& filter,
                 Collector& collector) {
  QueryRegion(CurrentTree(world), region, filter, collector);
}

}  // namespace collide
