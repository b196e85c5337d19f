#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "base/mutex.h"

namespace collide {

/// A fixed set of threads that help callers run the tasks of a parallel loop.
///
/// `ParallelFor` runs on the calling thread, which takes tasks like any worker: a pool of
/// `threads` has threads - 1 workers, so a pool of 1 starts none and runs every loop on its
/// caller alone. Any number of callers may run loops at once; the workers help the oldest loop
/// that still has tasks to hand out, and each caller works on its own loop until it is done, so
/// a loop finishes even when every worker is busy elsewhere (no caller waits for a worker).
///
/// Ownership (what makes it race-free by design): a loop's state lives on its caller's stack. A
/// worker reaches it only through the pool's queue, under `mu_`, and counts itself in while it
/// holds `mu_`; the caller returns only after taking the loop off the queue and seeing that
/// count at zero under `mu_`. Tasks are handed out by an atomic counter, so each runs exactly
/// once, and everything a task wrote happens-before ParallelFor's return (the mutex hand-off).
/// The lock is a `collide::Mutex` (a pthread mutex), which ThreadSanitizer sees through.
class WorkerPool {
 public:
  /// The most threads a pool runs (the caller included).
  static constexpr uint32_t kMaxThreads = 1024;

  /// A pool of `threads` (1 to kMaxThreads; values outside are clamped into it): the caller of
  /// each loop plus threads - 1 workers, started here.
  explicit WorkerPool(uint32_t threads);
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  /// Stops and joins the workers. No ParallelFor may be running.
  ~WorkerPool();

  /// The threads a loop may run on, its caller included (1: the caller alone).
  uint32_t threads() const { return static_cast<uint32_t>(workers_.size()) + 1; }

  /// Runs `task(i)` once for every i in [0, tasks), on the calling thread and on whichever
  /// workers are free, in no particular order and concurrently; returns when every call has
  /// returned. `task` must not call ParallelFor of this pool (a worker would wait on itself).
  void ParallelFor(size_t tasks, absl::FunctionRef<void(size_t)> task);

 private:
  // One ParallelFor in progress (on its caller's stack).
  struct Loop {
    Loop(size_t count, absl::FunctionRef<void(size_t)> fn) : tasks(count), task(fn) {}
    const size_t tasks;
    const absl::FunctionRef<void(size_t)> task;
    // The next task to hand out; past `tasks` once all are handed out.
    std::atomic<size_t> next{0};
    // Workers inside RunTasks of this loop (changed and read under mu_).
    int helpers = 0;
  };

  // Runs tasks of `loop` until none is left to hand out.
  static void RunTasks(Loop& loop);
  // A worker's life: waits for loops with tasks left, helps them, until stopping_.
  void WorkerMain();

  Mutex mu_;
  // Wakes workers: a loop was queued, or the pool stops.
  CondVar work_cv_;
  // Wakes callers: a worker left a loop.
  CondVar done_cv_;
  // Loops that may still have tasks to hand out, oldest first.
  std::deque<Loop*> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace collide
