#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "collide/v1/collide.pb.h"

namespace collide {

/// The slow-query log (--slow_query_ms): a query batch or unary query call whose answer took
/// at least the threshold is logged once, at warn, with its rpc, scene, query kinds and counts,
/// duration and the version it read. Tokens and query payloads are never logged.
class SlowQueryLog {
 public:
  /// `threshold` 0 (the default): nothing is logged.
  explicit SlowQueryLog(std::chrono::nanoseconds threshold = std::chrono::nanoseconds(0))
      : threshold_(threshold) {}

  /// True when a threshold is set (callers time their work only then).
  bool enabled() const { return threshold_.count() > 0; }
  /// The threshold (0: off).
  std::chrono::nanoseconds threshold() const { return threshold_; }

  /// Logs the call when enabled and `elapsed` reaches the threshold. `kinds` names the queries'
  /// kinds with their counts (QueryKindCounts).
  void Record(absl::string_view rpc, absl::string_view scene, size_t query_count,
              absl::string_view kinds, std::chrono::nanoseconds elapsed, uint64_t version) const;

 private:
  std::chrono::nanoseconds threshold_;
};

/// The kinds of `batch`'s queries with their counts, in the order of the Query.kind fields:
/// `raycast 3, overlap 1` (`unset` counts queries with no kind).
std::string QueryKindCounts(const v1::QueryBatch& batch);

/// A --slow_query_ms or --slow_update_ms value `ms` as a threshold in `threshold`: 0 is off; a
/// positive value is rounded to the nanosecond, and at least 1 ns (so 0.000001 logs every call).
/// False unless `ms` is finite and in [0, 86400000] (one day).
bool SlowLogThresholdFromMs(double ms, std::chrono::nanoseconds* threshold);

}  // namespace collide
