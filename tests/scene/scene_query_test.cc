// The query entry point below the server (scene/scene_query.h): one read, ticks checked per
// query, present-tick and past-tick queries of one batch answered as one by one.

#include "scene/scene_query.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <variant>
#include <vector>

#include "history/run_at_tick.h"
#include "query/batch.h"
#include "scene/scene.h"
#include "scene/update_batch.h"

namespace collide {
namespace {

// Body 1 (a sphere of radius 1) moves along x: at the end of tick t it is at (10 t, 0, 0), for
// ticks 1..10; bodies 2..9 stand still on the line y = 50. The scene retains ticks 7..10.
void MakeScene(Scene* scene) {
  UpdateBatch create;
  create.tick = 1;
  create.ops.push_back(UpsertOp(
      BodyDesc{.id = 1, .shape = Sphere{1.0f}, .pose = Pose{.position = {10.0f, 0.0f, 0.0f}}}));
  for (uint64_t id = 2; id < 10; ++id) {
    create.ops.push_back(UpsertOp(BodyDesc{
        .id = id, .shape = Sphere{1.0f}, .pose = Pose{.position = {10.0f * id, 50.0f, 0.0f}}}));
  }
  ASSERT_TRUE(scene->Apply(create).ok());
  for (uint64_t t = 2; t <= 10; ++t) {
    UpdateBatch batch;
    batch.tick = t;
    batch.ops.push_back(SetPoseOp(1, Pose{.position = {10.0f * t, 0.0f, 0.0f}}));
    ASSERT_TRUE(scene->Apply(batch).ok());
  }
}

// A ray down the y axis through x, from y = -20.
Query RayAt(float x, CollectMode mode = CollectMode::kClosest) {
  Query q;
  q.shape_query = RaycastQuery{.ray = Ray{{x, -20.0f, 0.0f}, {0.0f, 1.0f, 0.0f}, 100.0f}};
  q.mode = mode;
  return q;
}

Query RayAtTick(float x, uint64_t tick, CollectMode mode = CollectMode::kClosest) {
  Query q = RayAt(x, mode);
  q.at_tick = tick;
  return q;
}

TEST(SceneQuery, OneVersionForAllAndAnErrorOnlyForTheTickNotRetained) {
  Scene scene("s", SceneOptions{.history_ticks = 4});
  MakeScene(&scene);
  const std::vector<Query> queries = {
      RayAt(100.0f),                           // body 1 now
      RayAtTick(80.0f, 8),                     // body 1 at tick 8
      RayAtTick(30.0f, 3),                     // tick 3: not retained
      RayAt(80.0f),                            // body 8 on y = 50 (body 1 has moved on)
      RayAt(100.0f, CollectMode::kAny),        // body 1 now
      RayAtTick(90.0f, 9, CollectMode::kAll),  // bodies 1 (at tick 9) and 9
  };
  const std::vector<size_t> positions = {0, 2, 5, 6, 9, 11};
  std::vector<absl::Status> status;
  std::vector<QueryResult> results;
  std::vector<QueryHit> hits;
  const uint64_t version = AnswerQueries(scene, queries, positions, &status, &results, &hits);
  EXPECT_EQ(version, scene.version());
  ASSERT_EQ(status.size(), queries.size());
  ASSERT_EQ(results.size(), queries.size());
  for (size_t i = 0; i < queries.size(); ++i) {
    if (i == 2) continue;
    EXPECT_TRUE(status[i].ok()) << i << ": " << status[i];
  }
  EXPECT_EQ(status[2].code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(status[2].message(), "queries[5].at_tick: tick 3 is not retained (retained: 7..10)");
  EXPECT_EQ(results[2].hit_count, 0u);

  auto ids = [&](size_t i) {
    std::vector<uint64_t> out;
    for (uint32_t h = 0; h < results[i].hit_count; ++h) {
      out.push_back(hits[results[i].first_hit + h].body_id);
    }
    return out;
  };
  EXPECT_EQ(ids(0), std::vector<uint64_t>{1});
  EXPECT_EQ(ids(1), std::vector<uint64_t>{1});
  EXPECT_EQ(ids(3), std::vector<uint64_t>{8});
  EXPECT_EQ(ids(4), std::vector<uint64_t>{1});
  EXPECT_EQ(ids(5), (std::vector<uint64_t>{1, 9}));
  EXPECT_FLOAT_EQ(hits[results[0].first_hit].distance, 19.0f);
}

// Without positions, a query is named by its index in the batch (a transport moves the path to its
// request's words: a unary query's `at_tick`).
TEST(SceneQuery, AQueryWithoutPositionsIsNamedByItsIndex) {
  Scene scene("s", SceneOptions{.history_ticks = 4});
  MakeScene(&scene);
  const Query q = RayAtTick(30.0f, 3);
  std::vector<absl::Status> status;
  std::vector<QueryResult> results;
  std::vector<QueryHit> hits;
  AnswerQueries(scene, std::span<const Query>(&q, 1), {}, &status, &results, &hits);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0].message(), "queries[0].at_tick: tick 3 is not retained (retained: 7..10)");
}

// A batch mixing present-tick casts (interleaved), past-tick and interpolated ones and other
// kinds answers each query as RunQuery does alone.
TEST(SceneQuery, AMixedBatchAnswersAsOneByOne) {
  Scene scene("s", SceneOptions{.history_ticks = 4});
  MakeScene(&scene);
  std::vector<Query> queries;
  for (int i = 0; i < 40; ++i) {
    const float x = 5.0f * static_cast<float>(i % 25);
    const CollectMode mode = static_cast<CollectMode>(i % 3);
    switch (i % 5) {
      case 0:
      case 1:
        queries.push_back(RayAt(x, mode));
        break;
      case 2:
        queries.push_back(RayAtTick(x, 7 + static_cast<uint64_t>(i % 4), mode));
        break;
      case 3: {
        Query q = RayAtTick(x, 8, mode);
        q.shape_query =
            SphereCastQuery{.ray = std::get<RaycastQuery>(q.shape_query).ray, .radius = 2.0f};
        q.tick_fraction = 0.5f;
        queries.push_back(q);
        break;
      }
      case 4: {
        Query q;
        q.shape_query = WithinRadiusQuery{.point = Vec3{x, 0.0f, 0.0f}, .radius = 8.0f};
        q.mode = mode;
        if (i % 2 == 0) q.at_tick = 9;
        queries.push_back(q);
        break;
      }
    }
  }
  std::vector<absl::Status> status;
  std::vector<QueryResult> results;
  std::vector<QueryHit> hits;
  AnswerQueries(scene, queries, {}, &status, &results, &hits);
  ASSERT_EQ(results.size(), queries.size());
  int found = 0;
  scene.ReadWithHistory([&](const CollisionWorld& world, const PoseHistory& history, uint64_t) {
    for (size_t i = 0; i < queries.size(); ++i) {
      ASSERT_TRUE(status[i].ok()) << i << ": " << status[i];
      std::vector<QueryHit> single;
      const QueryResult one = testing::RunQueryAtTick(world, history, queries[i], &single);
      ASSERT_EQ(results[i].hit_count, one.hit_count) << i;
      EXPECT_EQ(results[i].truncated, one.truncated) << i;
      for (uint32_t h = 0; h < one.hit_count; ++h) {
        const QueryHit& a = hits[results[i].first_hit + h];
        const QueryHit& b = single[one.first_hit + h];
        EXPECT_EQ(a.body_id, b.body_id) << i;
        EXPECT_EQ(a.distance, b.distance) << i;
        ++found;
      }
    }
  });
  EXPECT_GT(found, 10);
}

// A batch answered in segments gets each query's answer as a whole batch does, segment by
// segment, each segment no larger in potential hits than asked (at least one query); a sink that
// says stop stops it.
TEST(SceneQuery, InSegmentsAnswersAsAWholeBatchWithEachSegmentsHitsBounded) {
  Scene scene("s", SceneOptions{.history_ticks = 4});
  MakeScene(&scene);
  std::vector<Query> queries;
  std::vector<size_t> positions;
  for (int i = 0; i < 60; ++i) {
    const float x = 10.0f * static_cast<float>(1 + i % 10);
    Query q = i % 4 == 1 ? RayAtTick(x, 7 + static_cast<uint64_t>(i % 5))  // 11: not retained
                         : RayAt(x, static_cast<CollectMode>(i % 3));
    if (q.mode == CollectMode::kAll) q.max_hits = 1 + static_cast<uint32_t>(i % 4);
    queries.push_back(q);
    positions.push_back(static_cast<size_t>(100 + i));
  }
  std::vector<absl::Status> whole_status;
  std::vector<QueryResult> whole_results;
  std::vector<QueryHit> whole_hits;
  const uint64_t version =
      AnswerQueries(scene, queries, positions, &whole_status, &whole_results, &whole_hits);
  for (const uint64_t max_segment_hits : {uint64_t{1}, uint64_t{3}, uint64_t{7}, uint64_t{1000}}) {
    std::vector<absl::Status> status;
    std::vector<QueryResult> results;
    std::vector<QueryHit> hits;
    size_t next = 0;
    const uint64_t read = AnswerQueriesInSegments(
        scene, queries, positions, max_segment_hits, &status, &results, &hits,
        [&](uint64_t segment_version, size_t first) {
          EXPECT_EQ(segment_version, version);
          EXPECT_EQ(first, next);
          uint64_t potential = 0;
          for (size_t j = 0; j < results.size(); ++j) {
            potential += PotentialHits(queries[first + j]);
            const size_t i = first + j;
            EXPECT_EQ(status[j], whole_status[i]) << i;
            EXPECT_EQ(results[j].hit_count, whole_results[i].hit_count) << i;
            EXPECT_EQ(results[j].truncated, whole_results[i].truncated) << i;
            for (uint32_t h = 0; h < results[j].hit_count; ++h) {
              const QueryHit& got = hits[results[j].first_hit + h];
              const QueryHit& want = whole_hits[whole_results[i].first_hit + h];
              EXPECT_EQ(got.body_id, want.body_id) << i;
              EXPECT_EQ(got.distance, want.distance) << i;
            }
          }
          EXPECT_TRUE(potential <= max_segment_hits || results.size() == 1)
              << potential << " in " << results.size() << " queries";
          next = first + results.size();
          return true;
        });
    EXPECT_EQ(read, version);
    EXPECT_EQ(next, queries.size()) << max_segment_hits;
  }
  // Stopped after the first segment.
  std::vector<absl::Status> status;
  std::vector<QueryResult> results;
  std::vector<QueryHit> hits;
  int segments = 0;
  AnswerQueriesInSegments(scene, queries, positions, 2, &status, &results, &hits,
                          [&](uint64_t, size_t) { return ++segments < 1; });
  EXPECT_EQ(segments, 1);
}

}  // namespace
}  // namespace collide
