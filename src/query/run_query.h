#pragma once

#include <limits>
#include <vector>

#include "query/batch.h"
#include "query/collector.h"
#include "query/query_engine.h"

namespace collide {

// One query of any kind and mode against any candidate source (query_engine.h): the one switch
// over kinds and modes, for the world now (batch.cc) and at a past tick (history/past_batch.cc).

namespace internal {

// Runs `query` with the collector its mode names: `run(collector)` runs the query.
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

}  // namespace internal

/// Runs one query against `source`; appends its hits to `hits` and returns where they are.
/// `at_tick` is not looked at: the source decides the moment.
template <CandidateSource Source>
QueryResult RunQuery(const Source& source, const Query& query, std::vector<QueryHit>* hits) {
  constexpr float kUnbounded = std::numeric_limits<float>::infinity();
  using internal::Collect;
  switch (query.kind) {
    case QueryKind::kRaycast:
      return Collect(query, query.ray.max_distance, hits,
                     [&](auto& c) { Raycast(source, query.ray, query.filter, c); });
    case QueryKind::kSphereCast:
      return Collect(query, query.ray.max_distance, hits, [&](auto& c) {
        SphereCast(source, query.ray, query.radius, query.filter, c);
      });
    case QueryKind::kOverlap:
      return Collect(query, kUnbounded, hits, [&](auto& c) {
        OverlapShape(source, query.shape, query.pose, query.detail, query.filter, c);
      });
    case QueryKind::kWithinRadius:
      return Collect(query, kUnbounded, hits, [&](auto& c) {
        WithinRadius(source, query.ray.origin, query.radius, query.filter, c);
      });
    case QueryKind::kRegion:
      return Collect(query, kUnbounded, hits,
                     [&](auto& c) { QueryRegion(source, query.region, query.filter, c); });
  }
  return QueryResult{.first_hit = static_cast<uint32_t>(hits->size())};
}

}  // namespace collide
