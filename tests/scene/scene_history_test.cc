// Differential tests of past-tick queries: a scene is driven through many ticks of random moves
// (about 10% of the bodies per tick, some far), creations, removals, re-creations of removed ids
// (slot reuse), replacements and filter changes, while an independent oracle replays the same
// batches into a plain id -> body map and keeps a copy of it at the end of every tick. Then, for
// every retained tick, random queries of every kind and mode run at that tick through the scene
// and by brute force over the oracle's copy (the same narrow-phase functions, so hits agree bit
// for bit), and interpolated queries against brute force over lerped poses.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "base/worker_pool.h"
#include "history/past_tick.h"
#include "history/run_at_tick.h"
#include "query/batch.h"
#include "query/brute_force.h"
#include "query/collector.h"
#include "query/query_engine.h"
#include "query/run_query.h"
#include "scene/scene.h"
#include "scene/scene_query.h"

namespace collide {
namespace {

constexpr uint32_t kSeed = 20261123;

// One body as the oracle keeps it: the client's description, normalised the way the scene
// normalises it, and its incarnation (an upsert of an existing id is a new body).
struct OracleBody {
  BodyDesc desc;
  uint64_t incarnation = 0;
};
using OracleWorld = std::map<uint64_t, OracleBody>;

class Random {
 public:
  explicit Random(uint32_t seed) : rng_(seed) {}
  float Uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng_); }
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  Vec3 InCube(float side) { return {Uniform(0, side), Uniform(0, side), Uniform(0, side)}; }
  Vec3 UnitVector() {
    while (true) {
      Vec3 v{Uniform(-1, 1), Uniform(-1, 1), Uniform(-1, 1)};
      float l = Length(v);
      if (l > 0.1f && l <= 1.0f) return v / l;
    }
  }
  Quat Rotation() {
    if (Int(0, 3) == 0) return Quat::Identity();
    Quat q{Uniform(-1, 1), Uniform(-1, 1), Uniform(-1, 1), Uniform(-1, 1)};
    return Length(q) > 0.1f ? Normalize(q) : Quat::Identity();
  }
  Shape AnyShape() {
    switch (Int(0, 2)) {
      case 0:
        return Sphere{Uniform(0.1f, 1.5f)};
      case 1:
        return Box{Vec3{Uniform(0.1f, 1.2f), Int(0, 9) == 0 ? 0.0f : Uniform(0.1f, 1.2f),
                        Uniform(0.1f, 1.2f)}};
      default:
        return Capsule{Uniform(0.1f, 0.8f), Uniform(0.0f, 1.2f)};
    }
  }
  uint32_t Bits() { return Int(0, 3) == 0 ? (1u << Int(0, 3)) : ~0u; }

 private:
  std::mt19937 rng_;
};

// Drives a scene and the oracle through the same random ticks.
class HistoryDriver {
 public:
  // With a `pool`, the scene ends each batch on it (Scene::Apply's pool).
  HistoryDriver(uint32_t seed, int bodies, float side, uint32_t history_ticks,
                WorkerPool* pool = nullptr)
      : rng_(seed),
        side_(side),
        history_ticks_(history_ticks),
        pool_(pool),
        scene_("history", SceneOptions{.history_ticks = history_ticks}) {
    UpdateBatch batch;
    batch.tick = 0;
    for (int i = 0; i < bodies; ++i) batch.ops.push_back(NewBody(next_id_++));
    Apply(batch);
    EndTick();
  }

  Scene& scene() { return scene_; }
  Random& rng() { return rng_; }
  uint64_t tick() const { return tick_; }
  float side() const { return side_; }
  // The oracle's world at the end of tick t.
  const OracleWorld& At(uint64_t t) const { return ends_.at(t); }
  const OracleWorld& Now() const { return now_; }

  // Runs one tick: one or more batches (the later ones amend it), and now and then a jump over
  // a few empty ticks (over `jump` - 1 when `jump` is not 0). With `created`, the tick's batches
  // also create that many new bodies between them (a bulk load amid the game). With `churned`,
  // the first batch also refilters or removes (one in two) each of that many bodies created
  // last.
  void Step(uint64_t jump = 0, int created = 0, int churned = 0) {
    const uint64_t next = tick_ + (jump > 0 ? jump : rng_.Int(0, 9) == 0 ? rng_.Int(2, 4) : 1);
    const int batches = rng_.Int(1, 3);
    for (int b = 0; b < batches; ++b) {
      UpdateBatch batch;
      if (b == 0 || rng_.Chance(0.5)) batch.tick = next;
      Fill(&batch, b == 0 ? 0.10 : 0.02);
      if (b == 0) Churn(&batch, churned);
      const int share = b + 1 == batches ? created : rng_.Int(0, created);
      for (int k = 0; k < share; ++k) batch.ops.push_back(NewBody(next_id_++));
      created -= share;
      Apply(batch);
      if (b == 0) {
        // Ticks skipped over end with the state of the tick before them.
        // (Only those the window can still hold: a jump may cross billions.)
        const uint64_t from =
            std::max(tick_ + 1, next > history_ticks_ ? next - history_ticks_ : 0);
        for (uint64_t k = from; k < next; ++k) ends_[k] = ends_.at(tick_);
        tick_ = next;
      }
    }
    EndTick();
  }

 private:
  UpdateOp NewBody(uint64_t id) {
    const float r = rng_.Uniform(0.0f, 1.0f);
    BodyDesc desc{.id = id,
                  .shape = rng_.AnyShape(),
                  .pose = Pose{rng_.Rotation(), rng_.InCube(side_)},
                  .category = rng_.Bits(),
                  .mask = rng_.Bits(),
                  .kind = r < 0.25f ? BodyKind::kStatic : BodyKind::kDynamic};
    return UpsertOp(desc, id);
  }

  // Refilters or removes (one in two) each of the `n` bodies created last.
  void Churn(UpdateBatch* batch, int n) {
    for (auto it = now_.rbegin(); it != now_.rend() && n > 0; ++it, --n) {
      if (n % 2 == 0) {
        batch->ops.push_back(SetFilterOp(it->first, rng_.Bits(), rng_.Bits()));
      } else {
        batch->ops.push_back(RemoveOp(it->first));
        removed_.push_back(it->first);
      }
    }
  }

  // Adds random operations to `batch`: about `move_fraction` of the bodies move (a few far),
  // and a few are created, removed, re-created, replaced or refiltered.
  void Fill(UpdateBatch* batch, double move_fraction) {
    std::vector<uint64_t> ids;
    for (const auto& [id, body] : now_) ids.push_back(id);
    std::vector<bool> used(ids.size(), false);
    auto pick = [&]() -> int {
      for (int tries = 0; tries < 8 && !ids.empty(); ++tries) {
        int i = rng_.Int(0, static_cast<int>(ids.size()) - 1);
        if (!used[i]) {
          used[i] = true;
          return i;
        }
      }
      return -1;
    };
    const int moves = static_cast<int>(move_fraction * ids.size());
    for (int m = 0; m < moves; ++m) {
      int i = pick();
      if (i < 0) continue;
      const OracleBody& b = now_.at(ids[i]);
      Pose pose = b.desc.pose;
      if (rng_.Chance(0.02)) {
        pose.position = rng_.InCube(side_);  // a teleport: a far mover
      } else {
        pose.position = pose.position + rng_.UnitVector() * rng_.Uniform(0.0f, 0.3f);
      }
      if (rng_.Chance(0.3)) pose.rotation = rng_.Rotation();
      batch->ops.push_back(SetPoseOp(ids[i], pose));
    }
    const int structural = rng_.Int(0, 6);
    for (int k = 0; k < structural; ++k) {
      const int what = rng_.Int(0, 4);
      if (what == 0) {
        batch->ops.push_back(NewBody(next_id_++));
      } else if (what == 1 && !removed_.empty()) {
        // Re-create a removed id (its slot was likely given to another body meanwhile).
        const size_t j = rng_.Int(0, static_cast<int>(removed_.size()) - 1);
        batch->ops.push_back(NewBody(removed_[j]));
        removed_.erase(removed_.begin() + j);
      } else {
        int i = pick();
        if (i < 0) continue;
        if (what == 2) {
          batch->ops.push_back(RemoveOp(ids[i]));
          removed_.push_back(ids[i]);
        } else if (what == 3) {
          batch->ops.push_back(NewBody(ids[i]));  // a replacement
        } else {
          batch->ops.push_back(SetFilterOp(ids[i], rng_.Bits(), rng_.Bits()));
        }
      }
    }
  }

  void Apply(const UpdateBatch& batch) {
    absl::StatusOr<ApplyResult> applied =
        pool_ == nullptr
            ? scene_.Apply(batch)
            : scene_.Apply(
                  batch, {}, [](uint64_t) -> absl::StatusOr<uint64_t> { return 0; }, pool_);
    ASSERT_TRUE(applied.ok()) << applied.status();
    for (const UpdateOp& op : batch.ops) {
      switch (op.type) {
        case UpdateOpType::kUpsert: {
          BodyDesc desc{.id = op.body_id,
                        .shape = op.shape,
                        .pose = NormalizedPose(op.pose),
                        .category = op.category,
                        .mask = op.mask,
                        .kind = op.kind};
          now_[op.body_id] = OracleBody{desc, ++incarnations_};
          break;
        }
        case UpdateOpType::kSetPose:
          now_.at(op.body_id).desc.pose = NormalizedPose(op.pose);
          break;
        case UpdateOpType::kSetFilter:
          now_.at(op.body_id).desc.category = op.category;
          now_.at(op.body_id).desc.mask = op.mask;
          break;
        case UpdateOpType::kRemove:
          now_.erase(op.body_id);
          break;
      }
    }
  }

  void EndTick() { ends_[tick_] = now_; }

  Random rng_;
  float side_;
  uint32_t history_ticks_;
  WorkerPool* pool_;
  Scene scene_;
  OracleWorld now_;
  std::map<uint64_t, OracleWorld> ends_;
  std::vector<uint64_t> removed_;
  uint64_t next_id_ = 1;
  uint64_t incarnations_ = 0;
  uint64_t tick_ = 0;
};

// The oracle's bodies at `t` (with `fraction`, lerped towards t + 1 where the same body exists
// at both ends).
std::vector<BodyDesc> BodiesAt(const HistoryDriver& driver, uint64_t t, float fraction) {
  std::vector<BodyDesc> out;
  const OracleWorld& at = driver.At(t);
  for (const auto& [id, body] : at) {
    BodyDesc desc = body.desc;
    if (fraction > 0.0f) {
      const OracleWorld& next = driver.At(t + 1);
      auto it = next.find(id);
      if (it != next.end() && it->second.incarnation == body.incarnation) {
        desc.pose = LerpPose(body.desc.pose, it->second.desc.pose, fraction);
      }
    }
    out.push_back(desc);
  }
  return out;
}

// Every hit of `q` among `bodies`, by brute force, in (distance, id) order.
std::vector<QueryHit> BruteForce(const std::vector<BodyDesc>& bodies, const Query& q) {
  std::vector<QueryHit> hits;
  for (const BodyDesc& b : bodies) {
    if (!Accepts(q.filter, b.id, b.category, b.mask)) continue;
    QueryHit hit{.body_id = b.id};
    bool found = false;
    const auto* ray = std::get_if<RaycastQuery>(&q.shape_query);
    const auto* sphere = std::get_if<SphereCastQuery>(&q.shape_query);
    if (ray != nullptr || sphere != nullptr) {
      CastHit c;
      found = ray != nullptr ? Raycast(b.shape, b.pose, ray->ray, &c)
                             : SphereCast(b.shape, b.pose, sphere->ray, sphere->radius, &c);
      if (found) hit = internal::ToQueryHit(b.id, c);
    } else if (const auto* overlap = std::get_if<OverlapQuery>(&q.shape_query)) {
      if (!overlap->detail) {
        found = Overlap(b.shape, b.pose, overlap->shape, overlap->pose);
      } else {
        Penetration p;
        found = Penetrate(b.shape, b.pose, overlap->shape, overlap->pose, &p);
        hit.depth = p.depth;
        hit.point = p.point;
        hit.normal = p.normal;
      }
    } else if (const auto* within = std::get_if<WithinRadiusQuery>(&q.shape_query)) {
      ClosestPointResult c = ClosestPoint(b.shape, b.pose, within->point);
      found = c.signed_distance <= within->radius;
      hit.distance = std::max(c.signed_distance, 0.0f);
      hit.point = c.point;
      hit.normal = c.normal;
    } else {
      found = Overlaps(Bounds(b.shape, b.pose), std::get<RegionQuery>(q.shape_query).region);
    }
    if (found) hits.push_back(hit);
  }
  std::sort(hits.begin(), hits.end(), HitBefore);
  return hits;
}

// A query of kind `kind` (ShapeQuery's index). Every field is drawn whatever the kind, so the
// draws stay in one order.
Query RandomQuery(Random& r, float side, size_t kind, CollectMode mode) {
  Query q;
  q.mode = mode;
  q.max_hits = static_cast<uint32_t>(r.Int(1, 40));
  q.filter.category = r.Bits();
  q.filter.mask = r.Bits();
  const Ray ray{
      .origin = r.InCube(side), .direction = r.UnitVector(), .max_distance = r.Uniform(1.0f, side)};
  const float radius = r.Uniform(0.0f, 2.5f);
  const Shape shape = r.AnyShape();
  const Pose pose{r.Rotation(), r.InCube(side)};
  const bool detail = r.Chance(0.5);
  const Vec3 c = r.InCube(side);
  const Vec3 h{r.Uniform(0.1f, 4.0f), r.Uniform(0.1f, 4.0f), r.Uniform(0.1f, 4.0f)};
  q.shape_query =
      testing::ShapeQueryOfKind(kind, ray, radius, shape, pose, detail, Aabb{c - h, c + h});
  return q;
}

std::string Describe(const QueryHit& h) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "{id %llu d %.9g depth %.9g}",
                static_cast<unsigned long long>(h.body_id), h.distance, h.depth);
  return buf;
}

bool SameHit(const QueryHit& a, const QueryHit& b) {
  return a.body_id == b.body_id && a.distance == b.distance && a.depth == b.depth &&
         a.point == b.point && a.normal == b.normal && a.start_overlapping == b.start_overlapping;
}

// Runs `q` through the scene and compares with brute force over the oracle at (t, fraction).
void CheckQuery(HistoryDriver& driver, Query q, uint64_t t, float fraction,
                const std::string& where) {
  q.at_tick = t;
  q.tick_fraction = fraction;
  std::vector<QueryHit> hits;
  QueryResult result;
  driver.scene().ReadWithHistory(
      [&](const CollisionWorld& world, const PoseHistory& history, uint64_t) {
        ASSERT_TRUE(CheckQueryTick(history, q, 0).ok());
        result = testing::RunQueryAtTick(world, history, q, &hits);
      });
  const std::vector<QueryHit> expected = BruteForce(BodiesAt(driver, t, fraction), q);
  const std::vector<QueryHit> got(hits.begin() + result.first_hit,
                                  hits.begin() + result.first_hit + result.hit_count);
  const auto* overlap = std::get_if<OverlapQuery>(&q.shape_query);
  SCOPED_TRACE(where + " kind " + std::to_string(q.shape_query.index()) + " mode " +
               std::to_string(static_cast<int>(q.mode)) + " detail " +
               std::to_string(overlap != nullptr && overlap->detail));
  switch (q.mode) {
    case CollectMode::kClosest:
      ASSERT_EQ(got.size(), expected.empty() ? 0u : 1u);
      if (!got.empty()) {
        EXPECT_TRUE(SameHit(got[0], expected[0]))
            << Describe(got[0]) << " vs " << Describe(expected[0]);
      }
      break;
    case CollectMode::kAny:
      ASSERT_EQ(got.size(), expected.empty() ? 0u : 1u);
      if (!got.empty()) {
        EXPECT_TRUE(std::any_of(expected.begin(), expected.end(),
                                [&](const QueryHit& e) { return SameHit(e, got[0]); }))
            << Describe(got[0]) << " is not a hit of brute force";
      }
      break;
    case CollectMode::kAll: {
      const size_t n = std::min<size_t>(expected.size(), q.max_hits);
      EXPECT_EQ(result.truncated, expected.size() > q.max_hits);
      ASSERT_EQ(got.size(), n);
      for (size_t i = 0; i < n; ++i) {
        EXPECT_TRUE(SameHit(got[i], expected[i]))
            << "hit " << i << ": " << Describe(got[i]) << " vs " << Describe(expected[i]);
      }
      break;
    }
  }
}

// Queries of every kind and mode at every retained tick (and interpolated between them).
void CheckEveryRetainedTick(HistoryDriver& driver, int queries_per_kind, const std::string& where) {
  const SceneStats stats = driver.scene().Stats();
  ASSERT_EQ(stats.tick, driver.tick());
  for (uint64_t t = stats.oldest_tick; t <= stats.tick; ++t) {
    for (int k = 0; k < 5; ++k) {
      for (int m = 0; m < 3; ++m) {
        for (int i = 0; i < queries_per_kind; ++i) {
          const Query q = RandomQuery(driver.rng(), driver.side(), static_cast<size_t>(k),
                                      static_cast<CollectMode>(m));
          const std::string at = where + " tick " + std::to_string(t);
          CheckQuery(driver, q, t, 0.0f, at);
          if (t < stats.tick) {
            const float f = driver.rng().Uniform(0.0f, 0.999f);
            CheckQuery(driver, q, t, f, at + " fraction " + std::to_string(f));
          }
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(SceneHistory, PastTickQueriesMatchBruteForceOverTheReplayedWorld) {
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  HistoryDriver driver(kSeed, 2000, 60.0f, 12);
  for (int step = 0; step < 40; ++step) {
    driver.Step();
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
    ASSERT_TRUE(driver.scene().Validate());
    if (step == 15 || step == 39) {
      CheckEveryRetainedTick(driver, 3, "step " + std::to_string(step));
      ASSERT_FALSE(::testing::Test::HasFatalFailure());
    }
  }
}

// The same with each batch ended on two threads at once (the history's index beside the trees'
// refit), as the server does with its query workers.
TEST(SceneHistory, PastTickQueriesMatchBruteForceWhenBatchesEndOnTwoThreads) {
  const uint32_t seed = kSeed + 7;
  SCOPED_TRACE("seed " + std::to_string(seed));
  WorkerPool pool(2);
  HistoryDriver driver(seed, 2000, 60.0f, 12, &pool);
  for (int step = 0; step < 30; ++step) {
    driver.Step();
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
    ASSERT_TRUE(driver.scene().Validate());
    if (step == 10 || step == 29) {
      CheckEveryRetainedTick(driver, 3, "step " + std::to_string(step));
      ASSERT_FALSE(::testing::Test::HasFatalFailure());
    }
  }
}

TEST(SceneHistory, PastTickQueriesMatchBruteForceInALargerSparserScene) {
  const uint32_t seed = kSeed + 1;
  SCOPED_TRACE("seed " + std::to_string(seed));
  HistoryDriver driver(seed, 5000, 150.0f, 8);
  for (int step = 0; step < 20; ++step) {
    driver.Step();
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
  }
  CheckEveryRetainedTick(driver, 2, "end");
}

// A window of 40 ticks is indexed by segments of 5 (pose_history.h): queries at every tick
// of several segments, at their first and last ticks, and interpolated across their boundaries,
// after bodies were created, removed and re-created inside them.
TEST(SceneHistory, PastTickQueriesMatchBruteForceAcrossSegmentsOfSeveralTicks) {
  const uint32_t seed = kSeed + 2;
  SCOPED_TRACE("seed " + std::to_string(seed));
  HistoryDriver driver(seed, 1500, 50.0f, 40);
  ASSERT_EQ(driver.scene().ReadWithHistory([](const CollisionWorld&, const PoseHistory& history,
                                              uint64_t) { return history.segment_ticks(); }),
            5u);
  for (int step = 0; step < 45; ++step) {
    driver.Step();
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
    if (step == 20) {
      CheckEveryRetainedTick(driver, 1, "step 20");
      ASSERT_FALSE(::testing::Test::HasFatalFailure());
    }
  }
  CheckEveryRetainedTick(driver, 2, "end");
}

// A jump over more empty ticks than the window drops every record at once (out of tick order
// in the ring); the bodies that did not move since are then found through the segment index
// and their states through the slots' oldest held records.
TEST(SceneHistory, PastTickQueriesMatchBruteForceAfterAJumpOverTheWholeWindow) {
  const uint32_t seed = kSeed + 3;
  SCOPED_TRACE("seed " + std::to_string(seed));
  HistoryDriver driver(seed, 1500, 50.0f, 16);
  for (int step = 0; step < 22; ++step) driver.Step();
  driver.Step(37);
  for (int step = 0; step < 6; ++step) {
    driver.Step();
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
  }
  CheckEveryRetainedTick(driver, 2, "after the jump");
  for (int step = 0; step < 12; ++step) driver.Step();
  CheckEveryRetainedTick(driver, 1, "later");
}

// Ticks that create more bodies than half the segment's copy close the segment (the next one
// copies them instead of indexing them as created: pose_history.h): queries at every retained
// tick, just after such a tick (the world's trees answer it), after empty ticks and once later
// segments have started, with bodies created, moved, removed and re-created around them.
TEST(SceneHistory, PastTickQueriesMatchBruteForceAroundTicksOfBulkCreations) {
  const uint32_t seed = kSeed + 4;
  SCOPED_TRACE("seed " + std::to_string(seed));
  HistoryDriver driver(seed, 600, 60.0f, 16);
  for (int step = 0; step < 6; ++step) driver.Step();
  driver.Step(/*jump=*/1, /*created=*/500);
  CheckEveryRetainedTick(driver, 1, "just after the first bulk tick");
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  driver.Step(/*jump=*/3, /*created=*/0, /*churned=*/120);
  CheckEveryRetainedTick(driver, 1, "after empty ticks and churn of the created bodies");
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  for (int step = 0; step < 10; ++step) {
    driver.Step(0, step % 4 == 1 ? 700 + 150 * step : 0, step % 4 == 2 ? 200 : 0);
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
    ASSERT_TRUE(driver.scene().Validate());
    if (step == 5) {
      CheckEveryRetainedTick(driver, 1, "step " + std::to_string(step));
      ASSERT_FALSE(::testing::Test::HasFatalFailure());
    }
  }
  CheckEveryRetainedTick(driver, 2, "end");
}

// Jumps of about 2^31 and 2^32 ticks, steps 2^29 ticks apart, and ordinary steps across the
// 2^30th tick past the base move the base the history counts its ticks from
// (PoseHistory::Rebase): every retained tick still answers exactly, with bodies created before
// and after each jump and then changed.
TEST(SceneHistory, PastTickQueriesMatchBruteForceAcrossJumpsOfBillionsOfTicks) {
  const uint32_t seed = kSeed + 5;
  SCOPED_TRACE("seed " + std::to_string(seed));
  HistoryDriver driver(seed, 800, 50.0f, 16);
  for (int step = 0; step < 8; ++step) driver.Step();
  // A jump to 30 ticks short of 2^30 past the base (tick 0), then ordinary steps: the base moves
  // while segments of the window are sealed with their anchors (which move with it).
  driver.Step(/*jump=*/(uint64_t{1} << 30) - 30 - driver.tick());
  for (int step = 0; step < 30; ++step) driver.Step(0, step == 3 ? 40 : 0, step == 6 ? 30 : 0);
  ASSERT_GT(driver.tick(), uint64_t{1} << 30);
  CheckEveryRetainedTick(driver, 2, "after the base moved under sealed segments");
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  driver.Step(/*jump=*/(uint64_t{1} << 31) + 5, /*created=*/300);
  for (int step = 0; step < 5; ++step) driver.Step(0, 0, step == 1 ? 80 : 0);
  CheckEveryRetainedTick(driver, 1, "after a jump of 2^31 + 5");
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  driver.Step(/*jump=*/(uint64_t{1} << 32) - 3);
  driver.Step(0, /*created=*/20);
  for (int step = 0; step < 3; ++step) driver.Step(/*jump=*/(uint64_t{1} << 29) + 7, 0, 10);
  for (int step = 0; step < 6; ++step) driver.Step(0, 0, step == 2 ? 30 : 0);
  CheckEveryRetainedTick(driver, 2, "after jumps of 2^32 - 3 and 2^29 + 7");
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  ASSERT_TRUE(driver.scene().Validate());
}

// A small sphere jumps 2 units along x every tick (a pure translation, so the index grows no
// query for it): a ray across its interpolated position, where it is at neither end of the
// tick, must find it at every tick of the window, segment boundaries included.
TEST(SceneHistory, InterpolatedQueriesFindATranslatingBodyBetweenItsEndPoses) {
  Scene scene("s", SceneOptions{.history_ticks = 24});
  UpdateBatch create;
  create.tick = 0;
  create.ops.push_back(UpsertOp(BodyDesc{.id = 1, .shape = Sphere{0.25f}}));
  for (uint64_t id = 2; id < 40; ++id) {
    create.ops.push_back(UpsertOp(BodyDesc{
        .id = id, .shape = Sphere{1.0f}, .pose = Pose{.position = {3.0f * id, 100.0f, 0.0f}}}));
  }
  ASSERT_TRUE(scene.Apply(create).ok());
  constexpr uint64_t kLast = 40;
  for (uint64_t t = 1; t <= kLast; ++t) {
    UpdateBatch batch;
    batch.tick = t;
    batch.ops.push_back(SetPoseOp(1, Pose{.position = {2.0f * t, 0.0f, 0.0f}}));
    ASSERT_TRUE(scene.Apply(batch).ok());
  }
  scene.ReadWithHistory([&](const CollisionWorld& world, const PoseHistory& history, uint64_t) {
    ASSERT_EQ(history.segment_ticks(), 3u);
    for (uint64_t t = history.oldest_tick(); t < kLast; ++t) {
      for (float f : {0.25f, 0.5f, 0.75f}) {
        Query q;
        q.shape_query = RaycastQuery{
            .ray = Ray{{2.0f * t + 2.0f * f, -10.0f, 0.0f}, {0.0f, 1.0f, 0.0f}, 20.0f}};
        q.at_tick = t;
        q.tick_fraction = f;
        std::vector<QueryHit> hits;
        const QueryResult r =
            RunQuery(PastTick(world, history, {.tick = t, .fraction = f}), q, &hits);
        ASSERT_EQ(r.hit_count, 1u) << "tick " << t << " fraction " << f;
        EXPECT_EQ(hits[r.first_hit].body_id, 1u);
        EXPECT_NEAR(hits[r.first_hit].distance, 9.75f, 1e-4f);
      }
    }
  });
}

TEST(SceneHistory, TicksOutsideTheWindowAreOutOfRangeWithTheRetainedRange) {
  Scene scene("s", SceneOptions{.history_ticks = 4});
  for (uint64_t t = 10; t <= 20; ++t) {
    UpdateBatch batch;
    batch.tick = t;
    ASSERT_TRUE(scene.Apply(batch).ok());
  }
  const SceneStats stats = scene.Stats();
  EXPECT_EQ(stats.tick, 20u);
  EXPECT_EQ(stats.oldest_tick, 17u);
  scene.ReadWithHistory([](const CollisionWorld&, const PoseHistory& history, uint64_t) {
    Query q;
    q.at_tick = 16;
    absl::Status s = CheckQueryTick(history, q, 2);
    EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
    EXPECT_EQ(s.message(), "queries[2].at_tick: tick 16 is not retained (retained: 17..20)");
    q.at_tick = 21;
    EXPECT_EQ(CheckQueryTick(history, q, 0).code(), absl::StatusCode::kOutOfRange);
    q.at_tick = 17;
    EXPECT_TRUE(CheckQueryTick(history, q, 0).ok());
    q.at_tick = 20;
    q.tick_fraction = 0.5f;
    s = CheckQueryTick(history, q, 0);
    EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
    EXPECT_EQ(s.message(),
              "queries[0].tick_fraction: interpolating from tick 20 needs tick 21, which is not "
              "retained (retained: 17..20)");
    // The check of a tick alone (the viewer's bodies at a tick) words it at the root.
    EXPECT_EQ(CheckTickRetained(history, 16).message(),
              "at_tick: tick 16 is not retained (retained: 17..20)");
    EXPECT_TRUE(CheckTickRetained(history, 20).ok());
  });
}

TEST(SceneHistory, ABatchBelowTheCurrentTickIsRejectedAndAnEqualTickAmendsIt) {
  Scene scene("s", SceneOptions{});
  UpdateBatch batch;
  batch.tick = 5;
  batch.ops.push_back(UpsertOp(BodyDesc{.id = 1, .shape = Sphere{1.0f}}));
  ASSERT_TRUE(scene.Apply(batch).ok());
  UpdateBatch back;
  back.tick = 4;
  back.ops.push_back(SetPoseOp(1, Pose{}));
  absl::StatusOr<ApplyResult> r = scene.Apply(back);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "tick: 4 is below the scene's current tick 5 (ticks never go back)");
  EXPECT_EQ(scene.version(), 1u);
  UpdateBatch same;
  same.tick = 5;
  same.ops.push_back(SetPoseOp(1, Pose{.position = {1, 0, 0}}));
  ASSERT_TRUE(scene.Apply(same).ok());
  UpdateBatch untagged;
  untagged.ops.push_back(SetPoseOp(1, Pose{.position = {2, 0, 0}}));
  ASSERT_TRUE(scene.Apply(untagged).ok());
  EXPECT_EQ(scene.tick(), 5u);
  EXPECT_EQ(scene.CaptureState().tick, 5u);
}

TEST(SceneHistory, ARestoredSceneRetainsOnlyItsCurrentTick) {
  SceneState state;
  state.version = 7;
  state.tick = 42;
  absl::StatusOr<std::unique_ptr<Scene>> scene = Scene::Restore("s", SceneOptions{}, state);
  ASSERT_TRUE(scene.ok());
  const SceneStats stats = (*scene)->Stats();
  EXPECT_EQ(stats.tick, 42u);
  EXPECT_EQ(stats.oldest_tick, 42u);
}

TEST(SceneHistory, NoHistoryAnswersOnlyTheCurrentTick) {
  Scene scene("s", SceneOptions{.history_ticks = 0});
  for (uint64_t t = 1; t <= 3; ++t) {
    UpdateBatch batch;
    batch.tick = t;
    batch.ops.push_back(UpsertOp(BodyDesc{.id = t, .shape = Sphere{1.0f}}));
    ASSERT_TRUE(scene.Apply(batch).ok());
  }
  const SceneStats stats = scene.Stats();
  EXPECT_EQ(stats.oldest_tick, 3u);
  EXPECT_EQ(stats.tick, 3u);
}

}  // namespace
}  // namespace collide
