#pragma once

#include <limits>
#include <variant>
#include <vector>

#include "query/batch.h"
#include "query/collector.h"
#include "query/query_engine.h"

namespace collide {

// One query of any kind and mode against any candidate source (query_engine.h): the one dispatch
// over kinds (std::visit) and modes, whether the source is the world now (CurrentTree) or a past
// tick (history/past_tick.h's PastTick). RunBatch (run_batch.h) runs a batch of them.

namespace internal {

inline constexpr float kUnbounded = std::numeric_limits<float>::infinity();

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

// Runs `query`, of kind `kind`, against `source`: one overload per kind of ShapeQuery.
template <CandidateSource Source>
QueryResult Run(const Source& source, const RaycastQuery& kind, const Query& query,
                std::vector<QueryHit>* hits) {
  return Collect(query, kind.ray.max_distance, hits,
                 [&](auto& c) { Raycast(source, kind.ray, query.filter, c); });
}

template <CandidateSource Source>
QueryResult Run(const Source& source, const SphereCastQuery& kind, const Query& query,
                std::vector<QueryHit>* hits) {
  return Collect(query, kind.ray.max_distance, hits,
                 [&](auto& c) { SphereCast(source, kind.ray, kind.radius, query.filter, c); });
}

template <CandidateSource Source>
QueryResult Run(const Source& source, const OverlapQuery& kind, const Query& query,
                std::vector<QueryHit>* hits) {
  return Collect(query, kUnbounded, hits, [&](auto& c) {
    OverlapShape(source, kind.shape, kind.pose, kind.detail, query.filter, c);
  });
}

template <CandidateSource Source>
QueryResult Run(const Source& source, const WithinRadiusQuery& kind, const Query& query,
                std::vector<QueryHit>* hits) {
  return Collect(query, kUnbounded, hits,
                 [&](auto& c) { WithinRadius(source, kind.point, kind.radius, query.filter, c); });
}

template <CandidateSource Source>
QueryResult Run(const Source& source, const RegionQuery& kind, const Query& query,
                std::vector<QueryHit>* hits) {
  return Collect(query, kUnbounded, hits,
                 [&](auto& c) { QueryRegion(source, kind.region, query.filter, c); });
}

}  // namespace internal

/// Runs one query against `source`; appends its hits to `hits` and returns where they are.
/// `at_tick` is not looked at: the source decides the moment.
template <CandidateSource Source>
QueryResult RunQuery(const Source& source, const Query& query, std::vector<QueryHit>* hits) {
  return std::visit([&](const auto& kind) { return internal::Run(source, kind, query, hits); },
                    query.shape_query);
}

}  // namespace collide
