#include "watch/watch_directory.h"

#include <algorithm>
#include <utility>

namespace collide {

struct WatchTap::State {
  struct PerScene {
    absl::flat_hash_map<uint64_t, std::vector<FenceSpec>> watches;
    uint64_t generation = 0;
    int followers = 0;
    std::deque<ListedEvent> events;
    // The sequence of the last event posted.
    uint64_t last = 0;
  };

  mutable Mutex mu;
  uint64_t next_watch ABSL_GUARDED_BY(mu) = 1;
  absl::flat_hash_map<const Scene*, PerScene> scenes ABSL_GUARDED_BY(mu);

  // Drops a scene's entry once nothing refers to it.
  void ForgetIfUnused(const Scene* scene) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    auto it = scenes.find(scene);
    if (it != scenes.end() && it->second.watches.empty() && it->second.followers == 0) {
      scenes.erase(it);
    }
  }
};

WatchTap::~WatchTap() {
  MutexLock lock(&state_->mu);
  auto it = state_->scenes.find(scene_);
  if (it == state_->scenes.end()) return;
  it->second.watches.erase(watch_);
  ++it->second.generation;
  state_->ForgetIfUnused(scene_);
}

void WatchTap::Post(const WatchUpdate& update) {
  MutexLock lock(&state_->mu);
  auto it = state_->scenes.find(scene_);
  if (it == state_->scenes.end() || it->second.followers == 0) return;
  State::PerScene& per = it->second;
  for (const WatchEvent& event : update.events) {
    if (event.kind != WatchEventKind::kEnter && event.kind != WatchEventKind::kExit) continue;
    per.events.push_back(ListedEvent{++per.last, watch_, update.version, event});
    if (per.events.size() > WatchDirectory::kMaxEventsPerScene) per.events.pop_front();
  }
}

WatchDirectory::WatchDirectory() : state_(std::make_shared<WatchTap::State>()) {}

std::unique_ptr<WatchTap> WatchDirectory::Register(const Scene* scene,
                                                   std::vector<FenceSpec> fences) {
  MutexLock lock(&state_->mu);
  const uint64_t watch = state_->next_watch++;
  WatchTap::State::PerScene& per = state_->scenes[scene];
  per.watches[watch] = std::move(fences);
  ++per.generation;
  return std::unique_ptr<WatchTap>(new WatchTap(state_, scene, watch));
}

std::vector<ListedWatch> WatchDirectory::Watches(const Scene* scene) const {
  std::vector<ListedWatch> out;
  MutexLock lock(&state_->mu);
  auto it = state_->scenes.find(scene);
  if (it == state_->scenes.end()) return out;
  out.reserve(it->second.watches.size());
  for (const auto& [watch, fences] : it->second.watches) out.push_back(ListedWatch{watch, fences});
  std::sort(out.begin(), out.end(),
            [](const ListedWatch& a, const ListedWatch& b) { return a.watch < b.watch; });
  return out;
}

uint64_t WatchDirectory::WatchesGeneration(const Scene* scene) const {
  MutexLock lock(&state_->mu);
  auto it = state_->scenes.find(scene);
  return it == state_->scenes.end() ? 0 : it->second.generation;
}

uint64_t WatchDirectory::Follow(const Scene* scene) {
  MutexLock lock(&state_->mu);
  WatchTap::State::PerScene& per = state_->scenes[scene];
  ++per.followers;
  return per.last;
}

void WatchDirectory::Unfollow(const Scene* scene) {
  MutexLock lock(&state_->mu);
  auto it = state_->scenes.find(scene);
  if (it == state_->scenes.end()) return;
  if (--it->second.followers == 0) it->second.events.clear();
  state_->ForgetIfUnused(scene);
}

ListedEvents WatchDirectory::EventsAfter(const Scene* scene, uint64_t cursor, size_t max) const {
  ListedEvents out;
  out.next = cursor;
  MutexLock lock(&state_->mu);
  auto it = state_->scenes.find(scene);
  if (it == state_->scenes.end()) return out;
  const WatchTap::State::PerScene& per = it->second;
  if (per.last <= cursor) return out;
  // Sequences held: per.last - size + 1 .. per.last.
  const uint64_t first_held = per.last - per.events.size() + 1;
  if (cursor + 1 < first_held) {
    out.dropped = first_held - cursor - 1;
    out.next = first_held - 1;
  }
  for (size_t i = static_cast<size_t>(out.next + 1 - first_held);
       i < per.events.size() && out.events.size() < max; ++i) {
    out.events.push_back(per.events[i]);
    out.next = per.events[i].sequence;
  }
  return out;
}

}  // namespace collide
