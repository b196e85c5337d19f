#include "scene/version_signal.h"

#include <utility>

namespace collide {

uint64_t VersionSignal::Add(std::function<void()> wake) {
  MutexLock lock(&mu_);
  const uint64_t id = next_id_++;
  wakes_.emplace(id, std::move(wake));
  count_.store(wakes_.size(), std::memory_order_release);
  return id;
}

void VersionSignal::Remove(uint64_t id) {
  MutexLock lock(&mu_);
  wakes_.erase(id);
  count_.store(wakes_.size(), std::memory_order_release);
}

void VersionSignal::Notify() {
  // A waiter registers before it reads the version, and the writer stores the version before
  // this load: a waiter missed here has read the new version itself.
  if (count_.load(std::memory_order_acquire) == 0) return;
  MutexLock lock(&mu_);
  for (auto& [id, wake] : wakes_) wake();
}

}  // namespace collide
