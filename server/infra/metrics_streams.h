#pragma once

#include <vector>

#include "prometheus/collectable.h"
#include "server/infra/stream_registry.h"
#include "watch/watch_dispatcher.h"

namespace collide {

/// The streams' and the watches' figures (the counters GetServerStats reports) as metric
/// families, read at scrape time: collide_streams_open{kind} and
/// collide_streams_{opened,refused,stalled}_total{kind} (kind update, query, watch, export or
/// import);
/// collide_watch_fences, collide_watch_queued_bytes, collide_watch_resyncs_total.
class StreamMetrics final : public prometheus::Collectable {
 public:
  /// Both must outlive this object; either may be null (its families are then left out).
  StreamMetrics(const StreamRegistry* streams, WatchDispatcher* watches)
      : streams_(streams), watches_(watches) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const StreamRegistry* const streams_;
  WatchDispatcher* const watches_;
};

}  // namespace collide
