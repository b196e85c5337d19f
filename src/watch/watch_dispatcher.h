#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "base/mutex.h"
#include "scene/scene.h"
#include "watch/watch_budget.h"
#include "watch/watch_directory.h"
#include "watch/watch_hub.h"
#include "watch/watcher.h"

namespace collide {

/// Runs the standing queries (watches, interest streams) of every scene on a few worker threads,
/// away from the scenes' writers: one WatchHub per watched scene (created on its first query,
/// retired after its last), each run by one worker at a time, a bounded number of batches per
/// turn so that scenes take turns. Owns the server-wide WatchBudget. Thread-safe.
class WatchDispatcher {
 public:
  struct Options {
    /// Worker threads (at least 1).
    size_t threads = 2;
    /// The server-wide ceilings.
    WatchLimits limits = {};
    /// Batches one hub evaluates per turn before the next hub's turn.
    size_t batches_per_turn = 16;
  };

  /// Detaches its query when destroyed.
  class Attachment {
   public:
    Attachment(std::shared_ptr<WatchHub> hub, const StandingQuery* watcher)
        : hub_(std::move(hub)), watcher_(watcher) {}
    Attachment(const Attachment&) = delete;
    Attachment& operator=(const Attachment&) = delete;
    /// Detaches (a worker may still call the query until its next step; the query stays
    /// alive through the hub's reference meanwhile).
    ~Attachment() { hub_->RemoveWatcher(watcher_); }
    /// Asks for the query's Refresh soon (its client changed it).
    void Poke() { hub_->Poke(); }

   private:
    std::shared_ptr<WatchHub> hub_;
    const StandingQuery* watcher_;
  };

  explicit WatchDispatcher(const Options& options);
  /// Stops the workers and unregisters every hub from its scene (watchers still attached get no
  /// further message).
  ~WatchDispatcher();
  WatchDispatcher(const WatchDispatcher&) = delete;
  WatchDispatcher& operator=(const WatchDispatcher&) = delete;

  /// Attaches `watcher` to `scene`: a worker queues its starting snapshot (at a version at least
  /// that of every batch applied before this call), then its updates. Set its queue's listener
  /// before. The watcher stays attached while the returned Attachment lives.
  std::unique_ptr<Attachment> Attach(std::shared_ptr<const Scene> scene,
                                     std::shared_ptr<Watcher> watcher);
  /// As Attach, for any standing query (an interest stream): it is not listed in the directory.
  std::unique_ptr<Attachment> AttachQuery(std::shared_ptr<const Scene> scene,
                                          std::shared_ptr<StandingQuery> query);

  /// Blocks until no hub has work left: every batch applied before the call has been evaluated
  /// for every query attached before it, and every Poke before it was answered (tests and
  /// benchmarks).
  void WaitIdle();

  /// The server-wide ceilings and counters.
  WatchBudget& budget() { return budget_; }
  /// Scenes with a hub now.
  size_t hub_count() const;
  /// The open watches of each scene and their fence events, for readers (the browser viewer):
  /// every watcher attached here is listed while it lives.
  WatchDirectory& directory() { return directory_; }

 private:
  void Schedule(std::shared_ptr<WatchHub> hub);
  void Work();

  const Options options_;
  WatchBudget budget_;
  WatchDirectory directory_;
  mutable Mutex mu_;
  CondVar work_cv_;
  CondVar idle_cv_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_map<const Scene*, std::shared_ptr<WatchHub>> hubs_ ABSL_GUARDED_BY(mu_);
  std::deque<std::shared_ptr<WatchHub>> ready_ ABSL_GUARDED_BY(mu_);
  // Hubs scheduled (waiting or running).
  size_t busy_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::thread> workers_;
};

}  // namespace collide
