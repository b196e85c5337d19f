#include "scene/scene_query.h"

#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "history/past_batch.h"

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
                       std::vector<QueryResult>* results, std::vector<QueryHit>* hits) {
  status->assign(queries.size(), absl::OkStatus());
  return scene.ReadWithHistory(
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
          RunBatch(world, history, queries, results, hits);
          return version;
        }
        // Run the others, then give each failed query an empty result in its place.
        std::vector<Query> kept;
        kept.reserve(queries.size() - failed);
        for (size_t i = 0; i < queries.size(); ++i) {
          if ((*status)[i].ok()) kept.push_back(queries[i]);
        }
        RunBatch(world, history, kept, results, hits);
        results->resize(queries.size());
        size_t next = kept.size();
        for (size_t i = queries.size(); i-- > 0;) {
          (*results)[i] = (*status)[i].ok() ? (*results)[--next] : QueryResult{};
        }
        return version;
      });
}

}  // namespace collide
