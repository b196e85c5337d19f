#include "server/infra/metrics_replication.h"

#include <algorithm>
#include <string>

#include "server/infra/metrics_family.h"
#include "server/infra/metrics_scenes.h"

namespace collide {

std::vector<prometheus::MetricFamily> ReplicationMetrics::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> families;
  if (replication_ == nullptr) return families;
  const ReplicationFigures figures = replication_->Figures();
  const std::vector<SceneReplicaFigures> scenes = replication_->AllSceneFigures();
  MetricFamilyBuilder lag_sequences(
      "collide_replication_lag_sequences",
      "Messages of the scene's replicated log not applied here yet (0 at the owner).",
      MetricType::Gauge);
  MetricFamilyBuilder lag_seconds(
      "collide_replication_lag_seconds",
      "How long the oldest message of the scene's replicated log not applied here has waited, "
      "in seconds (0 at the owner and on an up-to-date follower).",
      MetricType::Gauge);
  MetricFamilyBuilder owner("collide_replication_owner",
                            "1 when this server owns (writes) the replicated scene, else 0.",
                            MetricType::Gauge);
  MetricFamilyBuilder epoch("collide_replication_epoch",
                            "The replicated scene's owner epoch (one more at each change of "
                            "owner).",
                            MetricType::Gauge);
  MetricFamilyBuilder readable("collide_replication_readable",
                               "1 when the copy here is checked against the replicated log and "
                               "answers reads, else 0.",
                               MetricType::Gauge);
  const size_t named = max_scenes_ == 0 ? scenes.size() : std::min(scenes.size(), max_scenes_);
  for (size_t i = 0; i < named; ++i) {
    const SceneReplicaFigures& scene = scenes[i];
    const MetricFamilyBuilder::Labels labels = {{"scene", scene.scene}};
    lag_sequences.Add(labels, static_cast<double>(scene.lag_sequences));
    lag_seconds.Add(labels, scene.lag_seconds);
    owner.Add(labels, scene.owner ? 1 : 0);
    epoch.Add(labels, static_cast<double>(scene.epoch));
    readable.Add(labels, scene.readable ? 1 : 0);
  }
  if (named < scenes.size()) {
    uint64_t most_sequences = 0;
    double most_seconds = 0;
    for (size_t i = named; i < scenes.size(); ++i) {
      most_sequences = std::max(most_sequences, scenes[i].lag_sequences);
      most_seconds = std::max(most_seconds, scenes[i].lag_seconds);
    }
    const MetricFamilyBuilder::Labels labels = {{"scene", std::string(kOtherScenes)}};
    lag_sequences.Add(labels, static_cast<double>(most_sequences));
    lag_seconds.Add(labels, most_seconds);
  }
  families.push_back(lag_sequences.Build());
  families.push_back(lag_seconds.Build());
  families.push_back(owner.Build());
  families.push_back(epoch.Build());
  families.push_back(readable.Build());
  auto gauge = [&](const char* name, const char* help, double value) {
    families.push_back(MetricFamilyBuilder(name, help, MetricType::Gauge).Add({}, value).Build());
  };
  auto counter = [&](const char* name, const char* help, uint64_t value) {
    families.push_back(MetricFamilyBuilder(name, help, MetricType::Counter)
                           .Add({}, static_cast<double>(value))
                           .Build());
  };
  gauge("collide_replication_connected", "1 while connected to a node of the NATS cluster.",
        figures.connected ? 1 : 0);
  gauge("collide_replication_owned_scenes", "Replicated scenes this server owns.", figures.owned);
  gauge("collide_replication_followed_scenes", "Replicated scenes this server follows.",
        figures.followed);
  counter("collide_replication_takeovers_total",
          "Replicated scenes this server took over (failovers and handovers).", figures.takeovers);
  counter("collide_replication_depositions_total",
          "Replicated scenes another server took from this one while it owned them.",
          figures.depositions);
  counter("collide_replication_rebuilds_total",
          "Copies of replicated scenes rebuilt here from their replicated logs.", figures.rebuilds);
  counter("collide_replication_records_published_total",
          "Records this server stored in replicated logs as an owner.", figures.records_published);
  counter("collide_replication_records_applied_total",
          "Records this server applied from replicated logs as a follower.",
          figures.records_applied);
  counter("collide_replication_snapshots_published_total",
          "Snapshots this server copied to replicated logs.", figures.snapshots_published);
  return families;
}

}  // namespace collide
