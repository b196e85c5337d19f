// Differential tests of the query engine against brute force: the geometry layer applied to
// every live body, filtered and ordered by hand. Random scenes of every shape with random moves,
// removals and re-insertions between query rounds; the world validates after every mutation
// batch.

#include "query/query_engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "query/batch.h"
#include "query/brute_force.h"
#include "query/collector.h"
#include "query/collision_world.h"
#include "query/run_batch.h"
#include "query/run_query.h"
#include "sanitizers.h"

namespace collide {
namespace {

constexpr uint32_t kSeed = 20261122;

// A scene under test: the world and a mirror of what it should hold.
struct Fixture {
  explicit Fixture(float fat_margin) : world(CollisionWorldOptions{.fat_margin = fat_margin}) {}
  CollisionWorld world;
  std::vector<BodyDesc> mirror;  // indexed by handle; id == 0 means a free slot
  std::vector<BodyHandle> live;
  uint64_t next_id = 1;
};

class Random {
 public:
  explicit Random(uint32_t seed) : rng_(seed) {}
  float Uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng_); }
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  Vec3 InCube(float side) { return {Uniform(0, side), Uniform(0, side), Uniform(0, side)}; }
  Vec3 UnitVector() {
    while (true) {
      Vec3 v{Uniform(-1, 1), Uniform(-1, 1), Uniform(-1, 1)};
      float l = Length(v);
      if (l > 0.1f && l <= 1.0f) return v / l;
    }
  }
  Quat Rotation() {
    switch (Int(0, 3)) {
      case 0:
        return Quat::Identity();  // axis aligned boxes take the AABB paths
      case 1:
        return QuatFromAxisAngle(Vec3{0, 1, 0}, 1.5707963f);
      default: {
        Quat q{Uniform(-1, 1), Uniform(-1, 1), Uniform(-1, 1), Uniform(-1, 1)};
        return Length(q) > 0.1f ? Normalize(q) : Quat::Identity();
      }
    }
  }
  Shape AnyShape() {
    switch (Int(0, 2)) {
      case 0:
        return Sphere{Uniform(0.1f, 1.5f)};
      case 1:
        // Now and then a flat box (a zero half extent).
        return Box{Vec3{Uniform(0.1f, 1.2f), Int(0, 9) == 0 ? 0.0f : Uniform(0.1f, 1.2f),
                        Uniform(0.1f, 1.2f)}};
      default:
        return Capsule{Uniform(0.1f, 0.8f), Uniform(0.0f, 1.2f)};
    }
  }
  uint32_t Bits() { return Int(0, 3) == 0 ? (1u << Int(0, 3)) : ~0u; }

  std::mt19937& engine() { return rng_; }

 private:
  std::mt19937 rng_;
};

BodyDesc RandomBody(Random& r, uint64_t id, float side) {
  return BodyDesc{.id = id,
                  .shape = r.AnyShape(),
                  .pose = Pose{r.Rotation(), r.InCube(side)},
                  .category = r.Bits(),
                  .mask = r.Bits(),
                  .kind = r.Int(0, 4) == 0 ? BodyKind::kStatic : BodyKind::kDynamic};
}

void Mirror(Fixture& f, BodyHandle h, const BodyDesc& d) {
  if (static_cast<size_t>(h) >= f.mirror.size()) f.mirror.resize(h + 1);
  f.mirror[h] = d;
}

void Populate(Fixture& f, Random& r, int n, float side, bool bulk) {
  std::vector<BodyDesc> descs;
  for (int i = 0; i < n; ++i) descs.push_back(RandomBody(r, f.next_id++, side));
  std::vector<BodyHandle> handles(n);
  if (bulk) {
    f.world.AddBulk(descs, handles);
  } else {
    for (int i = 0; i < n; ++i) handles[i] = f.world.Add(descs[i]);
  }
  for (int i = 0; i < n; ++i) {
    Mirror(f, handles[i], descs[i]);
    f.live.push_back(handles[i]);
  }
}

// Random moves (mostly small, some teleports), removals, re-insertions, shape and filter changes.
void Mutate(Fixture& f, Random& r, float side, bool validate_each) {
  int ops = std::max<int>(10, static_cast<int>(f.live.size()) / 3);
  for (int k = 0; k < ops; ++k) {
    int which = r.Int(0, 19);
    if (f.live.empty()) which = 19;
    if (which < 14) {
      BodyHandle h = f.live[r.Int(0, static_cast<int>(f.live.size()) - 1)];
      BodyDesc& d = f.mirror[h];
      if (which < 12) {
        d.pose.position +=
            Vec3{r.Uniform(-0.5f, 0.5f), r.Uniform(-0.5f, 0.5f), r.Uniform(-0.5f, 0.5f)};
      } else {
        d.pose.position = r.InCube(side);
      }
      d.pose.rotation = r.Int(0, 1) ? d.pose.rotation : r.Rotation();
      f.world.SetPose(h, d.pose);
    } else if (which < 16) {
      size_t i = r.Int(0, static_cast<int>(f.live.size()) - 1);
      BodyHandle h = f.live[i];
      f.world.Remove(h);
      f.mirror[h].id = 0;
      f.live[i] = f.live.back();
      f.live.pop_back();
    } else if (which < 17) {
      BodyHandle h = f.live[r.Int(0, static_cast<int>(f.live.size()) - 1)];
      f.mirror[h].shape = r.AnyShape();
      f.world.SetShape(h, f.mirror[h].shape);
    } else if (which < 18) {
      BodyHandle h = f.live[r.Int(0, static_cast<int>(f.live.size()) - 1)];
      f.mirror[h].category = r.Bits();
      f.mirror[h].mask = r.Bits();
      f.world.SetFilter(h, f.mirror[h].category, f.mirror[h].mask);
    } else {
      BodyDesc d = RandomBody(r, f.next_id++, side);
      BodyHandle h = f.world.Add(d);
      Mirror(f, h, d);
      f.live.push_back(h);
    }
    if (validate_each) {
      ASSERT_TRUE(f.world.Validate()) << "seed " << kSeed << " op " << k;
    }
  }
  ASSERT_TRUE(f.world.Validate()) << "seed " << kSeed;
}

// Brute force: every hit of one query on the live bodies, sorted by (distance, id).
std::vector<QueryHit> BruteForce(const Fixture& f, const Query& q) {
  std::vector<BodyDesc> bodies;
  for (BodyHandle h : f.live) bodies.push_back(f.mirror[h]);
  return testing::BruteForce(bodies, q);
}

Query RandomQuery(Random& r, float side) {
  Query q;
  // Every field is drawn whatever the kind, so the draws stay in one order.
  const int kind = r.Int(0, 4);
  q.mode = static_cast<CollectMode>(r.Int(0, 2));
  q.max_hits = r.Int(0, 3) == 0 ? r.Int(1, 4) : 256;
  const Ray ray{r.InCube(side), r.UnitVector(), r.Uniform(0.5f, side * 0.4f)};
  const float radius = r.Int(0, 5) == 0 ? 0.0f : r.Uniform(0.05f, 3.0f);
  const Shape shape = r.AnyShape();
  const Pose pose{r.Rotation(), r.InCube(side)};
  Vec3 c = r.InCube(side);
  Vec3 e{r.Uniform(0, 4), r.Uniform(0, 4), r.Uniform(0, 4)};
  const Aabb region{c - e, c + e};
  const bool detail = r.Int(0, 1) == 1;
  q.shape_query = testing::ShapeQueryOfKind(kind, ray, radius, shape, pose, detail, region);
  q.filter.category = r.Bits();
  q.filter.mask = r.Bits();
  return q;
}

std::string Describe(const Query& q, int index) {
  char buf[256];
  const Ray ray = testing::DescribedPath(q);
  std::snprintf(buf, sizeof buf, "seed %u query %d kind %d mode %d ray (%g %g %g)->(%g %g %g) %g",
                kSeed, index, static_cast<int>(q.shape_query.index()), static_cast<int>(q.mode),
                ray.origin.x, ray.origin.y, ray.origin.z, ray.direction.x, ray.direction.y,
                ray.direction.z, ray.max_distance);
  return buf;
}

// Runs `count` random queries one by one and as a batch (two RunBatch calls, the second
// appending to the answers of the first); checks both against brute force.
void CheckQueries(const Fixture& f, Random& r, float side, int count, int* checked) {
  std::vector<Query> queries;
  std::vector<std::vector<uint64_t>> excluded(count);
  for (int i = 0; i < count; ++i) {
    queries.push_back(RandomQuery(r, side));
    if (r.Int(0, 9) == 0 && !f.live.empty()) {
      for (int k = 0; k < 3; ++k) {
        excluded[i].push_back(f.mirror[f.live[r.Int(0, static_cast<int>(f.live.size()) - 1)]].id);
      }
      queries[i].filter.excluded_ids = excluded[i];
    }
  }
  std::vector<QueryResult> results;
  std::vector<QueryHit> hits;
  const std::span<const Query> all(queries);
  const size_t half = queries.size() / 2;
  RunBatch(CurrentTree(f.world), all.first(half), &results, &hits);
  RunBatch(CurrentTree(f.world), all.subspan(half), &results, &hits);
  ASSERT_EQ(results.size(), queries.size());
  for (int i = 0; i < count; ++i) {
    const Query& q = queries[i];
    std::vector<QueryHit> expected = BruteForce(f, q);
    const QueryResult& got = results[i];
    const QueryHit* got_hits = hits.data() + got.first_hit;
    SCOPED_TRACE(Describe(q, i));
    testing::ExpectAnswer(q, expected, got, got_hits);
    if (::testing::Test::HasFatalFailure()) return;
    // The single-query entry point agrees with the batch.
    std::vector<QueryHit> single;
    QueryResult one = RunQuery(CurrentTree(f.world), q, &single);
    ASSERT_EQ(one.hit_count, got.hit_count);
    for (uint32_t k = 0; k < one.hit_count; ++k) {
      EXPECT_EQ(single[k].body_id, got_hits[k].body_id);
    }
    ++*checked;
  }
}

struct SceneCase {
  int bodies;
  float side;
  bool bulk;
  int rounds;
  int queries_per_round;
  bool validate_each;
  float fat_margin = 0.1f;
};

class QueryEngineDifferential : public ::testing::TestWithParam<SceneCase> {};

TEST_P(QueryEngineDifferential, MatchesBruteForceThroughMovesRemovalsAndReinsertions) {
  const SceneCase& c = GetParam();
  Random r(kSeed + c.bodies);
  Fixture f(c.fat_margin);
  Populate(f, r, c.bodies, c.side, c.bulk);
  ASSERT_TRUE(f.world.Validate());
  int checked = 0;
  // Under a sanitizer the brute force over every body costs tens of times more; the moves,
  // refits and rebuilds between rounds (the tree code a sanitizer checks) all still run.
  const int queries = testing::ScaledForSanitizers(c.queries_per_round, 40);
  for (int round = 0; round < c.rounds; ++round) {
    CheckQueries(f, r, c.side, queries, &checked);
    if (HasFatalFailure()) return;
    Mutate(f, r, c.side, c.validate_each);
    if (HasFatalFailure()) return;
    // Moves and shape changes are exact again after FinishUpdates (the refit of the marked
    // leaves, maybe a rebuild), which every batch ends with; Validate checks every box of the
    // query form is exact every other round.
    f.world.FinishUpdates();
    if (round % 2 == 1) {
      ASSERT_TRUE(f.world.Validate());
    }
    if (round == c.rounds / 2) {
      f.world.Optimize();
      ASSERT_TRUE(f.world.Validate());
    }
  }
  std::printf("checked %d queries against brute force on %d bodies\n", checked, c.bodies);
}

INSTANTIATE_TEST_SUITE_P(Scenes, QueryEngineDifferential,
                         ::testing::Values(SceneCase{1000, 40.f, false, 20, 2500, true},
                                           SceneCase{1000, 25.f, true, 20, 2500, false},
                                           SceneCase{10000, 90.f, true, 10, 4000, false},
                                           SceneCase{50000, 160.f, true, 4, 2000, false},
                                           // Tight leaves: each leaf box is the body's own bounds.
                                           SceneCase{1000, 40.f, false, 10, 2500, false, 0.0f},
                                           SceneCase{10000, 90.f, true, 4, 2000, false, 0.0f}),
                         [](const ::testing::TestParamInfo<SceneCase>& info) {
                           return std::to_string(info.param.bodies) +
                                  (info.param.bulk ? "_bulk" : "_incremental") +
                                  (info.param.fat_margin == 0.0f ? "_margin0" : "");
                         });

TEST(QueryEngine, EmptyWorldHitsNothing) {
  CollisionWorld world;
  ClosestHitCollector c(10.0f);
  Raycast(world, Ray{{0, 0, 0}, {1, 0, 0}, 10.0f}, QueryFilter{}, c);
  EXPECT_FALSE(c.has_hit());
}

TEST(QueryEngine, ClosestTieAtEqualDistanceGoesToTheSmallerId) {
  CollisionWorld world;
  // Two identical spheres at the same place: the ray reaches both at the same distance.
  world.Add(BodyDesc{.id = 7, .shape = Sphere{1.0f}, .pose = Pose{{}, {5, 0, 0}}});
  world.Add(BodyDesc{.id = 3, .shape = Sphere{1.0f}, .pose = Pose{{}, {5, 0, 0}}});
  ClosestHitCollector c(100.0f);
  Raycast(world, Ray{{0, 0, 0}, {1, 0, 0}, 100.0f}, QueryFilter{}, c);
  ASSERT_TRUE(c.has_hit());
  EXPECT_EQ(c.hit().body_id, 3u);
  EXPECT_FLOAT_EQ(c.hit().distance, 4.0f);
}

TEST(QueryEngine, RayStartingInsideHitsAtZeroBeforeAnythingElse) {
  CollisionWorld world;
  world.Add(BodyDesc{.id = 1, .shape = Box{{1, 1, 1}}, .pose = Pose{{}, {3, 0, 0}}});
  world.Add(BodyDesc{.id = 2, .shape = Sphere{2.0f}, .pose = Pose{{}, {0, 0, 0}}});
  ClosestHitCollector c(100.0f);
  Raycast(world, Ray{{0.5f, 0, 0}, {1, 0, 0}, 100.0f}, QueryFilter{}, c);
  ASSERT_TRUE(c.has_hit());
  EXPECT_EQ(c.hit().body_id, 2u);
  EXPECT_EQ(c.hit().distance, 0.0f);
  EXPECT_TRUE(c.hit().start_overlapping);
  EXPECT_EQ(c.hit().normal, (Vec3{-1, 0, 0}));
}

TEST(QueryEngine, FilterBitsAndExclusionsAreHonouredBothWays) {
  CollisionWorld world;
  world.Add(BodyDesc{
      .id = 1, .shape = Sphere{1}, .pose = Pose{{}, {5, 0, 0}}, .category = 2, .mask = ~0u});
  world.Add(BodyDesc{
      .id = 2, .shape = Sphere{1}, .pose = Pose{{}, {10, 0, 0}}, .category = 1, .mask = 4});
  world.Add(BodyDesc{.id = 3, .shape = Sphere{1}, .pose = Pose{{}, {15, 0, 0}}});
  Ray ray{{0, 0, 0}, {1, 0, 0}, 100};
  auto first = [&](const QueryFilter& filter) -> uint64_t {
    ClosestHitCollector c(100.0f);
    Raycast(world, ray, filter, c);
    return c.has_hit() ? c.hit().body_id : 0;
  };
  EXPECT_EQ(first(QueryFilter{}), 1u);
  // The query's mask excludes category 2: body 1 is skipped.
  EXPECT_EQ(first(QueryFilter{.category = ~0u, .mask = 1}), 2u);
  // Body 2's mask lets only query category 4 hit it.
  EXPECT_EQ(first(QueryFilter{.category = 1, .mask = 1}), 3u);
  EXPECT_EQ(first(QueryFilter{.category = 4, .mask = 1}), 2u);
  uint64_t excluded[] = {1, 2};
  EXPECT_EQ(first(QueryFilter{.excluded_ids = excluded}), 3u);
}

TEST(AllHitsCollector, KeepsTheBestHitsAndReportsTruncation) {
  std::vector<QueryHit> out;
  AllHitsCollector c(100.0f, 2, &out);
  c.Add(QueryHit{.body_id = 5, .distance = 3});
  c.Add(QueryHit{.body_id = 4, .distance = 1});
  EXPECT_FALSE(c.truncated());
  EXPECT_EQ(c.MaxDistance(), 100.0f);  // full, but not yet known to be truncated
  c.Add(QueryHit{.body_id = 9, .distance = 2});
  EXPECT_TRUE(c.truncated());
  EXPECT_EQ(c.MaxDistance(), 2.0f);
  c.Add(QueryHit{.body_id = 1, .distance = 2});  // ties at 2 with a smaller id: replaces 9
  c.Finish();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].body_id, 4u);
  EXPECT_EQ(out[1].body_id, 1u);
}

}  // namespace
}  // namespace collide
