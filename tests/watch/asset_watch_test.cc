// Watches and bodies that place assets: a fence tracks a mesh or heightfield body by its
// triangles at each version's poses (no sweep), its enter contact on the fence's surface;
// contact watches report a mesh body with a shape, never two asset bodies; the watch evaluation's
// copy of the scene (SceneMirror) places the same assets in the same slots and lets go of the
// deleted ones.

#include <memory>
#include <variant>
#include <vector>

#include "gtest/gtest.h"
#include "scene/scene.h"
#include "watch/scene_mirror.h"
#include "watch/watcher.h"

namespace collide {
namespace {

Pose At(float x, float y = 0.0f, float z = 0.0f) {
  return Pose{.rotation = Quat::Identity(), .position = Vec3{x, y, z}};
}

// A closed box [-1, 1]^3.
AssetSource CubeSource() {
  AssetSource s;
  s.vertices = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
                {-1, -1, 1},  {1, -1, 1},  {1, 1, 1},  {-1, 1, 1}};
  s.indices = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
               2, 3, 7, 2, 7, 6, 1, 2, 6, 1, 6, 5, 0, 4, 7, 0, 7, 3};
  s.size = AssetSize{.kind = AssetKind::kMesh, .vertex_count = 8, .index_count = 36};
  return s;
}

// A flat ground at y = 0 over [0, 20]^2.
AssetSource GroundSource() {
  AssetSource s;
  s.size = AssetSize{.kind = AssetKind::kHeightfield,
                     .rows = 3,
                     .columns = 3,
                     .spacing_x = 10.0f,
                     .spacing_z = 10.0f};
  s.heights.assign(9, 0.0f);
  return s;
}

absl::StatusOr<uint64_t> NoLog() { return uint64_t{0}; }

std::unique_ptr<Scene> MakeLevel(uint32_t history_ticks = 64) {
  auto scene = std::make_unique<Scene>("level", SceneOptions{.history_ticks = history_ticks});
  const SceneAssetLimits limits{.max_assets = 8, .max_bytes = 1 << 20};
  EXPECT_TRUE(scene->AddAsset("cube", Asset::Build(CubeSource()), limits, NoLog).ok());
  EXPECT_TRUE(scene->AddAsset("ground", Asset::Build(GroundSource()), limits, NoLog).ok());
  return scene;
}

UpdateBatch Place(uint64_t id, const std::string& name, AssetKind kind, const Pose& pose,
                  BodyKind body_kind = BodyKind::kDynamic) {
  UpdateBatch batch;
  UpdateOp op = UpsertOp(BodyDesc{.id = id, .pose = pose, .kind = body_kind});
  PlaceAsset(&batch, &op, name, kind);
  batch.ops.push_back(op);
  return batch;
}

UpdateBatch Ops(std::vector<UpdateOp> ops) {
  UpdateBatch batch;
  batch.ops = std::move(ops);
  return batch;
}

// The events of the next message of `watcher` (none when its queue is empty).
std::vector<WatchEvent> Next(Watcher& watcher) {
  WatchMessage message;
  if (!watcher.queue().Pop(&message)) return {};
  const auto* update = std::get_if<WatchUpdate>(&message);
  return update != nullptr ? update->events : std::vector<WatchEvent>{};
}

TEST(AssetWatch, AFenceTracksAMeshBodyByItsTrianglesAtEachVersion) {
  std::shared_ptr<Scene> scene = MakeLevel();
  // A sphere fence of radius 0.8 at (5, 0, 0): the cube at x = 0 spans x -1..1, out of it.
  const std::vector<FenceSpec> fences = {FenceSpec{.id = 7, .shape = Sphere{0.8f}, .pose = At(5)}};
  Watcher watcher(fences, {}, 1 << 16);
  ASSERT_TRUE(scene->Apply(Place(1, "cube", AssetKind::kMesh, At(0))).ok());
  ASSERT_TRUE(watcher.Attach(scene).ok());
  WatchMessage message;
  ASSERT_TRUE(watcher.queue().Pop(&message));
  ASSERT_TRUE(std::get<WatchSnapshot>(message).fences[0].body_ids.empty());

  // Moved so that its face x = 1 is at x = 4.5: inside (the sphere reaches x = 4.2).
  ASSERT_TRUE(scene->Apply(Ops({SetPoseOp(1, At(3.5f))})).ok());
  std::vector<WatchEvent> events = Next(watcher);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, WatchEventKind::kEnter);
  EXPECT_EQ(events[0].body_id, 1u);
  // On the fence's surface, its outward normal towards the body (the -x side).
  EXPECT_NEAR(events[0].point.x, 4.2f, 1e-4f);
  EXPECT_NEAR(events[0].normal.x, -1.0f, 1e-4f);

  // Centred on the fence: the cube's faces enclose it 1 away without touching it, and a surface
  // has no inside: the body is out.
  ASSERT_TRUE(scene->Apply(Ops({SetPoseOp(1, At(5))})).ok());
  events = Next(watcher);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, WatchEventKind::kExit);

  // Through the fence and out again within one batch: no sweep for asset bodies, no event.
  ASSERT_TRUE(scene->Apply(Ops({SetPoseOp(1, At(-5))})).ok());
  EXPECT_TRUE(Next(watcher).empty());
  ASSERT_TRUE(scene->Apply(Ops({SetPoseOp(1, At(15))})).ok());
  EXPECT_TRUE(Next(watcher).empty());
  watcher.Detach();
}

TEST(AssetWatch, ContactsPairAnAssetBodyWithAShapeButNeverTwoAssetBodies) {
  std::shared_ptr<Scene> scene = MakeLevel();
  ASSERT_TRUE(
      scene->Apply(Place(1, "ground", AssetKind::kHeightfield, At(0), BodyKind::kStatic)).ok());
  ASSERT_TRUE(scene->Apply(Place(2, "cube", AssetKind::kMesh, At(5, 0.5f, 5))).ok());
  Watcher watcher({}, {ContactWatchSpec{.id = 3}}, 1 << 16);
  ASSERT_TRUE(watcher.Attach(scene).ok());
  WatchMessage message;
  ASSERT_TRUE(watcher.queue().Pop(&message));
  // The cube crosses the ground: two asset bodies, no contact.
  EXPECT_TRUE(std::get<WatchSnapshot>(message).contacts.empty());

  // A ball dropped onto the ground.
  ASSERT_TRUE(
      scene->Apply(Ops({UpsertOp(BodyDesc{.id = 9, .shape = Sphere{0.5f}, .pose = At(12, 3, 12)})}))
          .ok());
  EXPECT_TRUE(Next(watcher).empty());
  ASSERT_TRUE(scene->Apply(Ops({SetPoseOp(9, At(12, 0.4f, 12))})).ok());
  std::vector<WatchEvent> events = Next(watcher);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, WatchEventKind::kContactBegin);
  EXPECT_EQ(events[0].body_id, 1u);
  EXPECT_EQ(events[0].other_body_id, 9u);
  // And onto the cube (x 4..6, y -0.5..1.5): the ball touches it and the ground.
  ASSERT_TRUE(scene->Apply(Ops({SetPoseOp(9, At(6.3f, 0.4f, 5))})).ok());
  events = Next(watcher);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, WatchEventKind::kContactBegin);
  EXPECT_EQ(events[0].body_id, 2u);
  EXPECT_EQ(events[0].other_body_id, 9u);
  watcher.Detach();
}

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

TEST(AssetWatch, TheMirrorPlacesTheScenesAssetsAndLetsGoOfDeletedOnes) {
  // No history: a deleted asset is the scene's no more at once (else its past ticks keep it).
  std::shared_ptr<Scene> scene = MakeLevel(0);
  Recorder recorder;
  ASSERT_TRUE(scene->AddObserver(&recorder, [](const SceneView&) {}).ok());
  SceneMirror mirror;
  mirror.Capture(*scene);
  auto apply = [&](UpdateBatch batch) {
    ASSERT_TRUE(scene->Apply(batch).ok());
    mirror.Apply(recorder.changes, recorder.version, recorder.tick);
  };
  apply(Place(1, "cube", AssetKind::kMesh, At(0)));
  apply(Place(2, "ground", AssetKind::kHeightfield, At(0, -2)));
  // An asset added after the mirror's capture, placed later.
  const SceneAssetLimits limits{.max_assets = 8, .max_bytes = 1 << 20};
  AssetSource big = CubeSource();
  for (Vec3& v : big.vertices) v = v * 3.0f;
  std::shared_ptr<const Asset> big_asset = Asset::Build(big);
  ASSERT_TRUE(scene->AddAsset("big", big_asset, limits, NoLog).ok());
  apply(Place(3, "big", AssetKind::kMesh, At(20)));
  mirror.WithView([&](const SceneView& view) {
    EXPECT_TRUE(view.world.Validate());
    const Body* body = view.find_body(3);
    ASSERT_NE(body, nullptr);
    EXPECT_EQ(&view.world.asset(body->asset), &big_asset->geometry());
    EXPECT_NEAR(view.world.BoundsOf(*body).max.x, 23.0f, 1e-4f);
  });
  // Its body removed and the asset deleted: after the next batch the mirror holds it no more.
  apply(Ops({RemoveOp(3)}));
  ASSERT_TRUE(scene->DeleteAsset("big", NoLog).ok());
  apply(Ops({SetPoseOp(1, At(1))}));
  const std::weak_ptr<const Asset> weak = big_asset;
  big_asset.reset();
  EXPECT_TRUE(weak.expired()) << "the mirror keeps a deleted asset alive";
  // A fresh capture agrees.
  SceneMirror again;
  again.Capture(*scene);
  again.WithView([&](const SceneView& view) {
    EXPECT_EQ(view.world.body_count(), 2);
    EXPECT_TRUE(view.world.Validate());
  });
  scene->RemoveObserver(&recorder);
}

}  // namespace
}  // namespace collide
