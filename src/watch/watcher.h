#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "scene/scene.h"
#include "scene/scene_observer.h"
#include "watch/contact_set.h"
#include "watch/fence_set.h"
#include "watch/watch_queue.h"
#include "watch/watch_types.h"

namespace collide {

/// One standing query on one scene: fences and contact watches whose events it computes after
/// every batch the scene applies, into a bounded WatchQueue. Attach registers it with the scene
/// and queues the starting snapshot; from then on each batch that produced events queues one
/// WatchUpdate (batches without events queue nothing), or, when the queue is full, a resync
/// snapshot replaces the queue. The scene's deletion closes the queue.
class Watcher final : public SceneObserver {
 public:
  /// A watcher of `fences` and `contacts` (ids unique within each list; values valid) whose
  /// queue holds at most `max_queued_events` events.
  Watcher(std::vector<FenceSpec> fences, std::vector<ContactWatchSpec> contacts,
          size_t max_queued_events);
  /// Detaches.
  ~Watcher() override;
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  /// Starts watching `scene` (kept alive while attached): computes the starting state, queues it
  /// as the first message and registers for every later batch. NOT_FOUND when the scene was
  /// deleted. Set the queue's listener before.
  absl::Status Attach(std::shared_ptr<const Scene> scene);
  /// Stops watching; no callback runs after it returns. Idempotent.
  void Detach();

  /// The messages for the consumer.
  WatchQueue& queue() { return queue_; }

  void OnApplied(const AppliedBatch& batch, const SceneView& scene) override;
  void OnDeleted() override;

 private:
  WatchSnapshot MakeSnapshot(const SceneView& scene) const;

  FenceSet fences_;
  ContactSet contacts_;
  WatchQueue queue_;
  std::shared_ptr<const Scene> scene_;
  // Scratch of OnApplied.
  std::vector<WatchEvent> fence_events_;
  std::vector<WatchEvent> contact_events_;
};

}  // namespace collide
