#include "base/worker_pool.h"

#include <algorithm>
#include <mutex>

namespace collide {

WorkerPool::WorkerPool(uint32_t threads) {
  const uint32_t total = std::clamp<uint32_t>(threads, 1, kMaxThreads);
  workers_.reserve(total - 1);
  for (uint32_t i = 1; i < total; ++i) workers_.emplace_back([this] { WorkerMain(); });
}

WorkerPool::~WorkerPool() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  work_cv_.NotifyAll();
  for (std::thread& worker : workers_) worker.join();
}

void WorkerPool::RunTasks(Loop& loop) {
  // Relaxed: the counter only divides the tasks; what they read was published by mu_ (the loop
  // reached this thread through the queue) and what they write is published by mu_ again.
  for (size_t i = loop.next.fetch_add(1, std::memory_order_relaxed); i < loop.tasks;
       i = loop.next.fetch_add(1, std::memory_order_relaxed)) {
    loop.task(i);
  }
}

void WorkerPool::ParallelFor(size_t tasks, absl::FunctionRef<void(size_t)> task) {
  if (workers_.empty() || tasks <= 1) {
    for (size_t i = 0; i < tasks; ++i) task(i);
    return;
  }
  Loop loop(tasks, task);
  {
    MutexLock lock(&mu_);
    queue_.push_back(&loop);
  }
  // Wake no more workers than there are tasks beside the one this thread takes first.
  if (tasks - 1 >= workers_.size()) {
    work_cv_.NotifyAll();
  } else {
    for (size_t i = 0; i + 1 < tasks; ++i) work_cv_.NotifyOne();
  }
  RunTasks(loop);
  std::unique_lock<Mutex> lock(mu_);
  // Every task is handed out: no worker may join the loop from here on.
  if (auto it = std::find(queue_.begin(), queue_.end(), &loop); it != queue_.end()) {
    queue_.erase(it);
  }
  done_cv_.Wait(lock, [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return loop.helpers == 0; });
}

void WorkerPool::WorkerMain() {
  std::unique_lock<Mutex> lock(mu_);
  while (true) {
    work_cv_.Wait(lock,
                  [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    Loop* loop = queue_.front();
    if (loop->next.load(std::memory_order_relaxed) >= loop->tasks) {
      // Every task of the oldest loop is handed out: the next loop, if any, needs the help.
      queue_.pop_front();
      continue;
    }
    ++loop->helpers;
    lock.unlock();
    RunTasks(*loop);
    lock.lock();
    if (auto it = std::find(queue_.begin(), queue_.end(), loop); it != queue_.end()) {
      queue_.erase(it);
    }
    // The last access to the loop: once its caller sees no helper it returns, and the loop is
    // gone.
    if (--loop->helpers == 0) done_cv_.NotifyAll();
  }
}

}  // namespace collide
