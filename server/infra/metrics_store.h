#pragma once

#include <vector>

#include "prometheus/collectable.h"
#include "store/database.h"

namespace collide {

/// The store's figures as metric families, read at scrape time (Database::stats and
/// histograms): collide_store_fsync_seconds, collide_store_group_commit_records,
/// collide_store_snapshot_seconds (histograms), collide_store_sync_lag_seconds,
/// collide_store_snapshot_bytes_total, collide_store_recovery_seconds, collide_store_writable.
class StoreMetrics final : public prometheus::Collectable {
 public:
  /// `db` must outlive this object.
  explicit StoreMetrics(const Database* db) : db_(db) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const Database* const db_;
};

}  // namespace collide
