#include "scene/scene_query.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "history/past_batch.h"
#include "scene/query_sampler.h"

namespace collide {
namespace {

absl::Status Check(const PoseHistory& history, const Query& query, const std::string& prefix) {
  if (!query.at_tick.has_value()) return absl::OkStatus();
  const uint64_t t = *query.at_tick;
  if (!history.Retains(t)) {
    return absl::OutOfRangeError(
        absl::StrFormat("%sat_tick: tick %d is not retained (retained: %d..%d)", prefix, t,
                        history.oldest_tick(), history.tick()));
  }
  if (query.tick_fraction > 0.0f && !history.Retains(t + 1)) {
    return absl::OutOfRangeError(absl::StrFormat(
        "%stick_fraction: interpolating from tick %d needs tick %d, which is not retained "
        "(retained: %d..%d)",
        prefix, t, t + 1, history.oldest_tick(), history.tick()));
  }
  return absl::OkStatus();
}

// The answer to one chunk of a split batch.
struct ChunkAnswer {
  std::vector<QueryResult> results;
  std::vector<QueryHit> hits;
};

// The most bytes a thread's chunk answers keep between batches, all chunks together (as the
// service's scratch keeps per vector).
constexpr size_t kKeptChunkBytes = 64 << 10;

// RunBatch (history/past_batch.h) over `queries`, in chunks on split.pool when the batch is
// large enough. Runs under the caller's read of the scene; the workers read the world and the
// history only while the caller waits in ParallelFor, so that read covers them (the writer
// cannot take the lock exclusively before ParallelFor returns). Each chunk writes only its own
// ChunkAnswer; the caller alone puts them together, after ParallelFor.
void RunSplit(const CollisionWorld& world, const PoseHistory& history,
              std::span<const Query> queries, std::vector<QueryResult>* results,
              std::vector<QueryHit>* hits, const QuerySplit& split) {
  const size_t n = queries.size();
  const size_t threads = split.pool != nullptr ? split.pool->threads() : 1;
  const size_t chunks = std::min(threads * std::max<size_t>(split.chunks_per_thread, 1),
                                 n / std::max<size_t>(split.min_chunk, 1));
  if (threads <= 1 || n < split.min_queries || chunks < 2) {
    RunBatch(world, history, queries, results, hits);
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
    RunBatch(world, history, queries.subspan(begin, end - begin), &answers[c].results,
             &answers[c].hits);
  });
  results->clear();
  hits->clear();
  results->reserve(n);
  const size_t keep = kKeptChunkBytes / (2 * chunks);
  size_t total_hits = 0;
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
    if (answer.hits.capacity() * sizeof(QueryHit) > keep) {
      std::vector<QueryHit>().swap(answer.hits);
    }
    if (answer.results.capacity() * sizeof(QueryResult) > keep) {
      std::vector<QueryResult>().swap(answer.results);
    }
  }
}

}  // namespace

absl::Status CheckQueryTick(const PoseHistory& history, const Query& query, size_t index,
                            absl::string_view list) {
  return Check(history, query, absl::StrFormat("%s[%d].", list, index));
}

absl::Status CheckQueryTick(const PoseHistory& history, const Query& query) {
  return Check(history, query, "");
}

uint64_t AnswerQueries(const Scene& scene, std::span<const Query> queries,
                       std::span<const size_t> positions, std::vector<absl::Status>* status,
                       std::vector<QueryResult>* results, std::vector<QueryHit>* hits,
                       const QuerySplit& split) {
  status->assign(queries.size(), absl::OkStatus());
  const uint64_t version = scene.ReadWithHistory(
      [&](const CollisionWorld& world, const PoseHistory& history, uint64_t version) {
        // Ticks are checked under the same read as the queries run: the window cannot move in
        // between. A query naming a tick not retained gets its own OUT_OF_RANGE error.
        size_t failed = 0;
        for (size_t i = 0; i < queries.size(); ++i) {
          absl::Status s = positions.empty() ? CheckQueryTick(history, queries[i])
                                             : CheckQueryTick(history, queries[i], positions[i]);
          if (!s.ok()) {
            (*status)[i] = std::move(s);
            ++failed;
          }
        }
        if (failed == 0) {
          RunSplit(world, history, queries, results, hits, split);
          return version;
        }
        // Run the others, then give each failed query an empty result in its place.
        std::vector<Query> kept;
        kept.reserve(queries.size() - failed);
        for (size_t i = 0; i < queries.size(); ++i) {
          if ((*status)[i].ok()) kept.push_back(queries[i]);
        }
        RunSplit(world, history, kept, results, hits, split);
        results->resize(queries.size());
        size_t next = kept.size();
        for (size_t i = queries.size(); i-- > 0;) {
          (*results)[i] = (*status)[i].ok() ? (*results)[--next] : QueryResult{};
        }
        return version;
      });
  // A reader (the viewer) follows some scene: offer the casts answered (copied, after the read).
  if (QuerySampler& sampler = QuerySampler::Global(); sampler.active()) {
    sampler.Offer(&scene, version, queries, *status, *results, *hits);
  }
  return version;
}

}  // namespace collide
