#pragma once

#include <algorithm>
#include <cstdint>

#include "query/pose_history.h"
#include "query/query_engine.h"

namespace collide {

// Queries at a past tick: the engine of query_engine.h run over the history's index of the
// segment holding that tick (PoseHistory::CastCandidates / QueryCandidates: leaf boxes that
// bound each body over the segment), grown by the interpolation slack when interpolating, each
// candidate tested exactly at its historic (or interpolated) state. See pose_history.h.

/// The moment a past-tick query looks at: the end of `tick`, or with `fraction` in (0, 1) that
/// far from the end of `tick` to the end of `tick + 1` (both retained).
struct TickPoint {
  /// A retained tick (PoseHistory::Retains).
  uint64_t tick = 0;
  /// In [0, 1); 0 is the end of `tick` exactly.
  float fraction = 0.0f;
};

namespace internal {

// The state of the body of generation `generation` in `slot` at `at`: false when it did not
// exist at the end of at.tick. A body missing at the end of tick + 1 is taken as at `tick`.
inline bool PastBodyAt(const CollisionWorld& world, const PoseHistory& history, BodyHandle slot,
                       uint32_t generation, uint64_t anchor, const TickPoint& at, Body* out) {
  const PastBody past = history.StateFrom(world, slot, at.tick, anchor);
  if (!past.alive || past.generation != generation) return false;
  *out = past.body;
  if (at.fraction > 0.0f) {
    const PastBody next = history.StateFrom(world, slot, at.tick + 1, anchor);
    if (next.alive && next.generation == generation) {
      out->pose = LerpPose(past.body.pose, next.body.pose, at.fraction);
    }
  }
  return true;
}

// How far every body may reach beyond its box in the index at `at`.
inline float PastGrowth(const PoseHistory& history, const TickPoint& at) {
  return at.fraction > 0.0f ? history.LerpSlackOf(at.tick + 1) : 0.0f;
}

// Cast (query_engine.h) at `at`: the ball of `radius` grown by the interpolation slack and
// padded for rounding (the world's magnitude bounds its past states too).
template <typename Collector, typename Narrow>
void CastAt(const CollisionWorld& world, const PoseHistory& history, const TickPoint& at,
            const Ray& path, float radius, const QueryFilter& filter, Collector& collector,
            Narrow&& narrow) {
  if (collector.Done()) return;
  const float grow = radius + PastGrowth(history, at);
  const float reach = grow + RoundingPad(CastMagnitude(world, path.origin, grow));
  const Vec3 half_extent{reach, reach, reach};
  auto visit = [&](BodyHandle slot, uint32_t generation, uint64_t anchor,
                   float max_distance) -> float {
    Body body;
    if (!PastBodyAt(world, history, slot, generation, anchor, at, &body)) return max_distance;
    if (!Accepts(filter, body.id, body.category, body.mask)) return max_distance;
    Ray clipped = path;
    clipped.max_distance = collector.MaxDistance();
    CastHit hit;
    if (narrow(body, clipped, &hit)) collector.Add(ToQueryHit(body.id, hit));
    return collector.Done() ? -1.0f : collector.MaxDistance();
  };
  history.CastCandidates(world, at.tick, path.origin, path.direction, collector.MaxDistance(),
                         half_extent, filter.mask, visit);
}

template <typename Collector, typename Narrow>
void GatherAt(const CollisionWorld& world, const PoseHistory& history, const TickPoint& at,
              const Aabb& region, const QueryFilter& filter, Collector& collector,
              Narrow&& narrow) {
  if (collector.Done()) return;
  const Aabb grown = Expand(region, PastGrowth(history, at));
  const Aabb padded = Expand(grown, RoundingPad(RegionMagnitude(world, grown)));
  history.QueryCandidates(world, at.tick, padded, filter.mask,
                          [&](BodyHandle slot, uint32_t generation, uint64_t anchor) -> bool {
                            Body body;
                            if (!PastBodyAt(world, history, slot, generation, anchor, at, &body)) {
                              return true;
                            }
                            if (!Accepts(filter, body.id, body.category, body.mask)) return true;
                            QueryHit hit{.body_id = body.id};
                            if (narrow(body, &hit) && hit.distance <= collector.MaxDistance()) {
                              collector.Add(hit);
                            }
                            return !collector.Done();
                          });
}

}  // namespace internal

/// CastRay (query_engine.h) against the bodies as they were at `at`.
template <typename Collector>
void CastRayAt(const CollisionWorld& world, const PoseHistory& history, const TickPoint& at,
               const Ray& ray, const QueryFilter& filter, Collector& collector) {
  internal::CastAt(world, history, at, ray, 0.0f, filter, collector,
                   [](const Body& body, const Ray& r, CastHit* hit) {
                     return RayCast(body.shape, body.pose, r, hit);
                   });
}

/// CastSphere (query_engine.h) against the bodies as they were at `at`.
template <typename Collector>
void CastSphereAt(const CollisionWorld& world, const PoseHistory& history, const TickPoint& at,
                  const Ray& path, float radius, const QueryFilter& filter, Collector& collector) {
  internal::CastAt(world, history, at, path, radius, filter, collector,
                   [radius](const Body& body, const Ray& r, CastHit* hit) {
                     return SphereCast(body.shape, body.pose, r, radius, hit);
                   });
}

/// OverlapShape (query_engine.h) against the bodies as they were at `at`.
template <typename Collector>
void OverlapShapeAt(const CollisionWorld& world, const PoseHistory& history, const TickPoint& at,
                    const Shape& shape, const Pose& pose, bool detail, const QueryFilter& filter,
                    Collector& collector) {
  internal::GatherAt(world, history, at, Bounds(shape, pose), filter, collector,
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

/// WithinRadius (query_engine.h) against the bodies as they were at `at`.
template <typename Collector>
void WithinRadiusAt(const CollisionWorld& world, const PoseHistory& history, const TickPoint& at,
                    const Vec3& point, float radius, const QueryFilter& filter,
                    Collector& collector) {
  internal::GatherAt(world, history, at, Expand(Aabb{point, point}, radius), filter, collector,
                     [&](const Body& body, QueryHit* hit) {
                       ClosestPointResult c = ClosestPoint(body.shape, body.pose, point);
                       if (c.signed_distance > radius) return false;
                       hit->distance = std::max(c.signed_distance, 0.0f);
                       hit->point = c.point;
                       hit->normal = c.normal;
                       return true;
                     });
}

/// QueryRegion (query_engine.h) against the bodies as they were at `at`.
template <typename Collector>
void QueryRegionAt(const CollisionWorld& world, const PoseHistory& history, const TickPoint& at,
                   const Aabb& region, const QueryFilter& filter, Collector& collector) {
  internal::GatherAt(
      world, history, at, region, filter, collector,
      [&](const Body& body, QueryHit*) { return Overlaps(Bounds(body.shape, body.pose), region); });
}

}  // namespace collide
