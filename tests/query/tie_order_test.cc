// Hit order on ties. Bodies hit at exactly the same distance (duplicated bodies at one pose,
// boxes sharing a face plane, rays along axes, faces and edges, queries touching a face) come
// back in (distance, id) order, and every body the narrow phase hits is found, at every fat
// margin, 0 included (leaf boxes that are the bodies' own bounds, so the tree's slab distances
// and the narrow phase's distances round to neighbouring floats). Every query kind and mode runs
// at the present tick one by one (binary tree and 8-wide form) and in batches (interleaved casts),
// each against a brute force over every body with the same narrow-phase functions
// (brute_force.h); tests/history/tie_order_past_test.cc runs the same scenes at past ticks.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "geom/bounds.h"
#include "query/batch.h"
#include "query/brute_force.h"
#include "query/collector.h"
#include "query/collision_world.h"
#include "query/query_engine.h"
#include "query/run_batch.h"
#include "query/run_query.h"
#include "query/tie_scene.h"

// In the namespace of the tie scenes (tie_scene.h) and the brute force (brute_force.h).
namespace collide::testing {
namespace {

// Checks `queries` against brute force over `bodies`, through RunQuery one by one and RunBatch.
void CheckPresent(const CollisionWorld& world, const std::vector<BodyDesc>& bodies,
                  const std::vector<Query>& queries, const char* path, float margin,
                  TieCount* ties) {
  std::vector<QueryResult> results;
  std::vector<QueryHit> batch_hits;
  RunBatch(CurrentTree(world), queries, &results, &batch_hits);
  ASSERT_EQ(results.size(), queries.size());
  std::vector<QueryHit> single;
  for (size_t i = 0; i < queries.size(); ++i) {
    const Query& q = queries[i];
    SCOPED_TRACE(Describe(q, path, margin, static_cast<int>(i)));
    const std::vector<QueryHit> expected = BruteForce(bodies, q);
    ties->Note(expected);
    {
      SCOPED_TRACE("RunBatch");
      ExpectAnswer(q, expected, results[i], batch_hits.data() + results[i].first_hit);
      if (::testing::Test::HasFatalFailure()) return;
    }
    single.clear();
    const QueryResult one = RunQuery(CurrentTree(world), q, &single);
    SCOPED_TRACE("RunQuery");
    ExpectAnswer(q, expected, one, single.data());
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// ---------------------------------------------------------------------------------------------
// Hand-made cases.

// The case of the report: 4 identical unrotated boxes, hit at one distance that the slab test
// of their shared leaf box rounds one ulp beyond the narrow phase's.
std::vector<BodyDesc> FourIdenticalBoxes() {
  std::vector<BodyDesc> bodies;
  for (uint64_t id = 1; id <= 4; ++id) {
    bodies.push_back(
        BodyDesc{.id = id,
                 .shape = Box{{0.59842348f, 2.978003f, 2.5868423f}},
                 .pose = Pose{Quat::Identity(), {33.757797f, 5.6454325f, 14.229436f}}});
  }
  return bodies;
}

Ray FourBoxesRay() {
  return Ray{{18.593395f, -1.0467601f, 23.088812f},
             Normalize(Vec3{15.375594f, 7.128633f, -8.937269f}),
             100.0f};
}

std::vector<uint64_t> Ids(const std::vector<QueryHit>& hits, const QueryResult& result) {
  std::vector<uint64_t> ids;
  for (uint32_t k = 0; k < result.hit_count; ++k) ids.push_back(hits[result.first_hit + k].body_id);
  return ids;
}

TEST(TieOrder, FourIdenticalBoxesComeBackByIdAtEveryMarginOptimizedOrNot) {
  for (float margin : kMargins) {
    for (bool optimized : {false, true}) {
      CollisionWorld world(CollisionWorldOptions{.fat_margin = margin});
      for (const BodyDesc& d : FourIdenticalBoxes()) world.Add(d);
      if (optimized) world.FinishUpdates();
      for (float radius : {-1.0f, 0.0f, 1e-3f, 0.01f, 0.25f}) {
        SCOPED_TRACE(::testing::Message() << "margin " << margin << " optimized " << optimized
                                          << " radius " << radius << " (-1: a ray)");
        Query q{.shape_query = radius < 0 ? ShapeQuery(RaycastQuery{.ray = FourBoxesRay()})
                                          : ShapeQuery(SphereCastQuery{.ray = FourBoxesRay(),
                                                                       .radius = radius})};
        std::vector<QueryHit> hits;
        q.mode = CollectMode::kClosest;
        const QueryResult closest = RunQuery(CurrentTree(world), q, &hits);
        q.mode = CollectMode::kAll;
        q.max_hits = 2;
        const QueryResult all = RunQuery(CurrentTree(world), q, &hits);
        EXPECT_EQ(Ids(hits, closest), (std::vector<uint64_t>{1}));
        EXPECT_EQ(Ids(hits, all), (std::vector<uint64_t>{1, 2}));
        EXPECT_TRUE(all.truncated);
        // Both orders of the same casts in one batch: interleaved.
        const Query both[] = {q,
                              Query{.shape_query = q.shape_query, .mode = CollectMode::kClosest}};
        std::vector<QueryResult> results;
        RunBatch(CurrentTree(world), both, &results, &hits);
        ASSERT_EQ(results.size(), 2u);
        EXPECT_EQ(Ids(hits, results[0]), (std::vector<uint64_t>{1, 2}));
        EXPECT_EQ(Ids(hits, results[1]), (std::vector<uint64_t>{1}));
      }
    }
  }
}

TEST(TieOrder, ATieAcrossTheStaticAndDynamicTreesGoesToTheSmallerId) {
  // The static tree is walked first and finds id 9; the dynamic tree's ids 4, 7 and 8 tie it.
  for (float margin : kMargins) {
    SCOPED_TRACE(::testing::Message() << "margin " << margin);
    CollisionWorld world(CollisionWorldOptions{.fat_margin = margin});
    const uint64_t ids[] = {9, 7, 4, 8};
    std::vector<BodyDesc> bodies = FourIdenticalBoxes();
    for (size_t i = 0; i < bodies.size(); ++i) {
      bodies[i].id = ids[i];
      bodies[i].kind = ids[i] == 9 ? BodyKind::kStatic : BodyKind::kDynamic;
      world.Add(bodies[i]);
    }
    world.FinishUpdates();
    ClosestHitCollector c(100.0f);
    Raycast(world, FourBoxesRay(), QueryFilter{}, c);
    ASSERT_TRUE(c.has_hit());
    EXPECT_EQ(c.hit().body_id, 4u);
  }
}

// Two copies of one box, met at margin 0 by a query that touches its face from outside: a point
// query whose radius reaches the face and a box resting on it. The numbers are ones where the
// tree's box test of the tight leaf misses the touch by an ulp that the narrow phase counts.
TEST(TieOrder, AQueryTouchingAFaceFindsEveryBodyOfThatFace) {
  struct Case {
    Vec3 half_extents;
    Vec3 position;
    Query query;
  };
  const Case cases[] = {
      {{1.90408933f, 1.18934393f, 2.88398695f},
       {-0.63539505f, 38.0132599f, -2.65120697f},
       Query{.shape_query = WithinRadiusQuery{.point = {5.7494688f, 37.7995224f, -5.26254034f},
                                              .radius = 4.4807744f},
             .mode = CollectMode::kAll}},
      {{0.808627427f, 0.166767552f, 1.95264328f},
       {1.70809555f, -12.8759499f, -41.9012108f},
       Query{.shape_query = OverlapQuery{.shape = Box{{1.80670655f, 0.903404593f, 1.92337799f}},
                                         .pose = Pose{Quat::Identity(),
                                                      {4.32342958f, -12.8677378f, -42.1818008f}}},
             .mode = CollectMode::kAll}},
  };
  for (const Case& c : cases) {
    for (float margin : kMargins) {
      SCOPED_TRACE(::testing::Message()
                   << "kind " << c.query.shape_query.index() << " margin " << margin);
      CollisionWorld world(CollisionWorldOptions{.fat_margin = margin});
      std::vector<BodyDesc> bodies;
      for (uint64_t id : {2, 1}) {
        bodies.push_back(BodyDesc{
            .id = id, .shape = Box{c.half_extents}, .pose = Pose{Quat::Identity(), c.position}});
        world.Add(bodies.back());
      }
      world.FinishUpdates();
      const std::vector<QueryHit> expected = BruteForce(bodies, c.query);
      ASSERT_EQ(expected.size(), 2u) << "the narrow phase counts the touch";
      std::vector<QueryHit> hits;
      const QueryResult got = RunQuery(CurrentTree(world), c.query, &hits);
      ExpectAnswer(c.query, expected, got, hits.data());
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Randomised: duplicated and coplanar bodies, near and far, at every margin.

class TieOrderRandom : public ::testing::TestWithParam<TieCase> {};

TEST_P(TieOrderRandom, PresentQueriesMatchBruteForceAtEveryMargin) {
  const TieCase& c = GetParam();
  TieCount ties;
  for (float margin : kMargins) {
    Random r(kSeed);
    const std::vector<BodyDesc> bodies = TieScene(r, c.placement, c.bases);
    const std::vector<Query> queries = TieQueries(r, bodies, c.queries_per_kind);
    // Incremental insertion: the binary tree answers until FinishUpdates makes the 8-wide form.
    CollisionWorld world(CollisionWorldOptions{.fat_margin = margin});
    for (const BodyDesc& d : bodies) world.Add(d);
    CheckPresent(world, bodies, queries, "binary", margin, &ties);
    if (HasFatalFailure()) return;
    world.FinishUpdates();
    CheckPresent(world, bodies, queries, "wide", margin, &ties);
    if (HasFatalFailure()) return;
    // A bulk build.
    CollisionWorld bulk(CollisionWorldOptions{.fat_margin = margin});
    std::vector<BodyHandle> handles(bodies.size());
    bulk.AddBulk(bodies, handles);
    CheckPresent(bulk, bodies, queries, "bulk", margin, &ties);
    if (HasFatalFailure()) return;
  }
  std::printf("%s: %d queries, %d with a tie for the first hit\n", c.name, ties.queries, ties.tied);
  // The scenes are made of ties: most cast queries should meet one (a test of ties that meets
  // none proves nothing).
  EXPECT_GT(ties.tied, ties.queries / 5);
}

INSTANTIATE_TEST_SUITE_P(Scenes, TieOrderRandom, ::testing::ValuesIn(kTieCases), TieCaseName);

}  // namespace
}  // namespace collide::testing
