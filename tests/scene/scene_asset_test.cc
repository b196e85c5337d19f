// A scene's assets: the table (add, delete, limits), bodies that place them (validation, queries,
// moves, past ticks), and their state (capture, restore, memory).

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "base/field_error.h"
#include "gtest/gtest.h"
#include "query/batch.h"
#include "scene/scene.h"
#include "scene/scene_query.h"

namespace collide {
namespace {

Pose At(float x, float y = 0.0f, float z = 0.0f) {
  return Pose{.rotation = Quat::Identity(), .position = Vec3{x, y, z}};
}

// A closed unit box [0, 1]^3 of 12 triangles.
AssetSource UnitBox() {
  AssetSource s;
  s.vertices = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
  s.indices = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
               2, 3, 7, 2, 7, 6, 1, 2, 6, 1, 6, 5, 0, 4, 7, 0, 7, 3};
  s.size = AssetSize{.kind = AssetKind::kMesh, .vertex_count = 8, .index_count = 36};
  return s;
}

// A flat 3 x 3 heightfield at height `h`.
AssetSource Flat(float h) {
  AssetSource s;
  s.size = AssetSize{.kind = AssetKind::kHeightfield, .rows = 3, .columns = 3};
  s.heights.assign(9, h);
  return s;
}

absl::StatusOr<uint64_t> NoLog() { return uint64_t{0}; }

constexpr SceneAssetLimits kLimits{.max_assets = 16, .max_bytes = 1 << 20};

// Adds `source` as `name`.
void Add(Scene& scene, const std::string& name, AssetSource source) {
  absl::StatusOr<bool> added =
      scene.AddAsset(name, Asset::Build(std::move(source)), kLimits, NoLog);
  ASSERT_TRUE(added.ok()) << added.status();
  ASSERT_TRUE(*added);
}

// A batch upserting body `id` placing asset `name` of `kind` at `pose`.
UpdateBatch PlaceBatch(uint64_t id, const std::string& name, AssetKind kind, const Pose& pose,
                       float scale = 1.0f, BodyKind body_kind = BodyKind::kStatic) {
  UpdateBatch batch;
  UpdateOp op = UpsertOp(BodyDesc{.id = id, .pose = pose, .kind = body_kind}, 77);
  PlaceAsset(&batch, &op, name, kind, scale);
  batch.ops.push_back(op);
  return batch;
}

UpdateBatch Ops(std::vector<UpdateOp> ops, std::optional<uint64_t> tick = std::nullopt) {
  UpdateBatch batch;
  batch.ops = std::move(ops);
  batch.tick = tick;
  return batch;
}

// Casts a ray from (x, y, z) straight down, now or at `at_tick`: the hits in order.
std::vector<QueryHit> Down(const Scene& scene, float x, float z, CollectMode mode,
                           std::optional<uint64_t> at_tick = std::nullopt, float y = 5.0f) {
  Query query{.shape_query = RaycastQuery{.ray = Ray{{x, y, z}, {0, -1, 0}, 100}},
              .mode = mode,
              .at_tick = at_tick};
  std::vector<absl::Status> status;
  std::vector<QueryResult> results;
  std::vector<QueryHit> hits;
  AnswerQueries(scene, std::span<const Query>(&query, 1), {}, &status, &results, &hits);
  EXPECT_TRUE(status[0].ok()) << status[0];
  return std::vector<QueryHit>(hits.begin() + results[0].first_hit,
                               hits.begin() + results[0].first_hit + results[0].hit_count);
}

TEST(SceneAssets, BodiesPlaceAssetsAndQueriesNameTheirTriangles) {
  Scene scene("level", SceneOptions{});
  Add(scene, "box", UnitBox());
  Add(scene, "ground", Flat(0.0f));
  ASSERT_TRUE(scene.Apply(PlaceBatch(1, "box", AssetKind::kMesh, At(10, 0, 10), 2.0f)).ok());
  ASSERT_TRUE(scene.Apply(PlaceBatch(2, "ground", AssetKind::kHeightfield, At(0, -1, 0))).ok());
  EXPECT_TRUE(scene.Validate());

  // Through the scaled box: its top at y = 2 (y = 1 in the asset: triangles 6 and 7), then its
  // bottom (triangles 4 and 5).
  std::vector<QueryHit> hits = Down(scene, 11, 11, CollectMode::kAll);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].body_id, 1u);
  EXPECT_FLOAT_EQ(hits[0].distance, 3.0f);
  EXPECT_TRUE(hits[0].triangle == 6 || hits[0].triangle == 7) << hits[0].triangle;
  EXPECT_FLOAT_EQ(hits[0].normal.y, 1.0f);
  EXPECT_FALSE(hits[0].back_face);
  EXPECT_FLOAT_EQ(hits[1].distance, 5.0f);
  EXPECT_TRUE(hits[1].triangle == 4 || hits[1].triangle == 5) << hits[1].triangle;
  // The bottom's front faces down: the ray meets its back; the normal faces the ray anyway.
  EXPECT_TRUE(hits[1].back_face);
  EXPECT_FLOAT_EQ(hits[1].normal.y, 1.0f);

  // On the heightfield (1 m cells: x 0.5, z 1.5 is cell (1, 0), index 1 x 2 + 0).
  hits = Down(scene, 0.5f, 1.5f, CollectMode::kClosest);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].body_id, 2u);
  EXPECT_FLOAT_EQ(hits[0].distance, 6.0f);
  EXPECT_EQ(hits[0].triangle / 2, 2u);  // cell (1, 0) of a 3 x 3 grid

  // A body of a shape reports no triangle.
  ASSERT_TRUE(
      scene.Apply(Ops({UpsertOp(BodyDesc{.id = 3, .shape = Sphere{0.5f}, .pose = At(30)})})).ok());
  Query query{.shape_query = RaycastQuery{.ray = Ray{{30, 5, 0}, {0, -1, 0}, 100}}};
  std::vector<absl::Status> status;
  std::vector<QueryResult> results;
  std::vector<QueryHit> all;
  AnswerQueries(scene, std::span<const Query>(&query, 1), {}, &status, &results, &all);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].triangle, kNoTriangle);

  // The stored body names its asset.
  std::optional<BodyState> body = scene.GetBody(1);
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ(body->asset, "box");
  EXPECT_EQ(body->asset_kind, AssetKind::kMesh);
  EXPECT_EQ(body->scale, 2.0f);
  EXPECT_EQ(body->user_data, 77u);
}

TEST(SceneAssets, UpsertsOfUnknownWrongOrBadlyScaledAssetsAreRefusedWithTheirPath) {
  Scene scene("level", SceneOptions{});
  Add(scene, "box", UnitBox());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Case {
    UpdateBatch batch;
    absl::StatusCode code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {PlaceBatch(1, "nope", AssetKind::kMesh, At(0)), absl::StatusCode::kNotFound,
       "ops[0].upsert.shape.mesh.asset: no asset \"nope\" in scene \"level\""},
      {PlaceBatch(1, "box", AssetKind::kHeightfield, At(0)), absl::StatusCode::kInvalidArgument,
       "ops[0].upsert.shape.heightfield.asset: asset \"box\" is a mesh"},
      {PlaceBatch(1, "", AssetKind::kMesh, At(0)), absl::StatusCode::kInvalidArgument,
       "ops[0].upsert.shape.mesh.asset: a name has 1 to 128 characters, got 0"},
      {PlaceBatch(1, "box", AssetKind::kMesh, At(0), 0.0f), absl::StatusCode::kInvalidArgument,
       "ops[0].upsert.shape.mesh.scale: must be finite and within [0.001, 1000], got 0"},
      {PlaceBatch(1, "box", AssetKind::kMesh, At(0), -1.0f), absl::StatusCode::kInvalidArgument,
       "ops[0].upsert.shape.mesh.scale: must be finite and within [0.001, 1000], got -1"},
      {PlaceBatch(1, "box", AssetKind::kMesh, At(0), nan), absl::StatusCode::kInvalidArgument,
       "ops[0].upsert.shape.mesh.scale: must be finite and within [0.001, 1000], got nan"},
      {PlaceBatch(1, "box", AssetKind::kMesh, At(0), 1e30f), absl::StatusCode::kInvalidArgument,
       "ops[0].upsert.shape.mesh.scale: must be finite and within [0.001, 1000], got 1e+30"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ApplyResult> result = scene.Apply(c.batch);
    EXPECT_EQ(result.status().code(), c.code) << c.message;
    EXPECT_EQ(result.status().message(), c.message);
    EXPECT_TRUE(GetFieldError(result.status()).has_value()) << c.message;
  }
  EXPECT_EQ(scene.version(), 0u);
  EXPECT_EQ(scene.Stats().body_count, 0);
}

TEST(SceneAssets, TheTableRefusesOtherContentLimitsAndDeletionsOfUsedAssets) {
  Scene scene("level", SceneOptions{});
  Add(scene, "box", UnitBox());
  // The same name and content again: nothing to do (a retried upload).
  absl::StatusOr<bool> again = scene.AddAsset("box", Asset::Build(UnitBox()), kLimits, NoLog);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  // Other content under the name.
  absl::StatusOr<bool> other = scene.AddAsset("box", Asset::Build(Flat(1)), kLimits, NoLog);
  EXPECT_EQ(other.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(absl::StartsWith(other.status().message(),
                               "name: asset \"box\" exists in scene \"level\" with other content"))
      << other.status();
  // Limits: count and bytes.
  const SceneAssetLimits one{.max_assets = 1, .max_bytes = 1 << 20};
  EXPECT_EQ(scene.AddAsset("b", Asset::Build(Flat(1)), one, NoLog).status().message(),
            "name: scene \"level\" holds its limit of 1 assets (--max_assets_per_scene)");
  const SceneAssetLimits small{.max_assets = 10, .max_bytes = 200};
  EXPECT_EQ(scene.AddAsset("b", Asset::Build(Flat(1)), small, NoLog).status().message(),
            "name: scene \"level\" would hold 276 bytes of assets, over its limit of 200 "
            "(--max_asset_bytes_per_scene)");
  // An invalid name, a commit that fails: nothing added.
  EXPECT_EQ(scene.AddAsset("a b", Asset::Build(Flat(1)), kLimits, NoLog).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      scene
          .AddAsset("c", Asset::Build(Flat(1)), kLimits,
                    []() -> absl::StatusOr<uint64_t> { return absl::UnavailableError("disk"); })
          .status()
          .code(),
      absl::StatusCode::kUnavailable);
  EXPECT_EQ(scene.ListAssets().size(), 1u);

  // Deletion: refused while bodies place the asset, naming the lowest id.
  ASSERT_TRUE(scene.Apply(PlaceBatch(9, "box", AssetKind::kMesh, At(0))).ok());
  ASSERT_TRUE(scene.Apply(PlaceBatch(4, "box", AssetKind::kMesh, At(5))).ok());
  ASSERT_TRUE(scene.Apply(PlaceBatch(6, "box", AssetKind::kMesh, At(9))).ok());
  absl::StatusOr<std::shared_ptr<const Asset>> deleted = scene.DeleteAsset("box", NoLog);
  EXPECT_EQ(deleted.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(deleted.status().message(),
            "name: asset \"box\" is used by body 4 (and 2 more); remove or replace its bodies "
            "first");
  ASSERT_EQ(scene.ListAssets()[0].body_count, 3u);
  // Replacing a body by a shape and removing the others frees it.
  ASSERT_TRUE(
      scene.Apply(Ops({UpsertOp(BodyDesc{.id = 4, .shape = Sphere{1}}), RemoveOp(6), RemoveOp(9)}))
          .ok());
  EXPECT_EQ(scene.ListAssets()[0].body_count, 0u);
  deleted = scene.DeleteAsset("box", NoLog);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ((*deleted)->sha256(), AssetSha256(UnitBox()));
  EXPECT_EQ(scene.DeleteAsset("box", NoLog).status().message(),
            "name: no asset \"box\" in scene \"level\"");
  EXPECT_EQ(scene.Apply(PlaceBatch(1, "box", AssetKind::kMesh, At(0))).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(scene.Validate());
}

TEST(SceneAssets, AMovingInstanceMovesAndPastTicksSeeItWhereItWas) {
  Scene scene("level", SceneOptions{.history_ticks = 16});
  Add(scene, "box", UnitBox());
  // A lift: dynamic, moved every tick.
  ASSERT_TRUE(
      scene.Apply(PlaceBatch(1, "box", AssetKind::kMesh, At(0, 0, 0), 1.0f, BodyKind::kDynamic))
          .ok());
  for (uint64_t t = 1; t <= 5; ++t) {
    ASSERT_TRUE(scene.Apply(Ops({SetPoseOp(1, At(0, static_cast<float>(t), 0))}, t)).ok());
  }
  // Now the box spans y 5..6: a ray down from y = 10 meets its top at distance 4.
  std::vector<QueryHit> now = Down(scene, 0.5f, 0.5f, CollectMode::kClosest, std::nullopt, 10);
  ASSERT_EQ(now.size(), 1u);
  EXPECT_FLOAT_EQ(now[0].distance, 4.0f);
  for (uint64_t t = 1; t <= 4; ++t) {
    std::vector<QueryHit> past = Down(scene, 0.5f, 0.5f, CollectMode::kClosest, t, 10);
    ASSERT_EQ(past.size(), 1u) << "tick " << t;
    // The top at y = t + 1.
    EXPECT_FLOAT_EQ(past[0].distance, 10.0f - static_cast<float>(t + 1)) << "tick " << t;
  }
}

TEST(SceneAssets, ADeletedAssetStaysForTheRetainedTicksThatStillPlaceIt) {
  Scene scene("level", SceneOptions{.history_ticks = 4});
  Add(scene, "box", UnitBox());
  ASSERT_TRUE(scene.Apply(PlaceBatch(1, "box", AssetKind::kMesh, At(0), 1.0f)).ok());
  ASSERT_TRUE(scene.Apply(Ops({SetFilterOp(1, 1, ~0u)}, 1)).ok());
  ASSERT_TRUE(scene.Apply(Ops({RemoveOp(1)}, 2)).ok());
  const size_t with_asset = scene.Memory().assets;
  ASSERT_TRUE(scene.DeleteAsset("box", NoLog).ok());
  EXPECT_TRUE(scene.ListAssets().empty());
  // Tick 1 still held the body: the deleted asset still answers for it.
  std::vector<QueryHit> past = Down(scene, 0.5f, 0.5f, CollectMode::kClosest, 1);
  ASSERT_EQ(past.size(), 1u);
  EXPECT_EQ(past[0].body_id, 1u);
  EXPECT_GE(scene.Memory().assets, with_asset - 64);
  // Once the ticks that held the body pass out of the window, the asset's memory goes.
  for (uint64_t t = 3; t <= 8; ++t) ASSERT_TRUE(scene.Apply(Ops({}, t)).ok());
  EXPECT_LT(scene.Memory().assets, with_asset - UnitBox().size.SourceBytes());
  // Its slot can hold another asset.
  Add(scene, "box", Flat(0));
  ASSERT_TRUE(scene.Apply(PlaceBatch(2, "box", AssetKind::kHeightfield, At(0))).ok());
  EXPECT_TRUE(scene.Validate());
}

TEST(SceneAssets, StateCapturesAndRestoresAssetsAndTheirBodies) {
  Scene scene("level", SceneOptions{});
  Add(scene, "box", UnitBox());
  Add(scene, "ground", Flat(-1));
  ASSERT_TRUE(scene.Apply(PlaceBatch(1, "box", AssetKind::kMesh, At(0), 2.0f)).ok());
  ASSERT_TRUE(scene.Apply(PlaceBatch(2, "ground", AssetKind::kHeightfield, At(0))).ok());
  const SceneState state = scene.CaptureState();
  ASSERT_EQ(state.assets.size(), 2u);
  EXPECT_EQ(state.assets[0].name, "box");
  EXPECT_EQ(state.assets[1].name, "ground");
  ASSERT_EQ(state.bodies.size(), 2u);
  EXPECT_EQ(state.bodies[0].asset, "box");
  EXPECT_EQ(state.bodies[0].scale, 2.0f);

  absl::StatusOr<std::unique_ptr<Scene>> restored = Scene::Restore("copy", SceneOptions{}, state);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_TRUE((*restored)->Validate());
  EXPECT_EQ((*restored)->ListAssets().size(), 2u);
  EXPECT_EQ((*restored)->ListAssets()[0].body_count, 1u);
  const std::vector<QueryHit> hits = Down(**restored, 1, 0.5f, CollectMode::kAll);
  ASSERT_EQ(hits.size(), 3u);  // the box's top and bottom, the ground
  const SceneStats stats = (*restored)->Stats();
  EXPECT_EQ(stats.asset_count, 2u);
  EXPECT_EQ(stats.asset_triangles, 12u + 8u);
  EXPECT_EQ(stats.asset_bytes, UnitBox().size.SourceBytes() + Flat(0).size.SourceBytes());
  EXPECT_GT(stats.asset_memory_bytes, stats.asset_bytes);
  EXPECT_GE(stats.memory_bytes, stats.asset_memory_bytes);

  // A body placing an asset the state does not hold, or of the other kind.
  SceneState missing = state;
  missing.bodies[1].asset = "nowhere";
  EXPECT_EQ(Scene::Restore("x", SceneOptions{}, missing).status().message(),
            "bodies[1].shape.heightfield.asset: no asset \"nowhere\" in the scene");
  SceneState wrong = state;
  wrong.bodies[0].asset_kind = AssetKind::kHeightfield;
  EXPECT_EQ(Scene::Restore("x", SceneOptions{}, wrong).status().message(),
            "bodies[0].shape.heightfield.asset: asset \"box\" is a mesh");
  SceneState twice = state;
  twice.assets[1].name = "box";
  EXPECT_EQ(Scene::Restore("x", SceneOptions{}, twice).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace collide
