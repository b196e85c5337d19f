#include "scene/scene_query.h"

#include <algorithm>
#include <cassert>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/field_error.h"
#include "base/status_macros.h"
#include "history/past_tick.h"
#include "query/query_engine.h"
#include "query/run_batch.h"

namespace collide {
namespace {

// Where AnswerQueries sends a query, chosen once per query.
enum class Route : uint8_t {
  kFailed,  // its tick is not retained: not run
  kNow,     // RunBatch over the world's trees now (CurrentTree)
  kPast,    // RunBatch over the history at its tick (PastTick)
};

// The answer to one chunk of a split batch.
struct ChunkAnswer {
  std::vector<QueryResult> results;
  std::vector<QueryHit> hits;
};

// The most bytes a thread keeps between batches in each of its scratch vectors (the chunk
// answers all together), as the service's scratch keeps per vector.
constexpr size_t kKeptScratchBytes = 64 << 10;

// Frees `v`'s memory when it holds more than `bytes`.
template <typename T>
void ReleaseIfLarger(std::vector<T>& v, size_t bytes) {
  if (v.capacity() * sizeof(T) > bytes) std::vector<T>().swap(v);
}

// `run(queries, results, hits)` (a RunBatch over one source: it appends) over `queries`, in
// chunks on split.pool when the batch is large enough; appends to `results` and `hits` as one
// run would. Runs under the caller's read of the scene; the workers read the world and the
// history only while the caller waits in ParallelFor, so that read covers them (the writer
// cannot take the lock exclusively before ParallelFor returns). Each chunk writes only its own
// ChunkAnswer; the caller alone puts them together, after ParallelFor.
template <typename Run>
void RunSplit(std::span<const Query> queries, std::vector<QueryResult>* results,
              std::vector<QueryHit>* hits, const QuerySplit& split, const Run& run) {
  const size_t n = queries.size();
  const size_t threads = split.pool != nullptr ? split.pool->threads() : 1;
  const size_t chunks = std::min(threads * std::max<size_t>(split.chunks_per_thread, 1),
                                 n / std::max<size_t>(split.min_chunk, 1));
  if (threads <= 1 || n < split.min_queries || chunks < 2) {
    run(queries, results, hits);
    return;
  }
  // The calling thread's chunk answers, reused from batch to batch. The tasks reach them
  // through this reference: named in the lambda, the thread_local would be each worker's own.
  thread_local std::vector<ChunkAnswer> kept_answers;
  std::vector<ChunkAnswer>& answers = kept_answers;
  if (answers.size() < chunks) answers.resize(chunks);
  split.pool->ParallelFor(chunks, [&](size_t c) {
    const size_t begin = n * c / chunks;
    const size_t end = n * (c + 1) / chunks;
    answers[c].results.clear();
    answers[c].results.reserve(end - begin);
    answers[c].hits.clear();
    run(queries.subspan(begin, end - begin), &answers[c].results, &answers[c].hits);
  });
  const size_t keep = kKeptScratchBytes / (2 * chunks);
  size_t total_hits = hits->size();
  for (size_t c = 0; c < chunks; ++c) total_hits += answers[c].hits.size();
  hits->reserve(total_hits);
  for (size_t c = 0; c < chunks; ++c) {
    ChunkAnswer& answer = answers[c];
    const auto base = static_cast<uint32_t>(hits->size());
    hits->insert(hits->end(), answer.hits.begin(), answer.hits.end());
    for (QueryResult r : answer.results) {
      r.first_hit += base;
      results->push_back(r);
    }
    ReleaseIfLarger(answer.hits, keep);
    ReleaseIfLarger(answer.results, keep);
  }
}

// Past-tick queries (each with a PastTickOf): every run of consecutive queries at one moment
// goes as one RunBatch over that moment's PastTick. Appends as RunBatch.
void RunPast(const CollisionWorld& world, const PoseHistory& history,
             std::span<const Query> queries, std::vector<QueryResult>* results,
             std::vector<QueryHit>* hits) {
  size_t begin = 0;
  while (begin < queries.size()) {
    const TickPoint at = *PastTickOf(history, queries[begin]);
    size_t end = begin + 1;
    while (end < queries.size() && *PastTickOf(history, queries[end]) == at) ++end;
    RunBatch(PastTick(world, history, at), queries.subspan(begin, end - begin), results, hits);
    begin = end;
  }
}

}  // namespace

absl::Status CheckTickRetained(const PoseHistory& history, uint64_t tick) {
  if (history.Retains(tick)) return absl::OkStatus();
  return FieldStatus(absl::StatusCode::kOutOfRange, "at_tick",
                     absl::StrFormat("tick %d is not retained (retained: %d..%d)", tick,
                                     history.oldest_tick(), history.tick()));
}

absl::Status CheckQueryTick(const PoseHistory& history, const Query& query, size_t index,
                            absl::string_view list) {
  if (!query.at_tick.has_value()) return absl::OkStatus();
  const uint64_t t = *query.at_tick;
  COLLIDE_RETURN_IF_ERROR(AtElement(CheckTickRetained(history, t), list, index));
  if (query.tick_fraction > 0.0f && !history.Retains(t + 1)) {
    return FieldErrorStatus(
        absl::StatusCode::kOutOfRange,
        FieldError{.list = std::string(list),
                   .index = index,
                   .field = "tick_fraction",
                   .reason = absl::StrFormat("interpolating from tick %d needs tick %d, which is "
                                             "not retained (retained: %d..%d)",
                                             t, t + 1, history.oldest_tick(), history.tick())});
  }
  return absl::OkStatus();
}

namespace {

// The queries of one read: each query's tick checked and its candidate source chosen once (the
// world's trees now, or the history at its tick), the batch run. Fills `status` and appends to
// `results` and `hits` (both cleared by the caller).
void AnswerUnderRead(const CollisionWorld& world, const PoseHistory& history,
                     std::span<const Query> queries, std::span<const size_t> positions,
                     std::vector<absl::Status>* status, std::vector<QueryResult>* results,
                     std::vector<QueryHit>* hits, const QuerySplit& split) {
  const size_t n = queries.size();
  status->assign(n, absl::OkStatus());
  results->reserve(n);
  // The candidate source of each query is chosen here, once: the world's trees now, or the
  // history at the query's tick. Ticks are checked under the same read as the queries run:
  // the window cannot move in between. A query naming a tick not retained gets its own
  // OUT_OF_RANGE error.
  const auto route = [&](size_t i) {
    if (!(*status)[i].ok()) return Route::kFailed;
    return PastTickOf(history, queries[i]).has_value() ? Route::kPast : Route::kNow;
  };
  size_t now_count = 0;
  size_t past_count = 0;
  for (size_t i = 0; i < n; ++i) {
    absl::Status s = CheckQueryTick(history, queries[i], positions.empty() ? i : positions[i]);
    if (!s.ok()) (*status)[i] = std::move(s);
    const Route r = route(i);
    now_count += r == Route::kNow;
    past_count += r == Route::kPast;
  }
  const CurrentTree now(world);
  const auto run_now = [&now](std::span<const Query> q, std::vector<QueryResult>* r,
                              std::vector<QueryHit>* h) { RunBatch(now, q, r, h); };
  const auto run_past = [&world, &history](std::span<const Query> q, std::vector<QueryResult>* r,
                                           std::vector<QueryHit>* h) {
    RunPast(world, history, q, r, h);
  };
  if (now_count == n) {
    RunSplit(queries, results, hits, split, run_now);
  } else if (past_count == n) {
    RunSplit(queries, results, hits, split, run_past);
  } else {
    // A mixed batch, or one with failed queries: the queries of each source run together,
    // and their results are put back in query order (the hits of the present-tick queries
    // come first; each result says where its hits are). A failed query gets an empty result.
    thread_local std::vector<Query> now_queries;
    thread_local std::vector<Query> past_queries;
    thread_local std::vector<QueryResult> ran;
    now_queries.clear();
    past_queries.clear();
    ran.clear();
    ran.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      const Route r = route(i);
      if (r == Route::kNow) now_queries.push_back(queries[i]);
      if (r == Route::kPast) past_queries.push_back(queries[i]);
    }
    RunSplit(now_queries, &ran, hits, split, run_now);
    RunSplit(past_queries, &ran, hits, split, run_past);
    results->resize(n);
    size_t next_now = 0;
    size_t next_past = now_queries.size();
    for (size_t i = 0; i < n; ++i) {
      switch (route(i)) {
        case Route::kFailed:
          (*results)[i] = QueryResult{};
          break;
        case Route::kNow:
          (*results)[i] = ran[next_now++];
          break;
        case Route::kPast:
          (*results)[i] = ran[next_past++];
          break;
      }
    }
    ReleaseIfLarger(now_queries, kKeptScratchBytes);
    ReleaseIfLarger(past_queries, kKeptScratchBytes);
    ReleaseIfLarger(ran, kKeptScratchBytes);
  }
}

}  // namespace

uint64_t AnswerQueries(const Scene& scene, std::span<const Query> queries,
                       std::span<const size_t> positions, std::vector<absl::Status>* status,
                       std::vector<QueryResult>* results, std::vector<QueryHit>* hits,
                       const QuerySplit& split) {
  results->clear();
  hits->clear();
  return scene.ReadWithHistory(
      [&](const CollisionWorld& world, const PoseHistory& history, uint64_t version) {
        AnswerUnderRead(world, history, queries, positions, status, results, hits, split);
        return version;
      });
}

uint64_t PotentialHits(const Query& query) {
  return query.mode == CollectMode::kAll ? query.max_hits : 1;
}

uint64_t AnswerQueriesInSegments(const Scene& scene, std::span<const Query> queries,
                                 std::span<const size_t> positions, uint64_t max_segment_hits,
                                 std::vector<absl::Status>* status,
                                 std::vector<QueryResult>* results, std::vector<QueryHit>* hits,
                                 absl::FunctionRef<bool(uint64_t version, size_t first)> sink,
                                 const QuerySplit& split) {
  assert(positions.size() == queries.size());
  return scene.ReadWithHistory([&](const CollisionWorld& world, const PoseHistory& history,
                                   uint64_t version) {
    size_t begin = 0;
    while (begin < queries.size()) {
      // As many queries as fit in the segment's hits, and at least one.
      size_t end = begin + 1;
      uint64_t potential = PotentialHits(queries[begin]);
      while (end < queries.size() && potential + PotentialHits(queries[end]) <= max_segment_hits) {
        potential += PotentialHits(queries[end++]);
      }
      results->clear();
      hits->clear();
      AnswerUnderRead(world, history, queries.subspan(begin, end - begin),
                      positions.subspan(begin, end - begin), status, results, hits, split);
      if (!sink(version, begin)) break;
      begin = end;
    }
    return version;
  });
}

}  // namespace collide
