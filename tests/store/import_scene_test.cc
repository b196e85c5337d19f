// Database::ImportScene: a scene created holding a whole state in one log record. It keeps its
// bodies, version, tick and client marks across restarts (from the log alone, and from a
// snapshot taken after it); a replacement is the same one record; refusals leave nothing;
// CheckImport answers as ImportScene would and creates nothing.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "store/batch_stream.h"
#include "store/database.h"
#include "store/store_testing.h"

namespace collide {
namespace {

std::unique_ptr<Database> MustOpen(const std::string& dir, DatabaseOptions options = {}) {
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(dir, std::move(options));
  EXPECT_TRUE(db.ok()) << db.status();
  return db.ok() ? *std::move(db) : nullptr;
}

// The state of a scene after `batches` batches of client 8, taken from a scratch database.
SceneState SourceState(const std::string& dir, int batches) {
  auto db = MustOpen(dir);
  EXPECT_TRUE(db->CreateScene("src", SceneOptions{}).ok());
  BatchStream stream(5);
  for (int k = 1; k <= batches; ++k) {
    UpdateBatch batch = stream.Next();
    batch.tick = static_cast<uint64_t>(k / 3);
    EXPECT_TRUE(db->ApplyAndWait("src", ClientTag{8, static_cast<uint64_t>(k)}, batch).ok());
  }
  return (*db->GetScene("src"))->CaptureState();
}

TEST(ImportScene, AnImportedSceneSurvivesRestartsFromTheLogAndFromASnapshot) {
  TempDir source_dir;
  const SceneState source = SourceState(source_dir.path(), 60);
  ASSERT_GT(source.bodies.size(), 3u);
  ASSERT_EQ(source.clients.size(), 1u);
  ASSERT_GT(source.tick, 0u);
  TempDir dir;
  const SceneOptions options{.fat_margin = 0.2f, .history_ticks = 5};
  {
    auto db = MustOpen(dir.path());
    ASSERT_TRUE(db->ImportScene("copy", options, source, /*replace=*/false).ok());
    EXPECT_TRUE(SameState((*db->GetScene("copy"))->CaptureState(), source));
  }
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    auto db = MustOpen(dir.path());
    std::shared_ptr<const Scene> copy = *db->GetScene("copy");
    EXPECT_EQ(copy->options().fat_margin, 0.2f);
    EXPECT_EQ(copy->options().history_ticks, 5u);
    EXPECT_TRUE(SameState(copy->CaptureState(), source));
    EXPECT_TRUE(copy->Validate());
    EXPECT_EQ(copy->tick(), source.tick);
    // The second round starts from a snapshot that covers the import record.
    if (round == 0) {
      ASSERT_TRUE(db->Checkpoint().ok());
    }
    if (round == 1) {
      EXPECT_EQ(db->recovery_report().snapshots_loaded, 1);
    }
  }
  auto db = MustOpen(dir.path());
  // The client's marks came along: its last batch is a duplicate, the next one applies.
  const uint64_t last = source.clients[0].sequence;
  EXPECT_TRUE(db->ApplyAndWait("copy", ClientTag{8, last}, UpdateBatch{})->duplicate);
  EXPECT_EQ(db->ApplyAndWait("copy", ClientTag{8, last + 1}, UpdateBatch{})->version,
            source.version + 1);
}

TEST(ImportScene, AReplacementIsOneRecordAndRefusalsLeaveNothing) {
  TempDir source_dir;
  const SceneState source = SourceState(source_dir.path(), 20);
  TempDir dir;
  {
    auto db = MustOpen(dir.path());
    ASSERT_TRUE(db->CreateScene("arena", SceneOptions{}).ok());
    BatchStream stream(2);
    for (int k = 0; k < 5; ++k) ASSERT_TRUE(db->ApplyAndWait("arena", {}, stream.Next()).ok());
    // The old scene was snapshotted: its snapshot must not come back after the replacement.
    ASSERT_TRUE(db->Checkpoint().ok());
    EXPECT_EQ(db->ImportScene("arena", SceneOptions{}, source, false).code(),
              absl::StatusCode::kAlreadyExists);
    EXPECT_EQ(db->ImportScene("bad name", SceneOptions{}, source, false).code(),
              absl::StatusCode::kInvalidArgument);
    SceneState duplicate = source;
    duplicate.bodies.push_back(duplicate.bodies.front());
    EXPECT_EQ(db->ImportScene("dup", SceneOptions{}, duplicate, false).code(),
              absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(db->ImportScene("full", SceneOptions{.max_bodies = 1}, source, false).code(),
              absl::StatusCode::kResourceExhausted);
    EXPECT_EQ(db->SceneNames(), (std::vector<std::string>{"arena"}));
    ASSERT_TRUE(db->ImportScene("arena", SceneOptions{}, source, /*replace=*/true).ok());
    EXPECT_TRUE(SameState((*db->GetScene("arena"))->CaptureState(), source));
  }
  {
    auto db = MustOpen(dir.path());
    EXPECT_EQ(db->SceneNames(), (std::vector<std::string>{"arena"}));
    EXPECT_TRUE(SameState((*db->GetScene("arena"))->CaptureState(), source));
    ASSERT_TRUE(db->Checkpoint().ok());
  }
  auto db = MustOpen(dir.path());
  EXPECT_TRUE(SameState((*db->GetScene("arena"))->CaptureState(), source));
}

TEST(ImportScene, CheckImportAnswersAsTheImportWouldAndCreatesNothing) {
  TempDir source_dir;
  const SceneState source = SourceState(source_dir.path(), 20);
  TempDir dir;
  {
    DatabaseOptions options;
    options.max_scenes = 2;
    auto db = MustOpen(dir.path(), options);
    ASSERT_TRUE(db->CreateScene("arena", SceneOptions{}).ok());
    absl::StatusOr<std::unique_ptr<Scene>> checked =
        db->CheckImport("copy", SceneOptions{.history_ticks = 3}, source, false);
    ASSERT_TRUE(checked.ok()) << checked.status();
    EXPECT_EQ((*checked)->name(), "copy");
    EXPECT_EQ((*checked)->options().history_ticks, 3u);
    EXPECT_TRUE(SameState((*checked)->CaptureState(), source));
    EXPECT_EQ(db->SceneNames(), (std::vector<std::string>{"arena"}));
    // Each refusal as ImportScene gives it.
    EXPECT_EQ(db->CheckImport("arena", SceneOptions{}, source, false).status().code(),
              absl::StatusCode::kAlreadyExists);
    EXPECT_TRUE(db->CheckImport("arena", SceneOptions{}, source, true).ok());
    EXPECT_EQ(db->CheckImport("bad name", SceneOptions{}, source, false).status().code(),
              absl::StatusCode::kInvalidArgument);
    SceneState duplicate = source;
    duplicate.bodies.push_back(duplicate.bodies.front());
    EXPECT_EQ(db->CheckImport("dup", SceneOptions{}, duplicate, false).status().code(),
              absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(db->CheckImport("full", SceneOptions{.max_bodies = 1}, source, false).status().code(),
              absl::StatusCode::kResourceExhausted);
    ASSERT_TRUE(db->CreateScene("second", SceneOptions{}).ok());
    EXPECT_EQ(db->CheckImport("third", SceneOptions{}, source, false).status().code(),
              absl::StatusCode::kResourceExhausted);
    EXPECT_EQ(db->SceneNames(), (std::vector<std::string>{"arena", "second"}));
    EXPECT_EQ((*db->GetScene("arena"))->CaptureState().bodies.size(), 0u);
  }
  // Nothing was logged either.
  auto db = MustOpen(dir.path());
  EXPECT_EQ(db->SceneNames(), (std::vector<std::string>{"arena", "second"}));
  EXPECT_EQ((*db->GetScene("arena"))->CaptureState().bodies.size(), 0u);
}

}  // namespace
}  // namespace collide
