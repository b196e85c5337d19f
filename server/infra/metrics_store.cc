#include "server/infra/metrics_store.h"

#include <chrono>

#include "server/infra/metrics_family.h"

namespace collide {

std::vector<prometheus::MetricFamily> StoreMetrics::Collect() const {
  using prometheus::MetricType;
  const StoreStats stats = db_->stats();
  const StoreHistograms& histograms = db_->histograms();
  std::vector<prometheus::MetricFamily> families;
  families.push_back(
      MetricFamilyBuilder("collide_store_fsync_seconds",
                          "Duration of each fsync of the log (group commits and periodic syncs).",
                          MetricType::Histogram)
          .AddHistogram({}, histograms.fsync_ns.Read(), 1e-9)
          .Build());
  families.push_back(
      MetricFamilyBuilder("collide_store_group_commit_records",
                          "Log records written by each group commit (one write for all queued).",
                          MetricType::Histogram)
          .AddHistogram({}, histograms.group_commit_records.Read())
          .Build());
  families.push_back(MetricFamilyBuilder("collide_store_sync_lag_seconds",
                                         "How long the records of the latest fsync waited for "
                                         "it (the oldest of them; GetServerStats sync_lag_us).",
                                         MetricType::Gauge)
                         .Add({}, std::chrono::duration<double>(stats.last_sync_lag).count())
                         .Build());
  families.push_back(MetricFamilyBuilder("collide_store_snapshot_seconds",
                                         "Duration of each scene snapshot written.",
                                         MetricType::Histogram)
                         .AddHistogram({}, histograms.snapshot_ns.Read(), 1e-9)
                         .Build());
  families.push_back(MetricFamilyBuilder("collide_store_snapshot_bytes_total",
                                         "Bytes of scene snapshots written since the start.",
                                         MetricType::Counter)
                         .Add({}, static_cast<double>(stats.snapshot_bytes_written))
                         .Build());
  families.push_back(
      MetricFamilyBuilder("collide_store_recovery_seconds",
                          "How long opening the data directory took at start-up (snapshots "
                          "loaded, the log replayed).",
                          MetricType::Gauge)
          .Add({}, std::chrono::duration<double>(stats.recovery_duration).count())
          .Build());
  const StoredAssets assets = db_->stored_assets();
  families.push_back(MetricFamilyBuilder("collide_assets",
                                         "Asset contents (meshes, heightfields) the scenes hold, "
                                         "each once however many scenes hold it.",
                                         MetricType::Gauge)
                         .Add({}, assets.contents)
                         .Build());
  families.push_back(MetricFamilyBuilder("collide_asset_triangles",
                                         "Triangles of the asset contents the scenes hold.",
                                         MetricType::Gauge)
                         .Add({}, static_cast<double>(assets.triangles))
                         .Build());
  families.push_back(MetricFamilyBuilder("collide_asset_bytes",
                                         "Bytes of the asset contents the scenes hold, as "
                                         "uploaded (--max_asset_bytes).",
                                         MetricType::Gauge)
                         .Add({}, static_cast<double>(assets.source_bytes))
                         .Build());
  families.push_back(MetricFamilyBuilder("collide_asset_memory_bytes",
                                         "Bytes of memory the asset contents hold (content and "
                                         "built form).",
                                         MetricType::Gauge)
                         .Add({}, static_cast<double>(assets.memory_bytes))
                         .Build());
  families.push_back(MetricFamilyBuilder("collide_store_asset_files",
                                         "Asset files in the data directory (those the log still "
                                         "names after their last scene dropped them included).",
                                         MetricType::Gauge)
                         .Add({}, assets.files)
                         .Build());
  families.push_back(MetricFamilyBuilder("collide_store_writable",
                                         "1 while the log accepts writes; 0 once a write or "
                                         "fsync failed (writes are refused until a restart).",
                                         MetricType::Gauge)
                         .Add({}, db_->write_status().ok() ? 1.0 : 0.0)
                         .Build());
  return families;
}

}  // namespace collide
