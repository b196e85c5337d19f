#pragma once

// One query at the moment it names, for tests that judge AnswerQueries' answers one by one: the
// candidate source AnswerQueries chooses (PastTickOf), then the query layer's RunQuery over it.

#include <optional>
#include <vector>

#include "history/past_tick.h"
#include "history/pose_history.h"
#include "query/batch.h"
#include "query/collision_world.h"
#include "query/hit.h"
#include "query/query_engine.h"
#include "query/run_query.h"

namespace collide::testing {

/// RunQuery over the history at `query`'s tick, or over the world's trees for a query of now.
inline QueryResult RunQueryAtTick(const CollisionWorld& world, const PoseHistory& history,
                                  const Query& query, std::vector<QueryHit>* hits) {
  if (const std::optional<TickPoint> at = PastTickOf(history, query)) {
    return RunQuery(PastTick(world, history, *at), query, hits);
  }
  return RunQuery(CurrentTree(world), query, hits);
}

}  // namespace collide::testing
