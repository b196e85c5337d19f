#pragma once

#include <vector>

#include "prometheus/collectable.h"
#include "server/infra/replication_control.h"

namespace collide {

/// Replicated scenes' figures (--nats_url) as metric families, read at scrape time: per scene
/// this server holds, collide_replication_lag_sequences{scene}, collide_replication_lag_seconds
/// {scene}, collide_replication_owner{scene} (1 here, 0 elsewhere) and
/// collide_replication_epoch{scene}; for the server, collide_replication_connected, _owned_scenes,
/// _followed_scenes and the counters _takeovers_total (failovers and handovers won here),
/// _depositions_total, _rebuilds_total, _records_published_total, _records_applied_total,
/// _snapshots_published_total. Per-scene rows follow --metrics_max_scenes (name order; the rest
/// are left out, and collide_replication_lag_* of scene="_other" carries their largest lag).
class ReplicationMetrics final : public prometheus::Collectable {
 public:
  /// `replication` must outlive this object.
  ReplicationMetrics(const ReplicationControl* replication, size_t max_scenes)
      : replication_(replication), max_scenes_(max_scenes) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const ReplicationControl* const replication_;
  const size_t max_scenes_;
};

}  // namespace collide
