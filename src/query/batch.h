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

/// How many hits a query returns.
enum class CollectMode : uint8_t {
  kClosest = 0,  ///< the first in (distance, id) order
  kAny = 1,      ///< any one (cheapest: stops at the first found)
  kAll = 2,      ///< all, sorted by (distance, id), at most max_hits
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

/// Answers the queries of a batch that RunBatch is not to run against the world's trees now:
/// past-tick queries (history/past_batch.h). Called once per query, so a virtual call is cheap.
class OtherSource {
 public:
  /// True when `query` is answered by Run.
  virtual bool Takes(const Query& query) const = 0;
  /// Appends the hits of `query` to `hits` and returns where they are (as RunQuery).
  virtual QueryResult Run(const Query& query, std::vector<QueryHit>* hits) const = 0;

 protected:
  ~OtherSource() = default;
};

/// Runs a batch of queries of mixed kinds against one world state. `results` gets one entry per
/// query; `hits` is cleared and receives every hit, grouped per query. The closest and any ray
/// and sphere casts run with their tree traversals interleaved. Queries `other` takes (when
/// given) are answered by it instead, one by one. Reusing both vectors across batches avoids
/// allocation in steady state.
void RunBatch(const CollisionWorld& world, std::span<const Query> queries,
              std::vector<QueryResult>* results, std::vector<QueryHit>* hits,
              const OtherSource* other = nullptr);

/// Runs one query against the world now; appends its hits to `hits` and returns where they
/// are. `at_tick` is ignored (query/run_query.h runs one against any candidate source).
QueryResult RunQuery(const CollisionWorld& world, const Query& query, std::vector<QueryHit>* hits);

}  // namespace collide
