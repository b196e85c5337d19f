// Replicated scenes in the store (store/replication_hook.h), with an in-process hook standing in
// for the replicated log: the owner's records go to the hook in log order with their positions
// and are acknowledged only once the hook says they are stored; a refused Reserve writes
// nothing; a follower applying the owner's records reaches the same state, ignores
// redeliveries and refuses a record that does not apply; a restarted copy is unreadable until
// checked, and keeps its position across restarts and snapshots.

#include <chrono>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "base/mutex.h"
#include "gtest/gtest.h"
#include "scene/move_destination.h"
#include "store/database.h"
#include "store/log_codec.h"
#include "store/replication_hook.h"
#include "store/store_testing.h"

namespace collide {
namespace {

constexpr uint64_t kIncarnation = 0x1234abcd5678ef01;

// The replicated log, in memory: records are "stored" when the test says so.
class FakeHook : public ReplicationHook {
 public:
  struct Published {
    std::string scene;
    ReplicationPosition position;
    std::string payload;
    uint64_t ticket = 0;
  };

  absl::StatusOr<ReplicationPosition> Reserve(absl::string_view, ReplicatedRecordKind) override {
    MutexLock lock(&mu_);
    if (!refusal_.ok()) return refusal_;
    return ReplicationPosition{.incarnation = kIncarnation, .epoch = 3, .sequence = next_};
  }

  uint64_t Publish(absl::string_view scene, const ReplicationPosition& position,
                   std::string payload) override {
    MutexLock lock(&mu_);
    EXPECT_EQ(position.sequence, next_) << "published out of order";
    const uint64_t ticket = next_++;
    published_.push_back(Published{.scene = std::string(scene),
                                   .position = position,
                                   .payload = std::move(payload),
                                   .ticket = ticket});
    return ticket;
  }

  void WhenReplicated(absl::string_view, uint64_t ticket,
                      absl::AnyInvocable<void(absl::Status)> done) override {
    absl::Status now;
    {
      MutexLock lock(&mu_);
      if (ticket == kEverything) ticket = next_ - 1;
      if (!failure_.ok()) {
        now = failure_;
      } else if (ticket > stored_) {
        waiters_.emplace(ticket, std::move(done));
        return;
      }
    }
    done(now);
  }

  void OnSnapshot(absl::string_view scene, const ReplicationPosition& covers,
                  std::string payload) override {
    MutexLock lock(&mu_);
    snapshots_.push_back(
        Published{.scene = std::string(scene), .position = covers, .payload = std::move(payload)});
  }

  // Every record up to `ticket` is stored now.
  void Store(uint64_t ticket) {
    std::vector<absl::AnyInvocable<void(absl::Status)>> due;
    {
      MutexLock lock(&mu_);
      stored_ = std::max(stored_, ticket);
      while (!waiters_.empty() && waiters_.begin()->first <= stored_) {
        due.push_back(std::move(waiters_.begin()->second));
        waiters_.erase(waiters_.begin());
      }
    }
    for (auto& done : due) done(absl::OkStatus());
  }
  void StoreAll() {
    uint64_t last;
    {
      MutexLock lock(&mu_);
      last = next_ - 1;
    }
    Store(last);
  }
  // Every record waiting, and every later one, fails with `status`.
  void Fail(absl::Status status) {
    std::vector<absl::AnyInvocable<void(absl::Status)>> due;
    {
      MutexLock lock(&mu_);
      failure_ = status;
      for (auto& [ticket, done] : waiters_) due.push_back(std::move(done));
      waiters_.clear();
    }
    for (auto& done : due) done(status);
  }
  void Refuse(absl::Status status) {
    MutexLock lock(&mu_);
    refusal_ = status;
  }
  std::vector<Published> published() {
    MutexLock lock(&mu_);
    return published_;
  }
  std::vector<Published> snapshots() {
    MutexLock lock(&mu_);
    return snapshots_;
  }

 private:
  Mutex mu_;
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 100;  // any start: positions are the log's, not ours
  uint64_t stored_ ABSL_GUARDED_BY(mu_) = 99;
  absl::Status refusal_ ABSL_GUARDED_BY(mu_);
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  std::multimap<uint64_t, absl::AnyInvocable<void(absl::Status)>> waiters_ ABSL_GUARDED_BY(mu_);
  std::vector<Published> published_ ABSL_GUARDED_BY(mu_);
  std::vector<Published> snapshots_ ABSL_GUARDED_BY(mu_);
};

SceneOptions Replicated() { return SceneOptions{.durability = DurabilityPolicy::kReplicated}; }

UpdateBatch Upsert(uint64_t id, float x) {
  return UpdateBatch{
      {UpsertOp(BodyDesc{.id = id, .shape = Sphere{1}, .pose = Pose{.position = {x, 0, 0}}})}};
}

UpdateBatch Move(uint64_t id, float x) {
  return UpdateBatch{{SetPoseOp(id, Pose{.position = {x, 0, 0}})}};
}

std::unique_ptr<Database> MustOpen(const std::string& dir, ReplicationHook* hook) {
  DatabaseOptions options;
  options.replication = hook;
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(dir, std::move(options));
  EXPECT_TRUE(db.ok()) << db.status();
  return db.ok() ? *std::move(db) : nullptr;
}

template <typename T>
bool Ready(std::future<T>& future) {
  return future.wait_for(std::chrono::milliseconds(50)) == std::future_status::ready;
}

std::future<absl::StatusOr<ApplyAck>> ApplyAsync(Database& db, const std::string& scene,
                                                 ClientTag client, const UpdateBatch& batch) {
  auto promise = std::make_shared<std::promise<absl::StatusOr<ApplyAck>>>();
  std::future<absl::StatusOr<ApplyAck>> future = promise->get_future();
  db.Apply(scene, client, batch,
           [promise](absl::StatusOr<ApplyAck> ack) { promise->set_value(std::move(ack)); });
  return future;
}

std::future<absl::Status> CreateAsync(Database& db, const std::string& scene) {
  auto promise = std::make_shared<std::promise<absl::Status>>();
  std::future<absl::Status> future = promise->get_future();
  db.CreateScene(scene, Replicated(),
                 [promise](absl::Status status) { promise->set_value(std::move(status)); });
  return future;
}

SceneState StateOf(Database& db, const std::string& scene) {
  absl::StatusOr<std::shared_ptr<const Scene>> found = db.GetScene(scene);
  EXPECT_TRUE(found.ok()) << found.status();
  return found.ok() ? (*found)->CaptureState() : SceneState{};
}

TEST(ReplicatedScene, TheOwnerAcknowledgesOnlyOnceTheReplicatedLogStoredTheRecord) {
  TempDir dir;
  FakeHook hook;
  auto db = MustOpen(dir.path(), &hook);
  std::future<absl::Status> created = CreateAsync(*db, "r");
  EXPECT_FALSE(Ready(created)) << "acknowledged before the replicated log stored it";
  hook.StoreAll();
  ASSERT_TRUE(created.get().ok());

  auto first = ApplyAsync(*db, "r", ClientTag{.client_id = 7, .sequence = 1}, Upsert(1, 0));
  auto second = ApplyAsync(*db, "r", ClientTag{.client_id = 7, .sequence = 2}, Move(1, 5));
  EXPECT_FALSE(Ready(first));
  const std::vector<FakeHook::Published> published = hook.published();
  ASSERT_EQ(published.size(), 3u);
  hook.Store(published[1].ticket);
  ASSERT_TRUE(Ready(first));
  EXPECT_FALSE(Ready(second)) << "the second record is not stored yet";
  absl::StatusOr<ApplyAck> ack = first.get();
  ASSERT_TRUE(ack.ok()) << ack.status();
  EXPECT_EQ(ack->version, 1u);
  EXPECT_TRUE(ack->durable);
  hook.StoreAll();
  ASSERT_TRUE(second.get().ok());

  // The published records are the log's: in order, each with its position.
  for (size_t i = 0; i < published.size(); ++i) {
    absl::StatusOr<DecodedRecord> record = DecodeLogRecord(published[i].payload);
    ASSERT_TRUE(record.ok()) << record.status();
    EXPECT_EQ(record->scene, "r");
    ASSERT_TRUE(record->replicated.has_value());
    EXPECT_EQ(*record->replicated, published[i].position);
    EXPECT_EQ(record->replicated->sequence, 100 + i);
    EXPECT_EQ(record->replicated->incarnation, kIncarnation);
  }
  EXPECT_EQ(DecodeLogRecord(published[0].payload)->type, DecodedRecord::Type::kCreateScene);
  EXPECT_EQ(DecodeLogRecord(published[2].payload)->version, 2u);
  EXPECT_EQ(db->ReplicatedPosition("r")->sequence, 102u);

  // A duplicate waits for what was published before it.
  auto again = ApplyAsync(*db, "r", ClientTag{.client_id = 7, .sequence = 2}, Move(1, 5));
  ASSERT_TRUE(Ready(again));
  EXPECT_TRUE(again.get()->duplicate);
}

TEST(ReplicatedScene, ARefusedReserveRejectsTheBatchAndWritesNothing) {
  TempDir dir;
  FakeHook hook;
  {
    auto db = MustOpen(dir.path(), &hook);
    auto created = CreateAsync(*db, "r");
    hook.StoreAll();
    ASSERT_TRUE(created.get().ok());
    hook.Refuse(MovedError("r", "10.0.0.9:50051"));
    auto refused = ApplyAsync(*db, "r", ClientTag{}, Upsert(1, 0));
    absl::StatusOr<ApplyAck> ack = refused.get();
    ASSERT_FALSE(ack.ok());
    EXPECT_EQ(ack.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(MovedToOf(ack.status()), "10.0.0.9:50051");
    EXPECT_EQ(StateOf(*db, "r").version, 0u);
    EXPECT_EQ(hook.published().size(), 1u);
    EXPECT_EQ(db->DeleteScene("r").code(), absl::StatusCode::kFailedPrecondition);
  }
  auto db = MustOpen(dir.path(), &hook);
  db->SetReadable("r", true);
  EXPECT_EQ(StateOf(*db, "r").version, 0u) << "a refused batch was logged";
}

TEST(ReplicatedScene, AFailedReplicationFailsTheAcknowledgement) {
  TempDir dir;
  FakeHook hook;
  auto db = MustOpen(dir.path(), &hook);
  auto created = CreateAsync(*db, "r");
  hook.StoreAll();
  ASSERT_TRUE(created.get().ok());
  auto pending = ApplyAsync(*db, "r", ClientTag{}, Upsert(1, 0));
  hook.Fail(absl::UnavailableError("scene: the replicated log does not answer"));
  absl::StatusOr<ApplyAck> ack = pending.get();
  EXPECT_EQ(ack.status().code(), absl::StatusCode::kUnavailable);
}

TEST(ReplicatedScene, AFollowerReachesTheOwnersStateAndRefusesARecordThatDoesNotApply) {
  TempDir owner_dir, follower_dir;
  FakeHook hook;
  auto owner = MustOpen(owner_dir.path(), &hook);
  auto follower = MustOpen(follower_dir.path(), nullptr);
  auto created = CreateAsync(*owner, "r");
  hook.StoreAll();
  ASSERT_TRUE(created.get().ok());
  std::vector<std::future<absl::StatusOr<ApplyAck>>> acks;
  for (uint64_t i = 1; i <= 20; ++i) {
    acks.push_back(ApplyAsync(*owner, "r", ClientTag{.client_id = 3, .sequence = i},
                              Upsert(i, static_cast<float>(i))));
    acks.push_back(ApplyAsync(*owner, "r", ClientTag{.client_id = 4, .sequence = i},
                              Move(i, static_cast<float>(2 * i))));
  }
  acks.push_back(ApplyAsync(*owner, "r", ClientTag{}, UpdateBatch{{RemoveOp(5)}}));
  hook.StoreAll();
  for (auto& ack : acks) ASSERT_TRUE(ack.get().ok());

  for (const FakeHook::Published& record : hook.published()) {
    ASSERT_TRUE(follower->ApplyReplicated("r", record.payload).ok());
  }
  EXPECT_TRUE(SameState(StateOf(*follower, "r"), StateOf(*owner, "r")));
  EXPECT_EQ(follower->ReplicatedPosition("r"), owner->ReplicatedPosition("r"));
  // A redelivery changes nothing.
  for (const FakeHook::Published& record : hook.published()) {
    ASSERT_TRUE(follower->ApplyReplicated("r", record.payload).ok());
  }
  EXPECT_TRUE(SameState(StateOf(*follower, "r"), StateOf(*owner, "r")));
  // Writes at a follower go through its own hook (none here): refused.
  EXPECT_EQ(follower->ApplyAndWait("r", ClientTag{}, Upsert(99, 0)).status().code(),
            absl::StatusCode::kFailedPrecondition);

  // A record that made another version at its owner diverges here.
  std::string diverged = EncodeUpdateRecord("r", ClientTag{}, 7, Upsert(77, 0));
  AppendReplicationPosition(
      ReplicationPosition{.incarnation = kIncarnation, .epoch = 3, .sequence = 10'000}, false,
      &diverged);
  EXPECT_EQ(follower->ApplyReplicated("r", diverged).code(), absl::StatusCode::kDataLoss);
  // And so do a record without a position, of another scene or of another incarnation.
  EXPECT_EQ(
      follower->ApplyReplicated("r", EncodeUpdateRecord("r", ClientTag{}, 43, Move(1, 0))).code(),
      absl::StatusCode::kDataLoss);
  std::string other = EncodeUpdateRecord("s", ClientTag{}, 43, Move(1, 0));
  AppendReplicationPosition(
      ReplicationPosition{.incarnation = kIncarnation, .epoch = 3, .sequence = 10'001}, false,
      &other);
  EXPECT_EQ(follower->ApplyReplicated("r", other).code(), absl::StatusCode::kDataLoss);
  std::string elsewhere = EncodeUpdateRecord("r", ClientTag{}, 43, Move(1, 0));
  AppendReplicationPosition(ReplicationPosition{.incarnation = 1, .epoch = 3, .sequence = 10'002},
                            false, &elsewhere);
  EXPECT_EQ(follower->ApplyReplicated("r", elsewhere).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(follower->ApplyReplicated("r", "not a record").code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(SameState(StateOf(*follower, "r"), StateOf(*owner, "r")));
  EXPECT_EQ(StateOf(*follower, "r").version, 41u);

  // The owner's delete deletes the follower's copy.
  auto deleted = std::async(std::launch::async, [&] { return owner->DeleteScene("r"); });
  while (!Ready(deleted)) hook.StoreAll();
  ASSERT_TRUE(deleted.get().ok());
  ASSERT_TRUE(follower->ApplyReplicated("r", hook.published().back().payload).ok());
  EXPECT_EQ(follower->GetScene("r").status().code(), absl::StatusCode::kNotFound);
}

TEST(ReplicatedScene, ARestartedCopyIsUnreadableUntilCheckedAndKeepsItsPosition) {
  TempDir dir;
  FakeHook hook;
  std::optional<ReplicationPosition> last;
  SceneState state;
  {
    auto db = MustOpen(dir.path(), &hook);
    auto created = CreateAsync(*db, "r");
    hook.StoreAll();
    ASSERT_TRUE(created.get().ok());
    for (uint64_t i = 1; i <= 5; ++i) {
      auto ack = ApplyAsync(*db, "r", ClientTag{.client_id = 1, .sequence = i}, Upsert(i, 1));
      hook.StoreAll();
      ASSERT_TRUE(ack.get().ok());
    }
    last = db->ReplicatedPosition("r");
    state = StateOf(*db, "r");
  }
  {
    auto db = MustOpen(dir.path(), &hook);
    const absl::Status unreadable = db->GetScene("r").status();
    EXPECT_EQ(unreadable.code(), absl::StatusCode::kUnavailable) << unreadable;
    EXPECT_EQ(db->ReplicatedPosition("r"), last);
    std::vector<ReplicatedSceneFigures> scenes = db->ReplicatedScenes();
    ASSERT_EQ(scenes.size(), 1u);
    EXPECT_FALSE(scenes[0].readable);
    EXPECT_EQ(scenes[0].position, last);
    db->SetReadable("r", true);
    EXPECT_TRUE(SameState(StateOf(*db, "r"), state));
    // A snapshot keeps the position, and goes to the hook with it.
    ASSERT_TRUE(db->Checkpoint().ok());
    ASSERT_FALSE(hook.snapshots().empty());
    const FakeHook::Published snapshot = hook.snapshots().back();
    EXPECT_EQ(snapshot.position, *last);
    absl::StatusOr<DecodedSnapshot> decoded = DecodeSnapshot(snapshot.payload);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(decoded->replicated, last);
    EXPECT_TRUE(SameState(decoded->state, state));
  }
  auto db = MustOpen(dir.path(), &hook);
  EXPECT_EQ(db->ReplicatedPosition("r"), last) << "the snapshot lost the position";
}

TEST(ReplicatedScene, ARestoreReplacesTheCopyAtItsPosition) {
  TempDir dir;
  FakeHook hook;
  const ReplicationPosition at{.incarnation = kIncarnation, .epoch = 9, .sequence = 555};
  SceneState state;
  state.version = 12;
  state.tick = 4;
  state.bodies.push_back(BodyState{.id = 3, .shape = Sphere{2}});
  state.clients.push_back(ClientMark{.client_id = 8, .sequence = 6, .version = 11});
  {
    auto db = MustOpen(dir.path(), &hook);
    ASSERT_TRUE(db->RestoreReplicated("r", Replicated(), state, at).ok());
    EXPECT_TRUE(SameState(StateOf(*db, "r"), state));
    EXPECT_EQ(db->ReplicatedPosition("r"), at);
    // Restored again over the first copy.
    state.version = 13;
    ASSERT_TRUE(db->RestoreReplicated("r", Replicated(), state, at).ok());
    EXPECT_EQ(StateOf(*db, "r").version, 13u);
    EXPECT_TRUE(hook.published().empty()) << "a restore is the follower's, not published";
    // A replicated scene does not move, and a local scene is not replaced by a replicated one.
    EXPECT_EQ(db->SetSceneMoving("r", "10.0.0.1:1").code(), absl::StatusCode::kFailedPrecondition);
    ASSERT_TRUE(db->CreateScene("local", SceneOptions{}).ok());
    EXPECT_EQ(db->ImportScene("local", Replicated(), state, /*replace=*/true).code(),
              absl::StatusCode::kFailedPrecondition);
  }
  auto db = MustOpen(dir.path(), &hook);
  db->SetReadable("r", true);
  EXPECT_TRUE(SameState(StateOf(*db, "r"), state));
  EXPECT_EQ(db->ReplicatedPosition("r"), at);
}

// A follower could not replay an asset record (the replicated log does not carry the content):
// a replicated scene takes no asset, by upload or by import, each refused naming the field.
TEST(ReplicatedScene, AssetsAreRefusedNamingTheField) {
  TempDir dir;
  FakeHook hook;
  auto db = MustOpen(dir.path(), &hook);
  auto created = CreateAsync(*db, "r");
  hook.StoreAll();
  ASSERT_TRUE(created.get().ok());
  AssetSource triangle;
  triangle.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  triangle.indices = {0, 1, 2};
  triangle.size = AssetSize{.kind = AssetKind::kMesh, .vertex_count = 3, .index_count = 3};

  const absl::Status room = db->CheckAssetRoom("r", "tri", triangle.size);
  EXPECT_EQ(room.code(), absl::StatusCode::kFailedPrecondition) << room;
  EXPECT_TRUE(absl::StartsWith(room.message(), "scene: ")) << room;
  absl::StatusOr<AddedAsset> added = db->AddAsset("r", "tri", triangle);
  EXPECT_EQ(added.status().code(), absl::StatusCode::kFailedPrecondition) << added.status();
  EXPECT_TRUE(absl::StartsWith(added.status().message(), "scene: ")) << added.status();
  EXPECT_EQ(db->stored_assets().contents, 0u);

  std::promise<absl::Status> imported;
  std::vector<NamedSource> assets;
  assets.push_back(NamedSource{.name = "tri", .source = triangle});
  db->ImportScene("copy", Replicated(), SceneState{}, std::move(assets), /*replace=*/false,
                  [&imported](absl::Status status) { imported.set_value(std::move(status)); });
  const absl::Status refused = imported.get_future().get();
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_TRUE(absl::StartsWith(refused.message(), "options.durability: ")) << refused;
  EXPECT_EQ(db->GetScene("copy").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(hook.published().size(), 1u) << "only the scene's creation was replicated";
}

TEST(ReplicatedScene, WithoutAHookReplicatedScenesAreRefused) {
  TempDir dir;
  auto db = MustOpen(dir.path(), nullptr);
  const absl::Status refused = db->CreateScene("r", Replicated());
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  DatabaseOptions options;
  options.durability = DurabilityPolicy::kReplicated;
  EXPECT_EQ(Database::Open(dir.path() + "/x", options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace collide
