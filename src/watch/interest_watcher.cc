#include "watch/interest_watcher.h"

#include <algorithm>
#include <utility>

#include "watch/scene_mirror.h"

namespace collide {

size_t QueuedBytes(const InterestUpdate& update) {
  // The queue's slot, the two arrays, and a malloc header for each.
  return sizeof(InterestMessage) + update.deltas.capacity() * sizeof(ObserverDelta) +
         update.ids.capacity() * sizeof(uint64_t) + 32;
}

InterestWatcher::InterestWatcher(const InterestWatcherOptions& options)
    : options_(options),
      meter_(options.budget != nullptr ? &options.budget->contents : nullptr),
      queue_(options.max_queued_events,
             options.budget != nullptr ? &options.budget->queued_bytes : nullptr) {}

void InterestWatcher::Submit(const ObserverChanges& changes) {
  MutexLock lock(&mu_);
  ++submitted_;
  // Coalesced per id: the last spec wins; a removal makes the observer start afresh.
  for (uint64_t id : changes.removes) {
    pending_.insert_or_assign(id,
                              InterestSet::Change{.id = id, .spec = std::nullopt, .reset = true});
  }
  for (const ObserverSpec& spec : changes.upserts) {
    auto [it, added] = pending_.try_emplace(spec.id, InterestSet::Change{.id = spec.id});
    it->second.spec = spec;
  }
}

uint64_t InterestWatcher::TakeChanges(std::vector<InterestSet::Change>* out) {
  out->clear();
  MutexLock lock(&mu_);
  out->reserve(pending_.size());
  for (auto& [id, change] : pending_) out->push_back(std::move(change));
  pending_.clear();
  std::sort(out->begin(), out->end(),
            [](const InterestSet::Change& a, const InterestSet::Change& b) { return a.id < b.id; });
  return submitted_;
}

InterestSnapshot InterestWatcher::MakeSnapshot(const SceneMirror& mirror) const {
  InterestSnapshot snapshot;
  snapshot.version = mirror.version();
  snapshot.tick = mirror.tick();
  snapshot.requests_applied = applied_;
  set_.Snapshot(&snapshot);
  return snapshot;
}

void InterestWatcher::Exhausted() {
  ended_ = true;
  // The state is useless now: free it (and its entries in the budget) at once.
  set_ = InterestSet();
  meter_.Remove(meter_.in_use());
  meter_.Trim();
  if (options_.budget != nullptr) {
    options_.budget->exhausted.fetch_add(1, std::memory_order_relaxed);
  }
  queue_.Close(WatchEnd::kContentsExhausted);
}

void InterestWatcher::Start(const SceneMirror& mirror) {
  if (ended_) return;
  const uint64_t covered = TakeChanges(&changes_);
  InterestUpdate scratch;
  if (!set_.ApplyChanges(changes_, mirror, &scratch, &meter_)) return Exhausted();
  applied_ = covered;
  changes_.clear();
  meter_.Trim();
  queue_.Push(MakeSnapshot(mirror));
  Publish(mirror);
}

void InterestWatcher::Resync(const SceneMirror& mirror) {
  if (ended_) return;
  if (!set_.Recompute(mirror, &meter_)) return Exhausted();
  meter_.Trim();
  queue_.Replace(MakeSnapshot(mirror));
  if (options_.budget != nullptr) options_.budget->resyncs.fetch_add(1, std::memory_order_relaxed);
  Publish(mirror);
}

void InterestWatcher::Queue(InterestUpdate&& update, const SceneMirror& mirror) {
  update.version = mirror.version();
  update.tick = mirror.tick();
  update.requests_applied = applied_;
  update.deltas.shrink_to_fit();
  update.ids.shrink_to_fit();
  if (!queue_.TryPush(std::move(update))) {
    queue_.Replace(MakeSnapshot(mirror));
    if (options_.budget != nullptr) {
      options_.budget->resyncs.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

void InterestWatcher::OnApplied(const AppliedBatch& batch, const SceneMirror& mirror) {
  if (ended_) return;
  InterestUpdate update;
  if (!set_.Apply(batch, mirror, &update, &meter_)) return Exhausted();
  meter_.Trim();
  if (!update.deltas.empty()) Queue(std::move(update), mirror);
  Publish(mirror);
}

void InterestWatcher::Refresh(const SceneMirror& mirror) {
  if (ended_) return;
  const uint64_t covered = TakeChanges(&changes_);
  if (covered == applied_) return;
  InterestUpdate update;
  const bool ok = set_.ApplyChanges(changes_, mirror, &update, &meter_);
  changes_.clear();
  if (!ok) return Exhausted();
  meter_.Trim();
  applied_ = covered;
  // Sent even without a delta: the client learns that its messages are in effect.
  Queue(std::move(update), mirror);
  Publish(mirror);
}

void InterestWatcher::OnDeleted() {
  ended_ = true;
  queue_.Close(WatchEnd::kSceneDeleted);
}

void InterestWatcher::Follow(uint64_t id) {
  MutexLock lock(&mu_);
  follow_ = id;
  followed_valid_ = false;
  followed_ids_.clear();
}

bool InterestWatcher::Followed(uint64_t* version, ObserverFrame* frame,
                               std::vector<uint64_t>* ids) const {
  MutexLock lock(&mu_);
  if (!followed_valid_) return false;
  *version = followed_version_;
  *frame = followed_frame_;
  *ids = followed_ids_;
  return true;
}

std::vector<std::pair<uint64_t, ObserverFrame>> InterestWatcher::Observers() {
  MutexLock lock(&mu_);
  listing_wanted_ = true;
  return listing_;
}

void InterestWatcher::Publish(const SceneMirror& mirror) {
  MutexLock lock(&mu_);
  if (listing_wanted_) {
    listing_.clear();
    InterestSnapshot ids;
    set_.Snapshot(&ids);
    listing_.reserve(ids.sets.size());
    for (const RelevantSet& s : ids.sets) {
      listing_.emplace_back(s.observer_id, set_.FrameOf(s.observer_id));
    }
    listing_wanted_ = false;
  }
  if (follow_ == 0) return;
  std::optional<std::vector<uint64_t>> set = set_.SetOf(follow_);
  followed_valid_ = set.has_value();
  if (!set.has_value()) return;
  followed_version_ = mirror.version();
  followed_frame_ = set_.FrameOf(follow_);
  followed_ids_ = std::move(*set);
}

}  // namespace collide
