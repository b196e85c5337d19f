// The Database facade on the real (POSIX) file system: scene lifecycle, acknowledgements per
// durability policy, restarts, snapshots and segment deletion, the directory lock.

#include "store/database.h"

#include <atomic>
#include <future>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/field_error.h"
#include "gtest/gtest.h"
#include "store/batch_stream.h"
#include "store/store_files.h"
#include "store/store_testing.h"

namespace collide {
namespace {

UpdateBatch Create(uint64_t id, float x) {
  return UpdateBatch{
      {UpsertOp(BodyDesc{.id = id, .shape = Sphere{1}, .pose = Pose{.position = {x, 0, 0}}})}};
}

std::unique_ptr<Database> MustOpen(const std::string& dir, DatabaseOptions options = {}) {
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(dir, std::move(options));
  EXPECT_TRUE(db.ok()) << db.status();
  return db.ok() ? *std::move(db) : nullptr;
}

TEST(Database, ScenesAreCreatedListedAndDeleted) {
  TempDir dir;
  auto db = MustOpen(dir.path());
  ASSERT_TRUE(db->CreateScene("b", SceneOptions{}).ok());
  ASSERT_TRUE(db->CreateScene("a", SceneOptions{}).ok());
  EXPECT_EQ(db->CreateScene("a", SceneOptions{}).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(db->CreateScene("bad name", SceneOptions{}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(db->SceneNames(), (std::vector<std::string>{"a", "b"}));
  ASSERT_TRUE(db->DeleteScene("a").ok());
  EXPECT_EQ(db->DeleteScene("a").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(db->SceneNames(), (std::vector<std::string>{"b"}));
  absl::StatusOr<ApplyAck> missing = db->ApplyAndWait("a", ClientTag{}, Create(1, 0));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "scene: no scene \"a\"");
  EXPECT_EQ(db->GetScene("a").status().code(), absl::StatusCode::kNotFound);
}

TEST(Database, TheSceneIndexCreatesListsGetsAndDeletes) {
  TempDir dir;
  auto db = MustOpen(dir.path());
  ASSERT_TRUE(db->CreateScene("b", SceneOptions{}).ok());
  ASSERT_TRUE(db->CreateScene("a", SceneOptions{.fat_margin = 0.5f}).ok());
  EXPECT_EQ(db->SceneNames(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(db->scene_count(), 2u);
  absl::StatusOr<std::shared_ptr<const Scene>> a = db->GetScene("a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ((*a)->options().fat_margin, 0.5f);

  const absl::Status dup = db->CreateScene("a", SceneOptions{});
  EXPECT_EQ(dup.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(dup.message(), "scene: scene \"a\" already exists");

  ASSERT_TRUE(db->DeleteScene("a").ok());
  EXPECT_TRUE((*a)->deleted());  // holders see the deletion
  absl::StatusOr<std::shared_ptr<const Scene>> gone = db->GetScene("a");
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(gone.status().message(), "scene: no scene \"a\"");
  EXPECT_EQ(db->DeleteScene("a").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(db->SceneNames(), (std::vector<std::string>{"b"}));
  // The name is free again.
  EXPECT_TRUE(db->CreateScene("a", SceneOptions{}).ok());
}

TEST(Database, RejectsBadNamesBadOptionsAndTooManyScenes) {
  TempDir dir;
  DatabaseOptions options;
  options.max_scenes = 2;
  auto db = MustOpen(dir.path(), options);
  EXPECT_EQ(db->CreateScene("no/slash", SceneOptions{}).code(), absl::StatusCode::kInvalidArgument);
  const absl::Status bad_margin = db->CreateScene("x", SceneOptions{.fat_margin = -1});
  EXPECT_EQ(bad_margin.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad_margin.message(), "options.fat_margin: must be finite and in [0, 1e6], got -1");
  EXPECT_EQ(db->CreateScene("x", SceneOptions{.max_bodies = 0}).message(),
            "options.max_bodies: must be in [1, 1073741824], got 0");
  ASSERT_TRUE(db->CreateScene("x", SceneOptions{}).ok());
  ASSERT_TRUE(db->CreateScene("y", SceneOptions{}).ok());
  const absl::Status full = db->CreateScene("z", SceneOptions{});
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(full.message(), "scene: the server holds its limit of 2 scenes");
  // A refused create logged nothing.
  const uint64_t last = db->stats().last_sequence;
  EXPECT_FALSE(db->CreateScene("z", SceneOptions{}).ok());
  EXPECT_EQ(db->stats().last_sequence, last);
}

TEST(Database, AScenesLogPositionIsItsCreateRecord) {
  TempDir dir;
  auto db = MustOpen(dir.path());
  ASSERT_TRUE(db->CreateScene("a", SceneOptions{}).ok());
  const uint64_t created = db->stats().last_sequence;
  EXPECT_EQ((*db->GetScene("a"))->log_position(), created);
}

TEST(Database, StatsOfAScene) {
  TempDir dir;
  auto db = MustOpen(dir.path());
  ASSERT_TRUE(db->CreateScene("s", SceneOptions{}).ok());
  ASSERT_TRUE(db->ApplyAndWait("s", ClientTag{},
                               UpdateBatch{{UpsertOp(BodyDesc{.id = 1, .shape = Sphere{1}})}})
                  .ok());
  absl::StatusOr<std::shared_ptr<const Scene>> s = db->GetScene("s");
  ASSERT_TRUE(s.ok());
  const SceneStats stats = (*s)->Stats();
  EXPECT_EQ(stats.version, 1u);
  EXPECT_EQ(stats.body_count, 1);
  EXPECT_EQ(db->GetScene("t").status().code(), absl::StatusCode::kNotFound);
}

TEST(Database, AcknowledgementsFollowEachScenesPolicy) {
  TempDir dir;
  DatabaseOptions options;
  options.sync_interval = std::chrono::milliseconds(0);  // no periodic fsyncs: see the flags
  auto db = MustOpen(dir.path(), options);
  ASSERT_TRUE(
      db->CreateScene("always", SceneOptions{.durability = DurabilityPolicy::kAlways}).ok());
  ASSERT_TRUE(
      db->CreateScene("periodic", SceneOptions{.durability = DurabilityPolicy::kPeriodic}).ok());
  ASSERT_TRUE(db->CreateScene("none", SceneOptions{.durability = DurabilityPolicy::kNone}).ok());
  absl::StatusOr<ApplyAck> a = db->ApplyAndWait("always", ClientTag{}, Create(1, 0));
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->durable);
  EXPECT_EQ(a->version, 1u);
  absl::StatusOr<ApplyAck> p = db->ApplyAndWait("periodic", ClientTag{}, Create(1, 0));
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->durable);
  absl::StatusOr<ApplyAck> n = db->ApplyAndWait("none", ClientTag{}, Create(1, 0));
  ASSERT_TRUE(n.ok());
  EXPECT_FALSE(n->durable);
  ASSERT_TRUE(db->Flush().ok());
  EXPECT_EQ(db->stats().synced_sequence, db->stats().last_sequence);
}

TEST(Database, ValidationErrorsComeBackThroughTheCallback) {
  TempDir dir;
  auto db = MustOpen(dir.path());
  ASSERT_TRUE(db->CreateScene("s", SceneOptions{.max_bodies = 1}).ok());
  std::promise<absl::Status> outcome;
  db->Apply("s", ClientTag{}, UpdateBatch{{SetPoseOp(17, Pose{})}},
            [&](absl::StatusOr<ApplyAck> ack) { outcome.set_value(std::move(ack).status()); });
  absl::Status status = outcome.get_future().get();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "ops[0].set_pose.id: no body 17 in scene \"s\"");
  // The op and field also travel as data, for the service to name in the request's words.
  const std::optional<FieldError> error = GetFieldError(status);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->list, "ops");
  EXPECT_EQ(error->index, 0u);
  EXPECT_EQ(error->field, "set_pose.id");
  ASSERT_TRUE(db->ApplyAndWait("s", ClientTag{}, Create(1, 0)).ok());
  EXPECT_EQ(db->ApplyAndWait("s", ClientTag{}, Create(2, 0)).status().code(),
            absl::StatusCode::kResourceExhausted);
  const uint64_t last = db->stats().last_sequence;
  // Rejected batches are not logged.
  EXPECT_EQ(db->ApplyAndWait("s", ClientTag{}, Create(3, 0)).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(db->stats().last_sequence, last);
}

TEST(Database, ARestartKeepsScenesBodiesVersionsAndClientMarks) {
  TempDir dir;
  SceneState before;
  {
    auto db = MustOpen(dir.path());
    ASSERT_TRUE(db->CreateScene("arena", SceneOptions{.fat_margin = 0.3f}).ok());
    ASSERT_TRUE(db->CreateScene("empty", SceneOptions{}).ok());
    BatchStream stream(3);
    for (uint64_t k = 1; k <= 100; ++k) {
      ASSERT_TRUE(db->ApplyAndWait("arena", ClientTag{8, k}, stream.Next()).ok());
    }
    before = (*db->GetScene("arena"))->CaptureState();
    ASSERT_TRUE(db->Close().ok());
    EXPECT_EQ(db->Close().code(), absl::StatusCode::kOk);  // idempotent
    EXPECT_EQ(db->ApplyAndWait("arena", ClientTag{}, UpdateBatch{}).status().code(),
              absl::StatusCode::kFailedPrecondition);
  }
  auto db = MustOpen(dir.path());
  EXPECT_EQ(db->SceneNames(), (std::vector<std::string>{"arena", "empty"}));
  std::shared_ptr<const Scene> arena = *db->GetScene("arena");
  EXPECT_EQ(arena->options().fat_margin, 0.3f);
  EXPECT_TRUE(SameState(arena->CaptureState(), before));
  EXPECT_TRUE(arena->Validate());
  EXPECT_EQ(db->recovery_report().records_replayed, 102u);
  EXPECT_FALSE(db->recovery_report().torn_tail.has_value());
  // Batch 100 again is a duplicate; 101 applies.
  EXPECT_TRUE(db->ApplyAndWait("arena", ClientTag{8, 100}, UpdateBatch{})->duplicate);
  EXPECT_EQ(db->ApplyAndWait("arena", ClientTag{8, 101}, UpdateBatch{})->version, 101u);
}

TEST(Database, SnapshotsLetOldSegmentsGo) {
  TempDir dir;
  // `periodic` acknowledges a batch once it is written, so every batch is written before the
  // next is applied and segments roll at their size, as in steady streaming. (Under `none` the
  // committer may fall behind and write many batches into one oversized segment, which makes
  // the segment count depend on timing.)
  DatabaseOptions options = CrashTestOptions(DurabilityPolicy::kPeriodic);
  SceneState before;
  {
    auto db = MustOpen(dir.path(), options);
    ASSERT_TRUE(db->CreateScene("arena", SceneOptions{}).ok());
    ASSERT_TRUE(db->CreateScene("idle", SceneOptions{}).ok());
    ASSERT_TRUE(db->ApplyAndWait("idle", ClientTag{}, Create(1, 5)).ok());
    BatchStream stream(4);
    for (uint64_t k = 1; k <= 3000; ++k) {
      ASSERT_TRUE(db->ApplyAndWait("arena", ClientTag{1, k}, stream.Next()).ok());
    }
    ASSERT_TRUE(db->Checkpoint().ok());
    StoreStats stats = db->stats();
    EXPECT_GT(stats.snapshots_written, 2u);
    EXPECT_GT(stats.segments_deleted, 10u);
    // Only the segments since the last snapshots remain (the idle scene does not pin the log).
    EXPECT_LE(stats.segments, 2);
    EXPECT_TRUE(stats.maintenance_error.ok()) << stats.maintenance_error;
    before = (*db->GetScene("arena"))->CaptureState();
  }
  auto db = MustOpen(dir.path(), options);
  EXPECT_EQ(db->recovery_report().snapshots_loaded, 2);
  EXPECT_TRUE(SameState((*db->GetScene("arena"))->CaptureState(), before));
  EXPECT_EQ((*db->GetScene("idle"))->Stats().body_count, 1);
}

TEST(Database, ADataDirectoryOpensOnlyOnce) {
  TempDir dir;
  auto db = MustOpen(dir.path());
  absl::StatusOr<std::unique_ptr<Database>> second = Database::Open(dir.path());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  db.reset();
  EXPECT_TRUE(Database::Open(dir.path()).ok());
}

TEST(Database, RejectsBadOptions) {
  TempDir dir;
  DatabaseOptions options;
  options.durability = DurabilityPolicy::kDefault;
  EXPECT_EQ(Database::Open(dir.path(), options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = DatabaseOptions{};
  options.segment_bytes = 0;
  EXPECT_EQ(Database::Open(dir.path(), options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Database, AsyncCallbacksArriveOncePerBatch) {
  TempDir dir;
  auto db = MustOpen(dir.path());
  ASSERT_TRUE(db->CreateScene("s", SceneOptions{}).ok());
  ASSERT_TRUE(db->ApplyAndWait("s", ClientTag{}, Create(1, 0)).ok());
  constexpr int kBatches = 500;
  std::atomic<int> calls{0};
  std::promise<void> all;
  for (int i = 0; i < kBatches; ++i) {
    db->Apply("s", ClientTag{2, static_cast<uint64_t>(i + 1)},
              UpdateBatch{{SetPoseOp(1, Pose{.position = {static_cast<float>(i), 0, 0}})}},
              [&](absl::StatusOr<ApplyAck> ack) {
                EXPECT_TRUE(ack.ok());
                EXPECT_TRUE(ack->durable);
                if (++calls == kBatches) all.set_value();
              });
  }
  all.get_future().wait();
  EXPECT_EQ(calls.load(), kBatches);
  EXPECT_EQ((*db->GetScene("s"))->version(), 1u + kBatches);
}

}  // namespace
}  // namespace collide
