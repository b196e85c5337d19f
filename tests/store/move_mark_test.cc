// Database::SetSceneMoving: the move mark refuses writes (naming the destination) and lets
// reads go on; it survives restarts from the log alone and from a snapshot that covers it, and
// so does its clearing; a scene deleted while marked keeps telling writers where it went, across
// restarts and crashes (the moved-scenes file), until the name is created again; the list is
// bounded, and a damaged or unwritable list never stops a start-up or a deletion. A marked scene
// is neither re-targeted nor replaced by an import; a log written before that was refused is
// replayed as it was written.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "scene/move_destination.h"
#include "store/batch_stream.h"
#include "store/database.h"
#include "store/fault_file_system.h"
#include "store/log_codec.h"
#include "store/moved_scenes.h"
#include "store/record_format.h"
#include "store/store_files.h"
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
  // Durable: after a restart writers are still told where it went; the other is just gone.
  {
    auto db = MustOpen(dir.path());
    EXPECT_EQ(db->recovery_report().moved_scenes, 1u);
    EXPECT_EQ(db->recovery_report().moved_scenes_problem, "");
    const absl::Status moved = Write(*db, "arena");
    EXPECT_EQ(moved.code(), absl::StatusCode::kFailedPrecondition) << moved;
    EXPECT_EQ(MovedToOf(moved), "shard-3:50051");
    EXPECT_EQ(Write(*db, "other").code(), absl::StatusCode::kNotFound);
    // Created again: forgotten, and that too survives a restart.
    ASSERT_TRUE(db->CreateScene("arena", SceneOptions{}).ok());
  }
  auto db = MustOpen(dir.path());
  EXPECT_EQ(db->recovery_report().moved_scenes, 0u);
  EXPECT_EQ(db->MovedAway("arena"), "");
  ASSERT_TRUE(db->DeleteScene("arena").ok());
  EXPECT_EQ(Write(*db, "arena").code(), absl::StatusCode::kNotFound);
}

// Marks `name` as moving to `destination` and deletes it, as the last steps of a move do.
void MoveAway(Database& db, const std::string& name, const std::string& destination) {
  ASSERT_TRUE(db.CreateScene(name, SceneOptions{}).ok());
  ASSERT_TRUE(db.SetSceneMoving(name, destination).ok());
  ASSERT_TRUE(db.DeleteScene(name).ok());
}

TEST(MoveMark, TheMovedListKeepsTheNewestScenesAcrossRestarts) {
  // In memory: a thousand moves rewrite the list a thousand times, each with its syncs.
  FaultFileSystem fs;
  DatabaseOptions options;
  options.file_system = &fs;
  const int kMoved = static_cast<int>(kMaxMovedScenes) + 3;
  {
    auto db = Database::Open("/data", options);
    ASSERT_TRUE(db.ok()) << db.status();
    for (int i = 0; i < kMoved; ++i) {
      MoveAway(**db, absl::StrCat("s", i), absl::StrCat("shard-", i % 7, ":5005", i % 10));
    }
    // Moved twice: the newer destination counts, in the older one's place in the order.
    MoveAway(**db, "s1000", "elsewhere:1");
  }
  auto reopened = Database::Open("/data", options);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  Database* db = reopened->get();
  EXPECT_EQ(db->recovery_report().moved_scenes, kMaxMovedScenes);
  for (int i = 0; i < kMoved; ++i) {
    const std::string name = absl::StrCat("s", i);
    const std::string expected = i < kMoved - static_cast<int>(kMaxMovedScenes) ? ""
                                 : i == 1000                                    ? "elsewhere:1"
                                             : absl::StrCat("shard-", i % 7, ":5005", i % 10);
    EXPECT_EQ(db->MovedAway(name), expected) << name;
  }
}

TEST(MoveMark, AMoveAcknowledgedBeforeAMachineCrashIsRemembered) {
  FaultFileSystem fs;
  DatabaseOptions options;
  options.file_system = &fs;
  options.durability = DurabilityPolicy::kAlways;
  const std::string kDir = "/data";
  {
    auto opened = Database::Open(kDir, options);
    ASSERT_TRUE(opened.ok()) << opened.status();
    MoveAway(**opened, "arena", "10.0.0.4:50051");
    // What a machine crash right after the deletion's acknowledgement leaves.
    std::unique_ptr<FaultFileSystem> image = fs.CrashImage();
    DatabaseOptions crashed = options;
    crashed.file_system = image.get();
    (*opened)->Close().IgnoreError();
    auto reopened = Database::Open(kDir, crashed);
    ASSERT_TRUE(reopened.ok()) << reopened.status();
    EXPECT_EQ((*reopened)->MovedAway("arena"), "10.0.0.4:50051");
    EXPECT_FALSE((*reopened)->GetScene("arena").ok());
  }
}

TEST(MoveMark, AnUnwritableListNeverFailsTheDeletion) {
  FaultFileSystem fs;
  DatabaseOptions options;
  options.file_system = &fs;
  options.durability = DurabilityPolicy::kNone;
  // Every sync from here on fails (the list's among them); a log the database cannot sync at
  // its close is not what this test is about.
  options.on_fatal_error = [](const absl::Status&) {};
  auto opened = Database::Open("/data", options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  Database& db = **opened;
  ASSERT_TRUE(db.CreateScene("arena", SceneOptions{}).ok());
  ASSERT_TRUE(db.SetSceneMoving("arena", "10.0.0.4:50051").ok());
  fs.FailSyncs(1 << 20);
  EXPECT_TRUE(db.DeleteScene("arena").ok());
  // Still known until the process ends; the failure is in the stats.
  EXPECT_EQ(db.MovedAway("arena"), "10.0.0.4:50051");
  EXPECT_FALSE(db.stats().moved_scenes_error.ok());
  EXPECT_EQ(MovedToOf(Write(db, "arena")), "10.0.0.4:50051");
}

TEST(MoveMark, ADamagedListNeverStopsAStartUp) {
  TempDir dir;
  {
    auto db = MustOpen(dir.path());
    MoveAway(*db, "arena", "10.0.0.4:50051");
  }
  const std::string path = JoinPath(dir.path(), MovedScenes::kFileName);
  for (const std::string& damage :
       {std::string("garbage"), std::string(), std::string(64, '\xff')}) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << damage;
    auto db = MustOpen(dir.path());
    ASSERT_NE(db, nullptr);
    EXPECT_NE(db->recovery_report().moved_scenes_problem, "");
    EXPECT_EQ(db->recovery_report().moved_scenes, 0u);
    EXPECT_EQ(Write(*db, "arena").code(), absl::StatusCode::kNotFound);
  }
  // A well-framed list with an entry no server writes is dropped whole.
  {
    FileSystem* fs = PosixFileSystem();
    std::remove(path.c_str());
    MovedScenes list(fs, dir.path());
    ASSERT_TRUE(list.Add("bad name", "10.0.0.4:50051").ok());
  }
  {
    auto db = MustOpen(dir.path());
    EXPECT_NE(db->recovery_report().moved_scenes_problem.find("no server writes"),
              std::string::npos)
        << db->recovery_report().moved_scenes_problem;
    // The next move rewrites the list whole.
    MoveAway(*db, "next", "10.0.0.5:50051");
  }
  auto db = MustOpen(dir.path());
  EXPECT_EQ(db->recovery_report().moved_scenes_problem, "");
  EXPECT_EQ(db->MovedAway("next"), "10.0.0.5:50051");
  EXPECT_EQ(db->MovedAway("bad name"), "");
}

TEST(MoveMark, AListedNameThatExistsAgainIsThisServersScene) {
  TempDir dir;
  {
    auto db = MustOpen(dir.path());
    ASSERT_TRUE(db->CreateScene("arena", SceneOptions{}).ok());
  }
  // A list naming a live scene: what a crash between a re-creation and the list's rewrite leaves.
  ASSERT_TRUE(MovedScenes(PosixFileSystem(), dir.path()).Add("arena", "10.0.0.4:50051").ok());
  auto db = MustOpen(dir.path());
  EXPECT_EQ(db->MovedAway("arena"), "");
  EXPECT_TRUE(Write(*db, "arena").ok());
  ASSERT_TRUE(db->DeleteScene("arena").ok());
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

TEST(MoveMark, AMarkedSceneIsNeitherRetargetedNorReplacedByAnImport) {
  TempDir dir;
  SceneState before;
  SceneState other;
  {
    auto db = MustOpen(dir.path());
    ASSERT_TRUE(db->CreateScene("arena", SceneOptions{}).ok());
    ASSERT_TRUE(db->CreateScene("other", SceneOptions{}).ok());
    BatchStream stream(4);
    for (int k = 0; k < 3; ++k) ASSERT_TRUE(db->ApplyAndWait("arena", {}, stream.Next()).ok());
    BatchStream other_stream(9);
    for (int k = 0; k < 2; ++k) {
      ASSERT_TRUE(db->ApplyAndWait("other", {}, other_stream.Next()).ok());
    }
    other = (*db->GetScene("other"))->CaptureState();
    ASSERT_TRUE(db->SetSceneMoving("arena", "10.0.0.4:50051").ok());
    before = (*db->GetScene("arena"))->CaptureState();
    // The same destination again: accepted, nothing changes.
    ASSERT_TRUE(db->SetSceneMoving("arena", "10.0.0.4:50051").ok());
    EXPECT_EQ((*db->GetScene("arena"))->moved_to(), "10.0.0.4:50051");
    // Another destination: refused, naming the one it is moving to.
    const absl::Status retarget = db->SetSceneMoving("arena", "10.0.0.5:50051");
    EXPECT_EQ(retarget.code(), absl::StatusCode::kFailedPrecondition) << retarget;
    EXPECT_EQ(retarget.message(),
              "destination: scene \"arena\" is already moving to 10.0.0.4:50051 (clear the mark "
              "first)");
    EXPECT_EQ(MovedToOf(retarget), "10.0.0.4:50051");
    EXPECT_EQ((*db->GetScene("arena"))->moved_to(), "10.0.0.4:50051");
    // An import onto it with replace: refused as its writes are, checked or not.
    const absl::Status replaced = db->ImportScene("arena", SceneOptions{}, other, true);
    EXPECT_EQ(replaced.code(), absl::StatusCode::kFailedPrecondition) << replaced;
    EXPECT_EQ(replaced.message(), "scene: scene \"arena\" moved to 10.0.0.4:50051");
    EXPECT_EQ(MovedToOf(replaced), "10.0.0.4:50051");
    const absl::Status checked = db->CheckImport("arena", SceneOptions{}, other, true).status();
    EXPECT_EQ(checked.code(), absl::StatusCode::kFailedPrecondition) << checked;
    EXPECT_EQ(MovedToOf(checked), "10.0.0.4:50051");
    std::shared_ptr<const Scene> scene = *db->GetScene("arena");
    EXPECT_TRUE(SameState(scene->CaptureState(), before));
    EXPECT_EQ(scene->moved_to(), "10.0.0.4:50051");
  }
  // Nothing of the refusals was logged: the restarted store holds the mark and the state.
  {
    auto db = MustOpen(dir.path());
    std::shared_ptr<const Scene> scene = *db->GetScene("arena");
    EXPECT_EQ(scene->moved_to(), "10.0.0.4:50051");
    EXPECT_TRUE(SameState(scene->CaptureState(), before));
    EXPECT_EQ(db->SetSceneMoving("arena", "10.0.0.5:50051").code(),
              absl::StatusCode::kFailedPrecondition);
    // Cleared (a failed move's rollback), the scene may be marked elsewhere or replaced.
    ASSERT_TRUE(db->SetSceneMoving("arena", "").ok());
    ASSERT_TRUE(db->SetSceneMoving("arena", "10.0.0.5:50051").ok());
    ASSERT_TRUE(db->SetSceneMoving("arena", "").ok());
    ASSERT_TRUE(db->ImportScene("arena", SceneOptions{}, other, true).ok());
  }
  auto db = MustOpen(dir.path());
  EXPECT_EQ((*db->GetScene("arena"))->moved_to(), "");
  EXPECT_TRUE(SameState((*db->GetScene("arena"))->CaptureState(), other));
}

TEST(MoveMark, ALogThatRetargetsAMarkIsReplayedAsWritten) {
  TempDir dir;
  {
    auto db = MustOpen(dir.path());
    ASSERT_TRUE(db->CreateScene("arena", SceneOptions{}).ok());  // record 1
    ASSERT_TRUE(db->SetSceneMoving("arena", "a:1").ok());        // record 2
    ASSERT_TRUE(db->Close().ok());
  }
  // What a server that still re-targeted marks wrote: a second mark elsewhere.
  std::string segment;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    uint64_t first = 0;
    if (ParseSegmentFileName(entry.path().filename().string(), &first)) {
      segment = entry.path().string();
    }
  }
  ASSERT_FALSE(segment.empty());
  std::string tail;
  AppendRecord(3, EncodeMoveSceneRecord("arena", "b:2"), &tail);
  {
    std::ofstream out(segment, std::ios::binary | std::ios::app);
    out << tail;
    ASSERT_TRUE(out.good());
  }
  auto db = MustOpen(dir.path());
  ASSERT_NE(db, nullptr);
  EXPECT_EQ((*db->GetScene("arena"))->moved_to(), "b:2");
  EXPECT_EQ(MovedToOf(Write(*db, "arena")), "b:2");
}

}  // namespace
}  // namespace collide
