#include "bench/stats.h"

#include <gtest/gtest.h>

#include <vector>

namespace collide::bench {
namespace {

TEST(Median, IsTheMiddleValueOfAnOddCount) {
  EXPECT_DOUBLE_EQ(Median({7.0}), 7.0);
  EXPECT_DOUBLE_EQ(Median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(Median({9.0, -4.0, 5.0, 0.5, 100.0}), 5.0);
}

TEST(Median, IsTheMeanOfTheTwoMiddleValuesOfAnEvenCount) {
  EXPECT_DOUBLE_EQ(Median({1.0, 2.0}), 1.5);
  EXPECT_DOUBLE_EQ(Median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_DOUBLE_EQ(Median({10.0, 10.0, 0.0, 30.0}), 10.0);
}

TEST(Median, IsZeroForNoSamples) { EXPECT_DOUBLE_EQ(Median({}), 0.0); }

TEST(Percentile, IsTheSampleAtTheNearestRank) {
  std::vector<double> samples;
  for (int i = 100; i >= 0; --i) samples.push_back(i);  // 0..100, unsorted
  EXPECT_DOUBLE_EQ(Percentile(samples, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(Percentile(samples, 0.5), 50.0);
  EXPECT_DOUBLE_EQ(Percentile(samples, 0.9), 90.0);
  EXPECT_DOUBLE_EQ(Percentile(samples, 0.99), 99.0);
  EXPECT_DOUBLE_EQ(Percentile(samples, 0.999), 100.0);  // rank 99.9 rounds up
  EXPECT_DOUBLE_EQ(Percentile(samples, 1.0), 100.0);
}

TEST(Percentile, RoundsTheRankOfAnEvenCount) {
  // Four samples: p = 0.5 is rank 1.5, which rounds to the upper middle.
  EXPECT_DOUBLE_EQ(Percentile({4.0, 1.0, 3.0, 2.0}, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(Percentile({4.0, 1.0, 3.0, 2.0}, 0.4), 2.0);
}

TEST(Percentile, ClampsPToTheSamples) {
  EXPECT_DOUBLE_EQ(Percentile({1.0, 2.0, 3.0}, -1.0), 1.0);
  EXPECT_DOUBLE_EQ(Percentile({1.0, 2.0, 3.0}, 2.0), 3.0);
}

TEST(Percentile, IsZeroForNoSamples) { EXPECT_DOUBLE_EQ(Percentile({}, 0.5), 0.0); }

}  // namespace
}  // namespace collide::bench
