#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <variant>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "base/rw_mutex.h"
#include "watch/watch_budget.h"
#include "watch/watch_types.h"

namespace collide {

/// One message to a watcher: a snapshot (at the start, or a resync) or one batch's events.
using WatchMessage = std::variant<WatchSnapshot, WatchUpdate>;

/// Why a watch's queue was closed.
enum class WatchEnd : uint8_t {
  /// The scene was deleted.
  kSceneDeleted = 0,
  /// The watch's state would have passed the server's WatchBudget::contents.
  kContentsExhausted = 1,
};

/// The bounded queue between a watch's producer (the thread that evaluates its batches) and its
/// consumer (the stream that sends the messages). It holds at most `max_events` events in
/// updates, plus at most one snapshot; the bytes of its updates (UpdateBytes) are also taken
/// from a shared allowance (the server's WatchBudget::queued_bytes) when one is given, and stay
/// taken while the consumer sends the update it popped last (until its next Pop, or Sent). When
/// an update does not fit either bound, the producer replaces the whole queue by a resync
/// snapshot of the current state (Replace), so memory stays bounded however slow the consumer
/// is, and the consumer can always continue from what it gets. Thread-safe.
class WatchQueue {
 public:
  /// A queue of at most `max_events` queued events (>= 1) whose update bytes are taken from
  /// `queued_bytes` (null: only the event bound).
  explicit WatchQueue(size_t max_events, Allowance* queued_bytes = nullptr);
  /// Gives back the bytes of the updates still queued.
  ~WatchQueue();
  WatchQueue(const WatchQueue&) = delete;
  WatchQueue& operator=(const WatchQueue&) = delete;

  /// The bytes an update holds while queued: the message, its events and the allocation's
  /// overhead.
  static size_t UpdateBytes(const WatchUpdate& update);

  /// Called after each Push, TryPush, Replace and Close (outside the queue's lock, on the
  /// producer's thread), so that the consumer can wake up. Set it before the producer starts.
  void SetListener(std::function<void()> listener);
  /// Removes the listener; once this returns, no call of it runs or will run (a call in
  /// progress is waited for). The listener must not call it.
  void ClearListener();

  /// Queues a snapshot (the initial one) after whatever is queued.
  void Push(WatchSnapshot snapshot);
  /// Queues `update` when its events fit in the event bound and its bytes in the allowance;
  /// returns false (queuing nothing) when not. An update with more events than the bound fits
  /// only into an empty queue.
  bool TryPush(WatchUpdate&& update);
  /// Drops everything queued and queues `snapshot` alone (a resync; counted in overflows()).
  void Replace(WatchSnapshot snapshot);
  /// No message follows those queued (`why`: the scene was deleted, or the watch ran out of
  /// room). Later Push, TryPush and Replace calls queue nothing.
  void Close(WatchEnd why = WatchEnd::kSceneDeleted);

  /// Moves the oldest queued message into `*out` and returns true, or returns false when the
  /// queue is empty. Either way the update popped before is taken as sent.
  bool Pop(WatchMessage* out);
  /// The update popped last has been sent: its bytes go back to the allowance.
  void Sent();
  /// True once Close was called and every message was popped.
  bool Finished() const;
  /// Why Close was called (meaningful once Finished()).
  WatchEnd end_reason() const;
  /// How many times the queue was replaced by a resync.
  uint64_t overflows() const;
  /// The bytes of the updates queued now, and of the one being sent.
  size_t queued_bytes() const;

 private:
  void Notify();
  void SentLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t max_events_;
  Allowance* const pool_;
  // Held while the listener runs, so that ClearListener can wait for a call in progress.
  Mutex listener_mu_;
  std::function<void()> listener_ ABSL_GUARDED_BY(listener_mu_);
  // An RwMutex (held exclusively) rather than a bare absl::Mutex: ThreadSanitizer sees it.
  mutable RwMutex mu_;
  std::deque<WatchMessage> messages_ ABSL_GUARDED_BY(mu_);
  size_t queued_events_ ABSL_GUARDED_BY(mu_) = 0;
  size_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  // Bytes of the update popped last, until it is sent.
  size_t sending_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  WatchEnd end_reason_ ABSL_GUARDED_BY(mu_) = WatchEnd::kSceneDeleted;
  uint64_t overflows_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace collide
