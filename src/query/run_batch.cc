#include "query/run_batch.h"

#include <cstdint>
#include <variant>

#include "query/collector.h"
#include "query/query_engine.h"
#include "query/run_query.h"

namespace collide {
namespace {

// True for the queries RunBatch<CurrentTree> runs interleaved: the closest or any hit of a ray or
// sphere cast.
bool Interleavable(const Query& query) {
  return (std::holds_alternative<RaycastQuery>(query.shape_query) ||
          std::holds_alternative<SphereCastQuery>(query.shape_query)) &&
         (query.mode == CollectMode::kClosest || query.mode == CollectMode::kAny);
}

// An Interleavable query's sphere cast, or null for a ray cast.
const SphereCastQuery* SphereCastOf(const Query& query) {
  return std::get_if<SphereCastQuery>(&query.shape_query);
}

// The path of an Interleavable query (`sphere` is SphereCastOf(query)).
const Ray& PathOf(const Query& query, const SphereCastQuery* sphere) {
  return sphere != nullptr ? sphere->ray : std::get_if<RaycastQuery>(&query.shape_query)->ray;
}

// Runs queries[index[i]] (all Interleavable, of the mode `Collector` collects) into
// collectors[i], with their tree traversals interleaved (DynamicTree::CastBatch): the same hits
// as RunQuery on each.
template <HitCollector Collector>
void RunInterleaved(const CurrentTree& source, std::span<const Query> queries,
                    std::span<const uint32_t> index, std::vector<Collector>* collectors) {
  thread_local std::vector<BatchCast> casts;
  const CollisionWorld& world = source.world();
  const size_t count = index.size();
  collectors->clear();
  for (uint32_t i : index) {
    const Query& q = queries[i];
    collectors->emplace_back(PathOf(q, SphereCastOf(q)).max_distance);
  }
  casts.resize(count);
  for (BodyKind kind : internal::kTraversalOrder) {
    const DynamicTree& tree = world.tree(kind);
    if (tree.ProxyCount() == 0) continue;
    for (size_t i = 0; i < count; ++i) {
      const Query& q = queries[index[i]];
      const SphereCastQuery* sphere = SphereCastOf(q);
      const Ray& ray = PathOf(q, sphere);
      const Collector& c = (*collectors)[i];
      const float reach =
          internal::CastReach(source, ray.origin, sphere != nullptr ? sphere->radius : 0.0f);
      // A finished query gets a negative length, which the traversal skips.
      casts[i] = BatchCast{.origin = ray.origin,
                           .unit_dir = ray.direction,
                           .max_distance = c.Done() ? -1.0f : c.MaxDistance(),
                           .half_extent = Vec3{reach, reach, reach},
                           .mask = q.filter.mask};
    }
    tree.CastBatch(
        std::span<const BatchCast>(casts.data(), count),
        [&](size_t i, uint32_t user, int32_t /*proxy*/, float max_distance) -> float {
          const Query& q = queries[index[i]];
          const SphereCastQuery* sphere = SphereCastOf(q);
          return internal::CastCandidate(
              world, world.body(static_cast<BodyHandle>(user)), max_distance, PathOf(q, sphere),
              sphere != nullptr ? sphere->radius : 0.0f, q.filter, (*collectors)[i],
              [sphere](const Body& body, const Ray& clipped, CastHit* hit) {
                return sphere == nullptr
                           ? Raycast(body.shape, body.pose, clipped, hit)
                           : SphereCast(body.shape, body.pose, clipped, sphere->radius, hit);
              });
        },
        [&](uint32_t user) { __builtin_prefetch(&world.body(static_cast<BodyHandle>(user))); });
  }
}

// How RunBatch<CurrentTree> answers one query.
enum class Route : uint8_t {
  kOne,          // RunQuery, alone
  kInterleaved,  // RunInterleaved, with the other queries of its mode
};

// Appends the hit `collector` holds, if any, as the result of one query.
template <HitCollector Collector>
void TakeHit(const Collector& collector, std::vector<QueryResult>* results,
             std::vector<QueryHit>* hits) {
  QueryResult result{.first_hit = static_cast<uint32_t>(hits->size())};
  if (collector.has_hit()) hits->push_back(collector.hit());
  result.hit_count = static_cast<uint32_t>(hits->size()) - result.first_hit;
  results->push_back(result);
}

}  // namespace

template <>
void RunBatch(const CurrentTree& source, std::span<const Query> queries,
              std::vector<QueryResult>* results, std::vector<QueryHit>* hits) {
  // The closest and the any casts each go through one interleaved traversal (a group of one
  // gains nothing from it); the rest run one by one, in order.
  thread_local std::vector<Route> routes;
  thread_local std::vector<uint32_t> closest_index;
  thread_local std::vector<uint32_t> any_index;
  routes.assign(queries.size(), Route::kOne);
  closest_index.clear();
  any_index.clear();
  for (size_t i = 0; i < queries.size(); ++i) {
    const Query& q = queries[i];
    if (Interleavable(q)) {
      (q.mode == CollectMode::kClosest ? closest_index : any_index)
          .push_back(static_cast<uint32_t>(i));
    }
  }
  thread_local std::vector<ClosestHitCollector> closest;
  thread_local std::vector<AnyHitCollector> any;
  closest.clear();
  any.clear();
  if (closest_index.size() >= 2) {
    for (uint32_t i : closest_index) routes[i] = Route::kInterleaved;
    RunInterleaved(source, queries, closest_index, &closest);
  }
  if (any_index.size() >= 2) {
    for (uint32_t i : any_index) routes[i] = Route::kInterleaved;
    RunInterleaved(source, queries, any_index, &any);
  }
  size_t next_closest = 0;
  size_t next_any = 0;
  for (size_t i = 0; i < queries.size(); ++i) {
    const Query& q = queries[i];
    if (routes[i] == Route::kOne) {
      results->push_back(RunQuery(source, q, hits));
    } else if (q.mode == CollectMode::kClosest) {
      TakeHit(closest[next_closest++], results, hits);
    } else {
      TakeHit(any[next_any++], results, hits);
    }
  }
}

}  // namespace collide
