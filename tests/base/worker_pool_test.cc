// WorkerPool (base/worker_pool.h): every task runs exactly once, on the caller and the workers,
// with any number of callers at once; a pool of one runs everything on its caller.

#include "base/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <set>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace collide {
namespace {

TEST(WorkerPool, RunsEveryTaskExactlyOnce) {
  for (uint32_t threads : {1u, 2u, 3u, 8u}) {
    WorkerPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (size_t tasks : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{1000}}) {
      std::vector<int> runs(tasks, 0);
      // Each task writes only its own slot: read after ParallelFor returns.
      pool.ParallelFor(tasks, [&](size_t i) { ++runs[i]; });
      for (size_t i = 0; i < tasks; ++i) {
        ASSERT_EQ(runs[i], 1) << "threads " << threads << " tasks " << tasks << " task " << i;
      }
    }
  }
}

TEST(WorkerPool, APoolOfOneRunsOnItsCallerInOrder) {
  WorkerPool pool(1);
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<size_t> order;
  pool.ParallelFor(5, [&](size_t i) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(i);
  });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3, 4}));
}

TEST(WorkerPool, ZeroThreadsMeansTheCallerAlone) { EXPECT_EQ(WorkerPool(0).threads(), 1u); }

// The workers do take tasks: tasks that wait for each other can only all finish when at least
// two threads run them (a caller alone would wait forever on the first).
TEST(WorkerPool, WorkersRunTasksBesideTheCaller) {
  WorkerPool pool(2);
  Mutex mu;
  CondVar cv;
  int arrived = 0;
  std::set<std::thread::id> ran_on;
  pool.ParallelFor(2, [&](size_t) {
    std::unique_lock<Mutex> lock(mu);
    ran_on.insert(std::this_thread::get_id());
    ++arrived;
    cv.NotifyAll();
    cv.Wait(lock, [&] { return arrived == 2; });
  });
  EXPECT_EQ(ran_on.size(), 2u);
}

// Many callers share one pool: each loop's tasks all run, once, and every caller returns (a
// caller works through its own loop even while the workers help another).
TEST(WorkerPool, ManyCallersShareOnePool) {
  WorkerPool pool(3);
  constexpr int kCallers = 6;
  constexpr int kLoops = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int loop = 0; loop < kLoops; ++loop) {
        const size_t tasks = static_cast<size_t>(1 + (loop * 7 + c) % 40);
        std::vector<uint64_t> out(tasks, 0);
        pool.ParallelFor(tasks, [&](size_t i) { out[i] += i * 3 + static_cast<uint64_t>(c); });
        for (size_t i = 0; i < tasks; ++i) {
          if (out[i] != i * 3 + static_cast<uint64_t>(c)) failures.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace collide
