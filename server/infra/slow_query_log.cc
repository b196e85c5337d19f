#include "server/infra/slow_query_log.h"

#include <array>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace collide {

void SlowQueryLog::Record(absl::string_view rpc, absl::string_view scene, size_t query_count,
                          absl::string_view kinds, std::chrono::nanoseconds elapsed,
                          uint64_t version) const {
  if (!enabled() || elapsed < threshold_) return;
  spdlog::warn("slow query: rpc {}, scene \"{}\", {} queries ({}), {:.3f} ms, version {}",
               std::string(rpc), std::string(scene), query_count, std::string(kinds),
               static_cast<double>(elapsed.count()) / 1e6, version);
}

std::string QueryKindCounts(const v1::QueryBatch& batch) {
  // Indexed by the Query.kind field number (2..6); 0 for a query with no kind.
  std::array<size_t, 7> counts{};
  for (const v1::Query& query : batch.queries()) {
    const int kind = static_cast<int>(query.kind_case());
    ++counts[kind >= 0 && kind < static_cast<int>(counts.size()) ? kind : 0];
  }
  std::string text;
  auto add = [&text](absl::string_view name, size_t count) {
    if (count == 0) return;
    absl::StrAppend(&text, text.empty() ? "" : ", ", name, " ", count);
  };
  add("raycast", counts[v1::Query::kRaycast]);
  add("sphere_cast", counts[v1::Query::kSphereCast]);
  add("overlap", counts[v1::Query::kOverlap]);
  add("point", counts[v1::Query::kPoint]);
  add("aabb", counts[v1::Query::kAabb]);
  add("unset", counts[0]);
  return text.empty() ? "none" : text;
}

bool SlowLogThresholdFromMs(double ms, std::chrono::nanoseconds* threshold) {
  if (!std::isfinite(ms) || ms < 0 || ms > 86400000.0) return false;
  int64_t ns = std::llround(ms * 1e6);
  if (ms > 0 && ns == 0) ns = 1;
  *threshold = std::chrono::nanoseconds(ns);
  return true;
}

}  // namespace collide
