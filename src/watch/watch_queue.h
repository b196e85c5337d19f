#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <variant>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "base/rw_mutex.h"
#include "watch/interest_types.h"
#include "watch/watch_budget.h"
#include "watch/watch_types.h"

namespace collide {

/// Why a standing query's queue was closed.
enum class WatchEnd : uint8_t {
  /// The scene was deleted.
  kSceneDeleted = 0,
  /// The query's state would have passed the server's WatchBudget::contents.
  kContentsExhausted = 1,
};

/// The bounded queue between a standing query's producer (the thread that evaluates its batches)
/// and its consumer (the stream that sends the messages), for both kinds of standing query: a
/// watch (WatchQueue: WatchSnapshot, WatchUpdate) and an interest stream (InterestQueue:
/// InterestSnapshot, InterestUpdate). It holds at most `max_events` events in updates
/// (QueuedEvents), plus at most one snapshot; the bytes of its updates (QueuedBytes) are also
/// taken from a shared allowance (the server's WatchBudget::queued_bytes) when one is given, and
/// stay taken while the consumer sends the update it popped last (until its next Pop, or Sent).
/// When an update does not fit either bound, the producer replaces the whole queue by a resync
/// snapshot of the current state (Replace), so memory stays bounded however slow the consumer
/// is, and the consumer can always continue from what it gets. Thread-safe.
///
/// `Snapshot` has a `bool resync`; QueuedEvents(const Update&) and QueuedBytes(const Update&)
/// are found by argument-dependent lookup. Instantiated for the two kinds in watch_queue.cc.
template <typename Snapshot, typename Update>
class StandingQueue {
 public:
  /// One message to the consumer.
  using Message = std::variant<Snapshot, Update>;

  /// A queue of at most `max_events` queued events (>= 1) whose update bytes are taken from
  /// `queued_bytes` (null: only the event bound).
  explicit StandingQueue(size_t max_events, Allowance* queued_bytes = nullptr);
  /// Gives back the bytes of the updates still queued.
  ~StandingQueue();
  StandingQueue(const StandingQueue&) = delete;
  StandingQueue& operator=(const StandingQueue&) = delete;

  /// The bytes an update holds while queued: the message, its arrays and the allocations'
  /// overhead.
  static size_t UpdateBytes(const Update& update);

  /// Called after each Push, TryPush, Replace and Close (outside the queue's lock, on the
  /// producer's thread), so that the consumer can wake up. Set it before the producer starts.
  void SetListener(std::function<void()> listener);
  /// Removes the listener; once this returns, no call of it runs or will run (a call in
  /// progress is waited for). The listener must not call it.
  void ClearListener();

  /// Queues a snapshot (the initial one) after whatever is queued.
  void Push(Snapshot snapshot);
  /// Queues `update` when its events fit in the event bound and its bytes in the allowance;
  /// returns false (queuing nothing) when not. An update with more events than the bound fits
  /// only into an empty queue.
  bool TryPush(Update&& update);
  /// Drops everything queued and queues `snapshot` alone, with `resync` set (counted in
  /// overflows()).
  void Replace(Snapshot snapshot);
  /// No message follows those queued (`why`: the scene was deleted, or the query ran out of
  /// room). Later Push, TryPush and Replace calls queue nothing.
  void Close(WatchEnd why = WatchEnd::kSceneDeleted);

  /// Moves the oldest queued message into `*out` and returns true, or returns false when the
  /// queue is empty. Either way the update popped before is taken as sent.
  bool Pop(Message* out);
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
  std::deque<Message> messages_ ABSL_GUARDED_BY(mu_);
  size_t queued_events_ ABSL_GUARDED_BY(mu_) = 0;
  size_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  // Bytes of the update popped last, until it is sent.
  size_t sending_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  WatchEnd end_reason_ ABSL_GUARDED_BY(mu_) = WatchEnd::kSceneDeleted;
  uint64_t overflows_ ABSL_GUARDED_BY(mu_) = 0;
};

/// A watch's events per batch: QueuedEvents is the number of events.
size_t QueuedEvents(const WatchUpdate& update);
/// The update, its events' array and a malloc header for it.
size_t QueuedBytes(const WatchUpdate& update);

/// A watcher's queue.
using WatchQueue = StandingQueue<WatchSnapshot, WatchUpdate>;
/// One message to a watcher: a snapshot (at the start, or a resync) or one batch's events.
using WatchMessage = WatchQueue::Message;

/// An interest stream's queue (interest_types.h: QueuedEvents, QueuedBytes of an InterestUpdate).
using InterestQueue = StandingQueue<InterestSnapshot, InterestUpdate>;
/// One message to an interest stream: the full sets (at the start, or a resync) or the deltas.
using InterestMessage = InterestQueue::Message;

extern template class StandingQueue<WatchSnapshot, WatchUpdate>;
extern template class StandingQueue<InterestSnapshot, InterestUpdate>;

}  // namespace collide
