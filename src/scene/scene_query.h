#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/worker_pool.h"
#include "history/pose_history.h"
#include "query/batch.h"
#include "query/hit.h"
#include "scene/scene.h"

namespace collide {

// The one entry point of queries below the server: a scene read, the ticks checked, each query's
// candidate source chosen (the world's trees now, or the history at its tick), the batch run,
// the version read returned. The server converts requests into Query values before and encodes
// the answers after (and offers them to the viewer's QuerySampler); nothing else.

/// OK when `history` retains `tick`; OUT_OF_RANGE about `at_tick` (a FieldError of the root) with
/// the retained range otherwise (`at_tick: tick 17 is not retained (retained: 40..103)`).
absl::Status CheckTickRetained(const PoseHistory& history, uint64_t tick);

/// Checks the tick query `index` of `list` names against what `history` retains: OK when it
/// names none, or a retained tick (and, with a fraction, the next tick is retained too);
/// OUT_OF_RANGE with a FieldError otherwise (`queries[2].at_tick: tick 17 is not retained
/// (retained: 40..103)`, `queries[2].tick_fraction: ...`). Values (a fraction in [0, 1)) are
/// PrepareQuery's (validate.h). Run it under the same scene read as the query.
absl::Status CheckQueryTick(const PoseHistory& history, const Query& query, size_t index,
                            absl::string_view list = "queries");

/// How AnswerQueries spreads one batch over threads. The queries of each candidate source (now,
/// past ticks) are cut into consecutive chunks, each run as a batch of its own (RunBatch) on the
/// pool, and their answers are put back together in query order: the same results and hits, in
/// the same order, as on one thread.
struct QuerySplit {
  /// The threads the chunks run on, the caller of AnswerQueries among them; null or a pool of one
  /// thread: the whole batch runs on the calling thread.
  WorkerPool* pool = nullptr;
  /// Batches of fewer queries run whole on the calling thread: waking a worker (tens of
  /// microseconds) would cost about what it saves.
  size_t min_queries = 64;
  /// The fewest queries in a chunk: the interleaved traversal keeps 8 casts in flight, so a
  /// chunk of 32 keeps most of what interleaving gains.
  size_t min_chunk = 32;
  /// Chunks per thread of the pool (at most): a thread that falls behind (another process, a
  /// chunk of heavy queries) leaves its remaining chunks to the others.
  size_t chunks_per_thread = 4;
};

/// Answers `queries` against `scene` under one read of it (one version for all): each query's
/// tick is checked (CheckQueryTick) and its candidate source chosen once (PastTickOf): the
/// present-tick queries run as one RunBatch over the world's trees (query/run_batch.h: closest
/// and any casts interleaved), the past-tick ones as a RunBatch over the history's PastTick per
/// run of queries at one tick. `status` gets one entry per query: OK, or OUT_OF_RANGE for a tick
/// not retained, with the path `queries[positions[i]].at_tick` (`queries[i]` when `positions` is
/// empty). `results` gets one entry per query, in query order (no hits for a
/// failed one), `hits` every hit, grouped per query (each result says where; in a batch mixing
/// present and past ticks the present ones' hits come first). All three are cleared first;
/// reusing them avoids allocation in steady state.
/// Returns the version read. With `split` naming a pool, a large batch runs in chunks on its
/// threads (QuerySplit), all of them under the calling thread's one read of the scene: the same
/// answers in the same order as on one thread.
uint64_t AnswerQueries(const Scene& scene, std::span<const Query> queries,
                       std::span<const size_t> positions, std::vector<absl::Status>* status,
                       std::vector<QueryResult>* results, std::vector<QueryHit>* hits,
                       const QuerySplit& split = {});

/// The most hits `query` can return: max_hits for kAll, 1 otherwise.
uint64_t PotentialHits(const Query& query);

/// Answers `queries` as AnswerQueries does, under one read of `scene` (one version for all), in
/// consecutive segments of as many queries as keep the segment's PotentialHits within
/// `max_segment_hits` (at least one query each): each segment's answers are put in `status`,
/// `results` and `hits` (cleared first; indices are the segment's own) and handed to
/// `sink(first)`, `first` being the index in `queries` of the segment's first query, before the
/// next segment runs in the same vectors. A sink that returns false stops the batch. The memory
/// a batch's hits take is so bounded by one segment's, whatever the batch asks; the sink runs
/// under the scene's read. `positions` (the request index of each query, for the tick errors'
/// paths) must be as long as `queries`. Returns the version read.
uint64_t AnswerQueriesInSegments(const Scene& scene, std::span<const Query> queries,
                                 std::span<const size_t> positions, uint64_t max_segment_hits,
                                 std::vector<absl::Status>* status,
                                 std::vector<QueryResult>* results, std::vector<QueryHit>* hits,
                                 absl::FunctionRef<bool(uint64_t version, size_t first)> sink,
                                 const QuerySplit& split = {});

}  // namespace collide
