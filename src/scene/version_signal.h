#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "base/mutex.h"

namespace collide {

/// Tells whoever waits for a scene's next version that one was applied: the writer calls
/// `Notify` after each applied batch, and each registered wake function runs then, on the
/// writer's thread. A wake function must be short and must not block or call into the scene
/// (the service's VersionWait only cancels an alarm, so that its check runs at once on a gRPC
/// thread). With nothing registered, `Notify` is one atomic load.
class VersionSignal {
 public:
  /// Registers `wake`; returns the id that `Remove` takes.
  uint64_t Add(std::function<void()> wake);
  /// Unregisters the function of `id`. Once it returns, that function is not running and will
  /// not run again.
  void Remove(uint64_t id);
  /// Runs every registered function.
  void Notify();

 private:
  std::atomic<size_t> count_{0};
  Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<uint64_t, std::function<void()>> wakes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace collide
