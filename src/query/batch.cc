#include "query/batch.h"

#include <limits>

#include "query/collector.h"
#include "query/past_query.h"
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

QueryResult RunQuery(const CollisionWorld& world, const Query& query, std::vector<QueryHit>* hits) {
  constexpr float kUnbounded = std::numeric_limits<float>::infinity();
  switch (query.kind) {
    case QueryKind::kRaycast:
      return Collect(query, query.ray.max_distance, hits,
                     [&](auto& c) { CastRay(world, query.ray, query.filter, c); });
    case QueryKind::kSphereCast:
      return Collect(query, query.ray.max_distance, hits,
                     [&](auto& c) { CastSphere(world, query.ray, query.radius, query.filter, c); });
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

namespace {

// True for the queries RunBatch runs interleaved: the closest or any hit of a ray or sphere cast.
bool Interleavable(const Query& query) {
  return (query.kind == QueryKind::kRaycast || query.kind == QueryKind::kSphereCast) &&
         (query.mode == CollectMode::kClosest || query.mode == CollectMode::kAny);
}

// The collector of one interleaved cast: ClosestHitCollector or AnyHitCollector by `any`.
struct CastSlot {
  float max_distance = 0.0f;
  bool any = false;
  bool has_hit = false;
  QueryHit hit{};

  bool Done() const { return any && has_hit; }
  void Add(const QueryHit& h) {
    if (any) {
      if (!has_hit) {
        hit = h;
        has_hit = true;
      }
    } else if (!has_hit || HitBefore(h, hit)) {
      hit = h;
      has_hit = true;
      max_distance = h.distance;  // ties at this distance are still visited
    }
  }
};

// Runs queries[begin, end), all Interleavable, with their tree traversals interleaved
// (DynamicTree::CastBatch): the same hits, in the same order, as RunQuery on each.
void RunCasts(const CollisionWorld& world, std::span<const Query> queries,
              std::vector<QueryResult>* results, std::vector<QueryHit>* hits) {
  thread_local std::vector<CastSlot> slots;
  thread_local std::vector<BatchCast> casts;
  const size_t count = queries.size();
  slots.assign(count, CastSlot{});
  casts.resize(count);
  for (size_t i = 0; i < count; ++i) {
    slots[i].max_distance = queries[i].ray.max_distance;
    slots[i].any = queries[i].mode == CollectMode::kAny;
  }
  for (BodyKind kind : internal::kTraversalOrder) {
    const DynamicTree& tree = world.tree(kind);
    if (tree.ProxyCount() == 0) continue;
    for (size_t i = 0; i < count; ++i) {
      const Query& q = queries[i];
      const float r = q.kind == QueryKind::kSphereCast ? q.radius : 0.0f;
      // The ball, padded as internal::Cast pads it (query_engine.h: conservative pruning).
      const float reach = r + RoundingPad(internal::CastMagnitude(world, q.ray.origin, r));
      // A finished query gets a negative length, which the traversal skips.
      casts[i] = BatchCast{.origin = q.ray.origin,
                           .unit_dir = q.ray.direction,
                           .max_distance = slots[i].Done() ? -1.0f : slots[i].max_distance,
                           .half_extent = Vec3{reach, reach, reach},
                           .mask = q.filter.mask};
    }
    tree.CastBatch(
        std::span<const BatchCast>(casts.data(), count),
        [&](size_t i, uint32_t user, int32_t /*proxy*/, float max_distance) -> float {
          const Query& q = queries[i];
          CastSlot& slot = slots[i];
          const Body& body = world.body(static_cast<BodyHandle>(user));
          if (!Accepts(q.filter, body.id, body.category, body.mask)) return max_distance;
          Ray clipped = q.ray;
          clipped.max_distance = slot.max_distance;
          CastHit hit;
          const bool found = q.kind == QueryKind::kRaycast
                                 ? RayCast(body.shape, body.pose, clipped, &hit)
                                 : SphereCast(body.shape, body.pose, clipped, q.radius, &hit);
          if (found) {
            slot.Add(internal::ToQueryHit(body.id, hit));
            if (slot.Done()) return -1.0f;
          }
          return slot.max_distance;
        },
        [&](uint32_t user) { __builtin_prefetch(&world.body(static_cast<BodyHandle>(user))); });
  }
  for (size_t i = 0; i < count; ++i) {
    QueryResult result{.first_hit = static_cast<uint32_t>(hits->size())};
    if (slots[i].has_hit) hits->push_back(slots[i].hit);
    result.hit_count = static_cast<uint32_t>(hits->size()) - result.first_hit;
    results->push_back(result);
  }
}

}  // namespace

void RunBatch(const CollisionWorld& world, std::span<const Query> queries,
              std::vector<QueryResult>* results, std::vector<QueryHit>* hits) {
  results->clear();
  hits->clear();
  results->reserve(queries.size());
  // Runs of closest/any casts go through the interleaved traversal; a run of one gains
  // nothing from it.
  size_t i = 0;
  while (i < queries.size()) {
    size_t end = i;
    while (end < queries.size() && Interleavable(queries[end])) ++end;
    if (end - i >= 2) {
      RunCasts(world, queries.subspan(i, end - i), results, hits);
      i = end;
    } else {
      results->push_back(RunQuery(world, queries[i], hits));
      ++i;
    }
  }
}

namespace {

// True when `query` must look into the history (a past tick, or an interpolation).
bool IsPast(const PoseHistory& history, const Query& query) {
  return query.at_tick.has_value() &&
         (*query.at_tick != history.tick() || query.tick_fraction > 0.0f);
}

}  // namespace

QueryResult RunQuery(const CollisionWorld& world, const PoseHistory& history, const Query& query,
                     std::vector<QueryHit>* hits) {
  if (!IsPast(history, query)) return RunQuery(world, query, hits);
  constexpr float kUnbounded = std::numeric_limits<float>::infinity();
  const TickPoint at{.tick = *query.at_tick, .fraction = query.tick_fraction};
  switch (query.kind) {
    case QueryKind::kRaycast:
      return Collect(query, query.ray.max_distance, hits,
                     [&](auto& c) { CastRayAt(world, history, at, query.ray, query.filter, c); });
    case QueryKind::kSphereCast:
      return Collect(query, query.ray.max_distance, hits, [&](auto& c) {
        CastSphereAt(world, history, at, query.ray, query.radius, query.filter, c);
      });
    case QueryKind::kOverlap:
      return Collect(query, kUnbounded, hits, [&](auto& c) {
        OverlapShapeAt(world, history, at, query.shape, query.pose, query.detail, query.filter, c);
      });
    case QueryKind::kWithinRadius:
      return Collect(query, kUnbounded, hits, [&](auto& c) {
        WithinRadiusAt(world, history, at, query.ray.origin, query.radius, query.filter, c);
      });
    case QueryKind::kRegion:
      return Collect(query, kUnbounded, hits, [&](auto& c) {
        QueryRegionAt(world, history, at, query.region, query.filter, c);
      });
  }
  return QueryResult{.first_hit = static_cast<uint32_t>(hits->size())};
}

void RunBatch(const CollisionWorld& world, const PoseHistory& history,
              std::span<const Query> queries, std::vector<QueryResult>* results,
              std::vector<QueryHit>* hits) {
  bool any_past = false;
  for (const Query& q : queries) any_past = any_past || IsPast(history, q);
  if (!any_past) return RunBatch(world, queries, results, hits);
  results->clear();
  hits->clear();
  results->reserve(queries.size());
  for (const Query& q : queries) results->push_back(RunQuery(world, history, q, hits));
}

}  // namespace collide
