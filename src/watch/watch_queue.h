#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <variant>

#include "absl/base/thread_annotations.h"
#include "scene/rw_mutex.h"
#include "watch/watch_types.h"

namespace collide {

/// One message to a watcher: a snapshot (at the start, or a resync) or one batch's events.
using WatchMessage = std::variant<WatchSnapshot, WatchUpdate>;

/// The bounded queue between a watch's producer (the scene's writer, after each batch) and its
/// consumer (the stream that sends the messages). It holds at most `max_events` events in
/// updates, plus at most one snapshot: when an update does not fit, the producer replaces the
/// whole queue by a resync snapshot of the current state (Replace), so memory stays bounded
/// however slow the consumer is, and the consumer can always continue from what it gets.
/// Thread-safe.
class WatchQueue {
 public:
  /// A queue of at most `max_events` queued events (>= 1).
  explicit WatchQueue(size_t max_events);

  /// Called (outside the queue's lock) after each Push, TryPush, Replace and Close, so that the
  /// consumer can wake up. Set it before the producer starts.
  void SetListener(std::function<void()> listener);

  /// Queues a snapshot (the initial one) after whatever is queued.
  void Push(WatchSnapshot snapshot);
  /// Queues `update` when its events fit in the bound; returns false (queuing nothing) when not.
  /// An update with more events than the bound fits only into an empty queue.
  bool TryPush(WatchUpdate&& update);
  /// Drops everything queued and queues `snapshot` alone (a resync; counted in overflows()).
  void Replace(WatchSnapshot snapshot);
  /// No message follows those queued (the scene was deleted).
  void Close();

  /// Moves the oldest queued message into `*out` and returns true, or returns false when the
  /// queue is empty.
  bool Pop(WatchMessage* out);
  /// True once Close was called and every message was popped.
  bool Finished() const;
  /// How many times the queue was replaced by a resync.
  uint64_t overflows() const;

 private:
  void Notify();

  const size_t max_events_;
  std::function<void()> listener_;
  // An RwMutex (held exclusively) rather than a bare absl::Mutex: ThreadSanitizer sees it.
  mutable RwMutex mu_;
  std::deque<WatchMessage> messages_ ABSL_GUARDED_BY(mu_);
  size_t queued_events_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t overflows_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace collide
