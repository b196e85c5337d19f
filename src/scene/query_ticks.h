#pragma once

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "query/batch.h"
#include "query/pose_history.h"

namespace collide {

/// Checks the tick a query names against what `history` retains: OK when it names none, or a
/// retained tick (and, with a fraction, the next tick is retained too); OUT_OF_RANGE with the
/// field path and the retained range otherwise
/// (`queries[2].at_tick: tick 17 is not retained (retained: 40..103)`). Values (a fraction in
/// [0, 1)) are checked at the service edge. Run it under the same scene read as the query.
absl::Status CheckQueryTick(const PoseHistory& history, const Query& query, size_t index,
                            absl::string_view list = "queries");

/// The same check for a unary request: paths are `at_tick` and `tick_fraction`.
absl::Status CheckQueryTick(const PoseHistory& history, const Query& query);

}  // namespace collide
