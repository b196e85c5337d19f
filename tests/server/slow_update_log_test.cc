#include "server/infra/slow_update_log.h"

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/spdlog.h"

namespace collide {
namespace {

using std::chrono::microseconds;
using std::chrono::nanoseconds;

TEST(SlowUpdateLog, AnAppliedBatchGivesEveryPhaseAndTheRestAsTheAcknowledgement) {
  const UpdateTimings timings{.parse = microseconds(400),
                              .convert = microseconds(130),
                              .apply = ApplyTimings{.writer_wait = microseconds(2),
                                                    .validate = microseconds(226),
                                                    .commit = microseconds(235),
                                                    .apply = microseconds(1552),
                                                    .observers = microseconds(206)}};
  EXPECT_EQ(SlowUpdateLog::Format("UpdateStream", "arena", 10000, absl::OkStatus(), 42,
                                  microseconds(3000), timings),
            "slow update: rpc UpdateStream, scene \"arena\", 10000 ops, version 42, 3.000 ms "
            "(parse 0.400, convert 0.130, writer wait 0.002, validate 0.226, log 0.235, apply "
            "1.552, observers 0.206, acknowledgement 0.249)");
}

TEST(SlowUpdateLog, ARefusedBatchGivesItsCodeAndNoScenePhases) {
  const UpdateTimings timings{
      .parse = microseconds(10), .convert = microseconds(20), .apply = std::nullopt};
  EXPECT_EQ(SlowUpdateLog::Format("RemoveBodies", "s", 1, absl::NotFoundError("ops[0]: no body"), 7,
                                  microseconds(100), timings),
            "slow update: rpc RemoveBodies, scene \"s\", 1 ops, refused NOT_FOUND, 0.100 ms "
            "(parse 0.010, convert 0.020, acknowledgement 0.070)");
}

TEST(SlowUpdateLog, TheAcknowledgementIsNeverNegativeAndExtremesPrint) {
  // Phases read on their own clocks may add up past the total by a few nanoseconds.
  const UpdateTimings over{
      .parse = microseconds(60), .convert = microseconds(50), .apply = std::nullopt};
  EXPECT_EQ(SlowUpdateLog::Format("UpdateStream", "s", 0, absl::OkStatus(),
                                  std::numeric_limits<uint64_t>::max(), microseconds(100), over),
            "slow update: rpc UpdateStream, scene \"s\", 0 ops, version 18446744073709551615, "
            "0.100 ms (parse 0.060, convert 0.050, acknowledgement 0.000)");
}

TEST(SlowUpdateLog, EnabledOnlyWithAThreshold) {
  EXPECT_FALSE(SlowUpdateLog().enabled());
  EXPECT_FALSE(SlowUpdateLog(nanoseconds(0)).enabled());
  EXPECT_TRUE(SlowUpdateLog(nanoseconds(1)).enabled());
  EXPECT_EQ(SlowUpdateLog(microseconds(5)).threshold(), microseconds(5));
}

TEST(SlowUpdateLog, RecordLogsAtWarnOnlyWritesThatReachTheThreshold) {
  // The default logger, swapped for one that writes into `out` for the test.
  std::ostringstream out;
  const std::shared_ptr<spdlog::logger> saved = spdlog::default_logger();
  auto capture = std::make_shared<spdlog::logger>(
      "capture", std::make_shared<spdlog::sinks::ostream_sink_st>(out));
  capture->set_pattern("[%l] %v");
  capture->set_level(spdlog::level::trace);
  spdlog::set_default_logger(capture);
  const UpdateTimings timings{
      .parse = microseconds(1), .convert = microseconds(1), .apply = std::nullopt};
  // Off, and under the threshold: nothing.
  SlowUpdateLog(nanoseconds(0))
      .Record("UpdateStream", "s", 1, absl::OkStatus(), 1, microseconds(10), timings);
  SlowUpdateLog(microseconds(5))
      .Record("UpdateStream", "s", 1, absl::OkStatus(), 1, microseconds(4), timings);
  EXPECT_EQ(out.str(), "");
  // At the threshold: its one line, at warn.
  SlowUpdateLog(microseconds(5))
      .Record("UpdateStream", "s", 1, absl::OkStatus(), 1, microseconds(5), timings);
  spdlog::set_default_logger(saved);
  EXPECT_EQ(out.str(), "[warning] " +
                           SlowUpdateLog::Format("UpdateStream", "s", 1, absl::OkStatus(), 1,
                                                 microseconds(5), timings) +
                           "\n");
}

}  // namespace
}  // namespace collide
