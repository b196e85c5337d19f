#include "history/past_batch.h"

#include "history/past_tick.h"
#include "query/run_query.h"

namespace collide {
namespace {

// The past-tick queries of a batch, each run over the history of its tick.
class PastQueries final : public OtherSource {
 public:
  PastQueries(const CollisionWorld& world, const PoseHistory& history)
      : world_(world), history_(history) {}

  bool Takes(const Query& query) const override { return IsPastQuery(history_, query); }
  QueryResult Run(const Query& query, std::vector<QueryHit>* hits) const override {
    return RunQuery(world_, history_, query, hits);
  }

 private:
  const CollisionWorld& world_;
  const PoseHistory& history_;
};

}  // namespace

bool IsPastQuery(const PoseHistory& history, const Query& query) {
  return query.at_tick.has_value() &&
         (*query.at_tick != history.tick() || query.tick_fraction > 0.0f);
}

QueryResult RunQuery(const CollisionWorld& world, const PoseHistory& history, const Query& query,
                     std::vector<QueryHit>* hits) {
  if (!IsPastQuery(history, query)) return RunQuery(world, query, hits);
  const TickPoint at{.tick = *query.at_tick, .fraction = query.tick_fraction};
  return RunQuery(PastTick(world, history, at), query, hits);
}

void RunBatch(const CollisionWorld& world, const PoseHistory& history,
              std::span<const Query> queries, std::vector<QueryResult>* results,
              std::vector<QueryHit>* hits) {
  const PastQueries past(world, history);
  RunBatch(world, queries, results, hits, &past);
}

}  // namespace collide
