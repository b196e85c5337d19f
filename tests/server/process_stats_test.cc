#include "server/infra/process_stats.h"

#include <limits>

#include "gtest/gtest.h"
#include "server/infra/slow_query_log.h"

namespace collide {
namespace {

constexpr char kStatus[] =
    "Name:\tcollide-server\n"
    "VmPeak:\t  812340 kB\n"
    "VmRSSx:\t       1 kB\n"
    "VmRSS:\t   53120 kB\n"
    "VmHWM:\t   60000 kB\n";

TEST(ProcessStats, ReadsAFieldOfProcStatusInBytes) {
  EXPECT_EQ(StatusFieldBytes(kStatus, "VmRSS"), 53120u * 1024);
  EXPECT_EQ(StatusFieldBytes(kStatus, "VmHWM"), 60000u * 1024);
  EXPECT_EQ(StatusFieldBytes(kStatus, "VmSwap"), 0u);
  EXPECT_EQ(StatusFieldBytes("VmRSS:\t 12 MB\n", "VmRSS"), 0u);
  EXPECT_EQ(StatusFieldBytes("VmRSS:\t -5 kB\n", "VmRSS"), 0u);
  EXPECT_EQ(StatusFieldBytes("VmRSS:\t kB\n", "VmRSS"), 0u);
  EXPECT_EQ(StatusFieldBytes("", "VmRSS"), 0u);
}

TEST(ProcessStats, ThisProcessHasResidentMemory) { EXPECT_GT(ResidentMemoryBytes(), 0u); }

TEST(SlowQueryThreshold, AcceptsZeroToADayInMilliseconds) {
  std::chrono::nanoseconds threshold{-1};
  ASSERT_TRUE(SlowLogThresholdFromMs(0, &threshold));
  EXPECT_EQ(threshold.count(), 0);
  ASSERT_TRUE(SlowLogThresholdFromMs(0.000001, &threshold));
  EXPECT_EQ(threshold.count(), 1);
  ASSERT_TRUE(SlowLogThresholdFromMs(1e-12, &threshold));
  EXPECT_EQ(threshold.count(), 1);  // any positive value logs something
  ASSERT_TRUE(SlowLogThresholdFromMs(2.5, &threshold));
  EXPECT_EQ(threshold.count(), 2500000);
  ASSERT_TRUE(SlowLogThresholdFromMs(86400000, &threshold));
  EXPECT_EQ(threshold.count(), 86400000LL * 1000000);
  for (double bad :
       {-1e-9, -1.0, 86400000.001, 1e300, std::numeric_limits<double>::infinity(),
        -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_FALSE(SlowLogThresholdFromMs(bad, &threshold)) << bad;
  }
}

TEST(SlowQueryThreshold, KindCountsFollowTheQueries) {
  v1::QueryBatch batch;
  EXPECT_EQ(QueryKindCounts(batch), "none");
  batch.add_queries()->mutable_overlap();
  batch.add_queries()->mutable_raycast();
  batch.add_queries()->mutable_overlap();
  batch.add_queries();
  batch.add_queries()->mutable_aabb();
  EXPECT_EQ(QueryKindCounts(batch), "raycast 1, overlap 2, aabb 1, unset 1");
}

}  // namespace
}  // namespace collide
