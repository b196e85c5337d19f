// SceneMirror against the scene it copies: random batches (upserts that create, replace or
// change a body's kind, moves, filter changes, removals) applied to a scene are replayed on a
// mirror from the scene's change records, and after every batch the mirror holds exactly the
// scene's bodies, version and tick, with valid trees; a fresh Capture midway agrees too.

#include "watch/scene_mirror.h"

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <span>
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

}  // namespace
}  // namespace collide
