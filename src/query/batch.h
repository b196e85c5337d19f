#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "geom/aabb.h"
#include "geom/cast.h"
#include "geom/pose.h"
#include "geom/shapes.h"
#include "query/collision_world.h"
#include "query/filter.h"
#include "query/hit.h"
#include "query/pose_history.h"

namespace collide {

/// What a query asks.
enum class QueryKind : uint8_t {
  kRaycast = 0,       ///< `ray`
  kSphereCast = 1,    ///< a ball of `radius` along `ray`
  kOverlap = 2,       ///< the posed `shape`
  kWithinRadius = 3,  ///< bodies within `radius` of `ray.origin`
  kRegion = 4,        ///< bodies whose bounds overlap `region`
};

/// How many hits a query returns.
enum class CollectMode : uint8_t {
  kClosest = 0,  ///< the first in (distance, id) order
  kAny = 1,      ///< any one (cheapest: stops at the first found)
  kAll = 2,      ///< all, sorted by (distance, id), at most max_hits
};

/// One query of a batch. Fields a kind does not use are ignored.
struct Query {
  QueryKind kind = QueryKind::kRaycast;
  CollectMode mode = CollectMode::kClosest;
  /// Ray and sphere casts: the path (unit direction). Within-radius: `origin` is the point.
  Ray ray{};
  /// Sphere casts and within-radius queries.
  float radius = 0.0f;
  /// Overlaps: the query shape and its pose.
  Shape shape{};
  Pose pose{};
  /// Region queries.
  Aabb region{};
  /// Overlaps: report depth, contact point and normal per hit.
  bool detail = false;
  /// kAll: the most hits returned (the rest is reported as truncated).
  uint32_t max_hits = 64;
  QueryFilter filter{};
  /// Answer against the bodies as they were at the end of this tick (retained by the history:
  /// the caller checks PoseHistory::Retains); unset means now.
  std::optional<uint64_t> at_tick{};
  /// With `at_tick`: in [0, 1), interpolate poses that far towards the end of at_tick + 1 (which
  /// must be retained too).
  float tick_fraction = 0.0f;
};

/// The answer to one query of a batch: its hits are hits[first_hit, first_hit + hit_count).
struct QueryResult {
  uint32_t first_hit = 0;
  uint32_t hit_count = 0;
  /// kAll only: more hits existed than max_hits.
  bool truncated = false;
};

/// Runs a batch of queries of mixed kinds against one world state. `results` gets one entry per
/// query; `hits` is cleared and receives every hit, grouped per query. Reusing both vectors
/// across batches avoids allocation in steady state.
void RunBatch(const CollisionWorld& world, std::span<const Query> queries,
              std::vector<QueryResult>* results, std::vector<QueryHit>* hits);

/// Runs one query; appends its hits to `hits` and returns where they are. `at_tick` is ignored.
QueryResult RunQuery(const CollisionWorld& world, const Query& query, std::vector<QueryHit>* hits);

/// As RunBatch, honouring each query's `at_tick` / `tick_fraction` against `history` (the
/// world's history; every named tick retained). Queries at the current tick without a fraction
/// run as RunBatch runs them.
void RunBatch(const CollisionWorld& world, const PoseHistory& history,
              std::span<const Query> queries, std::vector<QueryResult>* results,
              std::vector<QueryHit>* hits);

/// As RunQuery, honouring `at_tick` / `tick_fraction` against `history`.
QueryResult RunQuery(const CollisionWorld& world, const PoseHistory& history, const Query& query,
                     std::vector<QueryHit>* hits);

}  // namespace collide
