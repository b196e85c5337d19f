// PastTickOf: which queries AnswerQueries sends to the history (a past tick, or any
// interpolation) and which to the world's trees (no tick, or the current tick exactly).

#include "history/past_tick.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

#include "history/pose_history.h"
#include "query/batch.h"

namespace collide {
namespace {

Query At(std::optional<uint64_t> tick, float fraction = 0.0f) {
  return Query{.at_tick = tick, .tick_fraction = fraction};
}

TEST(PastTickOf, SendsOnlyPastTicksAndInterpolationsToTheHistory) {
  PoseHistory history(/*retained=*/8, /*start_tick=*/40, /*segment_ticks=*/2);
  for (uint64_t t = 41; t <= 45; ++t) history.AdvanceTo(t);
  ASSERT_EQ(history.tick(), 45u);
  // The world now: no tick, or the current tick without a fraction.
  EXPECT_EQ(PastTickOf(history, At(std::nullopt)), std::nullopt);
  EXPECT_EQ(PastTickOf(history, At(std::nullopt, 0.5f)), std::nullopt);
  EXPECT_EQ(PastTickOf(history, At(45)), std::nullopt);
  // The history: an earlier tick, with or without a fraction, and any fraction from the current
  // tick (CheckQueryTick refuses it: the next tick is not retained yet).
  EXPECT_EQ(PastTickOf(history, At(44)), (TickPoint{.tick = 44}));
  EXPECT_EQ(PastTickOf(history, At(40, 0.25f)), (TickPoint{.tick = 40, .fraction = 0.25f}));
  EXPECT_EQ(PastTickOf(history, At(45, 0.5f)), (TickPoint{.tick = 45, .fraction = 0.5f}));
  // Ticks are not checked here (CheckQueryTick does): one not retained is still a past moment.
  EXPECT_EQ(PastTickOf(history, At(3)), (TickPoint{.tick = 3}));
  EXPECT_EQ(PastTickOf(history, At(46)), (TickPoint{.tick = 46}));
}

}  // namespace
}  // namespace collide
