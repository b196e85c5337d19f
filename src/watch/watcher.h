#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "scene/scene.h"
#include "scene/scene_observer.h"
#include "watch/contact_set.h"
#include "watch/fence_set.h"
#include "watch/standing_query.h"
#include "watch/watch_budget.h"
#include "watch/watch_directory.h"
#include "watch/watch_queue.h"
#include "watch/watch_types.h"

namespace collide {

/// How a Watcher is bounded.
struct WatcherOptions {
  /// The most events its queue holds (WatchQueue).
  size_t max_queued_events = 65536;
  /// The server-wide ceilings and counters the watcher draws on (null: none). It must outlive
  /// the watcher.
  WatchBudget* budget = nullptr;
  /// Units of budget->fences the caller took for this watcher; given back when it is destroyed.
  uint64_t reserved_fences = 0;
};

/// One standing query on one scene: fences and contact watches whose events it computes after
/// every batch the scene applies, into a bounded WatchQueue. Start queues the starting
/// snapshot; from then on each batch that produced events queues one WatchUpdate (batches
/// without events queue nothing), or, when the queue is full, a resync snapshot replaces the
/// queue. The scene's deletion closes the queue; so does a state that would pass the budget's
/// `contents` (WatchEnd::kContentsExhausted, the state is dropped).
///
/// Two ways to drive it: Attach registers it as the scene's observer, so that it runs on the
/// scene's writer thread after each batch (in-process use, tests); or a WatchDispatcher calls
/// it as a StandingQuery from its worker threads, on a mirror of the scene (the server: the
/// writer never waits for watchers). Either way the calls are serialised.
class Watcher final : public SceneObserver, public StandingQuery {
 public:
  /// A watcher of `fences` and `contacts` (ids unique within each list; values valid).
  Watcher(std::vector<FenceSpec> fences, std::vector<ContactWatchSpec> contacts,
          const WatcherOptions& options);
  /// As above, with no budget and a queue of at most `max_queued_events` events.
  Watcher(std::vector<FenceSpec> fences, std::vector<ContactWatchSpec> contacts,
          size_t max_queued_events);
  /// Detaches.
  ~Watcher() override;
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  /// Starts watching `scene` as its observer (kept alive while attached): computes the starting
  /// state, queues it as the first message and registers for every later batch. NOT_FOUND when
  /// the scene was deleted. Set the queue's listener before.
  absl::Status Attach(std::shared_ptr<const Scene> scene);
  /// Stops watching (after Attach); no callback runs after it returns. Idempotent.
  void Detach();

  /// Computes the state at `scene` and queues it as the starting snapshot.
  void Start(const SceneView& scene);
  /// Computes the state at `scene` anew and replaces the queue by a resync snapshot of it (the
  /// watcher missed the batches in between).
  void Resync(const SceneView& scene);

  /// The messages for the consumer.
  WatchQueue& queue() { return queue_; }
  /// The number of fences plus contact watches.
  size_t size() const { return fence_count_ + contact_count_; }
  /// The fences, as given.
  const std::vector<FenceSpec>& fence_specs() const { return fence_specs_; }
  /// Posts the fence events of each update to `tap` too (a WatchDirectory's listing of this
  /// watch); set before the watcher is started.
  void SetTap(std::unique_ptr<WatchTap> tap) { tap_ = std::move(tap); }
  /// True once the queue was closed (later calls do nothing).
  bool ended() const { return ended_; }

  void OnApplied(const AppliedBatch& batch, const SceneView& scene) override;
  void OnDeleted() override;

  // StandingQuery: the same on the mirror's view (with its world).
  SceneMirror::Parts needs() const override { return {.world = true, .grid = false}; }
  void Start(const SceneMirror& mirror) override;
  void Resync(const SceneMirror& mirror) override;
  void OnApplied(const AppliedBatch& batch, const SceneMirror& mirror) override;

 private:
  WatchSnapshot MakeSnapshot(const SceneView& scene) const;
  // Closes the queue for lack of room and drops the state.
  void Exhausted();

  const WatcherOptions options_;
  const size_t fence_count_;
  const size_t contact_count_;
  const std::vector<FenceSpec> fence_specs_;
  FenceSet fences_;
  ContactSet contacts_;
  ContentsMeter meter_;
  WatchQueue queue_;
  bool ended_ = false;
  std::shared_ptr<const Scene> scene_;
  // The events of the batch being applied (empty between batches: they move into the update).
  std::vector<WatchEvent> fence_events_;
  std::vector<WatchEvent> contact_events_;
  std::unique_ptr<WatchTap> tap_;
};

}  // namespace collide
