#pragma once

#include <chrono>

namespace collide {

/// Where one Scene::Apply spent its time, phase by phase (filled only for a caller that asks:
/// each phase costs a clock read). The phases follow each other on the writer's thread; a
/// batch refused part-way has the phases up to its refusal.
struct ApplyTimings {
  /// Waiting for the scene's writer serialisation (another writer's batch under way).
  std::chrono::nanoseconds writer_wait{0};
  /// Validation: values, ids, limits.
  std::chrono::nanoseconds validate{0};
  /// The commit hook (Scene::CommitFn): the store's log record, encoded and appended.
  std::chrono::nanoseconds commit{0};
  /// The change, under the scene's exclusive lock (its wait for readers included): poses, the
  /// history, the trees' refit, the version made visible.
  std::chrono::nanoseconds apply{0};
  /// The hand-off to the scene's observers (watches, interest streams): their view before the
  /// change and their notification after it.
  std::chrono::nanoseconds observers{0};
};

}  // namespace collide
