#include "watch/watch_dispatcher.h"

#include <algorithm>
#include <utility>

namespace collide {

WatchDispatcher::WatchDispatcher(const Options& options)
    : options_(options), budget_(options.limits) {
  const size_t threads = std::max<size_t>(1, options.threads);
  for (size_t i = 0; i < threads; ++i) workers_.emplace_back(&WatchDispatcher::Work, this);
}

WatchDispatcher::~WatchDispatcher() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  work_cv_.NotifyAll();
  for (std::thread& t : workers_) t.join();
  absl::flat_hash_map<const Scene*, std::shared_ptr<WatchHub>> hubs;
  {
    MutexLock lock(&mu_);
    hubs.swap(hubs_);
    ready_.clear();
  }
  // Attachments that outlive the dispatcher then detach from a retired hub, which schedules
  // nothing.
  for (auto& [scene, hub] : hubs) hub->Shutdown();
}

std::unique_ptr<WatchDispatcher::Attachment> WatchDispatcher::Attach(
    std::shared_ptr<const Scene> scene, std::shared_ptr<Watcher> watcher) {
  watcher->SetTap(directory_.Register(scene.get(), watcher->fence_specs()));
  return AttachQuery(std::move(scene), std::move(watcher));
}

std::unique_ptr<WatchDispatcher::Attachment> WatchDispatcher::AttachQuery(
    std::shared_ptr<const Scene> scene, std::shared_ptr<StandingQuery> watcher) {
  while (true) {
    std::shared_ptr<WatchHub> hub;
    {
      MutexLock lock(&mu_);
      std::shared_ptr<WatchHub>& slot = hubs_[scene.get()];
      if (slot == nullptr) {
        slot = std::make_shared<WatchHub>(
            scene, &budget_, [this](std::shared_ptr<WatchHub> h) { Schedule(std::move(h)); });
      }
      hub = slot;
    }
    // A hub retired between the lookup and here accepts nothing: the next lookup makes a new one.
    if (hub->AddWatcher(watcher)) return std::make_unique<Attachment>(hub, watcher.get());
  }
}

void WatchDispatcher::Schedule(std::shared_ptr<WatchHub> hub) {
  {
    MutexLock lock(&mu_);
    ready_.push_back(std::move(hub));
    ++busy_;
  }
  work_cv_.NotifyOne();
}

void WatchDispatcher::Work() {
  while (true) {
    std::shared_ptr<WatchHub> hub;
    {
      std::unique_lock<Mutex> lock(mu_);
      work_cv_.Wait(lock, [&] { return stopping_ || !ready_.empty(); });
      if (stopping_) return;
      hub = std::move(ready_.front());
      ready_.pop_front();
    }
    hub->Step(options_.batches_per_turn);
    if (hub->FinishStep()) {
      // More to do: after the other hubs' turns.
      {
        MutexLock lock(&mu_);
        ready_.push_back(std::move(hub));
      }
      work_cv_.NotifyOne();
      continue;
    }
    bool retired = false;
    {
      MutexLock lock(&mu_);
      --busy_;
      if (hub->TryRetire()) {
        auto it = hubs_.find(hub->scene());
        if (it != hubs_.end() && it->second == hub) hubs_.erase(it);
        retired = true;
      }
    }
    idle_cv_.NotifyAll();
    if (retired) hub->Unregister();
  }
}

void WatchDispatcher::WaitIdle() {
  std::unique_lock<Mutex> lock(mu_);
  idle_cv_.Wait(lock, [&] { return busy_ == 0 || stopping_; });
}

size_t WatchDispatcher::hub_count() const {
  MutexLock lock(&mu_);
  return hubs_.size();
}

}  // namespace collide
