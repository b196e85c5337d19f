// Database::SetSceneMoving: the move mark refuses writes (naming the destination) and lets
// reads go on; it survives restarts from the log alone and from a snapshot that covers it, and
// so does its clearing; a scene deleted while marked keeps telling writers where it went until
// the database is reopened or the name is created again.

#include <string>

#include "gtest/gtest.h"
#include "scene/move_destination.h"
#include "store/batch_stream.h"
#include "store/database.h"
#include "store/store_testing.h"

namespace collide {
namespace {

std::unique_ptr<Database> MustOpen(const std::string& dir) {
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(dir);
  EXPECT_TRUE(db.ok()) << db.status();
  return db.ok() ? *std::move(db) : nullptr;
}

// The status of an empty batch applied to `scene`.
absl::Status Write(Database& db, const std::string& scene) {
  return db.ApplyAndWait(scene, ClientTag{}, UpdateBatch{}).status();
}

TEST(MoveMark, RefusesWritesAndSurvivesRestartsFromTheLogAndFromASnapshot) {
  TempDir dir;
  uint64_t version = 0;
  {
    auto db = MustOpen(dir.path());
    ASSERT_TRUE(db->CreateScene("arena", SceneOptions{}).ok());
    BatchStream stream(3);
    for (int k = 1; k <= 4; ++k) {
      ASSERT_TRUE(
          db->ApplyAndWait("arena", ClientTag{5, static_cast<uint64_t>(k)}, stream.Next()).ok());
    }
    version = (*db->GetScene("arena"))->version();
    ASSERT_TRUE(db->SetSceneMoving("arena", "10.0.0.4:50051").ok());
    const absl::Status refused = Write(*db, "arena");
    EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(refused.message(), "scene: scene \"arena\" moved to 10.0.0.4:50051");
    EXPECT_EQ(MovedToOf(refused), "10.0.0.4:50051");
    // Duplicates are refused too: the writer must go to the destination.
    EXPECT_EQ(db->ApplyAndWait("arena", ClientTag{5, 4}, UpdateBatch{}).status().code(),
              absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ((*db->GetScene("arena"))->version(), version);
  }
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    auto db = MustOpen(dir.path());
    std::shared_ptr<const Scene> scene = *db->GetScene("arena");
    EXPECT_EQ(scene->moved_to(), "10.0.0.4:50051");
    EXPECT_EQ(scene->version(), version);
    EXPECT_EQ(Write(*db, "arena").code(), absl::StatusCode::kFailedPrecondition);
    // The second round starts from a snapshot that covers the mark.
    if (round == 0) {
      ASSERT_TRUE(db->Checkpoint().ok());
    }
    if (round == 1) {
      EXPECT_EQ(db->recovery_report().snapshots_loaded, 1);
    }
  }
  {
    auto db = MustOpen(dir.path());
    ASSERT_TRUE(db->SetSceneMoving("arena", "").ok());
    EXPECT_TRUE(Write(*db, "arena").ok());
  }
  auto db = MustOpen(dir.path());
  EXPECT_EQ((*db->GetScene("arena"))->moved_to(), "");
  EXPECT_EQ((*db->GetScene("arena"))->version(), version + 1);
  EXPECT_TRUE(db->ApplyAndWait("arena", ClientTag{5, 4}, UpdateBatch{})->duplicate);
}

TEST(MoveMark, ADeletedSceneTellsWritersWhereItWentUntilItsNameIsReused) {
  TempDir dir;
  {
    auto db = MustOpen(dir.path());
    ASSERT_TRUE(db->CreateScene("arena", SceneOptions{}).ok());
    ASSERT_TRUE(db->CreateScene("other", SceneOptions{}).ok());
    ASSERT_TRUE(db->SetSceneMoving("arena", "shard-2:50051").ok());
    ASSERT_TRUE(db->DeleteScene("arena").ok());
    ASSERT_TRUE(db->DeleteScene("other").ok());
    const absl::Status moved = Write(*db, "arena");
    EXPECT_EQ(moved.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(MovedToOf(moved), "shard-2:50051");
    EXPECT_EQ(db->MovedAway("arena"), "shard-2:50051");
    // A scene deleted without a move is just gone; reads of the moved one too.
    EXPECT_EQ(Write(*db, "other").code(), absl::StatusCode::kNotFound);
    EXPECT_EQ(db->GetScene("arena").status().code(), absl::StatusCode::kNotFound);
    // Created again here: it is this server's scene again.
    ASSERT_TRUE(db->CreateScene("arena", SceneOptions{}).ok());
    EXPECT_EQ(db->MovedAway("arena"), "");
    EXPECT_TRUE(Write(*db, "arena").ok());
    ASSERT_TRUE(db->SetSceneMoving("arena", "shard-3:50051").ok());
    ASSERT_TRUE(db->DeleteScene("arena").ok());
    EXPECT_EQ(db->MovedAway("arena"), "shard-3:50051");
  }
  // Not durable: after a restart the name is unknown.
  auto db = MustOpen(dir.path());
  EXPECT_EQ(Write(*db, "arena").code(), absl::StatusCode::kNotFound);
}

TEST(MoveMark, BadDestinationsAndUnknownScenesAreRefused) {
  TempDir dir;
  auto db = MustOpen(dir.path());
  ASSERT_TRUE(db->CreateScene("arena", SceneOptions{}).ok());
  for (const std::string& bad :
       {std::string(kMaxMoveDestinationLength + 1, 'a'), std::string("a b"), std::string("a\tb"),
        std::string("a\x7f"), std::string("\xff")}) {
    const absl::Status status = db->SetSceneMoving("arena", bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_EQ(status.message().substr(0, 12), "destination:") << status;
  }
  EXPECT_EQ(db->SetSceneMoving("nothing", "a:1").code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Write(*db, "arena").ok());
  EXPECT_TRUE(db->SetSceneMoving("arena", std::string(kMaxMoveDestinationLength, 'a')).ok());
}

}  // namespace
}  // namespace collide
