#pragma once

#include <span>
#include <vector>

#include "history/pose_history.h"
#include "query/batch.h"
#include "query/collision_world.h"
#include "query/hit.h"

namespace collide {

/// True when `query` must look into `history` (a past tick, or an interpolation): a query at the
/// current tick without a fraction runs against the world's trees.
bool IsPastQuery(const PoseHistory& history, const Query& query);

/// As RunBatch (query/batch.h), honouring each query's `at_tick` / `tick_fraction` against
/// `history` (the world's history; every named tick retained): queries at the current tick run
/// as RunBatch runs them (closest / any casts interleaved), past-tick ones one by one over the
/// history (history/past_tick.h).
void RunBatch(const CollisionWorld& world, const PoseHistory& history,
              std::span<const Query> queries, std::vector<QueryResult>* results,
              std::vector<QueryHit>* hits);

/// As RunQuery, honouring `at_tick` / `tick_fraction` against `history`.
QueryResult RunQuery(const CollisionWorld& world, const PoseHistory& history, const Query& query,
                     std::vector<QueryHit>* hits);

}  // namespace collide
