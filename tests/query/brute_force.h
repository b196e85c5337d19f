#pragma once

#include <span>
#include <vector>

#include "query/batch.h"
#include "query/body.h"
#include "query/hit.h"

namespace collide::testing {

/// Every hit of `query` on `bodies` by brute force: the filter and the same narrow-phase
/// function the engine runs (ray cast, sphere cast, overlap or penetration, closest point, bounds
/// overlap) applied to every body, no tree involved, sorted by (distance, id). `at_tick` and
/// `tick_fraction` are ignored: `bodies` is the state the query looks at.
std::vector<QueryHit> BruteForce(std::span<const BodyDesc> bodies, const Query& query);

/// Checks an engine answer (`got`, whose hits start at `hits`) against the brute force's
/// `expected` by the query's mode: kClosest, the first expected hit; kAny, one of the expected
/// hits; kAll, the first min(expected, max_hits) hits in order and the truncation flag. Hits are
/// compared field by field (id, distance, depth, point, normal, start_overlapping): the engine
/// runs the same narrow phase, so they agree bit for bit.
void ExpectAnswer(const Query& query, const std::vector<QueryHit>& expected, const QueryResult& got,
                  const QueryHit* hits);

}  // namespace collide::testing
