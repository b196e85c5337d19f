#include "watch/watch_hub.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace collide {

WatchHub::WatchHub(std::shared_ptr<const Scene> scene, WatchBudget* budget, ScheduleFn schedule)
    : scene_(std::move(scene)), budget_(budget), schedule_(std::move(schedule)) {}

WatchHub::~WatchHub() {
  MutexLock lock(&mu_);
  DropBacklogLocked();
}

size_t WatchHub::BatchBytes(size_t changes) {
  // The entry in the deque, its records, and a malloc header for them.
  return sizeof(Entry) + changes * sizeof(BodyChange) + 16;
}

size_t WatchHub::MoveBatchBytes(size_t moves) {
  return sizeof(Entry) + moves * sizeof(BodyMove) + 16;
}

void WatchHub::Schedule() {
  bool wake = false;
  {
    MutexLock lock(&mu_);
    if (!scheduled_ && !retired_) {
      scheduled_ = true;
      wake = true;
    }
  }
  if (wake) schedule_(shared_from_this());
}

bool WatchHub::AddWatcher(std::shared_ptr<StandingQuery> watcher) {
  {
    MutexLock lock(&mu_);
    if (retired_) return false;
    pending_.push_back(Pending{.watcher = std::move(watcher), .ready_at = appended_});
  }
  Schedule();
  return true;
}

void WatchHub::RemoveWatcher(const StandingQuery* watcher) {
  {
    MutexLock lock(&mu_);
    if (retired_) return;
    removed_.insert(watcher);
  }
  Schedule();
}

void WatchHub::Poke() {
  {
    MutexLock lock(&mu_);
    if (retired_) return;
    poked_ = true;
  }
  Schedule();
}

void WatchHub::DropBacklogLocked() {
  for (const Entry& entry : backlog_) {
    if (budget_ != nullptr) budget_->backlog_bytes.Give(entry.bytes);
  }
  consumed_ += backlog_.size();
  backlog_.clear();
}

void WatchHub::OnApplied(const AppliedBatch& batch, const SceneView& scene) {
  // The scene's writer: a copy of the records, nothing per watcher.
  {
    MutexLock lock(&mu_);
    if (retired_) return;
    if (!overflowed_) {
      const bool moves = !batch.moves.empty();
      const size_t bytes =
          moves ? MoveBatchBytes(batch.moves.size()) : BatchBytes(batch.changes.size());
      if (budget_ == nullptr || budget_->backlog_bytes.TryTake(bytes)) {
        Entry entry;
        entry.version = scene.version;
        entry.tick = scene.tick;
        entry.bytes = bytes;
        if (moves) {
          entry.moves = spare_moves_.Take();
          entry.moves.assign(batch.moves.begin(), batch.moves.end());
        } else {
          entry.changes = spare_changes_.Take();
          entry.changes.assign(batch.changes.begin(), batch.changes.end());
        }
        backlog_.push_back(std::move(entry));
        ++appended_;
      } else {
        // No room: the workers will copy the scene anew and resync every watcher.
        DropBacklogLocked();
        overflowed_ = true;
      }
    }
  }
  Schedule();
}

size_t WatchHub::spare_change_buffers() const {
  MutexLock lock(&mu_);
  return spare_changes_.kept.size();
}

size_t WatchHub::spare_move_buffers() const {
  MutexLock lock(&mu_);
  return spare_moves_.kept.size();
}

void WatchHub::OnDeleted() {
  {
    MutexLock lock(&mu_);
    if (retired_) return;
    Entry marker;
    marker.deleted = true;
    backlog_.push_back(std::move(marker));
    ++appended_;
  }
  Schedule();
}

void WatchHub::Step(size_t max_batches) {
  std::vector<Entry> entries;
  bool resync = false;
  uint64_t consumed = 0;
  {
    MutexLock lock(&mu_);
    for (Pending& p : pending_) waiting_.push_back(std::move(p));
    pending_.clear();
    while (!backlog_.empty() && entries.size() < max_batches) {
      entries.push_back(std::move(backlog_.front()));
      backlog_.pop_front();
    }
    consumed_ += entries.size();
    consumed = consumed_;
    resync = overflowed_;
    overflowed_ = false;
    poked_ = false;
    if (!removed_.empty()) {
      auto gone = [&](const std::shared_ptr<StandingQuery>& w) {
        return removed_.contains(w.get());
      };
      watchers_.erase(std::remove_if(watchers_.begin(), watchers_.end(), gone), watchers_.end());
      waiting_.erase(std::remove_if(waiting_.begin(), waiting_.end(),
                                    [&](const Pending& p) { return gone(p.watcher); }),
                     waiting_.end());
      removed_.clear();
    }
  }
  // Gives an entry's bytes back once it is done with.
  auto release = [&](const Entry& entry) {
    if (budget_ != nullptr) budget_->backlog_bytes.Give(entry.bytes);
  };

  if (!registered_ && !deleted_) {
    // The first step: from now on every batch lands in the backlog; the copy below sees at least
    // the version of the last batch before the registration.
    registered_ = scene_->AddObserver(this, [](const SceneView&) {}).ok();
    if (!registered_) deleted_ = true;  // NOT_FOUND: the scene was deleted
    resync = registered_;
  }
  if (!deleted_ && resync) {
    // (Re)copy the scene; batches up to its version are in the copy, and the watchers that
    // missed dropped batches start over from it.
    mirror_.Capture(*scene_);
    for (const std::shared_ptr<StandingQuery>& w : watchers_) w->Resync(mirror_);
  }
  for (const Entry& entry : entries) {
    release(entry);
    if (deleted_) continue;
    if (entry.deleted) {
      deleted_ = true;
      continue;
    }
    if (entry.version <= mirror_.version()) continue;  // already in a copy
    AppliedBatch batch{.changes = entry.changes};
    if (entry.moves.empty()) {
      mirror_.Apply(entry.changes, entry.version, entry.tick);
    } else if (std::any_of(watchers_.begin(), watchers_.end(),
                           [&](const std::shared_ptr<StandingQuery>& w) {
                             return w->ReadsChanges(entry.moves.size());
                           })) {
      // The mirror writes the change records as it moves its copies.
      mirror_.ApplyMoves(entry.moves, entry.version, entry.tick, &expanded_);
      batch = AppliedBatch{.changes = expanded_};
    } else {
      // No query reads them (an interest set evaluating every observer): none are written.
      mirror_.ApplyMoves(entry.moves, entry.version, entry.tick, nullptr);
      batch = AppliedBatch{.moves = entry.moves};
    }
    for (const std::shared_ptr<StandingQuery>& w : watchers_) w->OnApplied(batch, mirror_);
  }
  expanded_.clear();
  if (expanded_.capacity() * sizeof(BodyChange) > kSpareBufferBytes) {
    std::vector<BodyChange>().swap(expanded_);
  }
  if (deleted_) {
    for (const std::shared_ptr<StandingQuery>& w : watchers_) w->OnDeleted();
    for (const Pending& p : waiting_) p.watcher->OnDeleted();
    watchers_.clear();
    waiting_.clear();
  } else {
    // Start the watchers whose batches (those applied before they were added) are done.
    auto ready = [&](const Pending& p) { return p.ready_at <= consumed; };
    for (const Pending& p : waiting_) {
      if (!ready(p)) continue;
      // The mirror keeps what the query reads from now on (built from the bodies it holds, at
      // its version: no batch is missed).
      const SceneMirror::Parts needs = p.watcher->needs();
      if (needs.world) mirror_.KeepWorld();
      if (needs.grid) mirror_.KeepGrid();
      p.watcher->Start(mirror_);
      watchers_.push_back(p.watcher);
    }
    waiting_.erase(std::remove_if(waiting_.begin(), waiting_.end(), ready), waiting_.end());
    // Client changes take effect at the version reached.
    for (const std::shared_ptr<StandingQuery>& w : watchers_) w->Refresh(mirror_);
  }
  // The records are released outside the lock (the writer takes it for every batch).
  for (Entry& entry : entries) {
    entry.changes.clear();
    entry.moves.clear();
  }
  MutexLock lock(&mu_);
  for (Entry& entry : entries) {
    if (entry.changes.capacity() != 0) spare_changes_.Keep(std::move(entry.changes));
    if (entry.moves.capacity() != 0) spare_moves_.Keep(std::move(entry.moves));
  }
  live_ = watchers_.size() + waiting_.size();
}

bool WatchHub::FinishStep() {
  MutexLock lock(&mu_);
  const bool more = !backlog_.empty() || overflowed_ || !pending_.empty() || !removed_.empty() ||
                    !waiting_.empty() || poked_;
  if (!more) scheduled_ = false;
  return more;
}

bool WatchHub::TryRetire() {
  MutexLock lock(&mu_);
  if (scheduled_ || retired_ || live_ > 0 || !pending_.empty()) return false;
  retired_ = true;
  DropBacklogLocked();
  return true;
}

void WatchHub::Shutdown() {
  {
    MutexLock lock(&mu_);
    retired_ = true;
    DropBacklogLocked();
  }
  Unregister();
}

void WatchHub::Unregister() {
  if (registered_) scene_->RemoveObserver(this);
  registered_ = false;
}

}  // namespace collide
