#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "base/mutex.h"
#include "scene/scene.h"
#include "scene/scene_observer.h"
#include "watch/scene_mirror.h"
#include "watch/standing_query.h"
#include "watch/watch_budget.h"

namespace collide {

/// The standing queries of one scene (watchers and interest streams: StandingQuery), evaluated
/// away from the scene's writer. The hub is the scene's one observer: after each applied batch
/// the writer only appends a copy of the batch's change records to the hub's backlog (O(ops),
/// whatever the number of queries) and asks for a worker; a worker (WatchDispatcher) then
/// replays the backlog on the hub's SceneMirror, version by version, running every query on each
/// version, so every update is exact for its version and they arrive in version order. The
/// mirror keeps what its queries need (SceneMirror::Parts: the world for fences and contacts,
/// the position grid for interest sets), from the first query that needs it on.
///
/// The backlog's bytes (BatchBytes) are taken from WatchBudget::backlog_bytes: a batch that
/// does not fit drops the whole backlog, and the next step copies the scene anew and resyncs
/// every query from that copy (a snapshot with resync set). The writer never waits.
///
/// A query added with AddWatcher starts (its snapshot) once the mirror holds every batch
/// applied before the call, so its snapshot's version is at least that of every batch
/// acknowledged before it was added.
///
/// Thread-safety: OnApplied and OnDeleted run on the scene's writer; AddWatcher, RemoveWatcher
/// and Poke on any thread; Step, FinishStep, TryRetire and Unregister on the dispatcher's
/// workers, one at a time (the hub is scheduled at most once).
class WatchHub final : public SceneObserver, public std::enable_shared_from_this<WatchHub> {
 public:
  /// Asks the dispatcher to run Step on a worker (called outside the hub's lock).
  using ScheduleFn = std::function<void(std::shared_ptr<WatchHub>)>;

  /// A hub for `scene` drawing on `budget` (outlives the hub). It registers with the scene on
  /// its first Step.
  WatchHub(std::shared_ptr<const Scene> scene, WatchBudget* budget, ScheduleFn schedule);
  /// Gives back the backlog's bytes. Unregister must have run (or the hub never registered).
  ~WatchHub() override;
  WatchHub(const WatchHub&) = delete;
  WatchHub& operator=(const WatchHub&) = delete;

  /// The bytes a batch of `changes` change records holds in the backlog.
  static size_t BatchBytes(size_t changes);
  /// The bytes a batch of moves and filter changes of `moves` bodies holds in the backlog (the
  /// hub takes such batches as BodyMove records: SceneObserver::TakesMoves).
  static size_t MoveBatchBytes(size_t moves);
  /// Buffers of evaluated batches a hub keeps for the next ones, of each kind (change records,
  /// moves), and the largest capacity kept (bytes); besides, one buffer of the change records a
  /// batch of moves is expanded to for the queries, kept when at most kSpareBufferBytes. At
  /// most 10 MiB a watched scene.
  static constexpr size_t kSpareBuffers = 2;
  static constexpr size_t kSpareBufferBytes = size_t{2} << 20;
  /// Buffers of change records, and of moves, kept now (tests).
  size_t spare_change_buffers() const;
  size_t spare_move_buffers() const;

  /// The scene watched.
  const Scene* scene() const { return scene_.get(); }

  /// Adds `watcher` (not started: a worker starts it). False when the hub was retired (attach
  /// to a new hub).
  bool AddWatcher(std::shared_ptr<StandingQuery> watcher);
  /// Removes `watcher`; a worker drops it at its next step (calls into it may run until then:
  /// clear its queue's listener first).
  void RemoveWatcher(const StandingQuery* watcher);
  /// Asks for a step soon even without a batch, so that the queries' Refresh runs (a client
  /// changed its query).
  void Poke();

  /// Evaluates up to `max_batches` batches of the backlog for every query (after a resync when
  /// the backlog overflowed), starts the queries added since whose batches are done, then
  /// refreshes every started query.
  void Step(size_t max_batches);
  /// After Step: true when more work waits (run Step again); otherwise the hub is idle until the
  /// next batch or watcher schedules it.
  bool FinishStep();
  /// When the idle hub has no watcher, marks it retired (no more work is accepted) and returns
  /// true: then call Unregister.
  bool TryRetire();
  /// Unregisters from the scene: once it returns, no OnApplied runs.
  void Unregister();
  /// Retires the hub whatever it holds and unregisters it (the dispatcher is going away): it
  /// accepts and schedules nothing from then on.
  void Shutdown();

  void OnApplied(const AppliedBatch& batch, const SceneView& scene) override;
  void OnDeleted() override;
  /// The hub's mirror holds every body: a batch of moves comes as its new poses and filters.
  bool TakesMoves() const override { return true; }

 private:
  struct Entry {
    uint64_t version = 0;
    uint64_t tick = 0;
    // One of the two: the batch's change records, or its moves (a batch of moves and filter
    // changes).
    std::vector<BodyChange> changes;
    std::vector<BodyMove> moves;
    size_t bytes = 0;
    bool deleted = false;
  };
  struct Pending {
    std::shared_ptr<StandingQuery> watcher;
    // The count of backlog entries consumed once this watcher's batches are done.
    uint64_t ready_at = 0;
  };

  // Drops the backlog (its bytes go back to the budget); counts the entries consumed.
  void DropBacklogLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Buffers of evaluated batches' records kept for later batches.
  template <typename T>
  struct Spares {
    std::vector<std::vector<T>> kept;
    // An empty buffer for the next batch: a kept one (its capacity reused) or a new one.
    std::vector<T> Take() {
      if (kept.empty()) return {};
      std::vector<T> buffer = std::move(kept.back());
      kept.pop_back();
      return buffer;
    }
    // Keeps the storage of an evaluated entry's records, emptied by the caller outside the
    // lock (up to kSpareBuffers buffers of at most kSpareBufferBytes each; anything else is
    // freed).
    void Keep(std::vector<T> buffer) {
      if (kept.size() >= kSpareBuffers || buffer.capacity() == 0 ||
          buffer.capacity() * sizeof(T) > kSpareBufferBytes) {
        return;  // freed here
      }
      kept.push_back(std::move(buffer));
    }
  };
  void Schedule();

  const std::shared_ptr<const Scene> scene_;
  WatchBudget* const budget_;
  const ScheduleFn schedule_;

  mutable Mutex mu_;
  std::deque<Entry> backlog_ ABSL_GUARDED_BY(mu_);
  // Change buffers of evaluated batches kept for the next ones: a tick loop's batch of every
  // body (10,000 changes: 1.9 MB) would otherwise be a fresh mapping faulted in every tick.
  Spares<BodyChange> spare_changes_ ABSL_GUARDED_BY(mu_);
  Spares<BodyMove> spare_moves_ ABSL_GUARDED_BY(mu_);
  // Entries appended to the backlog, and consumed from it (evaluated or dropped), ever.
  uint64_t appended_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t consumed_ ABSL_GUARDED_BY(mu_) = 0;
  // The backlog overflowed since the last step: copy the scene anew and resync.
  bool overflowed_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<Pending> pending_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<const StandingQuery*> removed_ ABSL_GUARDED_BY(mu_);
  // Poke was called since the last step began.
  bool poked_ ABSL_GUARDED_BY(mu_) = false;
  bool scheduled_ ABSL_GUARDED_BY(mu_) = false;
  bool retired_ ABSL_GUARDED_BY(mu_) = false;
  // Watchers started and not removed (the worker's list is watchers_).
  size_t live_ ABSL_GUARDED_BY(mu_) = 0;

  // The worker's state (one worker at a time runs Step).
  bool registered_ = false;
  bool deleted_ = false;
  SceneMirror mirror_{SceneMirror::Parts{.world = false, .grid = false}};
  // The change records of the batch of moves being evaluated (SceneMirror::ApplyMoves).
  std::vector<BodyChange> expanded_;
  std::vector<Pending> waiting_;
  std::vector<std::shared_ptr<StandingQuery>> watchers_;
};

}  // namespace collide
