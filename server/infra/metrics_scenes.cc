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
    other.assets += row.assets;
    other.asset_triangles += row.asset_triangles;
    other.asset_bytes += row.asset_bytes;
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
                            .log_bytes = figures.log_bytes,
                            .assets = stats.asset_count,
                            .asset_triangles = stats.asset_triangles,
                            .asset_bytes = stats.asset_bytes});
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
      std::string("Bytes held by the scene's bodies, trees, tables, history and assets") + bound +
          ").",
      MetricType::Gauge);
  MetricFamilyBuilder assets(
      "collide_scene_assets",
      std::string("Assets (meshes, heightfields) of the scene") + bound + ").", MetricType::Gauge);
  MetricFamilyBuilder asset_triangles("collide_scene_asset_triangles",
                                      std::string("Triangles of the scene's assets") + bound + ").",
                                      MetricType::Gauge);
  MetricFamilyBuilder asset_bytes("collide_scene_asset_bytes",
                                  std::string("Bytes of the scene's assets as uploaded "
                                              "(--max_asset_bytes_per_scene)") +
                                      bound + ").",
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
    assets.Add(labels, static_cast<double>(row.assets));
    asset_triangles.Add(labels, static_cast<double>(row.asset_triangles));
    asset_bytes.Add(labels, static_cast<double>(row.asset_bytes));
  }
  std::vector<prometheus::MetricFamily> families;
  families.push_back(bodies.Build());
  families.push_back(version.Build());
  families.push_back(tick.Build());
  families.push_back(history.Build());
  families.push_back(memory.Build());
  families.push_back(log.Build());
  families.push_back(assets.Build());
  families.push_back(asset_triangles.Build());
  families.push_back(asset_bytes.Build());
  return families;
}

}  // namespace collide
