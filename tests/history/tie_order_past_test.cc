// Hit order on ties at past ticks: the scenes of tests/query/tie_order_test.cc moved through
// ticks, queries of every kind and mode at every retained tick and between ticks (the history's
// index), in batches and one by one, each against a brute force over the state recorded at the
// end of that tick (tests/query/brute_force.h).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "history/past_tick.h"
#include "history/pose_history.h"
#include "history/run_at_tick.h"
#include "query/batch.h"
#include "query/brute_force.h"
#include "query/collision_world.h"
#include "query/query_engine.h"
#include "query/run_batch.h"
#include "query/tie_scene.h"

// In the namespace of the tie scenes (tie_scene.h) and the brute force (brute_force.h).
namespace collide::testing {
namespace {

class TieOrderRandom : public ::testing::TestWithParam<TieCase> {};

// The same scenes moved through ticks: whole groups of duplicates move together (so they stay
// tied), and queries run at every retained tick and between ticks, against brute force over the
// state recorded at the end of each tick.
TEST_P(TieOrderRandom, PastTickQueriesMatchBruteForceAtEveryMargin) {
  const TieCase& c = GetParam();
  constexpr int kTicks = 9;
  TieCount ties;
  for (float margin : kMargins) {
    Random r(kSeed + 1);
    std::vector<BodyDesc> bodies = TieScene(r, c.placement, c.bases);
    CollisionWorld world(CollisionWorldOptions{.fat_margin = margin});
    PoseHistory history(/*retained_ticks=*/16, /*start_tick=*/0, /*segment_ticks=*/4);
    std::vector<BodyHandle> handles;
    for (const BodyDesc& d : bodies) {
      handles.push_back(world.Add(d));
      history.AfterCreate(world, handles.back());
    }
    history.EndBatch(world);
    world.FinishUpdates();
    std::vector<std::vector<BodyDesc>> states{bodies};  // at the end of each tick
    for (uint64_t tick = 1; tick <= kTicks; ++tick) {
      history.AdvanceTo(tick);
      // Move the bodies sharing a pose as one (a shift and sometimes a quarter turn), so that
      // groups of duplicates stay duplicates.
      std::vector<Pose> moved_from;
      std::vector<Pose> moved_to;
      for (size_t i = 0; i < bodies.size(); ++i) {
        if (!r.Chance(0.3)) continue;
        const Pose from = bodies[i].pose;
        if (std::find(moved_from.begin(), moved_from.end(), from) != moved_from.end()) continue;
        Pose to = from;
        to.position += r.UnitVector() * (r.Uniform(0.0f, 2.0f) * c.placement.max_size);
        if (r.Chance(0.2)) to.rotation = QuatFromAxisAngle(Vec3{1, 0, 0}, 1.5707963f);
        moved_from.push_back(from);
        moved_to.push_back(to);
      }
      for (size_t i = 0; i < bodies.size(); ++i) {
        auto it = std::find(moved_from.begin(), moved_from.end(), bodies[i].pose);
        if (it == moved_from.end()) continue;
        bodies[i].pose = moved_to[it - moved_from.begin()];
        history.BeforeMove(world, handles[i]);
        world.SetPose(handles[i], bodies[i].pose);
      }
      history.EndBatch(world);
      world.FinishUpdates();
      states.push_back(bodies);
    }
    for (uint64_t tick = 0; tick <= kTicks; ++tick) {
      for (float fraction : {0.0f, 0.5f, 0.25f}) {
        if (fraction > 0.0f && tick == kTicks) continue;
        std::vector<BodyDesc> at = states[tick];
        if (fraction > 0.0f) {
          for (size_t i = 0; i < at.size(); ++i) {
            at[i].pose = LerpPose(states[tick][i].pose, states[tick + 1][i].pose, fraction);
          }
        }
        std::vector<Query> queries = TieQueries(r, at, std::max(1, c.queries_per_kind / 8));
        for (Query& q : queries) {
          q.at_tick = tick;
          q.tick_fraction = fraction;
        }
        std::vector<QueryResult> results;
        std::vector<QueryHit> hits;
        // One moment for the whole batch: the history's at a past tick or between ticks, the
        // world's trees at the current tick.
        if (const std::optional<TickPoint> at = PastTickOf(history, queries[0])) {
          ASSERT_TRUE(tick < kTicks || fraction > 0.0f);
          RunBatch(PastTick(world, history, *at), queries, &results, &hits);
        } else {
          ASSERT_EQ(tick, static_cast<uint64_t>(kTicks));
          RunBatch(CurrentTree(world), queries, &results, &hits);
        }
        ASSERT_EQ(results.size(), queries.size());
        std::vector<QueryHit> single;
        for (size_t i = 0; i < queries.size(); ++i) {
          const Query& q = queries[i];
          SCOPED_TRACE(Describe(q, "past", margin, static_cast<int>(i)));
          SCOPED_TRACE(::testing::Message() << "tick " << tick << " fraction " << fraction);
          const std::vector<QueryHit> expected = BruteForce(at, q);
          ties.Note(expected);
          ExpectAnswer(q, expected, results[i], hits.data() + results[i].first_hit);
          if (HasFatalFailure()) return;
          single.clear();
          const QueryResult one = RunQueryAtTick(world, history, q, &single);
          ExpectAnswer(q, expected, one, single.data());
          if (HasFatalFailure()) return;
        }
      }
    }
  }
  std::printf("%s past: %d queries, %d with a tie for the first hit\n", c.name, ties.queries,
              ties.tied);
  EXPECT_GT(ties.tied, ties.queries / 5);
}

INSTANTIATE_TEST_SUITE_P(Scenes, TieOrderRandom, ::testing::ValuesIn(kTieCases), TieCaseName);

}  // namespace
}  // namespace collide::testing
