#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "prometheus/collectable.h"
#include "store/database.h"

namespace collide {

/// One scene's figures as /metrics reports them.
struct SceneRow {
  std::string name;
  uint64_t bodies = 0;
  uint64_t version = 0;
  uint64_t tick = 0;
  uint64_t history_bytes = 0;
  uint64_t memory_bytes = 0;
  uint64_t log_bytes = 0;
  uint64_t assets = 0;
  uint64_t asset_triangles = 0;
  uint64_t asset_bytes = 0;
};

/// The label of the series that sums the scenes past the bound (no scene name starts with `_`).
inline constexpr char kOtherScenes[] = "_other";

/// Bounds the scene label's values: the first `max_scenes` of `rows` (sorted by name) are kept
/// as they are, the rest become one row named kOtherScenes that sums their bodies and bytes and
/// holds the largest of their versions and ticks.
std::vector<SceneRow> BoundSceneRows(std::vector<SceneRow> rows, size_t max_scenes);

/// Per-scene figures, computed at scrape time from the store's scenes (what GetScene reports,
/// plus the scene's log bytes): collide_scene_{bodies,version,tick,history_bytes,memory_bytes,
/// log_bytes,assets,asset_triangles,asset_bytes}{scene}, at most `max_scenes` scene label values
/// plus "_other" (BoundSceneRows).
class SceneMetrics final : public prometheus::Collectable {
 public:
  /// `db` must outlive this object.
  SceneMetrics(const Database* db, size_t max_scenes) : db_(db), max_scenes_(max_scenes) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const Database* const db_;
  const size_t max_scenes_;
};

}  // namespace collide
