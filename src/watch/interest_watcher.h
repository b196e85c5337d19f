#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "base/mutex.h"
#include "watch/interest_set.h"
#include "watch/interest_types.h"
#include "watch/standing_query.h"
#include "watch/watch_budget.h"
#include "watch/watch_queue.h"

namespace collide {

/// How an InterestWatcher is bounded.
struct InterestWatcherOptions {
  /// The most events its queue holds (InterestQueue; an event is a delta or one id).
  size_t max_queued_events = 65536;
  /// The server-wide ceilings and counters it draws on (null: none): the bodies of its sets
  /// count in `contents`, its queued updates in `queued_bytes`. It must outlive the watcher.
  WatchBudget* budget = nullptr;
};

/// One interest stream's standing query: its observers' sets (InterestSet), kept after every
/// batch its scene applies, and the bounded queue of what the stream sends: a snapshot of every
/// set at the start, then one InterestUpdate per batch that changed a set, and one per round of
/// client changes taking effect (their deltas, and the count of client messages applied); a
/// resync snapshot replaces the queue when it is full. The scene's deletion closes the queue;
/// so does a state that would pass the budget's `contents` (WatchEnd::kContentsExhausted).
///
/// A WatchDispatcher runs it (StandingQuery) on a worker, on its hub's mirror. Its client's
/// changes come from another thread (Submit): they are coalesced per observer id (memory
/// bounded by the observers named) and take effect at the worker's next Refresh, which the
/// submitter asks for with WatchDispatcher::Attachment::Poke.
class InterestWatcher final : public StandingQuery {
 public:
  explicit InterestWatcher(const InterestWatcherOptions& options);
  InterestWatcher(const InterestWatcher&) = delete;
  InterestWatcher& operator=(const InterestWatcher&) = delete;

  /// One client message's changes (validated), in stream order. Thread-safe.
  void Submit(const ObserverChanges& changes);

  /// The messages for the consumer.
  InterestQueue& queue() { return queue_; }
  /// True once the queue was closed (later calls do nothing).
  bool ended() const { return ended_; }

  /// Asks for a copy of observer `id`'s set after every evaluation (the viewer's follow); 0
  /// stops. Thread-safe.
  void Follow(uint64_t id);
  /// The followed observer's set and frame as of the last evaluation: false when there is none
  /// (no such observer, or not evaluated yet). Thread-safe.
  bool Followed(uint64_t* version, ObserverFrame* frame, std::vector<uint64_t>* ids) const;
  /// The stream's observers with their frames, as of the first evaluation after the previous
  /// call (a reader polls: each call asks for a fresh listing, copied once by the worker).
  /// Thread-safe.
  std::vector<std::pair<uint64_t, ObserverFrame>> Observers();

  SceneMirror::Parts needs() const override { return {.world = false, .grid = true}; }
  void Start(const SceneMirror& mirror) override;
  void Resync(const SceneMirror& mirror) override;
  void OnApplied(const AppliedBatch& batch, const SceneMirror& mirror) override;
  bool ReadsChanges(size_t touched) const override { return !ended_ && set_.ReadsChanges(touched); }
  void Refresh(const SceneMirror& mirror) override;
  void OnDeleted() override;

 private:
  InterestSnapshot MakeSnapshot(const SceneMirror& mirror) const;
  // Takes the client's changes submitted so far (sorted by id); returns the count of client
  // messages they cover.
  uint64_t TakeChanges(std::vector<InterestSet::Change>* out);
  // Queues `update`, or a resync snapshot when it does not fit.
  void Queue(InterestUpdate&& update, const SceneMirror& mirror);
  void Publish(const SceneMirror& mirror);
  void Exhausted();

  const InterestWatcherOptions options_;
  InterestSet set_;
  ContentsMeter meter_;
  InterestQueue queue_;
  bool ended_ = false;
  uint64_t applied_ = 0;
  std::vector<InterestSet::Change> changes_;

  mutable Mutex mu_;
  absl::flat_hash_map<uint64_t, InterestSet::Change> pending_ ABSL_GUARDED_BY(mu_);
  uint64_t submitted_ ABSL_GUARDED_BY(mu_) = 0;
  // The viewer's follow.
  uint64_t follow_ ABSL_GUARDED_BY(mu_) = 0;
  bool followed_valid_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t followed_version_ ABSL_GUARDED_BY(mu_) = 0;
  ObserverFrame followed_frame_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> followed_ids_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<uint64_t, ObserverFrame>> listing_ ABSL_GUARDED_BY(mu_);
  bool listing_wanted_ ABSL_GUARDED_BY(mu_) = true;
};

}  // namespace collide
