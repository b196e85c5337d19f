#include "server/infra/metrics_scenes.h"

#include <algorithm>
#include <utility>

#include "server/infra/metrics_family.h"

namespace collide {

std::vector<SceneRow> BoundSceneRows(std::vector<SceneRow> rows, size_t max_scenes) {
  if (rows.size() <= max_scenes) return rows;
  SceneRow other{.name = kOtherScenes};
  for (size_t i = max_scenes; i < rows.size(); ++i) {
    const SceneRow& row = rows[i];
    other.bodies += row.bodies;
    other.version = std::max(other.version, row.version);
    other.tick = std::max(other.tick, row.tick);
    other.history_bytes += row.history_bytes;
    other.memory_bytes += row.memory_bytes;
    other.log_bytes += row.log_bytes;
  }
  rows.resize(max_scenes);
  rows.push_back(std::move(other));
  return rows;
}

std::vector<prometheus::MetricFamily> SceneMetrics::Collect() const {
  using prometheus::MetricType;
  std::vector<SceneRow> rows;
  for (const SceneFigures& figures : db_->SceneFiguresByName()) {
    const SceneStats stats = figures.scene->Stats();
    rows.push_back(SceneRow{.name = figures.scene->name(),
                            .bodies = static_cast<uint64_t>(stats.body_count),
                            .version = stats.version,
                            .tick = stats.tick,
                            .history_bytes = stats.history_bytes,
                            .memory_bytes = stats.memory_bytes,
                            .log_bytes = figures.log_bytes});
  }
  rows = BoundSceneRows(std::move(rows), max_scenes_);
  const char* const bound =
      " (past --metrics_max_scenes scenes in name order, scene=\"_other\" sums the rest";
  MetricFamilyBuilder bodies("collide_scene_bodies",
                             std::string("Live bodies of the scene") + bound + ").",
                             MetricType::Gauge);
  MetricFamilyBuilder version(
      "collide_scene_version",
      std::string("The scene's version") + bound + "; for it, the largest version).",
      MetricType::Gauge);
  MetricFamilyBuilder tick(
      "collide_scene_tick",
      std::string("The scene's current tick") + bound + "; for it, the largest tick).",
      MetricType::Gauge);
  MetricFamilyBuilder history("collide_scene_history_bytes",
                              std::string("Bytes held by the scene's tick history") + bound + ").",
                              MetricType::Gauge);
  MetricFamilyBuilder memory(
      "collide_scene_memory_bytes",
      std::string("Bytes held by the scene's bodies, trees, tables and history") + bound + ").",
      MetricType::Gauge);
  MetricFamilyBuilder log("collide_scene_log_bytes",
                          std::string("Bytes of the scene's log records since its newest "
                                      "snapshot") +
                              bound + ").",
                          MetricType::Gauge);
  for (const SceneRow& row : rows) {
    const MetricFamilyBuilder::Labels labels = {{"scene", row.name}};
    bodies.Add(labels, static_cast<double>(row.bodies));
    version.Add(labels, static_cast<double>(row.version));
    tick.Add(labels, static_cast<double>(row.tick));
    history.Add(labels, static_cast<double>(row.history_bytes));
    memory.Add(labels, static_cast<double>(row.memory_bytes));
    log.Add(labels, static_cast<double>(row.log_bytes));
  }
  std::vector<prometheus::MetricFamily> families;
  families.push_back(bodies.Build());
  families.push_back(version.Build());
  families.push_back(tick.Build());
  families.push_back(history.Build());
  families.push_back(memory.Build());
  families.push_back(log.Build());
  return families;
}

}  // namespace collide
