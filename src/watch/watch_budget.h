#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace collide {

/// A count with a ceiling shared by many holders: each takes what it needs before it holds it
/// and gives it back when done, so the sum held never passes the limit. Thread-safe (lock-free).
class Allowance {
 public:
  /// An allowance of `limit` units (no limit by default).
  explicit Allowance(uint64_t limit = std::numeric_limits<uint64_t>::max()) : limit_(limit) {}
  Allowance(const Allowance&) = delete;
  Allowance& operator=(const Allowance&) = delete;

  /// Takes `n` units when they fit under the limit (then returns true), or nothing.
  bool TryTake(uint64_t n) {
    uint64_t used = used_.load(std::memory_order_relaxed);
    do {
      if (n > limit_ || used > limit_ - n) return false;
    } while (!used_.compare_exchange_weak(used, used + n, std::memory_order_relaxed));
    return true;
  }
  /// Gives back `n` units taken before.
  void Give(uint64_t n) { used_.fetch_sub(n, std::memory_order_relaxed); }

  /// The units held now.
  uint64_t used() const { return used_.load(std::memory_order_relaxed); }
  /// The ceiling.
  uint64_t limit() const { return limit_; }

 private:
  const uint64_t limit_;
  std::atomic<uint64_t> used_{0};
};

/// The ceilings of a WatchBudget (no limit by default).
struct WatchLimits {
  uint64_t max_fences = std::numeric_limits<uint64_t>::max();
  uint64_t max_contents = std::numeric_limits<uint64_t>::max();
  uint64_t max_queued_bytes = std::numeric_limits<uint64_t>::max();
  uint64_t max_backlog_bytes = std::numeric_limits<uint64_t>::max();
  uint64_t max_observers = std::numeric_limits<uint64_t>::max();
};

/// The server-wide ceilings of every live standing query together (watches and interest streams),
/// and their counters (what GetServerStats reports). Units:
/// - `fences`: fences plus contact watches registered;
/// - `observers`: the observers of the interest streams;
/// - `contents`: what the queries' state holds, counted per entry: each body inside each fence,
///   2 + 2 * (its watcher's contact watches) for each overlapping pair, and, while a batch is
///   evaluated, each (fence, body) or (body, body) candidate pair it produced; each body in each
///   observer's relevant set;
/// - `queued_bytes`: updates waiting in the queries' queues (StandingQueue::UpdateBytes);
/// - `backlog_bytes`: applied batches waiting to be evaluated (WatchHub::BatchBytes).
struct WatchBudget {
  explicit WatchBudget(const WatchLimits& limits = {})
      : fences(limits.max_fences),
        contents(limits.max_contents),
        queued_bytes(limits.max_queued_bytes),
        backlog_bytes(limits.max_backlog_bytes),
        observers(limits.max_observers) {}

  Allowance fences;
  Allowance contents;
  Allowance queued_bytes;
  Allowance backlog_bytes;
  Allowance observers;
  /// Snapshots that replaced a watcher's queued updates since the start (its queue was full, or
  /// its scene's backlog overflowed).
  std::atomic<uint64_t> resyncs{0};
  /// Watches and interest streams ended because `contents` was exhausted.
  std::atomic<uint64_t> exhausted{0};
};

/// A watcher's share of WatchBudget::contents: counts the entries the watcher holds and takes
/// them from the shared allowance in chunks (so that counting one entry is an increment), giving
/// back the unused part of its grant at Trim (after each batch) and everything on destruction. Not
/// thread-safe: one watcher's sets use it, from the one thread evaluating them.
class ContentsMeter {
 public:
  /// Entries are taken from the pool this many at a time.
  static constexpr uint64_t kChunk = 4096;

  /// A meter drawing on `pool` (null: unlimited).
  explicit ContentsMeter(Allowance* pool = nullptr) : pool_(pool) {}
  ContentsMeter(const ContentsMeter&) = delete;
  ContentsMeter& operator=(const ContentsMeter&) = delete;
  ~ContentsMeter() {
    if (pool_ != nullptr) pool_->Give(granted_);
  }

  /// Counts `n` more entries; false (counting nothing) when the pool cannot grant them.
  bool Add(uint64_t n) {
    if (in_use_ + n > granted_ && !Grow(in_use_ + n)) return false;
    in_use_ += n;
    return true;
  }
  /// Counts `n` entries fewer.
  void Remove(uint64_t n) { in_use_ -= n; }
  /// Gives back the grant beyond what is in use.
  void Trim() {
    if (pool_ == nullptr || granted_ == in_use_) return;
    pool_->Give(granted_ - in_use_);
    granted_ = in_use_;
  }
  /// Entries counted now.
  uint64_t in_use() const { return in_use_; }

 private:
  bool Grow(uint64_t needed) {
    if (pool_ == nullptr) {
      granted_ = needed;
      return true;
    }
    // A chunk more than needed when the pool has it, else exactly what is needed.
    const uint64_t want = needed - granted_;
    if (pool_->TryTake(want + kChunk)) {
      granted_ += want + kChunk;
      return true;
    }
    if (!pool_->TryTake(want)) return false;
    granted_ += want;
    return true;
  }

  Allowance* const pool_;
  uint64_t granted_ = 0;
  uint64_t in_use_ = 0;
};

}  // namespace collide
