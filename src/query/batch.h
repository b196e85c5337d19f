#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <variant>
#include <vector>

#include "geom/aabb.h"
#include "geom/cast.h"
#include "geom/pose.h"
#include "geom/shapes.h"
#include "query/collision_world.h"
#include "query/filter.h"
#include "query/hit.h"

namespace collide {

// The queries of a batch and their answers, as values: what a query asks (one struct per kind)
// and where its hits are. RunQuery (run_query.h) runs one, RunBatch (run_batch.h) a batch, over
// a candidate source (query_engine.h) that the caller chooses.

/// How many hits a query returns.
enum class CollectMode : uint8_t {
  kClosest = 0,  ///< the first in (distance, id, triangle) order
  kAny = 1,      ///< any one (cheapest: stops at the first found)
  kAll = 2,      ///< all, sorted by (distance, id, triangle), at most max_hits
};

/// The most hits a kAll query returns when it names no limit.
inline constexpr uint32_t kDefaultMaxHits = 64;

/// A ray cast: the first, any or all bodies along `ray`.
struct RaycastQuery {
  Ray ray{};  ///< unit direction
};

/// A ball of `radius` swept along `ray`.
struct SphereCastQuery {
  Ray ray{};  ///< unit direction
  float radius = 0.0f;
};

/// The bodies overlapping the posed `shape`.
struct OverlapQuery {
  Shape shape{};
  Pose pose{};
  /// Report depth, contact point and normal per hit.
  bool detail = false;
};

/// The bodies within `radius` of `point`.
struct WithinRadiusQuery {
  Vec3 point{};
  float radius = 0.0f;
};

/// The bodies whose bounds overlap `region`.
struct RegionQuery {
  Aabb region{};
};

/// What a query asks: one of the kinds above.
using ShapeQuery =
    std::variant<RaycastQuery, SphereCastQuery, OverlapQuery, WithinRadiusQuery, RegionQuery>;

/// One query of a batch: its kind, and the fields every kind has.
struct Query {
  ShapeQuery shape_query{};
  CollectMode mode = CollectMode::kClosest;
  /// kAll: the most hits returned (the rest is reported as truncated).
  uint32_t max_hits = kDefaultMaxHits;
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

}  // namespace collide
