#include "base/atomic_histogram.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace collide {
namespace {

TEST(AtomicHistogram, ObservationsGoToTheFirstBucketTheyDoNotExceed) {
  AtomicHistogram histogram({10, 100, 1000});
  for (uint64_t value : {0u, 10u, 11u, 100u, 999u, 1000u, 1001u, 5000u}) histogram.Observe(value);
  const AtomicHistogram::Counts counts = histogram.Read();
  EXPECT_EQ(counts.upper_bounds, (std::vector<uint64_t>{10, 100, 1000}));
  // <= 10: 0, 10; <= 100: 11, 100; <= 1000: 999, 1000; above: 1001, 5000.
  EXPECT_EQ(counts.buckets, (std::vector<uint64_t>{2, 2, 2, 2}));
  EXPECT_EQ(counts.count, 8u);
  EXPECT_EQ(counts.sum, 0u + 10 + 11 + 100 + 999 + 1000 + 1001 + 5000);
}

TEST(AtomicHistogram, ExponentialBounds) {
  EXPECT_EQ(AtomicHistogram::ExponentialBounds(1, 2.0, 5), (std::vector<uint64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(AtomicHistogram::ExponentialBounds(10, 2.5, 3), (std::vector<uint64_t>{10, 25, 62}));
  EXPECT_TRUE(AtomicHistogram::ExponentialBounds(10, 2.0, 0).empty());
}

TEST(AtomicHistogram, NoBoundsCountsEverythingInOneBucket) {
  AtomicHistogram histogram({});
  histogram.Observe(7);
  histogram.Observe(UINT64_MAX - 7);
  const AtomicHistogram::Counts counts = histogram.Read();
  EXPECT_EQ(counts.buckets, (std::vector<uint64_t>{2}));
  EXPECT_EQ(counts.sum, UINT64_MAX);
}

TEST(AtomicHistogram, ConcurrentObservationsAreAllCounted) {
  AtomicHistogram histogram(AtomicHistogram::ExponentialBounds(1, 2.0, 10));
  constexpr int kThreads = 4;
  constexpr int kEach = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&histogram, t] {
      for (int i = 0; i < kEach; ++i) histogram.Observe(static_cast<uint64_t>((i + t) % 2000));
    });
  }
  for (std::thread& thread : threads) thread.join();
  const AtomicHistogram::Counts counts = histogram.Read();
  EXPECT_EQ(counts.count, static_cast<uint64_t>(kThreads * kEach));
  uint64_t sum = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kEach; ++i) sum += static_cast<uint64_t>((i + t) % 2000);
  }
  EXPECT_EQ(counts.sum, sum);
}

}  // namespace
}  // namespace collide
