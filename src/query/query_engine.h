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
#include "mesh/mesh_hit.h"
#include "mesh/scaled_pose.h"
#include "query/asset_narrow.h"
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
//
// Asset bodies. A body that places a mesh or heightfield (Body::asset) is one candidate like any
// other; its narrow phase is the asset's own query (query/asset_narrow.h), which walks the
// asset's tree in its local frame. The collector says how many of its triangles it wants
// (BodyHits): its first in the query's order, any one, or every one (all-hits queries report a
// hit per triangle, ordered by (distance, id, triangle)). The branch to it is the only cost the
// other bodies pay.

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

inline QueryHit ToQueryHit(uint64_t id, const MeshHit& hit) {
  return QueryHit{.body_id = id,
                  .distance = hit.distance,
                  .depth = 0.0f,
                  .point = hit.point,
                  .normal = hit.normal,
                  .start_overlapping = hit.start_overlapping,
                  .back_face = hit.back_face,
                  .triangle = hit.triangle};
}

// An overlap's or a region's contact (`detail`: with depth, point and normal).
inline QueryHit ToQueryHit(uint64_t id, const MeshContact& contact, bool detail) {
  QueryHit hit{.body_id = id, .triangle = contact.triangle};
  if (detail) {
    hit.depth = contact.depth;
    hit.point = contact.point;
    hit.normal = contact.normal;
  }
  return hit;
}

inline QueryHit ToQueryHit(uint64_t id, const MeshPoint& point) {
  return QueryHit{.body_id = id,
                  .distance = point.distance,
                  .point = point.point,
                  .normal = point.normal,
                  .triangle = point.triangle};
}

// The instance placement of an asset body.
inline ScaledPose PlacementOf(const Body& body) { return ScaledPose{body.pose, body.scale}; }

// The narrow phase of an asset body as a cast candidate (a ball of `radius`, 0 for a ray), as
// many of its hits as the collector wants; returns the distance the sweep may still go.
template <HitCollector Collector>
float AssetCastCandidate(const CollisionWorld& world, const Body& body, const Ray& path,
                         float radius, Collector& collector) {
  const AssetGeometry& asset = world.asset(body.asset);
  const ScaledPose placement = PlacementOf(body);
  Ray clipped = path;
  clipped.max_distance = collector.MaxDistance();
  if constexpr (BodyHitsOf<Collector>() == BodyHits::kEvery) {
    auto sink = [&](const MeshHit& hit) -> float {
      if (hit.distance <= collector.MaxDistance()) collector.Add(ToQueryHit(body.id, hit));
      return collector.Done() ? -1.0f : collector.MaxDistance();
    };
    if (radius == 0.0f) {
      AssetRaycastAll(asset, placement, clipped, sink);
    } else {
      AssetSphereCastAll(asset, placement, clipped, radius, sink);
    }
  } else {
    constexpr bool kAny = BodyHitsOf<Collector>() == BodyHits::kAny;
    MeshHit hit;
    const bool found = radius == 0.0f
                           ? AssetRaycast(asset, placement, clipped, kAny, &hit)
                           : AssetSphereCast(asset, placement, clipped, radius, kAny, &hit);
    if (found) collector.Add(ToQueryHit(body.id, hit));
  }
  return collector.Done() ? -1.0f : collector.MaxDistance();
}

// The narrow phase of one cast candidate (a ball of `radius`, 0 for a ray): the filter, then
// `narrow(body, path clipped to the collector, &hit)`, or the asset's own cast for a body that
// places one; returns the distance the sweep may still go (negative: stop).
template <HitCollector Collector, typename Narrow>
float CastCandidate(const CollisionWorld& world, const Body& body, float max_distance,
                    const Ray& path, float radius, const QueryFilter& filter, Collector& collector,
                    Narrow&& narrow) {
  if (!Accepts(filter, body.id, body.category, body.mask)) return max_distance;
  if (body.asset != kNoAsset) [[unlikely]] {
    return AssetCastCandidate(world, body, path, radius, collector);
  }
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
                return CastCandidate(source.world(), body, max_distance, path, radius, filter,
                                     collector, narrow);
              });
}

// The common body of the box-shaped broad phases: `narrow(body, &hit)` decides and fills;
// `asset_narrow(asset, body)` adds an asset body's hits to the collector itself.
template <CandidateSource Source, HitCollector Collector, typename Narrow, typename AssetNarrow>
void Gather(const Source& source, const Aabb& region, const QueryFilter& filter,
            Collector& collector, Narrow&& narrow, AssetNarrow&& asset_narrow) {
  const Aabb grown = Expand(region, source.growth());
  const Aabb padded = Expand(grown, RoundingPad(RegionMagnitude(source.world(), grown)));
  source.Gather(padded, filter.mask, collector, [&](const Body& body) -> bool {
    if (!Accepts(filter, body.id, body.category, body.mask)) return true;
    if (body.asset != kNoAsset) [[unlikely]] {
      asset_narrow(source.world().asset(body.asset), body);
      return !collector.Done();
    }
    QueryHit hit{.body_id = body.id};
    if (narrow(body, &hit) && hit.distance <= collector.MaxDistance()) collector.Add(hit);
    return !collector.Done();
  });
}

// Adds the triangles of an asset body that `all(sink)` reports (each a contact) to the collector,
// as many as it wants: every one, any one, or the lowest index (kFirst; `first` instead when
// set: it finds the body's first hit itself and returns whether there is one).
template <HitCollector Collector, typename All, typename First>
void AddAssetContacts(const Body& body, bool detail, Collector& collector, All&& all,
                      First&& first) {
  constexpr BodyHits kHits = BodyHitsOf<Collector>();
  if constexpr (kHits == BodyHits::kEvery) {
    all([&](const MeshContact& contact) -> bool {
      collector.Add(ToQueryHit(body.id, contact, detail));
      return !collector.Done();
    });
  } else if constexpr (kHits == BodyHits::kAny) {
    all([&](const MeshContact& contact) -> bool {
      collector.Add(ToQueryHit(body.id, contact, detail));
      return false;
    });
  } else {
    QueryHit hit;
    if (first(&hit)) {
      collector.Add(hit);
      return;
    }
  }
}

// The lowest-index contact `all(sink)` reports, as a hit of `body` (false when none).
template <typename All>
bool LowestContact(const Body& body, bool detail, All&& all, QueryHit* out) {
  bool found = false;
  MeshContact best;
  all([&](const MeshContact& contact) -> bool {
    if (!found || contact.triangle < best.triangle) best = contact;
    found = true;
    return true;
  });
  if (found) *out = ToQueryHit(body.id, best, detail);
  return found;
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
///
/// An asset body reports its triangles the shape touches: all-hits queries every one (each with
/// its own depth with `detail`), closest queries with `detail` the deepest (its penetration, ties
/// to the lowest index) and without the lowest index, any-hit queries the first found.
template <CandidateSource Source, HitCollector Collector>
void OverlapShape(const Source& source, const Shape& shape, const Pose& pose, bool detail,
                  const QueryFilter& filter, Collector& collector) {
  internal::Gather(
      source, Bounds(shape, pose), filter, collector,
      [&](const Body& body, QueryHit* hit) {
        if (!detail) return Overlap(body.shape, body.pose, shape, pose);
        Penetration p;
        if (!Penetrate(body.shape, body.pose, shape, pose, &p)) return false;
        hit->depth = p.depth;
        hit->point = p.point;
        hit->normal = p.normal;
        return true;
      },
      [&](const AssetGeometry& asset, const Body& body) {
        const ScaledPose placement = internal::PlacementOf(body);
        auto all = [&](auto&& sink) {
          AssetOverlapAll(asset, placement, shape, pose, detail, sink);
        };
        internal::AddAssetContacts(body, detail, collector, all, [&](QueryHit* out) {
          if (!detail) return internal::LowestContact(body, false, all, out);
          MeshContact contact;
          if (!AssetPenetrate(asset, placement, shape, pose, &contact)) return false;
          *out = internal::ToQueryHit(body.id, contact, true);
          return true;
        });
      });
}

/// The bodies within `radius` (>= 0) of a point, by the distance from the point to each body's
/// surface (0 inside), with the nearest surface point and its outward normal. An asset body (no
/// inside) by its nearest triangles: all-hits queries every triangle within the radius, the
/// others the nearest (any-hit: the first found).
template <CandidateSource Source, HitCollector Collector>
void WithinRadius(const Source& source, const Vec3& point, float radius, const QueryFilter& filter,
                  Collector& collector) {
  Aabb region = Expand(Aabb{point, point}, radius);
  internal::Gather(
      source, region, filter, collector,
      [&](const Body& body, QueryHit* hit) {
        ClosestPointResult c = ClosestPoint(body.shape, body.pose, point);
        if (c.signed_distance > radius) return false;
        hit->distance = std::max(c.signed_distance, 0.0f);
        hit->point = c.point;
        hit->normal = c.normal;
        return true;
      },
      [&](const AssetGeometry& asset, const Body& body) {
        const ScaledPose placement = internal::PlacementOf(body);
        constexpr BodyHits kHits = BodyHitsOf<Collector>();
        if constexpr (kHits == BodyHits::kFirst) {
          MeshPoint nearest;
          const float limit = std::min(radius, collector.MaxDistance());
          if (AssetClosestPoint(asset, placement, point, limit, &nearest)) {
            collector.Add(internal::ToQueryHit(body.id, nearest));
          }
        } else {
          AssetWithinRadiusAll(asset, placement, point, radius, [&](const MeshPoint& p) -> bool {
            if (p.distance <= collector.MaxDistance()) {
              collector.Add(internal::ToQueryHit(body.id, p));
            }
            return kHits == BodyHits::kEvery && !collector.Done();
          });
        }
      });
}

/// The bodies whose tight bounds overlap an axis-aligned region (bounds only, no exact shape).
/// Asset bodies by their triangles instead (a level's box holds most of the level): those that
/// meet the region exactly, every one for all-hits queries, the lowest index for closest ones,
/// the first found for any-hit ones.
template <CandidateSource Source, HitCollector Collector>
void QueryRegion(const Source& source, const Aabb& region, const QueryFilter& filter,
                 Collector& collector) {
  internal::Gather(
      source, region, filter, collector,
      [&](const Body& body, QueryHit*) { return Overlaps(Bounds(body.shape, body.pose), region); },
      [&](const AssetGeometry& asset, const Body& body) {
        const ScaledPose placement = internal::PlacementOf(body);
        auto all = [&](auto&& sink) { AssetRegionAll(asset, placement, region, sink); };
        internal::AddAssetContacts(body, false, collector, all, [&](QueryHit* out) {
          return internal::LowestContact(body, false, all, out);
        });
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
