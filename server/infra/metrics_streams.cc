#include "server/infra/metrics_streams.h"

#include "server/infra/metrics_family.h"

namespace collide {
namespace {

// kind label values, by StreamKind.
constexpr const char* kKindNames[kStreamKindCount] = {"update", "query",    "watch", "export",
                                                      "import", "interest", "upload"};

}  // namespace

std::vector<prometheus::MetricFamily> StreamMetrics::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> families;
  if (streams_ != nullptr) {
    const StreamStats stats = streams_->stats();
    MetricFamilyBuilder open("collide_streams_open",
                             "Streams open now (UpdateStream, QueryStream, Watch, ExportScene, "
                             "ImportScene, Interest, UploadAsset), by kind.",
                             MetricType::Gauge);
    MetricFamilyBuilder opened("collide_streams_opened_total", "Streams opened, by kind.",
                               MetricType::Counter);
    MetricFamilyBuilder refused("collide_streams_refused_total",
                                "Streams refused because --max_streams (or --max_watch_streams, "
                                "--max_concurrent_imports, --max_interest_streams) were open, by "
                                "kind.",
                                MetricType::Counter);
    MetricFamilyBuilder stalled(
        "collide_streams_stalled_total",
        "Streams ended because their client read no answer (an import: sent no message) for "
        "--stream_stall_timeout_ms, by kind.",
        MetricType::Counter);
    const uint32_t live[kStreamKindCount] = {
        stats.update_streams, stats.query_streams,    stats.watch_streams, stats.export_streams,
        stats.import_streams, stats.interest_streams, stats.upload_streams};
    for (int kind = 0; kind < kStreamKindCount; ++kind) {
      const MetricFamilyBuilder::Labels labels = {{"kind", kKindNames[kind]}};
      open.Add(labels, live[kind]);
      opened.Add(labels, static_cast<double>(stats.opened_by_kind[kind]));
      refused.Add(labels, static_cast<double>(stats.refused_by_kind[kind]));
      stalled.Add(labels, static_cast<double>(stats.stalled_by_kind[kind]));
    }
    families.push_back(open.Build());
    families.push_back(opened.Build());
    families.push_back(refused.Build());
    families.push_back(stalled.Build());
  }
  if (watches_ != nullptr) {
    WatchBudget& budget = watches_->budget();
    families.push_back(
        MetricFamilyBuilder("collide_watch_fences",
                            "Fences plus contact watches of all live watches (--max_watch_fences).",
                            MetricType::Gauge)
            .Add({}, static_cast<double>(budget.fences.used()))
            .Build());
    families.push_back(MetricFamilyBuilder("collide_watch_queued_bytes",
                                           "Bytes of updates queued for all watchers "
                                           "(--max_watch_queued_bytes).",
                                           MetricType::Gauge)
                           .Add({}, static_cast<double>(budget.queued_bytes.used()))
                           .Build());
    families.push_back(
        MetricFamilyBuilder("collide_interest_observers",
                            "Observers of all live interest streams (--max_interest_observers).",
                            MetricType::Gauge)
            .Add({}, static_cast<double>(budget.observers.used()))
            .Build());
    families.push_back(
        MetricFamilyBuilder("collide_watch_resyncs_total",
                            "Watchers sent a resync snapshot instead of their queued updates.",
                            MetricType::Counter)
            .Add({}, static_cast<double>(budget.resyncs.load(std::memory_order_relaxed)))
            .Build());
  }
  return families;
}

}  // namespace collide
