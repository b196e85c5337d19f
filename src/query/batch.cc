#include "query/batch.h"

#include <limits>

#include "query/collector.h"
#include "query/query_engine.h"

namespace collide {
namespace {

// Runs `query` with the collector its mode names.
template <typename Run>
QueryResult Collect(const Query& query, float max_distance, std::vector<QueryHit>* hits,
                    Run&& run) {
  QueryResult result{.first_hit = static_cast<uint32_t>(hits->size())};
  switch (query.mode) {
    case CollectMode::kClosest: {
      ClosestHitCollector c(max_distance);
      run(c);
      if (c.has_hit()) hits->push_back(c.hit());
      break;
    }
    case CollectMode::kAny: {
      AnyHitCollector c(max_distance);
      run(c);
      if (c.has_hit()) hits->push_back(c.hit());
      break;
    }
    case CollectMode::kAll: {
      // The collector keeps its heap in a scratch vector reused by the thread.
      thread_local std::vector<QueryHit> scratch;
      AllHitsCollector c(max_distance, query.max_hits, &scratch);
      run(c);
      c.Finish();
      hits->insert(hits->end(), scratch.begin(), scratch.end());
      result.truncated = c.truncated();
      break;
    }
  }
  result.hit_count = static_cast<uint32_t>(hits->size()) - result.first_hit;
  return result;
}

}  // namespace

QueryResult RunQuery(const CollisionWorld& world, const Query& query,
                     std::vector<QueryHit>* hits) {
  constexpr float kUnbounded = std::numeric_limits<float>::infinity();
  switch (query.kind) {
    case QueryKind::kRaycast:
      return Collect(query, query.ray.max_distance, hits,
                     [&](auto& c) { CastRay(world, query.ray, query.filter, c); });
    case QueryKind::kSphereCast:
      return Collect(query, query.ray.max_distance, hits, [&](auto& c) {
        CastSphere(world, query.ray, query.radius, query.filter, c);
      });
    case QueryKind::kOverlap:
      return Collect(query, kUnbounded, hits, [&](auto& c) {
        OverlapShape(world, query.shape, query.pose, query.detail, query.filter, c);
      });
    case QueryKind::kWithinRadius:
      return Collect(query, kUnbounded, hits, [&](auto& c) {
        WithinRadius(world, query.ray.origin, query.radius, query.filter, c);
      });
    case QueryKind::kRegion:
      return Collect(query, kUnbounded, hits,
                     [&](auto& c) { QueryRegion(world, query.region, query.filter, c); });
  }
  return QueryResult{.first_hit = static_cast<uint32_t>(hits->size())};
}

void RunBatch(const CollisionWorld& world, std::span<const Query> queries,
              std::vector<QueryResult>* results, std::vector<QueryHit>* hits) {
  results->clear();
  hits->clear();
  results->reserve(queries.size());
  for (const Query& query : queries) results->push_back(RunQuery(world, query, hits));
}

}  // namespace collide
