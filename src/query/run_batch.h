#pragma once

#include <span>
#include <vector>

#include "query/batch.h"
#include "query/hit.h"
#include "query/query_engine.h"
#include "query/run_query.h"

namespace collide {

/// Runs a batch of queries of mixed kinds against one candidate source (query_engine.h, the
/// moment every query of the batch is answered at): appends one result per query to `results`,
/// in query order, and their hits to `hits`, grouped per query (each result says where). The
/// same answers as RunQuery on each query in turn. The caller clears both vectors between
/// batches and, when it appends many small batches, reserves the results' room first; reusing
/// them avoids allocation in steady state. Over a source without a batched traversal (the
/// history's PastTick) the queries run one by one.
template <CandidateSource Source>
void RunBatch(const Source& source, std::span<const Query> queries,
              std::vector<QueryResult>* results, std::vector<QueryHit>* hits) {
  for (const Query& query : queries) results->push_back(RunQuery(source, query, hits));
}

/// The world's trees now: the closest and the any ray and sphere casts each go through one
/// traversal of the 8-wide trees with the casts interleaved (DynamicTree::CastBatch); the other
/// queries run one by one (run_batch.cc).
template <>
void RunBatch(const CurrentTree& source, std::span<const Query> queries,
              std::vector<QueryResult>* results, std::vector<QueryHit>* hits);

}  // namespace collide
