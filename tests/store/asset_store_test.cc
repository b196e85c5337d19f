// The store's assets: written once as their own content-addressed files before the records that
// name them, recovered at start, shared by the scenes that hold the same content, deleted once
// nothing on disk names them; a crash or a failed write at any point leaves the whole asset or
// none, and never a body that places a missing asset.

#include <algorithm>
#include <future>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "store/asset_files.h"
#include "store/database.h"
#include "store/fault_file_system.h"
#include "store/log_codec.h"
#include "store/store_files.h"
#include "store/store_testing.h"

namespace collide {
namespace {

constexpr char kDir[] = "/data";

Pose At(float x, float y = 0.0f, float z = 0.0f) {
  return Pose{.rotation = Quat::Identity(), .position = Vec3{x, y, z}};
}

// A closed box [0, 1]^3 moved by `shift` on x (so that contents differ).
AssetSource Cube(float shift = 0.0f) {
  AssetSource s;
  s.vertices = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
  for (Vec3& v : s.vertices) v.x += shift;
  s.indices = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
               2, 3, 7, 2, 7, 6, 1, 2, 6, 1, 6, 5, 0, 4, 7, 0, 7, 3};
  s.size = AssetSize{.kind = AssetKind::kMesh, .vertex_count = 8, .index_count = 36};
  return s;
}

// A heightfield of n x n samples with holes in its first cell.
AssetSource Terrain(uint64_t n) {
  AssetSource s;
  s.size = AssetSize{.kind = AssetKind::kHeightfield, .rows = n, .columns = n, .has_holes = true};
  for (uint64_t i = 0; i < n * n; ++i) s.heights.push_back(static_cast<float>(i % 7) * 0.25f);
  s.holes.assign(static_cast<size_t>(s.size.HoleBytes()), 0);
  s.holes[0] = 1;
  return s;
}

DatabaseOptions Options(FileSystem* fs) {
  DatabaseOptions options;
  options.file_system = fs;
  options.segment_bytes = 4096;
  options.snapshot_min_log_bytes = 1 << 20;
  options.maintenance_interval = std::chrono::milliseconds(3600 * 1000);
  // A failed fsync of the log would stop the process; the tests fail only asset files' syncs.
  options.on_fatal_error = [](const absl::Status&) {};
  return options;
}

std::unique_ptr<Database> Open(FileSystem* fs, DatabaseOptions options) {
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(kDir, std::move(options));
  EXPECT_TRUE(db.ok()) << db.status();
  return db.ok() ? *std::move(db) : nullptr;
}

std::unique_ptr<Database> Open(FileSystem* fs) { return Open(fs, Options(fs)); }

// Upserts body `id` placing asset `name` of `kind`.
absl::Status Place(Database& db, const std::string& scene, uint64_t id, const std::string& name,
                   AssetKind kind, const Pose& pose) {
  UpdateBatch batch;
  UpdateOp op = UpsertOp(BodyDesc{.id = id, .pose = pose, .kind = BodyKind::kStatic});
  PlaceAsset(&batch, &op, name, kind, 1.0f);
  batch.ops.push_back(op);
  return db.ApplyAndWait(scene, ClientTag{}, batch).status();
}

// The asset files in the data directory, by hash.
std::vector<std::string> AssetFiles(FileSystem* fs) {
  std::vector<std::string> out;
  absl::StatusOr<std::vector<std::string>> names = fs->ListDir(kDir);
  EXPECT_TRUE(names.ok());
  for (const std::string& name : *names) {
    std::string sha256;
    if (ParseAssetFileName(name, &sha256)) out.push_back(sha256);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The sorted names of a scene's assets.
std::vector<std::string> AssetNames(const Database& db, const std::string& scene) {
  std::vector<std::string> out;
  for (const SceneAssetInfo& info : (*db.GetScene(scene))->ListAssets()) out.push_back(info.name);
  return out;
}

TEST(StoreAssets, AnAssetAndItsBodiesSurviveRestartsFromTheLogAndFromASnapshot) {
  FaultFileSystem fs;
  const std::string box = AssetSha256(Cube());
  const std::string terrain = AssetSha256(Terrain(33));
  {
    auto db = Open(&fs);
    ASSERT_TRUE(db->CreateScene("level", SceneOptions{}).ok());
    absl::StatusOr<AddedAsset> added = db->AddAsset("level", "box", Cube());
    ASSERT_TRUE(added.ok()) << added.status();
    EXPECT_FALSE(added->already_present);
    EXPECT_EQ(added->asset->sha256(), box);
    ASSERT_TRUE(db->AddAsset("level", "ground", Terrain(33)).ok());
    ASSERT_TRUE(Place(*db, "level", 1, "box", AssetKind::kMesh, At(2)).ok());
    ASSERT_TRUE(Place(*db, "level", 2, "ground", AssetKind::kHeightfield, At(0, -1)).ok());
  }
  EXPECT_EQ(AssetFiles(&fs),
            (std::vector<std::string>{std::min(box, terrain), std::max(box, terrain)}));
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    // Round 0 replays the log; round 1 a snapshot (the log behind it deleted); round 2 the same
    // after a machine crash.
    std::unique_ptr<FaultFileSystem> image = round == 2 ? fs.CrashImage() : nullptr;
    FileSystem* now = image != nullptr ? image.get() : &fs;
    auto db = Open(now);
    ASSERT_NE(db, nullptr);
    std::shared_ptr<const Scene> scene = *db->GetScene("level");
    EXPECT_TRUE(scene->Validate());
    EXPECT_EQ(AssetNames(*db, "level"), (std::vector<std::string>{"box", "ground"}));
    const std::optional<SceneAssetInfo> info = scene->GetAsset("box");
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->asset->sha256(), box);
    EXPECT_EQ(info->body_count, 1u);
    EXPECT_EQ(info->asset->source().indices, Cube().indices);
    EXPECT_EQ(scene->GetAsset("ground")->asset->source().holes, Terrain(33).holes);
    EXPECT_EQ(scene->GetBody(2)->asset, "ground");
    EXPECT_EQ(db->stored_assets().contents, 2u);
    if (round == 0) {
      ASSERT_TRUE(db->Checkpoint().ok());
      // The snapshot names the assets; it never carries their contents.
      uint64_t snapshot_bytes = 0;
      const std::vector<std::string> names = *fs.ListDir(kDir);
      for (const std::string& name : names) {
        std::string scene_name;
        uint64_t sequence = 0;
        if (ParseSnapshotFileName(name, &scene_name, &sequence)) {
          snapshot_bytes += *fs.FileSize(JoinPath(kDir, name));
        }
      }
      EXPECT_GT(snapshot_bytes, 0u);
      EXPECT_LT(snapshot_bytes, Terrain(33).size.SourceBytes());
    }
  }
}

TEST(StoreAssets, ScenesHoldingTheSameContentShareItsFileUntilTheLastDropsIt) {
  FaultFileSystem fs;
  auto db = Open(&fs);
  ASSERT_TRUE(db->CreateScene("a", SceneOptions{}).ok());
  ASSERT_TRUE(db->CreateScene("b", SceneOptions{}).ok());
  absl::StatusOr<AddedAsset> first = db->AddAsset("a", "box", Cube());
  absl::StatusOr<AddedAsset> second = db->AddAsset("b", "crate", Cube());
  ASSERT_TRUE(first.ok() && second.ok());
  // One built asset, one file, counted once.
  EXPECT_EQ(first->asset.get(), second->asset.get());
  EXPECT_EQ(AssetFiles(&fs).size(), 1u);
  EXPECT_EQ(db->stored_assets().contents, 1u);
  EXPECT_EQ(db->stored_assets().source_bytes, Cube().size.SourceBytes());
  // A retried upload: the same name and content.
  absl::StatusOr<AddedAsset> again = db->AddAsset("a", "box", Cube());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->already_present);
  // Other content under a taken name; a sha256 that is not the content's.
  EXPECT_EQ(db->AddAsset("a", "box", Cube(1)).status().code(), absl::StatusCode::kAlreadyExists);
  absl::StatusOr<AddedAsset> lying = db->AddAsset("a", "other", Cube(1), std::string(64, 'a'));
  EXPECT_EQ(lying.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StartsWith(lying.status().message(), "sha256: says aaaa")) << lying.status();
  EXPECT_EQ(AssetNames(*db, "a"), (std::vector<std::string>{"box"}));

  ASSERT_TRUE(db->DeleteAsset("a", "box").ok());
  ASSERT_TRUE(db->DeleteScene("b").ok());
  EXPECT_EQ(db->stored_assets().contents, 0u);
  // The file stays while the log reaches the records that named it...
  ASSERT_TRUE(db->Checkpoint().ok());
  EXPECT_EQ(AssetFiles(&fs).size(), 1u);
  // ... and goes once the log moved past them (small segments: a few records roll one).
  for (int i = 0; i < 200 && !AssetFiles(&fs).empty(); ++i) {
    ASSERT_TRUE(
        db->ApplyAndWait(
              "a", ClientTag{},
              UpdateBatch{.ops = {UpsertOp(BodyDesc{.id = 1, .shape = Sphere{1}, .pose = At(i)})}})
            .ok());
    ASSERT_TRUE(db->Checkpoint().ok());
  }
  EXPECT_TRUE(AssetFiles(&fs).empty());
  db.reset();
  auto reopened = Open(&fs);
  EXPECT_TRUE(AssetNames(*reopened, "a").empty());
  EXPECT_FALSE(reopened->GetScene("b").ok());
}

TEST(StoreAssets, AFailedWriteOrACrashLeavesTheWholeAssetOrNone) {
  FaultFileSystem fs;
  {
    auto db = Open(&fs);
    ASSERT_TRUE(db->CreateScene("level", SceneOptions{}).ok());
    // The asset file's fsync fails: nothing is added.
    fs.FailSyncs(1);
    absl::StatusOr<AddedAsset> failed = db->AddAsset("level", "box", Cube());
    EXPECT_FALSE(failed.ok());
    EXPECT_TRUE(AssetNames(*db, "level").empty());
    EXPECT_EQ(Place(*db, "level", 1, "box", AssetKind::kMesh, At(0)).code(),
              absl::StatusCode::kNotFound);
    // A later upload of the same content writes it again.
    ASSERT_TRUE(db->AddAsset("level", "box", Cube()).ok());
    ASSERT_TRUE(Place(*db, "level", 1, "box", AssetKind::kMesh, At(0)).ok());
  }
  // A machine crash now keeps everything acknowledged.
  std::unique_ptr<FaultFileSystem> image = fs.CrashImage();
  {
    auto db = Open(image.get());
    EXPECT_EQ(AssetNames(*db, "level"), (std::vector<std::string>{"box"}));
    EXPECT_EQ((*db->GetScene("level"))->GetBody(1)->asset, "box");
  }
  // An asset file that no record names (an upload that crashed between its file and its record)
  // is deleted at start; a temporary one too.
  {
    absl::StatusOr<std::unique_ptr<WritableFile>> orphan =
        image->Create(JoinPath(kDir, AssetFileName(AssetSha256(Terrain(4)))));
    ASSERT_TRUE(orphan.ok());
    ASSERT_TRUE((*orphan)->Append("not even an asset").ok());
    ASSERT_TRUE((*orphan)->Sync().ok());
    absl::StatusOr<std::unique_ptr<WritableFile>> temp =
        image->Create(JoinPath(kDir, AssetFileName(AssetSha256(Cube(3))) + ".tmp"));
    ASSERT_TRUE(temp.ok());
    ASSERT_TRUE(image->SyncDir(kDir).ok());
    auto db = Open(image.get());
    ASSERT_NE(db, nullptr);
    EXPECT_EQ(AssetFiles(image.get()), (std::vector<std::string>{AssetSha256(Cube())}));
    EXPECT_EQ(db->recovery_report().asset_files_deleted, 1);
  }
  // A record whose file is gone or damaged: start-up refuses, naming the file.
  {
    std::unique_ptr<FaultFileSystem> broken = image->Clone();
    ASSERT_TRUE(broken->Delete(JoinPath(kDir, AssetFileName(AssetSha256(Cube())))).ok());
    absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(kDir, Options(broken.get()));
    EXPECT_EQ(db.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_TRUE(absl::StrContains(db.status().message(), "is missing")) << db.status();
  }
  {
    std::unique_ptr<FaultFileSystem> flipped = image->Clone();
    ASSERT_TRUE(flipped->FlipBit(JoinPath(kDir, AssetFileName(AssetSha256(Cube()))), 40, 3).ok());
    absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(kDir, Options(flipped.get()));
    EXPECT_EQ(db.status().code(), absl::StatusCode::kDataLoss);
  }
}

TEST(StoreAssets, AMachineCrashAtEveryStepOfAnUploadLeavesAConsistentStore) {
  // The crash image is taken right after each sync (of a file or a directory) of an upload and
  // its first body: each image opens, and holds the asset only with its file, and the body only
  // with its asset.
  int with_asset = 0;
  int without_asset = 0;
  for (int step = 0;; ++step) {
    SCOPED_TRACE(step);
    FaultFileSystem fs;
    auto db = Open(&fs);
    ASSERT_TRUE(db->CreateScene("level", SceneOptions{}).ok());
    ASSERT_TRUE(db->Checkpoint().ok());
    fs.CrashAfterSyncs(step);
    absl::StatusOr<AddedAsset> added = db->AddAsset("level", "box", Cube());
    ASSERT_TRUE(added.ok()) << added.status();
    ASSERT_TRUE(Place(*db, "level", 1, "box", AssetKind::kMesh, At(0)).ok());
    std::unique_ptr<FaultFileSystem> image = fs.TakeArmedCrashImage();
    if (image == nullptr) {
      // The file's sync, its directory's, the record's, the body's: each crashed after.
      EXPECT_GE(step, 4);
      break;
    }
    auto reopened = Open(image.get());
    ASSERT_NE(reopened, nullptr);
    std::shared_ptr<const Scene> scene = *reopened->GetScene("level");
    EXPECT_TRUE(scene->Validate());
    const bool has_asset = scene->GetAsset("box").has_value();
    ++(has_asset ? with_asset : without_asset);
    if (has_asset) {
      EXPECT_EQ(AssetFiles(image.get()), (std::vector<std::string>{AssetSha256(Cube())}));
    }
    if (std::optional<BodyState> body = scene->GetBody(1); body.has_value()) {
      EXPECT_TRUE(has_asset);
      EXPECT_EQ(body->asset, "box");
    }
    ASSERT_LT(step, 20);
  }
  EXPECT_GT(with_asset, 0);
  EXPECT_GT(without_asset, 0);
}

TEST(StoreAssets, ImportsCarryAssetsAndReplacingDropsTheOldOnes) {
  FaultFileSystem fs;
  {
    auto db = Open(&fs);
    SceneState state;
    state.version = 7;
    state.bodies.push_back(BodyState{.id = 3,
                                     .pose = At(1),
                                     .kind = BodyKind::kStatic,
                                     .asset = "box",
                                     .asset_kind = AssetKind::kMesh,
                                     .scale = 2.0f});
    std::vector<NamedSource> assets;
    assets.push_back(NamedSource{.name = "box", .source = Cube()});
    assets.push_back(NamedSource{.name = "ground", .source = Terrain(5)});
    std::promise<absl::Status> done;
    db->ImportScene("copy", SceneOptions{}, state, std::move(assets), false,
                    [&done](absl::Status status) { done.set_value(std::move(status)); });
    ASSERT_TRUE(done.get_future().get().ok());
    EXPECT_EQ(AssetNames(*db, "copy"), (std::vector<std::string>{"box", "ground"}));
    EXPECT_EQ(db->stored_assets().contents, 2u);

    // A body placing an asset the import does not hold: nothing imported, named by its path.
    SceneState bad = state;
    bad.bodies[0].asset = "nowhere";
    std::vector<NamedSource> one;
    one.push_back(NamedSource{.name = "box", .source = Cube()});
    std::promise<absl::Status> refused;
    db->ImportScene("other", SceneOptions{}, bad, std::move(one), false,
                    [&refused](absl::Status status) { refused.set_value(std::move(status)); });
    const absl::Status status = refused.get_future().get();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(status.message(), "bodies[0].shape.mesh.asset: no asset \"nowhere\" in the scene");
    EXPECT_FALSE(db->GetScene("other").ok());

    // Replaced by a scene without assets: their contents are dropped.
    ASSERT_TRUE(db->ImportScene("copy", SceneOptions{}, SceneState{}, /*replace=*/true).ok());
    EXPECT_EQ(db->stored_assets().contents, 0u);
  }
  auto db = Open(&fs);
  EXPECT_TRUE(AssetNames(*db, "copy").empty());
}

TEST(StoreAssets, TheServersAndTheScenesByteLimitsHold) {
  FaultFileSystem fs;
  DatabaseOptions options = Options(&fs);
  options.max_asset_bytes = Cube().size.SourceBytes() + 10;
  options.scene_assets = SceneAssetLimits{.max_assets = 2, .max_bytes = 1 << 20};
  auto db = Open(&fs, options);
  ASSERT_TRUE(db->CreateScene("a", SceneOptions{}).ok());
  ASSERT_TRUE(db->CreateScene("b", SceneOptions{}).ok());
  ASSERT_TRUE(db->AddAsset("a", "box", Cube()).ok());
  // The same content in another scene costs nothing more.
  ASSERT_TRUE(db->AddAsset("b", "box", Cube()).ok());
  absl::StatusOr<AddedAsset> over = db->AddAsset("b", "other", Cube(1));
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StartsWith(over.status().message(), "name: the server would hold"))
      << over.status();
  EXPECT_EQ(db->CheckAssetRoom("b", "other", Cube(1).size).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(db->CheckAssetRoom("b", "box", Cube(1).size).ok());  // the name decides later
  EXPECT_EQ(db->CheckAssetRoom("nope", "x", Cube().size).code(), absl::StatusCode::kNotFound);
}

// max_assets bounds the distinct contents of all scenes: a content another scene holds costs
// nothing, a new one past the limit is refused by an upload, an import and a checked import, and
// nothing is stored.
TEST(StoreAssets, TheServersContentCountLimitHolds) {
  FaultFileSystem fs;
  DatabaseOptions options = Options(&fs);
  options.max_assets = 1;
  auto db = Open(&fs, options);
  ASSERT_TRUE(db->CreateScene("a", SceneOptions{}).ok());
  ASSERT_TRUE(db->CreateScene("b", SceneOptions{}).ok());
  ASSERT_TRUE(db->AddAsset("a", "box", Cube()).ok());
  ASSERT_TRUE(db->AddAsset("b", "box", Cube()).ok());
  absl::StatusOr<AddedAsset> over = db->AddAsset("b", "other", Cube(1));
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(over.status().message(),
            "name: the server would hold 2 asset contents, over its limit of 1 (--max_assets)");
  std::vector<NamedSource> assets;
  assets.push_back(NamedSource{.name = "box", .source = Cube()});
  assets.push_back(NamedSource{.name = "ground", .source = Terrain(5)});
  absl::StatusOr<std::unique_ptr<Scene>> checked =
      db->CheckImport("c", SceneOptions{}, SceneState{}, false, assets);
  EXPECT_EQ(checked.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StartsWith(checked.status().message(), "assets: the server would hold 2"))
      << checked.status();
  std::promise<absl::Status> refused;
  db->ImportScene("c", SceneOptions{}, SceneState{}, std::move(assets), false,
                  [&refused](absl::Status status) { refused.set_value(std::move(status)); });
  const absl::Status status = refused.get_future().get();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StartsWith(status.message(), "assets: the server would hold 2")) << status;
  EXPECT_FALSE(db->GetScene("c").ok());
  EXPECT_EQ(db->stored_assets().contents, 1u);
  // A checked import of contents the server holds passes, its bodies placing its assets; a body
  // placing an asset the import does not bring is named by its path; nothing is created.
  std::vector<NamedSource> held;
  held.push_back(NamedSource{.name = "box", .source = Cube()});
  SceneState placed;
  placed.bodies.push_back(BodyState{.id = 3,
                                    .pose = At(1),
                                    .kind = BodyKind::kStatic,
                                    .asset = "box",
                                    .asset_kind = AssetKind::kMesh,
                                    .scale = 2.0f});
  absl::StatusOr<std::unique_ptr<Scene>> check =
      db->CheckImport("c", SceneOptions{}, placed, false, held);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_EQ((*check)->ListAssets().size(), 1u);
  placed.bodies[0].asset = "nowhere";
  check = db->CheckImport("c", SceneOptions{}, placed, false, held);
  EXPECT_EQ(check.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(check.status().message(),
            "bodies[0].shape.mesh.asset: no asset \"nowhere\" in the scene");
  EXPECT_FALSE(db->GetScene("c").ok());
  EXPECT_EQ(db->stored_assets().contents, 1u);
}

TEST(LogCodec, AssetRecordsAndAssetBodiesRoundTrip) {
  std::shared_ptr<const Asset> asset = Asset::Build(Cube());
  absl::StatusOr<DecodedRecord> add = DecodeLogRecord(EncodeAddAssetRecord("s", "box", *asset));
  ASSERT_TRUE(add.ok()) << add.status();
  EXPECT_EQ(add->type, DecodedRecord::Type::kAddAsset);
  ASSERT_EQ(add->assets.size(), 1u);
  EXPECT_EQ(add->assets[0].name, "box");
  EXPECT_EQ(add->assets[0].sha256, asset->sha256());
  EXPECT_EQ(add->assets[0].source_bytes, asset->source_bytes());
  absl::StatusOr<DecodedRecord> del = DecodeLogRecord(EncodeDeleteAssetRecord("s", "box"));
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(del->type, DecodedRecord::Type::kDeleteAsset);
  EXPECT_EQ(del->asset_name, "box");

  UpdateBatch batch;
  batch.ops.push_back(UpsertOp(BodyDesc{.id = 1, .shape = Box{Vec3{1, 2, 3}}}));
  UpdateOp placed = UpsertOp(BodyDesc{.id = 2, .pose = At(5)}, 9);
  PlaceAsset(&batch, &placed, "ground", AssetKind::kHeightfield, 0.5f);
  batch.ops.push_back(placed);
  batch.ops.push_back(SetPoseOp(1, At(2)));
  absl::StatusOr<DecodedRecord> update =
      DecodeLogRecord(EncodeUpdateRecord("s", ClientTag{}, 1, batch));
  ASSERT_TRUE(update.ok()) << update.status();
  ASSERT_EQ(update->batch.ops.size(), 3u);
  const UpdateOp& back = update->batch.ops[1];
  ASSERT_NE(back.asset, 0u);
  EXPECT_EQ(update->batch.asset_names[back.asset - 1], "ground");
  EXPECT_EQ(back.asset_kind, AssetKind::kHeightfield);
  EXPECT_EQ(back.scale, 0.5f);
  EXPECT_EQ(back.user_data, 9u);
  EXPECT_EQ(update->batch.ops[0].asset, 0u);
  EXPECT_EQ(update->batch.ops[0].shape.box.half_extents.y, 2.0f);

  // A snapshot names the scene's assets.
  SceneState state;
  state.log_position = 5;
  state.assets.push_back(NamedAsset{"box", asset});
  state.bodies.push_back(BodyState{.id = 4, .asset = "box", .asset_kind = AssetKind::kMesh});
  absl::StatusOr<DecodedSnapshot> snapshot =
      DecodeSnapshot(EncodeSnapshot("s", SceneOptions{}, 1, state));
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  ASSERT_EQ(snapshot->assets.size(), 1u);
  EXPECT_EQ(snapshot->assets[0].name, "box");
  EXPECT_TRUE(snapshot->state.assets.empty());
  EXPECT_EQ(snapshot->state.bodies[0].asset, "box");
}

TEST(AssetFiles, EncodeWhatTheMessageWouldSerialize) {
  for (const AssetSource& source : {Cube(), Terrain(6)}) {
    storage::v1::AssetFile message;
    ASSERT_TRUE(message.ParseFromString(EncodeAssetFile(source)));
    EXPECT_EQ(message.SerializeAsString(), EncodeAssetFile(source));
    EXPECT_EQ(message.kind(), static_cast<uint32_t>(source.size.kind));
    EXPECT_EQ(static_cast<size_t>(message.vertices_size()), 3 * source.vertices.size());
    EXPECT_EQ(static_cast<size_t>(message.heights_size()), source.heights.size());
  }
}

}  // namespace
}  // namespace collide
