// SceneMirror against the scene it copies: random batches (upserts that create, replace or
// change a body's kind, moves, filter changes, removals) applied to a scene are replayed on a
// mirror from the scene's change records, and after every batch the mirror holds exactly the
// scene's bodies, version and tick, with valid trees; a fresh Capture midway agrees too.

#include "watch/scene_mirror.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "geom/same_shape.h"
#include "gtest/gtest.h"
#include "scene/scene.h"
#include "watch/body_grid.h"
#include "watch/watch_test_util.h"

namespace collide {
namespace {

// Copies every applied batch's records, as a watch hub receives them.
class Recorder final : public SceneObserver {
 public:
  void OnApplied(const AppliedBatch& batch, const SceneView& scene) override {
    changes.assign(batch.changes.begin(), batch.changes.end());
    version = scene.version;
    tick = scene.tick;
  }
  void OnDeleted() override {}
  std::vector<BodyChange> changes;
  uint64_t version = 0;
  uint64_t tick = 0;
};

// EXPECTs that `mirror` holds exactly `scene`'s bodies, version and tick.
void ExpectSame(const SceneMirror& mirror, const Scene& scene, uint32_t seed, int step) {
  const SceneState state = scene.CaptureState();
  EXPECT_EQ(mirror.version(), state.version) << "seed " << seed << " step " << step;
  mirror.WithView([&](const SceneView& view) {
    EXPECT_EQ(view.version, state.version);
    EXPECT_EQ(view.tick, state.tick) << "seed " << seed << " step " << step;
    EXPECT_EQ(view.world.body_count(), static_cast<int32_t>(state.bodies.size()))
        << "seed " << seed << " step " << step;
    EXPECT_TRUE(view.world.Validate()) << "seed " << seed << " step " << step;
    for (const BodyState& want : state.bodies) {
      const Body* got = view.find_body(want.id);
      ASSERT_NE(got, nullptr) << "seed " << seed << " step " << step << " body " << want.id;
      EXPECT_TRUE(testing::SameShape(got->shape, want.shape)) << "body " << want.id;
      EXPECT_EQ(got->pose, want.pose) << "body " << want.id;
      EXPECT_EQ(got->category, want.category) << "body " << want.id;
      EXPECT_EQ(got->mask, want.mask) << "body " << want.id;
      EXPECT_EQ(got->kind, want.kind) << "body " << want.id;
      EXPECT_EQ(got->id, want.id);
    }
  });
}

TEST(SceneMirror, FollowsItsSceneBatchByBatch) {
  for (uint32_t seed : {31u, 32u, 33u}) {
    testing::WatchGenerator gen(seed);
    testing::WatchOracle bodies({}, {}, 0.01f);  // only its body table, to generate valid batches
    Scene scene("arena", SceneOptions{});
    Recorder recorder;
    ASSERT_TRUE(scene.AddObserver(&recorder, [](const SceneView&) {}).ok());
    SceneMirror mirror;
    mirror.Capture(scene);
    ExpectSame(mirror, scene, seed, -1);
    int kind_changes = 0;
    for (int step = 0; step < 300; ++step) {
      UpdateBatch batch = gen.Batch(bodies.bodies());
      // Now and then an upsert turns a body static (a replacement into the other tree), and the
      // batch names a tick.
      for (UpdateOp& op : batch.ops) {
        if (op.type == UpdateOpType::kUpsert && gen.Pick(4) == 0) {
          op.kind = BodyKind::kStatic;
          ++kind_changes;
        }
      }
      if (gen.Pick(3) == 0) batch.tick = static_cast<uint64_t>(step);
      bodies.Commit(batch);
      auto applied = scene.Apply(batch);
      ASSERT_TRUE(applied.ok()) << applied.status();
      ASSERT_EQ(recorder.version, applied->version);
      mirror.Apply(recorder.changes, recorder.version, recorder.tick);
      ExpectSame(mirror, scene, seed, step);
      if (step == 150) {
        SceneMirror fresh;
        fresh.Capture(scene);
        ExpectSame(fresh, scene, seed, step);
      }
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_GT(kind_changes, 10) << "seed " << seed;
    EXPECT_GT(mirror.MemoryBytes(), 0u);
    scene.RemoveObserver(&recorder);
  }
}

// EXPECTs that the grid of `mirror` holds exactly its bodies, each once at its position with its
// filter bits, and that every body within a random radius of a random point is in a cell the
// grid's search visits.
void ExpectGridSame(const SceneMirror& mirror, const Scene& scene, std::mt19937& rng, int step) {
  const SceneState state = scene.CaptureState();
  const BodyGrid* grid = mirror.grid();
  ASSERT_NE(grid, nullptr);
  ASSERT_EQ(grid->size(), state.bodies.size()) << "step " << step;
  std::uniform_real_distribution<float> u(-20, 20);
  const Vec3 p{u(rng), u(rng), u(rng)};
  const float r = std::fabs(u(rng));
  struct Seen {
    float x, y, z;
    uint32_t category, mask;
  };
  std::map<uint64_t, Seen> seen;
  grid->ForEachCellNear(p, r * r, [&](const BodyGrid::Cell& cell) {
    for (size_t k = 0; k < cell.size; ++k) {
      seen.emplace(cell.id[k],
                   Seen{cell.x[k], cell.y[k], cell.z[k], cell.category[k], cell.mask[k]});
    }
  });
  for (const BodyState& b : state.bodies) {
    auto it = seen.find(b.id);
    if (InterestDistance2(p, b.pose.position) <= r * r) {
      ASSERT_NE(it, seen.end()) << "step " << step << " body " << b.id << " within " << r;
    }
    if (it == seen.end()) continue;
    EXPECT_EQ(it->second.x, b.pose.position.x) << "body " << b.id;
    EXPECT_EQ(it->second.y, b.pose.position.y) << "body " << b.id;
    EXPECT_EQ(it->second.z, b.pose.position.z) << "body " << b.id;
    EXPECT_EQ(it->second.category, b.category) << "body " << b.id;
    EXPECT_EQ(it->second.mask, b.mask) << "body " << b.id;
  }
  // The whole grid: every body exactly once.
  std::multiset<uint64_t> all;
  grid->ForEachCellNear(
      p, 1e18f, [&](const BodyGrid::Cell& cell) { all.insert(cell.id, cell.id + cell.size); });
  std::multiset<uint64_t> want;
  for (const BodyState& b : state.bodies) want.insert(b.id);
  EXPECT_EQ(all, want) << "step " << step;
}

// A mirror that starts with its bodies and grid only, and is asked for its world midway: both
// follow the scene (bodies wandering far out of the grid's first box make it rebuild).
TEST(SceneMirror, KeepsItsGridAndAWorldAskedForLater) {
  for (uint32_t seed : {41u, 42u}) {
    testing::WatchGenerator gen(seed);
    testing::WatchOracle bodies({}, {}, 0.01f);
    std::mt19937 rng(seed);
    Scene scene("arena", SceneOptions{});
    Recorder recorder;
    ASSERT_TRUE(scene.AddObserver(&recorder, [](const SceneView&) {}).ok());
    SceneMirror mirror(SceneMirror::Parts{.world = false, .grid = true});
    mirror.Capture(scene);
    for (int step = 0; step < 300; ++step) {
      UpdateBatch batch = gen.Batch(bodies.bodies());
      if (step > 200) {
        // Far away now and then: out of the grid's box.
        for (UpdateOp& op : batch.ops) {
          if (op.type == UpdateOpType::kSetPose && gen.Pick(3) == 0) op.pose.position *= 40.0f;
        }
      }
      bodies.Commit(batch);
      ASSERT_TRUE(scene.Apply(batch).ok());
      mirror.Apply(recorder.changes, recorder.version, recorder.tick);
      ExpectGridSame(mirror, scene, rng, step);
      if (step == 100) mirror.KeepWorld();
      if (step >= 100) ExpectSame(mirror, scene, seed, step);
      if (::testing::Test::HasFailure()) return;
    }
    scene.RemoveObserver(&recorder);
  }
}

// As Recorder, for an observer that keeps its own copy of the bodies (SceneObserver::TakesMoves):
// a batch of moves and filter changes comes as moves.
class MoveRecorder final : public SceneObserver {
 public:
  void OnApplied(const AppliedBatch& batch, const SceneView& scene) override {
    changes.assign(batch.changes.begin(), batch.changes.end());
    moves.assign(batch.moves.begin(), batch.moves.end());
    version = scene.version;
    tick = scene.tick;
  }
  void OnDeleted() override {}
  bool TakesMoves() const override { return true; }
  std::vector<BodyChange> changes;
  std::vector<BodyMove> moves;
  uint64_t version = 0;
  uint64_t tick = 0;
};

// EXPECTs that two bodies of change records are the same in every field but the tree leaf.
void ExpectSameBody(const std::optional<Body>& got, const std::optional<Body>& want,
                    const std::string& where) {
  ASSERT_EQ(got.has_value(), want.has_value()) << where;
  if (!want.has_value()) return;
  EXPECT_EQ(got->id, want->id) << where;
  EXPECT_TRUE(testing::SameShape(got->shape, want->shape)) << where;
  EXPECT_EQ(got->pose, want->pose) << where;
  EXPECT_EQ(got->scale, want->scale) << where;
  EXPECT_EQ(got->category, want->category) << where;
  EXPECT_EQ(got->mask, want->mask) << where;
  EXPECT_EQ(got->kind, want->kind) << where;
  EXPECT_EQ(got->asset, want->asset) << where;
}

// Two scenes take the same random batches. The first's observer takes change records, the
// second's moves: every batch of moves and filter changes (some naming a body twice) must come to
// it as moves, and the records its mirror writes from them (SceneMirror::ApplyMoves) must be the
// first scene's records, field by field; its mirror, world and grid must stay the scene's. A
// scene with both kinds of observer hands every batch as change records.
TEST(SceneMirror, TakesBatchesOfMovesAsPosesAndFiltersAndWritesTheirChangeRecords) {
  for (uint32_t seed : {51u, 52u, 53u}) {
    testing::WatchGenerator gen(seed);
    testing::WatchOracle bodies({}, {}, 0.01f);
    std::mt19937 rng(seed);
    Scene full("full", SceneOptions{});
    Scene moved("moved", SceneOptions{});
    Scene both("both", SceneOptions{});
    Recorder recorder;
    MoveRecorder move_recorder;
    Recorder both_recorder;
    MoveRecorder both_move_recorder;
    ASSERT_TRUE(full.AddObserver(&recorder, [](const SceneView&) {}).ok());
    ASSERT_TRUE(moved.AddObserver(&move_recorder, [](const SceneView&) {}).ok());
    ASSERT_TRUE(both.AddObserver(&both_recorder, [](const SceneView&) {}).ok());
    ASSERT_TRUE(both.AddObserver(&both_move_recorder, [](const SceneView&) {}).ok());
    SceneMirror mirror(SceneMirror::Parts{.world = true, .grid = true});
    mirror.Capture(moved);
    std::vector<BodyChange> expanded;
    int move_batches = 0;
    int other_batches = 0;
    for (int step = 0; step < 400; ++step) {
      UpdateBatch batch = gen.Batch(bodies.bodies());
      // Now and then a second move or filter change of a body the batch moves.
      if (!batch.ops.empty() && batch.ops[0].type == UpdateOpType::kSetPose && gen.Pick(3) == 0) {
        const uint64_t id = batch.ops[0].body_id;
        batch.ops.push_back(gen.Pick(2) == 0
                                ? SetFilterOp(id, gen.Category(), ~0u)
                                : SetPoseOp(id, Pose{gen.Rotation(), gen.Position(9)}));
      }
      if (gen.Pick(3) == 0) batch.tick = static_cast<uint64_t>(step);
      bodies.Commit(batch);
      for (Scene* scene : {&full, &moved, &both}) ASSERT_TRUE(scene->Apply(batch).ok());
      const bool only_moves =
          !batch.ops.empty() && std::all_of(batch.ops.begin(), batch.ops.end(), [](const auto& op) {
            return op.type == UpdateOpType::kSetPose || op.type == UpdateOpType::kSetFilter;
          });
      const std::string where = "seed " + std::to_string(seed) + " step " + std::to_string(step);
      EXPECT_TRUE(both_move_recorder.moves.empty()) << where;
      EXPECT_EQ(both_move_recorder.changes.size(), both_recorder.changes.size()) << where;
      if (only_moves) {
        ++move_batches;
        ASSERT_TRUE(move_recorder.changes.empty()) << where;
        ASSERT_EQ(move_recorder.moves.size(), recorder.changes.size()) << where;
        mirror.ApplyMoves(move_recorder.moves, move_recorder.version, move_recorder.tick,
                          &expanded);
      } else {
        ++other_batches;
        ASSERT_TRUE(move_recorder.moves.empty()) << where;
        mirror.Apply(move_recorder.changes, move_recorder.version, move_recorder.tick);
        expanded = move_recorder.changes;
      }
      ASSERT_EQ(expanded.size(), recorder.changes.size()) << where;
      for (size_t i = 0; i < expanded.size(); ++i) {
        const BodyChange& got = expanded[i];
        const BodyChange& want = recorder.changes[i];
        const std::string body = where + " body " + std::to_string(want.id);
        EXPECT_EQ(got.id, want.id) << body;
        EXPECT_EQ(got.replaced, want.replaced) << body;
        EXPECT_EQ(got.asset, want.asset) << body;
        ExpectSameBody(got.before, want.before, body + " before");
        ExpectSameBody(got.after, want.after, body + " after");
      }
      ExpectSame(mirror, moved, seed, step);
      ExpectGridSame(mirror, moved, rng, step);
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_GT(move_batches, 100) << "seed " << seed;
    EXPECT_GT(other_batches, 50) << "seed " << seed;
    full.RemoveObserver(&recorder);
    moved.RemoveObserver(&move_recorder);
    both.RemoveObserver(&both_recorder);
    both.RemoveObserver(&both_move_recorder);
  }
}

}  // namespace
}  // namespace collide
