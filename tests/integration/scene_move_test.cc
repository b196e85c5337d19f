// Live moves between two real servers (client/cpp/scene_move.h, `collide scene move`): the scene
// arrives whole at the destination and leaves the source; a writer's batches applied at the
// source and resent to the destination are deduplicated there, each op applied exactly once;
// while a scene is marked as moving, writes get FAILED_PRECONDITION naming the destination (in
// the message, the ack's Error.moved_to and the x-collide-moved-to trailer) and queries answer;
// the mark survives a SIGKILL; a move the destination refuses leaves the source writable and
// intact; scenes whose bodies carry arbitrary rotations verify at the destination;
// SetSceneMoving's fields at their extremes; the CLI's transcript; 100,000 bodies moved with the
// pause and rate printed.

#include "client/cpp/scene_move.h"

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "client/cpp/update_writer.h"
#include "collide/v1/collide.grpc.pb.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using client::MakeBody;
using client::MakePose;
using client::MakeRemoveOp;
using client::MakeSphere;
using client::MakeUpsertOp;
using client::MakeVec3;

constexpr uint64_t kWriterId = 7;
constexpr char kScene[] = "arena";

// Batch `k` (k >= 1) of the writer: removes body k and adds body 1000 + k. Applied twice, its
// remove would fail (body k is gone), so a resend that is not deduplicated shows.
v1::UpdateBatch WriterBatch(uint64_t k) {
  v1::UpdateBatch batch;
  batch.set_scene(kScene);
  batch.set_client_id(kWriterId);
  batch.set_client_sequence(k);
  *batch.add_ops() = MakeRemoveOp(k);
  *batch.add_ops() = MakeUpsertOp(MakeBody(
      1000 + k, MakeSphere(0.5f), MakePose(MakeVec3(static_cast<float>(k) * 3.0f, 10.0f, 0.0f))));
  return batch;
}

// The ids a scene holds, sorted.
std::vector<uint64_t> IdsOf(client::Client& client, const std::string& scene) {
  std::vector<uint64_t> ids;
  auto bodies = client.GetBodies(scene);
  EXPECT_TRUE(IsOk(bodies));
  if (!bodies.ok()) return ids;
  for (const v1::Body& body : bodies->bodies()) ids.push_back(body.id());
  std::sort(ids.begin(), ids.end());
  return ids;
}

// The ids after the writer's batches 1..applied over bodies 1..bodies.
std::vector<uint64_t> ExpectedIds(uint64_t bodies, uint64_t applied) {
  std::vector<uint64_t> ids;
  for (uint64_t id = applied + 1; id <= bodies; ++id) ids.push_back(id);
  for (uint64_t k = 1; k <= applied; ++k) ids.push_back(1000 + k);
  std::sort(ids.begin(), ids.end());
  return ids;
}

// The trailing metadata value `x-collide-moved-to` and the status of a raw UpsertBodies call.
struct RawWrite {
  absl::Status status;
  std::string moved_to;
};
RawWrite UpsertWithTrailers(client::Client& client, const std::string& scene) {
  auto stub = v1::Collide::NewStub(client.channel());
  auto context = client.NewContext(scene, true);
  v1::UpsertBodiesRequest request;
  request.set_scene(scene);
  *request.add_bodies() = MakeBody(5000, MakeSphere(1.0f), MakePose(MakeVec3(0, 0, 0)));
  v1::WriteResponse response;
  grpc::Status status = stub->UpsertBodies(context.get(), request, &response);
  RawWrite out;
  out.status =
      absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
  const auto& trailers = context->GetServerTrailingMetadata();
  auto it = trailers.find("x-collide-moved-to");
  if (it != trailers.end()) out.moved_to = std::string(it->second.data(), it->second.size());
  return out;
}

class SceneMoveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    source_server_ = Start({});
    destination_server_ = Start({});
    ASSERT_NE(source_server_, nullptr);
    ASSERT_NE(destination_server_, nullptr);
    source_ = source_server_->NewClient();
    destination_ = destination_server_->NewClient();
  }

  static std::unique_ptr<ServerProcess> Start(std::vector<std::string> flags) {
    ServerConfig config;
    config.extra_flags = std::move(flags);
    auto server = ServerProcess::Start(config);
    EXPECT_TRUE(IsOk(server));
    return server.ok() ? *std::move(server) : nullptr;
  }

  // kScene at the source with bodies 1..count (in upserts of 5,000).
  void CreateScene(int count) {
    v1::SceneOptions options;
    options.set_max_bodies(200000);
    ASSERT_TRUE(IsOk(source_->CreateScene(kScene, options)));
    std::vector<v1::Body> bodies;
    for (int i = 1; i <= count; ++i) {
      bodies.push_back(MakeBody(static_cast<uint64_t>(i), MakeSphere(0.4f),
                                MakePose(MakeVec3(static_cast<float>(i % 100) * 2.0f,
                                                  static_cast<float>(i / 100) * 2.0f, 0.0f))));
      if (bodies.size() == 5000 || i == count) {
        ASSERT_TRUE(IsOk(source_->UpsertBodies(kScene, bodies)));
        bodies.clear();
      }
    }
  }

  std::string destination_address() const { return destination_server_->address(); }

  std::unique_ptr<ServerProcess> source_server_;
  std::unique_ptr<ServerProcess> destination_server_;
  std::unique_ptr<client::Client> source_;
  std::unique_ptr<client::Client> destination_;
};

TEST_F(SceneMoveTest, ResentBatchesAreDeduplicatedAtTheDestinationAndNewOnesApplyOnce) {
  constexpr uint64_t kBodies = 50;
  constexpr uint64_t kSent = 10;
  constexpr uint64_t kResent = 6;
  CreateScene(kBodies);
  auto created = source_->GetScene(kScene);
  ASSERT_TRUE(IsOk(created));
  // Each of the writer's batches makes one version.
  const uint64_t moved_version = created->stats().version() + kSent;
  auto writer = source_->OpenUpdateStream(kScene, kWriterId);
  ASSERT_TRUE(IsOk(writer));
  // Batches 1..kSent: the last two are sent and applied but their acks are read only after the
  // move, as a writer whose connection broke would never read them.
  for (uint64_t k = 1; k <= kSent; ++k) ASSERT_TRUE(IsOk((*writer)->SendAsIs(WriterBatch(k))));
  for (uint64_t k = 1; k <= kSent - 2; ++k) {
    auto ack = (*writer)->ReadAck();
    ASSERT_TRUE(IsOk(ack));
    ASSERT_FALSE(ack->has_error()) << ack->error().message();
  }
  // The two unread batches are applied (in order, on the same stream) before the move starts.
  while (true) {
    auto scene = source_->GetScene(kScene);
    ASSERT_TRUE(IsOk(scene));
    if (scene->stats().version() == moved_version) break;
    ASSERT_LT(scene->stats().version(), moved_version);
  }

  auto report = client::MoveScene(*source_, *destination_, kScene, destination_address());
  ASSERT_TRUE(IsOk(report));
  EXPECT_EQ(report->version, moved_version);
  EXPECT_EQ(report->bodies, kBodies);
  for (uint64_t k = kSent - 1; k <= kSent; ++k) {
    auto ack = (*writer)->ReadAck();
    ASSERT_TRUE(IsOk(ack));
    EXPECT_FALSE(ack->has_error()) << ack->error().message();
  }
  (*writer)->Finish().IgnoreError();

  // Gone from the source; writes there say where it went.
  EXPECT_TRUE(HasError(source_->GetScene(kScene).status(), absl::StatusCode::kNotFound, "scene"));
  auto stale = source_->OpenUpdateStream(kScene, kWriterId);
  ASSERT_TRUE(IsOk(stale));
  auto refused = (*stale)->Apply(WriterBatch(kSent + 1));
  ASSERT_TRUE(IsOk(refused));
  EXPECT_EQ(refused->error().code(), static_cast<int>(absl::StatusCode::kFailedPrecondition));
  EXPECT_EQ(refused->error().message(),
            absl::StrCat("scene: scene \"arena\" moved to ", destination_address()));
  EXPECT_EQ(refused->error().moved_to(), destination_address());

  // The writer reconnects to the destination and resends its last kResent batches: each is a
  // duplicate (a remove applied twice would fail), the version does not move.
  EXPECT_EQ(IdsOf(*destination_, kScene), ExpectedIds(kBodies, kSent));
  auto resender = destination_->OpenUpdateStream(kScene, kWriterId);
  ASSERT_TRUE(IsOk(resender));
  // (SendAsIs: the batches keep their own sequences, as a writer's resends do.)
  for (uint64_t k = kSent - kResent + 1; k <= kSent; ++k) {
    ASSERT_TRUE(IsOk((*resender)->SendAsIs(WriterBatch(k))));
    auto ack = (*resender)->ReadAck();
    ASSERT_TRUE(IsOk(ack));
    EXPECT_FALSE(ack->has_error()) << "batch " << k << ": " << ack->error().message();
    EXPECT_TRUE(ack->duplicate()) << "batch " << k;
    EXPECT_LE(ack->version(), moved_version);
  }
  auto after_resend = destination_->GetScene(kScene);
  ASSERT_TRUE(IsOk(after_resend));
  EXPECT_EQ(after_resend->stats().version(), moved_version);
  // New batches apply once each.
  for (uint64_t k = kSent + 1; k <= kSent + 3; ++k) {
    ASSERT_TRUE(IsOk((*resender)->SendAsIs(WriterBatch(k))));
    auto ack = (*resender)->ReadAck();
    ASSERT_TRUE(IsOk(ack));
    EXPECT_FALSE(ack->has_error()) << ack->error().message();
    EXPECT_FALSE(ack->duplicate());
    EXPECT_EQ(ack->version(), moved_version + (k - kSent));
  }
  EXPECT_EQ(IdsOf(*destination_, kScene), ExpectedIds(kBodies, kSent + 3));
  // The source still names the destination after a restart, and after a SIGKILL.
  for (int signal : {SIGTERM, SIGKILL}) {
    ASSERT_TRUE(IsOk(source_server_->Stop(signal)));
    ASSERT_TRUE(IsOk(source_server_->Restart())) << source_server_->Logs();
    source_ = source_server_->NewClient();
    EXPECT_TRUE(
        HasError(source_->UpsertBodies(kScene, std::vector<v1::Body>{}).status(),
                 absl::StatusCode::kFailedPrecondition,
                 absl::StrCat("scene: scene \"", kScene, "\" moved to ", destination_address())))
        << "after signal " << signal;
  }
}

TEST_F(SceneMoveTest, WhileMovingWritesNameTheDestinationAndQueriesAnswer) {
  CreateScene(20);
  auto marked = source_->SetSceneMoving(kScene, "10.0.0.4:50051");
  ASSERT_TRUE(IsOk(marked));
  EXPECT_EQ(marked->moved_to(), "10.0.0.4:50051");
  const uint64_t version = marked->stats().version();
  const std::string expected = "scene: scene \"arena\" moved to 10.0.0.4:50051";

  RawWrite upsert = UpsertWithTrailers(*source_, kScene);
  EXPECT_EQ(upsert.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(upsert.status.message(), expected);
  EXPECT_EQ(upsert.moved_to, "10.0.0.4:50051");
  const uint64_t ids[] = {1};
  EXPECT_TRUE(HasError(source_->RemoveBodies(kScene, ids).status(),
                       absl::StatusCode::kFailedPrecondition, expected));
  auto writer = source_->OpenUpdateStream(kScene, kWriterId);
  ASSERT_TRUE(IsOk(writer));
  auto ack = (*writer)->Apply(WriterBatch(1));
  ASSERT_TRUE(IsOk(ack));
  EXPECT_EQ(ack->error().message(), expected);
  EXPECT_EQ(ack->error().moved_to(), "10.0.0.4:50051");

  // Reads go on, at the same version.
  v1::RaycastRequest ray;
  ray.set_scene(kScene);
  *ray.mutable_ray() = client::MakeRaycast(MakeVec3(-5, 0, 0), MakeVec3(1, 0, 0), 100);
  ray.set_mode(v1::MODE_ALL);
  ray.set_max_hits(100);
  auto hit = source_->Raycast(ray);
  ASSERT_TRUE(IsOk(hit));
  // Bodies 1..20 sit at x = 2, 4, ..., 40 on the ray's line.
  EXPECT_EQ(hit->hits_size(), 20);
  EXPECT_EQ(IdsOf(*source_, kScene).size(), 20u);
  auto scene = source_->GetScene(kScene);
  ASSERT_TRUE(IsOk(scene));
  EXPECT_EQ(scene->stats().version(), version);
  EXPECT_EQ(scene->moved_to(), "10.0.0.4:50051");
  auto listed = source_->ListScenes();
  ASSERT_TRUE(IsOk(listed));
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].moved_to(), "10.0.0.4:50051");

  // The rollback: writes are accepted again, on a new stream. The stream that was told the
  // destination goes on refusing the scene's batches unapplied: its writer resends from batch 1
  // on a new stream, and batch 2 applied here would make batch 1 a duplicate, never applied.
  auto cleared = source_->ClearSceneMoving(kScene);
  ASSERT_TRUE(IsOk(cleared));
  EXPECT_EQ(cleared->moved_to(), "");
  ack = (*writer)->Apply(WriterBatch(2));
  ASSERT_TRUE(IsOk(ack));
  EXPECT_EQ(ack->error().message(), expected);
  EXPECT_EQ(ack->error().moved_to(), "10.0.0.4:50051");
  auto scene_after = source_->GetScene(kScene);
  ASSERT_TRUE(IsOk(scene_after));
  EXPECT_EQ(scene_after->stats().version(), version);
  auto resender = source_->OpenUpdateStream(kScene, kWriterId);
  ASSERT_TRUE(IsOk(resender));
  for (uint64_t k = 1; k <= 2; ++k) {
    ack = (*resender)->Apply(WriterBatch(k));
    ASSERT_TRUE(IsOk(ack));
    EXPECT_FALSE(ack->has_error()) << "batch " << k << ": " << ack->error().message();
    EXPECT_FALSE(ack->duplicate()) << "batch " << k;
    EXPECT_EQ(ack->version(), version + k);
  }
}

TEST_F(SceneMoveTest, TheMarkAndItsClearingSurviveASigkill) {
  CreateScene(10);
  ASSERT_TRUE(IsOk(source_->SetSceneMoving(kScene, "shard-2:50051")));
  // Killed right after the answer: the mark was on disk before it.
  ASSERT_TRUE(IsOk(source_server_->Stop(SIGKILL)));
  ASSERT_TRUE(IsOk(source_server_->Restart())) << source_server_->Logs();
  source_ = source_server_->NewClient();
  auto scene = source_->GetScene(kScene);
  ASSERT_TRUE(IsOk(scene));
  EXPECT_EQ(scene->moved_to(), "shard-2:50051");
  EXPECT_TRUE(HasError(source_->UpsertBodies(kScene, std::vector<v1::Body>{}).status(),
                       absl::StatusCode::kFailedPrecondition,
                       "scene: scene \"arena\" moved to shard-2:50051"));
  // Cleared, killed again: the clear is durable too.
  ASSERT_TRUE(IsOk(source_->ClearSceneMoving(kScene)));
  ASSERT_TRUE(IsOk(source_server_->Stop(SIGKILL)));
  ASSERT_TRUE(IsOk(source_server_->Restart())) << source_server_->Logs();
  source_ = source_server_->NewClient();
  scene = source_->GetScene(kScene);
  ASSERT_TRUE(IsOk(scene));
  EXPECT_EQ(scene->moved_to(), "");
  EXPECT_TRUE(IsOk(source_->UpsertBodies(kScene, std::vector<v1::Body>{})));
}

TEST_F(SceneMoveTest, AnImportTheDestinationRefusesLeavesTheSourceWritableAndIntact) {
  // The destination refuses the import (its --max_import_bytes is too small for the scene)
  // after the source was marked: the move rolls back.
  destination_server_ = Start({"--max_import_bytes=4096"});
  ASSERT_NE(destination_server_, nullptr);
  destination_ = destination_server_->NewClient();
  CreateScene(500);
  auto before = source_->GetScene(kScene);
  ASSERT_TRUE(IsOk(before));
  auto report = client::MoveScene(*source_, *destination_, kScene, destination_address());
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), absl::StatusCode::kResourceExhausted) << report.status();
  EXPECT_TRUE(absl::StrContains(report.status().message(), "source mark cleared"))
      << report.status();
  EXPECT_TRUE(
      HasError(destination_->GetScene(kScene).status(), absl::StatusCode::kNotFound, "scene"));
  auto after = source_->GetScene(kScene);
  ASSERT_TRUE(IsOk(after));
  EXPECT_EQ(after->moved_to(), "");
  EXPECT_EQ(after->stats().version(), before->stats().version());
  EXPECT_EQ(after->stats().body_count(), 500);
  auto writer = source_->OpenUpdateStream(kScene, kWriterId);
  ASSERT_TRUE(IsOk(writer));
  auto ack = (*writer)->Apply(WriterBatch(1));
  ASSERT_TRUE(IsOk(ack));
  EXPECT_FALSE(ack->has_error()) << ack->error().message();
}

// Rotations as clients write them (any direction, lengths up to 5e-4 from 1, the quarter turn
// 0.7071068): the destination stores exactly what the source exported, so the verify step's
// export from the destination carries the source's checksum and the move completes.
TEST_F(SceneMoveTest, ScenesWithArbitraryStoredRotationsMoveAndVerify) {
  ASSERT_TRUE(IsOk(source_->CreateScene(kScene)));
  ASSERT_TRUE(IsOk(source_->UpsertBodies(kScene, RandomlyRotatedBodies(3000, 2811))));
  // Moved on an UpdateStream too (the moves columns' own conversion).
  auto writer = source_->OpenUpdateStream(kScene, kWriterId);
  ASSERT_TRUE(IsOk(writer));
  v1::UpdateBatch batch;
  batch.set_scene(kScene);
  for (const v1::Body& body : RandomlyRotatedBodies(1000, 2812)) {
    batch.mutable_moves()->add_ids(body.id() * 3);
    const v1::Pose& pose = body.pose();
    for (float v :
         {pose.position().x(), pose.position().y(), pose.position().z(), pose.rotation().x(),
          pose.rotation().y(), pose.rotation().z(), pose.rotation().w()}) {
      batch.mutable_moves()->add_poses(v);
    }
  }
  auto ack = (*writer)->Apply(batch);
  ASSERT_TRUE(IsOk(ack));
  ASSERT_FALSE(ack->has_error()) << ack->error().message();
  auto before = source_->GetBodies(kScene);
  ASSERT_TRUE(IsOk(before));
  client::MoveOptions options;
  options.verify = true;
  options.max_bodies_per_chunk = 700;
  auto report = client::MoveScene(*source_, *destination_, kScene, destination_address(), options);
  ASSERT_TRUE(IsOk(report));
  ASSERT_EQ(report->steps.size(), 5u);
  EXPECT_EQ(report->steps[3].name, "verify");
  EXPECT_TRUE(absl::StrContains(report->steps[3].detail, "as exported")) << report->steps[3].detail;
  auto after = destination_->GetBodies(kScene);
  ASSERT_TRUE(IsOk(after));
  EXPECT_EQ(after->SerializeAsString(), before->SerializeAsString());
}

TEST_F(SceneMoveTest, AnExistingSceneAtTheDestinationIsRefusedBeforeAnythingChanges) {
  CreateScene(5);
  ASSERT_TRUE(IsOk(destination_->CreateScene(kScene)));
  auto report = client::MoveScene(*source_, *destination_, kScene, destination_address());
  EXPECT_TRUE(HasError(report.status(), absl::StatusCode::kAlreadyExists, "destination"));
  auto source_scene = source_->GetScene(kScene);
  ASSERT_TRUE(IsOk(source_scene));
  EXPECT_EQ(source_scene->moved_to(), "");
  // With replace the destination's scene is replaced.
  client::MoveOptions options;
  options.replace = true;
  report = client::MoveScene(*source_, *destination_, kScene, destination_address(), options);
  ASSERT_TRUE(IsOk(report));
  auto moved = destination_->GetScene(kScene);
  ASSERT_TRUE(IsOk(moved));
  EXPECT_EQ(moved->stats().body_count(), 5);
  // A scene that does not exist is refused at the check.
  EXPECT_TRUE(HasError(
      client::MoveScene(*source_, *destination_, "nothing", destination_address()).status(),
      absl::StatusCode::kNotFound, "source: scene"));
}

TEST_F(SceneMoveTest, SetSceneMovingFieldsAtTheirExtremesGetAClearAnswer) {
  CreateScene(3);
  struct Case {
    std::string scene;
    std::string destination;
    bool clear;
    absl::StatusCode code;
    std::string path;
  };
  const std::vector<Case> cases = {
      {kScene, "", false, absl::StatusCode::kInvalidArgument, "destination: an address has 1 to"},
      {kScene, std::string(257, 'a'), false, absl::StatusCode::kInvalidArgument,
       "destination: an address has 1 to 256 characters, got 257"},
      {kScene, std::string(1 << 20, 'a'), false, absl::StatusCode::kInvalidArgument,
       "destination: an address has 1 to 256 characters, got 1048576"},
      {kScene, "host:1\n", false, absl::StatusCode::kInvalidArgument, "destination: character 6"},
      {kScene, "host 1", false, absl::StatusCode::kInvalidArgument, "destination: character 4"},
      {kScene, std::string("ho\0st", 5), false, absl::StatusCode::kInvalidArgument,
       "destination: character 2"},
      {kScene, "h\xc3\xa9te:1", false, absl::StatusCode::kInvalidArgument,
       "destination: character 1"},
      {kScene, "host:1", true, absl::StatusCode::kInvalidArgument,
       "destination: must be empty with clear"},
      {"nothing", "host:1", false, absl::StatusCode::kNotFound, "scene: no scene \"nothing\""},
      {"nothing", "", true, absl::StatusCode::kNotFound, "scene: no scene \"nothing\""},
      {"", "host:1", false, absl::StatusCode::kInvalidArgument, "scene"},
      {std::string(129, 'a'), "host:1", false, absl::StatusCode::kInvalidArgument, "scene"},
      {"bad name", "host:1", false, absl::StatusCode::kInvalidArgument, "scene"},
  };
  auto stub = v1::Collide::NewStub(source_->channel());
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat("scene \"", c.scene.substr(0, 40), "\" destination \"",
                              c.destination.substr(0, 40), "\" clear ", c.clear));
    v1::SetSceneMovingRequest request;
    request.set_scene(c.scene);
    request.set_destination(c.destination);
    request.set_clear(c.clear);
    v1::SetSceneMovingResponse response;
    // No scene header: the bad names must reach the service's own checks.
    auto context = source_->NewContext("", true);
    grpc::Status status = stub->SetSceneMoving(context.get(), request, &response);
    EXPECT_TRUE(HasError(
        absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message()),
        c.code, c.path));
  }
  // Nothing was marked, and the server still serves.
  auto scene = source_->GetScene(kScene);
  ASSERT_TRUE(IsOk(scene));
  EXPECT_EQ(scene->moved_to(), "");
  // The longest valid destination is accepted and named in full.
  const std::string longest(256, 'd');
  ASSERT_TRUE(IsOk(source_->SetSceneMoving(kScene, longest)));
  EXPECT_TRUE(HasError(source_->UpsertBodies(kScene, std::vector<v1::Body>{}).status(),
                       absl::StatusCode::kFailedPrecondition,
                       absl::StrCat("scene: scene \"arena\" moved to ", longest)));
}

TEST(SceneMoveAuth, OnlyAdminsMayMarkAScene) {
  ServerConfig config;
  config.token_file_contents =
      "admin-token admin\nwriter-token writer\nreader-token reader\nteam-admin admin team-\n";
  auto server = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(server));
  auto admin = (*server)->NewClient("admin-token");
  ASSERT_TRUE(IsOk(admin->CreateScene(kScene)));
  for (const char* token : {"writer-token", "reader-token"}) {
    auto other = (*server)->NewClient(token);
    EXPECT_TRUE(HasError(other->SetSceneMoving(kScene, "host:1").status(),
                         absl::StatusCode::kPermissionDenied, ""))
        << token;
  }
  EXPECT_TRUE(HasError((*server)->NewClient()->SetSceneMoving(kScene, "host:1").status(),
                       absl::StatusCode::kUnauthenticated, ""));
  // An admin limited to "team-" scenes marks only those.
  EXPECT_TRUE(
      HasError((*server)->NewClient("team-admin")->SetSceneMoving(kScene, "host:1").status(),
               absl::StatusCode::kPermissionDenied, ""));
  auto scene = admin->GetScene(kScene);
  ASSERT_TRUE(IsOk(scene));
  EXPECT_EQ(scene->moved_to(), "");
}

// 100,000 bodies: the figures (pause, rate) are printed for the docs, not checked.
TEST_F(SceneMoveTest, AHundredThousandBodiesMove) {
  constexpr int kBodies = 100000;
  CreateScene(kBodies);
  auto before = source_->GetScene(kScene);
  ASSERT_TRUE(IsOk(before));
  auto report = client::MoveScene(*source_, *destination_, kScene, destination_address());
  ASSERT_TRUE(IsOk(report));
  EXPECT_EQ(report->bodies, static_cast<uint64_t>(kBodies));
  EXPECT_EQ(report->version, before->stats().version());
  auto moved = destination_->GetScene(kScene);
  ASSERT_TRUE(IsOk(moved));
  EXPECT_EQ(moved->stats().body_count(), kBodies);
  EXPECT_EQ(moved->stats().version(), before->stats().version());
  std::printf("%s\n", client::MoveTranscript(*report).c_str());
}

class SceneMoveCliTest : public SceneMoveTest {
 protected:
  CommandResult Cli(std::vector<std::string> words) {
    words.insert(words.begin(), {CliPath(), "--address=" + source_server_->address()});
    return RunCommand(words);
  }
};

TEST_F(SceneMoveCliTest, SceneMovePrintsItsTranscript) {
  CreateScene(300);
  CommandResult moved = Cli({"scene", "move", kScene, "--to", destination_address()});
  ASSERT_EQ(moved.exit_code, 0) << moved.out << moved.err;
  for (const char* step : {"check", "mark", "transfer", "verify", "delete"}) {
    EXPECT_TRUE(absl::StrContains(moved.out, absl::StrCat("  ", step))) << step << "\n"
                                                                        << moved.out;
  }
  EXPECT_TRUE(
      absl::StrContains(moved.out, absl::StrCat("moved scene arena (version 1, 300 bodies) to ",
                                                destination_address(), ": writes paused ")))
      << moved.out;
  auto scene = destination_->GetScene(kScene);
  ASSERT_TRUE(IsOk(scene));
  EXPECT_EQ(scene->stats().body_count(), 300);
  EXPECT_TRUE(HasError(source_->GetScene(kScene).status(), absl::StatusCode::kNotFound, "scene"));

  // Back again, as JSON.
  CommandResult back = RunCommand({CliPath(), "--address=" + destination_address(), "--json",
                                   "scene", "move", kScene, "--to", source_server_->address()});
  ASSERT_EQ(back.exit_code, 0) << back.out << back.err;
  EXPECT_TRUE(absl::StrContains(back.out, "\"bodies\":300")) << back.out;
  EXPECT_TRUE(absl::StrContains(back.out, "\"pause_ms\"")) << back.out;
  EXPECT_TRUE(IsOk(source_->GetScene(kScene)));

  // A refused move exits non-zero and says why; the scene stays.
  ASSERT_TRUE(IsOk(destination_->CreateScene(kScene)));
  CommandResult refused = Cli({"scene", "move", kScene, "--to", destination_address()});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(refused.err, "ALREADY_EXISTS")) << refused.err;
  EXPECT_TRUE(IsOk(source_->GetScene(kScene)));

  // --clear undoes a mark; --to is required otherwise.
  ASSERT_TRUE(IsOk(source_->SetSceneMoving(kScene, "elsewhere:1")));
  CommandResult cleared = Cli({"scene", "move", kScene, "--clear"});
  ASSERT_EQ(cleared.exit_code, 0) << cleared.out << cleared.err;
  auto scene_after = source_->GetScene(kScene);
  ASSERT_TRUE(IsOk(scene_after));
  EXPECT_EQ(scene_after->moved_to(), "");
  CommandResult no_to = Cli({"scene", "move", kScene});
  EXPECT_NE(no_to.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(no_to.err, "--to")) << no_to.err;
}

}  // namespace
}  // namespace collide::integration
