// AnswerQueries spread over a WorkerPool (scene/scene_query.h, QuerySplit): on random batches of
// every kind and mode, with past ticks, interpolations and ticks not retained in the middle, the
// statuses, results and hits are those of the one-thread path, field for field and in order,
// for several pool sizes and chunkings; present-tick answers also agree with the brute force
// (tests/query/brute_force.h). Readers sharing one pool run while a writer moves bodies.

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/worker_pool.h"
#include "history/past_tick.h"
#include "query/batch.h"
#include "query/brute_force.h"
#include "query/run_query.h"
#include "scene/scene.h"
#include "scene/scene_query.h"
#include "scene/update_batch.h"

namespace collide {
namespace {

constexpr uint32_t kSeed = 20261127;
constexpr float kSide = 60.0f;
constexpr int kBodies = 1500;
// Ticks 1..kTicks are applied; the scene retains the last kHistory of them.
constexpr uint64_t kTicks = 8;
constexpr uint32_t kHistory = 4;

class Random {
 public:
  explicit Random(uint32_t seed) : rng_(seed) {}
  float Uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng_); }
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  Vec3 InCube(float side) { return {Uniform(0, side), Uniform(0, side), Uniform(0, side)}; }
  Vec3 UnitVector() {
    while (true) {
      Vec3 v{Uniform(-1, 1), Uniform(-1, 1), Uniform(-1, 1)};
      const float l = Length(v);
      if (l > 0.1f && l <= 1.0f) return v / l;
    }
  }
  Quat Rotation() {
    if (Int(0, 3) == 0) return Quat::Identity();
    const Quat q{Uniform(-1, 1), Uniform(-1, 1), Uniform(-1, 1), Uniform(-1, 1)};
    return Length(q) > 0.1f ? Normalize(q) : Quat::Identity();
  }
  Shape AnyShape() {
    switch (Int(0, 2)) {
      case 0:
        return Sphere{Uniform(0.1f, 1.5f)};
      case 1:
        return Box{Vec3{Uniform(0.1f, 1.2f), Uniform(0.1f, 1.2f), Uniform(0.1f, 1.2f)}};
      default:
        return Capsule{Uniform(0.1f, 0.8f), Uniform(0.0f, 1.2f)};
    }
  }
  uint32_t Bits() { return Int(0, 3) == 0 ? (1u << Int(0, 3)) : ~0u; }

 private:
  std::mt19937 rng_;
};

// A scene of kBodies random bodies (some static) at tick 1, a tenth of them moved in each of
// ticks 2..kTicks.
void MakeScene(Random& r, Scene* scene) {
  UpdateBatch create;
  create.tick = 1;
  for (int i = 0; i < kBodies; ++i) {
    create.ops.push_back(
        UpsertOp(BodyDesc{.id = static_cast<uint64_t>(i) * 7 + 1,
                          .shape = r.AnyShape(),
                          .pose = Pose{.rotation = r.Rotation(), .position = r.InCube(kSide)},
                          .category = r.Bits(),
                          .kind = r.Int(0, 4) == 0 ? BodyKind::kStatic : BodyKind::kDynamic}));
  }
  ASSERT_TRUE(scene->Apply(create).ok());
  for (uint64_t t = 2; t <= kTicks; ++t) {
    UpdateBatch batch;
    batch.tick = t;
    for (int k = 0; k < kBodies / 10; ++k) {
      const auto id = static_cast<uint64_t>(r.Int(0, kBodies - 1)) * 7 + 1;
      bool seen = false;
      for (const UpdateOp& op : batch.ops) seen = seen || op.body_id == id;
      if (seen || scene->GetBody(id)->kind == BodyKind::kStatic) continue;
      batch.ops.push_back(
          SetPoseOp(id, Pose{.rotation = r.Rotation(), .position = r.InCube(kSide)}));
    }
    ASSERT_TRUE(scene->Apply(batch).ok()) << t;
  }
}

// A random query of any kind and mode; about one in eight names a past tick (one in four of
// those with a fraction), one in twenty a tick not retained.
Query RandomQuery(Random& r) {
  Query q;
  const int kind = r.Int(0, 4);
  q.mode = static_cast<CollectMode>(r.Int(0, 2));
  q.max_hits = r.Int(0, 3) == 0 ? static_cast<uint32_t>(r.Int(1, 4)) : 64;
  const Ray ray{r.InCube(kSide), r.UnitVector(), r.Uniform(0.5f, kSide * 0.6f)};
  const float radius = r.Int(0, 5) == 0 ? 0.0f : r.Uniform(0.05f, 3.0f);
  const Shape shape = r.AnyShape();
  const Pose pose{r.Rotation(), r.InCube(kSide)};
  const Vec3 c = r.InCube(kSide);
  const Vec3 e{r.Uniform(0, 4), r.Uniform(0, 4), r.Uniform(0, 4)};
  const bool detail = r.Int(0, 1) == 1;
  q.shape_query = testing::ShapeQueryOfKind(static_cast<size_t>(kind), ray, radius, shape, pose,
                                            detail, Aabb{c - e, c + e});
  q.filter.mask = r.Bits();
  const int when = r.Int(0, 39);
  if (when < 2) {
    q.at_tick = static_cast<uint64_t>(r.Int(0, static_cast<int>(kTicks - kHistory)));
  } else if (when < 5) {
    q.at_tick = kTicks - static_cast<uint64_t>(r.Int(0, kHistory - 1));
  } else if (when < 6) {
    q.at_tick = kTicks - static_cast<uint64_t>(r.Int(1, kHistory - 1));
    q.tick_fraction = r.Uniform(0.0f, 0.99f);
  }
  return q;
}

struct Answer {
  uint64_t version = 0;
  std::vector<absl::Status> status;
  std::vector<QueryResult> results;
  std::vector<QueryHit> hits;
};

Answer AnswerAll(const Scene& scene, const std::vector<Query>& queries,
                 const std::vector<size_t>& positions, const QuerySplit& split = {}) {
  Answer a;
  a.version = AnswerQueries(scene, queries, positions, &a.status, &a.results, &a.hits, split);
  return a;
}

// `got` is `want` field for field: statuses (code and message), results, hits in order.
void ExpectSame(const Answer& want, const Answer& got, const std::string& what) {
  ASSERT_EQ(got.version, want.version) << what;
  ASSERT_EQ(got.status.size(), want.status.size()) << what;
  ASSERT_EQ(got.results.size(), want.results.size()) << what;
  ASSERT_EQ(got.hits.size(), want.hits.size()) << what;
  for (size_t i = 0; i < want.status.size(); ++i) {
    EXPECT_EQ(got.status[i], want.status[i]) << what << " query " << i;
    EXPECT_EQ(got.results[i].first_hit, want.results[i].first_hit) << what << " query " << i;
    EXPECT_EQ(got.results[i].hit_count, want.results[i].hit_count) << what << " query " << i;
    EXPECT_EQ(got.results[i].truncated, want.results[i].truncated) << what << " query " << i;
  }
  for (size_t h = 0; h < want.hits.size(); ++h) {
    const QueryHit& a = got.hits[h];
    const QueryHit& b = want.hits[h];
    ASSERT_TRUE(a.body_id == b.body_id && a.distance == b.distance && a.depth == b.depth &&
                a.point == b.point && a.normal == b.normal &&
                a.start_overlapping == b.start_overlapping)
        << what << " hit " << h << ": body " << a.body_id << " vs " << b.body_id;
  }
}

class SceneQuerySplit : public ::testing::Test {
 protected:
  void SetUp() override {
    Random r(kSeed);
    MakeScene(r, &scene_);
  }
  Scene scene_{"split", SceneOptions{.history_ticks = kHistory}};
};

TEST_F(SceneQuerySplit, EveryPoolSizeAndChunkingAnswersAsOneThread) {
  Random r(kSeed + 1);
  // Ordinary splits (64 queries and more, chunks of 32 and more) and the finest one (any batch
  // of 2, chunks of 1 query), which puts every chunk boundary next to every kind of query.
  const std::vector<QuerySplit> shapes = {
      QuerySplit{}, QuerySplit{.min_queries = 2, .min_chunk = 1, .chunks_per_thread = 4}};
  std::vector<std::unique_ptr<WorkerPool>> pools;
  for (uint32_t threads : {1u, 2u, 3u, 8u}) pools.push_back(std::make_unique<WorkerPool>(threads));
  int failed_ticks = 0;
  for (size_t count :
       {size_t{1}, size_t{2}, size_t{63}, size_t{64}, size_t{65}, size_t{500}, size_t{4096}}) {
    std::vector<Query> queries;
    std::vector<size_t> positions;
    for (size_t i = 0; i < count; ++i) {
      queries.push_back(RandomQuery(r));
      // As the service passes them: the request's positions, some of its queries (those that
      // failed conversion) missing.
      positions.push_back(i + i / 5);
    }
    const Answer want = AnswerAll(scene_, queries, positions);
    for (const absl::Status& s : want.status) failed_ticks += !s.ok();
    for (const auto& pool : pools) {
      for (size_t s = 0; s < shapes.size(); ++s) {
        QuerySplit split = shapes[s];
        split.pool = pool.get();
        ExpectSame(want, AnswerAll(scene_, queries, positions, split),
                   "seed " + std::to_string(kSeed) + " count " + std::to_string(count) +
                       " threads " + std::to_string(pool->threads()) + " split " +
                       std::to_string(s));
        if (HasFatalFailure()) return;
      }
    }
  }
  // The batches did hold queries whose tick is not retained, between the others.
  EXPECT_GT(failed_ticks, 10);
}

// The split path against the brute force over the scene's bodies now, for present-tick queries,
// and against RunQuery one by one for the others.
TEST_F(SceneQuerySplit, ASplitBatchMatchesTheBruteForce) {
  Random r(kSeed + 2);
  std::vector<Query> queries;
  for (int i = 0; i < 1000; ++i) queries.push_back(RandomQuery(r));
  WorkerPool pool(3);
  const Answer got = AnswerAll(scene_, queries, {}, QuerySplit{.pool = &pool});
  std::vector<BodyDesc> bodies;
  for (int i = 0; i < kBodies; ++i) {
    const std::optional<BodyState> b = scene_.GetBody(static_cast<uint64_t>(i) * 7 + 1);
    ASSERT_TRUE(b.has_value());
    bodies.push_back(BodyDesc{.id = b->id,
                              .shape = b->shape,
                              .pose = b->pose,
                              .category = b->category,
                              .mask = b->mask,
                              .kind = b->kind});
  }
  int checked = 0;
  scene_.ReadWithHistory([&](const CollisionWorld& world, const PoseHistory& history, uint64_t) {
    for (size_t i = 0; i < queries.size(); ++i) {
      const Query& q = queries[i];
      if (!got.status[i].ok()) {
        EXPECT_EQ(got.status[i].code(), absl::StatusCode::kOutOfRange) << i;
        EXPECT_EQ(got.results[i].hit_count, 0u) << i;
        continue;
      }
      SCOPED_TRACE("seed " + std::to_string(kSeed + 2) + " query " + std::to_string(i));
      if (!q.at_tick.has_value() || (*q.at_tick == history.tick() && q.tick_fraction == 0.0f)) {
        testing::ExpectAnswer(q, testing::BruteForce(bodies, q), got.results[i],
                              got.hits.data() + got.results[i].first_hit);
      } else {
        std::vector<QueryHit> single;
        const std::optional<TickPoint> at = PastTickOf(history, q);
        ASSERT_TRUE(at.has_value());
        const QueryResult one = RunQuery(PastTick(world, history, *at), q, &single);
        ASSERT_EQ(got.results[i].hit_count, one.hit_count);
        for (uint32_t h = 0; h < one.hit_count; ++h) {
          EXPECT_EQ(got.hits[got.results[i].first_hit + h].body_id,
                    single[one.first_hit + h].body_id);
        }
      }
      ++checked;
    }
  });
  EXPECT_GT(checked, 900);
}

// Batches of past-tick queries only, in runs at one moment (each run one RunBatch over its
// PastTick) from one query to dozens, some between ticks: split over every pool, they answer as
// one thread, and each query as RunQuery over its own tick alone.
TEST_F(SceneQuerySplit, PastTickRunsAnswerAsOneByOneOnEveryPool) {
  Random r(kSeed + 3);
  std::vector<Query> queries;
  while (queries.size() < 600) {
    // A retained tick before the current one (kTicks), maybe with a fraction.
    const auto tick = kTicks - static_cast<uint64_t>(r.Int(1, kHistory - 1));
    const float fraction = r.Int(0, 2) == 0 ? r.Uniform(0.0f, 0.99f) : 0.0f;
    const int run = r.Int(0, 3) == 0 ? r.Int(10, 60) : r.Int(1, 3);
    for (int k = 0; k < run; ++k) {
      Query q = RandomQuery(r);
      q.at_tick = tick;
      q.tick_fraction = fraction;
      queries.push_back(q);
    }
  }
  const Answer want = AnswerAll(scene_, queries, {});
  for (uint32_t threads : {2u, 3u}) {
    WorkerPool pool(threads);
    for (const QuerySplit& shape :
         {QuerySplit{.pool = &pool},
          QuerySplit{.pool = &pool, .min_queries = 2, .min_chunk = 1, .chunks_per_thread = 4}}) {
      ExpectSame(want, AnswerAll(scene_, queries, {}, shape),
                 "seed " + std::to_string(kSeed + 3) + " threads " + std::to_string(threads) +
                     " min_chunk " + std::to_string(shape.min_chunk));
      if (HasFatalFailure()) return;
    }
  }
  scene_.ReadWithHistory([&](const CollisionWorld& world, const PoseHistory& history, uint64_t) {
    for (size_t i = 0; i < queries.size(); ++i) {
      SCOPED_TRACE("seed " + std::to_string(kSeed + 3) + " query " + std::to_string(i));
      ASSERT_TRUE(want.status[i].ok()) << want.status[i];
      const std::optional<TickPoint> at = PastTickOf(history, queries[i]);
      ASSERT_TRUE(at.has_value());
      std::vector<QueryHit> single;
      const QueryResult one = RunQuery(PastTick(world, history, *at), queries[i], &single);
      ASSERT_EQ(want.results[i].hit_count, one.hit_count);
      EXPECT_EQ(want.results[i].truncated, one.truncated);
      for (uint32_t h = 0; h < one.hit_count; ++h) {
        const QueryHit& a = want.hits[want.results[i].first_hit + h];
        const QueryHit& b = single[one.first_hit + h];
        EXPECT_EQ(a.body_id, b.body_id) << h;
        EXPECT_EQ(a.distance, b.distance) << h;
      }
    }
  });
}

// Readers answering split batches on one shared pool while a writer moves bodies: each answer
// is one version's (the one-thread answer of the same version, when the version did not move
// between the two), and the last rounds, after the writer stops, are all compared.
TEST_F(SceneQuerySplit, ReadersShareOnePoolWhileAWriterMovesBodies) {
  WorkerPool pool(3);
  std::atomic<bool> writing{true};
  std::thread writer([&] {
    Random r(kSeed + 3);
    for (int b = 0; b < 60; ++b) {
      UpdateBatch batch;
      for (int k = 0; k < 50; ++k) {
        const auto id = static_cast<uint64_t>(r.Int(0, kBodies - 1)) * 7 + 1;
        bool seen = false;
        for (const UpdateOp& op : batch.ops) seen = seen || op.body_id == id;
        if (seen || scene_.GetBody(id)->kind == BodyKind::kStatic) continue;
        batch.ops.push_back(SetPoseOp(id, Pose{.position = r.InCube(kSide)}));
      }
      EXPECT_TRUE(scene_.Apply(batch).ok());
    }
    writing = false;
  });
  std::atomic<int> compared{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&, t] {
      Random r(kSeed + 10 + static_cast<uint32_t>(t));
      int after = 0;
      while (after < 3) {
        if (!writing) ++after;
        std::vector<Query> queries;
        for (int i = 0; i < 300; ++i) {
          Query q = RandomQuery(r);
          q.at_tick.reset();  // the writer's batches carry no tick: the window stays
          q.tick_fraction = 0.0f;
          queries.push_back(q);
        }
        const Answer split = AnswerAll(scene_, queries, {}, QuerySplit{.pool = &pool});
        const Answer one = AnswerAll(scene_, queries, {});
        if (split.version != one.version) continue;
        ExpectSame(one, split, "reader " + std::to_string(t));
        compared.fetch_add(1);
      }
    });
  }
  writer.join();
  for (std::thread& reader : readers) reader.join();
  EXPECT_GE(compared.load(), 9);
}

}  // namespace
}  // namespace collide
