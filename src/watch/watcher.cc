#include "watch/watcher.h"

#include <utility>

namespace collide {

Watcher::Watcher(std::vector<FenceSpec> fences, std::vector<ContactWatchSpec> contacts,
                 size_t max_queued_events)
    : fences_(std::move(fences)), contacts_(std::move(contacts)), queue_(max_queued_events) {}

Watcher::~Watcher() { Detach(); }

absl::Status Watcher::Attach(std::shared_ptr<const Scene> scene) {
  absl::Status status = scene->AddObserver(this, [&](const SceneView& view) {
    fences_.Start(view);
    contacts_.Start(view);
    queue_.Push(MakeSnapshot(view));
  });
  if (status.ok()) scene_ = std::move(scene);
  return status;
}

void Watcher::Detach() {
  if (scene_ == nullptr) return;
  scene_->RemoveObserver(this);
  scene_.reset();
}

WatchSnapshot Watcher::MakeSnapshot(const SceneView& scene) const {
  WatchSnapshot snapshot;
  snapshot.version = scene.version;
  snapshot.tick = scene.tick;
  fences_.Snapshot(&snapshot.fences);
  contacts_.Snapshot(scene, &snapshot.contacts);
  return snapshot;
}

void Watcher::OnApplied(const AppliedBatch& batch, const SceneView& scene) {
  fences_.Apply(batch, scene, &fence_events_);
  contacts_.Apply(batch, scene, &contact_events_);
  if (fence_events_.empty() && contact_events_.empty()) return;
  WatchUpdate update;
  update.version = scene.version;
  update.tick = scene.tick;
  update.events.reserve(fence_events_.size() + contact_events_.size());
  update.events.insert(update.events.end(), fence_events_.begin(), fence_events_.end());
  update.events.insert(update.events.end(), contact_events_.begin(), contact_events_.end());
  if (!queue_.TryPush(std::move(update))) queue_.Replace(MakeSnapshot(scene));
}

void Watcher::OnDeleted() { queue_.Close(); }

}  // namespace collide
