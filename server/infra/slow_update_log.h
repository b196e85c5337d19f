#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "scene/apply_timings.h"

namespace collide {

/// Where a write's time went, from its message's arrival to its acknowledgement.
struct UpdateTimings {
  /// Parsing the message (UpdateStream; a unary call's request is parsed before it is handled).
  std::chrono::nanoseconds parse{0};
  /// Converting it into the core's batch (validation of its values included).
  std::chrono::nanoseconds convert{0};
  /// The scene's phases (ApplyTimings), for a batch the store reached and the scene applied.
  std::optional<ApplyTimings> apply;
};

/// The slow-update log (--slow_update_ms): a write (an UpdateStream batch, UpsertBodies,
/// RemoveBodies) whose acknowledgement took at least the threshold from its arrival is logged
/// once, at warn, with its rpc, scene, op count, outcome (its version, or the refusal's code),
/// duration and where the duration went: parse, convert, and for an applied batch the scene's
/// phases (writer wait, validate, log, apply, observers); the rest until the acknowledgement
/// (the durability policy's wait, hand-offs between threads) is `acknowledgement`. Bodies, poses
/// and tokens are never logged.
class SlowUpdateLog {
 public:
  /// `threshold` 0 (the default): nothing is logged.
  explicit SlowUpdateLog(std::chrono::nanoseconds threshold = std::chrono::nanoseconds(0))
      : threshold_(threshold) {}

  /// True when a threshold is set (callers time their writes only then).
  bool enabled() const { return threshold_.count() > 0; }
  /// The threshold (0: off).
  std::chrono::nanoseconds threshold() const { return threshold_; }

  /// Logs the write when enabled and `elapsed` reaches the threshold. `version` is read only
  /// when `status` is OK.
  void Record(absl::string_view rpc, absl::string_view scene, size_t ops,
              const absl::Status& status, uint64_t version, std::chrono::nanoseconds elapsed,
              const UpdateTimings& timings) const;

  /// The line Record logs (without the level), for tests.
  static std::string Format(absl::string_view rpc, absl::string_view scene, size_t ops,
                            const absl::Status& status, uint64_t version,
                            std::chrono::nanoseconds elapsed, const UpdateTimings& timings);

 private:
  std::chrono::nanoseconds threshold_;
};

}  // namespace collide
