#include "watch/watcher.h"

#include <utility>

namespace collide {
Watcher::Watcher(std::vector<FenceSpec> fences, std::vector<ContactWatchSpec> contacts,
                 const WatcherOptions& options)
    : options_(options),
      fence_count_(fences.size()),
      contact_count_(contacts.size()),
      fence_specs_(fences),
      fences_(std::move(fences)),
      contacts_(std::move(contacts)),
      meter_(options.budget != nullptr ? &options.budget->contents : nullptr),
      queue_(options.max_queued_events,
             options.budget != nullptr ? &options.budget->queued_bytes : nullptr) {}

Watcher::Watcher(std::vector<FenceSpec> fences, std::vector<ContactWatchSpec> contacts,
                 size_t max_queued_events)
    : Watcher(std::move(fences), std::move(contacts),
              WatcherOptions{.max_queued_events = max_queued_events}) {}

Watcher::~Watcher() {
  Detach();
  if (options_.budget != nullptr) options_.budget->fences.Give(options_.reserved_fences);
}

absl::Status Watcher::Attach(std::shared_ptr<const Scene> scene) {
  absl::Status status = scene->AddObserver(this, [&](const SceneView& view) { Start(view); });
  if (status.ok()) scene_ = std::move(scene);
  return status;
}

void Watcher::Detach() {
  if (scene_ == nullptr) return;
  scene_->RemoveObserver(this);
  scene_.reset();
}

void Watcher::Start(const SceneView& scene) {
  if (ended_) return;
  if (!fences_.Start(scene, &meter_) || !contacts_.Start(scene, &meter_)) return Exhausted();
  meter_.Trim();
  queue_.Push(MakeSnapshot(scene));
}

void Watcher::Resync(const SceneView& scene) {
  if (ended_) return;
  if (!fences_.Start(scene, &meter_) || !contacts_.Start(scene, &meter_)) return Exhausted();
  meter_.Trim();
  queue_.Replace(MakeSnapshot(scene));
  if (options_.budget != nullptr) options_.budget->resyncs.fetch_add(1, std::memory_order_relaxed);
}

WatchSnapshot Watcher::MakeSnapshot(const SceneView& scene) const {
  WatchSnapshot snapshot;
  snapshot.version = scene.version;
  snapshot.tick = scene.tick;
  fences_.Snapshot(&snapshot.fences);
  contacts_.Snapshot(scene, &snapshot.contacts);
  return snapshot;
}

void Watcher::Exhausted() {
  ended_ = true;
  // The state is useless now: free it (and its entries in the budget) at once, before the
  // consumer learns that the watch is over.
  fences_ = FenceSet({});
  contacts_ = ContactSet({});
  meter_.Remove(meter_.in_use());
  meter_.Trim();
  fence_events_ = {};
  contact_events_ = {};
  if (options_.budget != nullptr) {
    options_.budget->exhausted.fetch_add(1, std::memory_order_relaxed);
  }
  queue_.Close(WatchEnd::kContentsExhausted);
}

void Watcher::OnApplied(const AppliedBatch& batch, const SceneView& scene) {
  if (ended_) return;
  if (!fences_.Apply(batch, scene, &fence_events_, &meter_) ||
      !contacts_.Apply(batch, scene, &contact_events_, &meter_)) {
    return Exhausted();
  }
  meter_.Trim();
  if (fence_events_.empty() && contact_events_.empty()) return;
  WatchUpdate update;
  update.version = scene.version;
  update.tick = scene.tick;
  // The event arrays move into the update: a watcher keeps no scratch between batches, so an
  // idle watcher's memory does not depend on the largest batch it saw.
  if (contact_events_.empty()) {
    update.events = std::move(fence_events_);
  } else if (fence_events_.empty()) {
    update.events = std::move(contact_events_);
  } else {
    update.events.reserve(fence_events_.size() + contact_events_.size());
    update.events.insert(update.events.end(), fence_events_.begin(), fence_events_.end());
    update.events.insert(update.events.end(), contact_events_.begin(), contact_events_.end());
  }
  fence_events_ = std::vector<WatchEvent>();
  contact_events_ = std::vector<WatchEvent>();
  // Queued, the update holds what it needs (and is counted so in the queue's bytes).
  update.events.shrink_to_fit();
  if (tap_ != nullptr && !update.events.empty()) tap_->Post(update);
  if (!queue_.TryPush(std::move(update))) {
    queue_.Replace(MakeSnapshot(scene));
    if (options_.budget != nullptr) {
      options_.budget->resyncs.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

void Watcher::Start(const SceneMirror& mirror) {
  mirror.WithView([&](const SceneView& view) { Start(view); });
}

void Watcher::Resync(const SceneMirror& mirror) {
  mirror.WithView([&](const SceneView& view) { Resync(view); });
}

void Watcher::OnApplied(const AppliedBatch& batch, const SceneMirror& mirror) {
  mirror.WithView([&](const SceneView& view) { OnApplied(batch, view); });
}

void Watcher::OnDeleted() {
  ended_ = true;
  queue_.Close(WatchEnd::kSceneDeleted);
}

}  // namespace collide
