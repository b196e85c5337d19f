#pragma once

#include <algorithm>
#include <cstdint>

#include "query/pose_history.h"
#include "query/query_engine.h"

namespace collide {

// Queries at a past tick: the engine of query_engine.h run over the CURRENT trees with the
// query grown by PoseHistory::GrowthSince (plus the interpolation slack), each candidate tested
// exactly at its historic (or interpolated) state, then the side list of bodies the grown walk
// cannot find. See pose_history.h for why the trees are grown rather than kept per tick.

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
                       uint32_t generation, const TickPoint& at, Body* out) {
  const PastBody past = history.StateAt(world, slot, at.tick);
  if (!past.alive || past.generation != generation) return false;
  *out = past.body;
  if (at.fraction > 0.0f) {
    const PastBody next = history.StateAt(world, slot, at.tick + 1);
    if (next.alive && next.generation == generation) {
      out->pose = LerpPose(past.body.pose, next.body.pose, at.fraction);
    }
  }
  return true;
}

// How far every body in the trees may have left its current tight box at `at`.
inline float PastGrowth(const PoseHistory& history, const TickPoint& at) {
  float grow = history.GrowthSince(at.tick);
  if (at.fraction > 0.0f) grow += history.LerpSlackOf(at.tick + 1);
  return grow;
}

template <typename Collector, typename Narrow>
void CastAt(const CollisionWorld& world, const PoseHistory& history, const TickPoint& at,
            const Ray& path, const Vec3& sweep_half_extent, const QueryFilter& filter,
            Collector& collector, Narrow&& narrow) {
  const float grow = PastGrowth(history, at);
  const Vec3 half_extent = sweep_half_extent + Vec3{grow, grow, grow};
  auto test = [&](const Body& body) {
    if (!Accepts(filter, body.id, body.category, body.mask)) return;
    Ray clipped = path;
    clipped.max_distance = collector.MaxDistance();
    CastHit hit;
    if (narrow(body, clipped, &hit)) collector.Add(ToQueryHit(body.id, hit));
  };
  for (BodyKind kind : kTraversalOrder) {
    const DynamicTree& tree = world.tree(kind);
    if (tree.ProxyCount() == 0) continue;
    if (collector.Done()) return;
    auto visit = [&](uint32_t user, int32_t /*proxy*/, float max_distance) -> float {
      const BodyHandle slot = static_cast<BodyHandle>(user);
      if (history.OnSideListSince(slot, at.tick)) return max_distance;
      Body body;
      if (!PastBodyAt(world, history, slot, history.generation(slot), at, &body)) {
        return max_distance;
      }
      test(body);
      return collector.Done() ? -1.0f : collector.MaxDistance();
    };
    // The tree prunes by category bits; bodies whose bits changed since are on the side list.
    tree.SweptCast(path.origin, path.direction, collector.MaxDistance(), half_extent, filter.mask,
                   visit);
  }
  history.ForEachSideBody(at.tick, [&](BodyHandle slot, uint32_t generation) {
    if (collector.Done()) return;
    Body body;
    if (PastBodyAt(world, history, slot, generation, at, &body)) test(body);
  });
}

template <typename Collector, typename Narrow>
void GatherAt(const CollisionWorld& world, const PoseHistory& history, const TickPoint& at,
              const Aabb& region, const QueryFilter& filter, Collector& collector,
              Narrow&& narrow) {
  const Aabb grown = Expand(region, PastGrowth(history, at));
  auto test = [&](const Body& body) {
    if (!Accepts(filter, body.id, body.category, body.mask)) return;
    QueryHit hit{.body_id = body.id};
    if (narrow(body, &hit) && hit.distance <= collector.MaxDistance()) collector.Add(hit);
  };
  for (BodyKind kind : kTraversalOrder) {
    const DynamicTree& tree = world.tree(kind);
    if (tree.ProxyCount() == 0) continue;
    if (collector.Done()) return;
    tree.QueryAabb(grown, filter.mask, [&](uint32_t user, int32_t /*proxy*/) -> bool {
      const BodyHandle slot = static_cast<BodyHandle>(user);
      if (history.OnSideListSince(slot, at.tick)) return true;
      Body body;
      if (PastBodyAt(world, history, slot, history.generation(slot), at, &body)) test(body);
      return !collector.Done();
    });
  }
  history.ForEachSideBody(at.tick, [&](BodyHandle slot, uint32_t generation) {
    if (collector.Done()) return;
    Body body;
    if (PastBodyAt(world, history, slot, generation, at, &body)) test(body);
  });
}

}  // namespace internal

/// CastRay (query_engine.h) against the bodies as they were at `at`.
template <typename Collector>
void CastRayAt(const CollisionWorld& world, const PoseHistory& history, const TickPoint& at,
               const Ray& ray, const QueryFilter& filter, Collector& collector) {
  internal::CastAt(world, history, at, ray, Vec3{}, filter, collector,
                   [](const Body& body, const Ray& r, CastHit* hit) {
                     return RayCast(body.shape, body.pose, r, hit);
                   });
}

/// CastSphere (query_engine.h) against the bodies as they were at `at`.
template <typename Collector>
void CastSphereAt(const CollisionWorld& world, const PoseHistory& history, const TickPoint& at,
                  const Ray& path, float radius, const QueryFilter& filter, Collector& collector) {
  internal::CastAt(world, history, at, path, Vec3{radius, radius, radius}, filter, collector,
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
