// Watch over a real collide-server through the C++ client: the starting snapshot, swept
// enter/exit of a fast body through a thin fence, attached fences and contacts, removal, bad
// requests with field paths, a slow watcher that resyncs, and the end of the stream when the
// scene is deleted.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using client::MakeBody;
using client::MakeBox;
using client::MakePose;
using client::MakeSphere;
using client::MakeVec3;

// A server with an empty scene "arena" (durability none).
std::unique_ptr<ServerProcess> StartWithScene() {
  auto server = ServerProcess::Start();
  EXPECT_TRUE(IsOk(server));
  if (!server.ok()) return nullptr;
  v1::SceneOptions options;
  options.set_durability(v1::DURABILITY_NONE);
  EXPECT_TRUE(IsOk((*server)->NewClient()->CreateScene("arena", options)));
  return *std::move(server);
}

v1::Fence MakeFence(uint64_t id, const v1::Shape& shape, const v1::Pose& pose) {
  v1::Fence fence;
  fence.set_id(id);
  *fence.mutable_shape() = shape;
  *fence.mutable_pose() = pose;
  return fence;
}

// Moves `id` to `position` through an update stream; returns the version.
uint64_t Move(client::UpdateWriter* writer, uint64_t id, const v1::Vec3& position) {
  v1::UpdateBatch batch;
  batch.set_scene("arena");
  client::AddMove(id, MakePose(position), batch.mutable_moves());
  auto ack = writer->Apply(batch);
  EXPECT_TRUE(IsOk(ack));
  EXPECT_FALSE(ack.ok() && ack->has_error()) << ack->error().message();
  return ack.ok() ? ack->version() : 0;
}

std::string Describe(const v1::WatchEvent& e) {
  return v1::WatchEvent::Kind_Name(e.kind()) + " " + std::to_string(e.fence_id()) + "/" +
         std::to_string(e.contact_id()) + " " + std::to_string(e.body_id()) + " " +
         std::to_string(e.other_body_id());
}

std::vector<std::string> Describe(const v1::WatchUpdate& u) {
  std::vector<std::string> out;
  for (const v1::WatchEvent& e : u.events()) out.push_back(Describe(e));
  return out;
}

TEST(Watch, StreamsSweptEnterExitAttachedFencesAndContacts) {
  auto server = StartWithScene();
  ASSERT_NE(server, nullptr);
  // Declared after the server, so closed before it stops.
  std::unique_ptr<client::Client> client = server->NewClient();
  std::vector<v1::Body> bodies = {MakeBody(1, MakeSphere(0.05f), MakePose(MakeVec3(-50, 0.5f, 0))),
                                  MakeBody(2, MakeSphere(0.5f), MakePose(MakeVec3(10, 0, 5))),
                                  MakeBody(3, MakeSphere(0.5f), MakePose(MakeVec3(10.8f, 0, 5)))};
  ASSERT_TRUE(IsOk(client->UpsertBodies("arena", bodies)));

  v1::WatchRequest request;
  request.set_scene("arena");
  *request.add_fences() = MakeFence(7, MakeBox(0.01f, 2, 2), MakePose(MakeVec3(0, 0, 0)));
  v1::Fence riding = MakeFence(8, MakeSphere(1.0f), MakePose(MakeVec3(0, 0, 0)));
  riding.set_attached_to(2);
  *request.add_fences() = riding;
  request.add_contacts()->set_id(5);
  auto watch = client->Watch(request);
  ASSERT_TRUE(IsOk(watch));

  auto first = (*watch)->Read();
  ASSERT_TRUE(IsOk(first));
  ASSERT_TRUE(first->has_snapshot());
  const v1::WatchSnapshot& snapshot = first->snapshot();
  EXPECT_FALSE(snapshot.resync());
  ASSERT_EQ(snapshot.fences_size(), 2);
  EXPECT_EQ(snapshot.fences(0).fence_id(), 7u);
  EXPECT_EQ(snapshot.fences(0).body_ids_size(), 0);
  EXPECT_EQ(snapshot.fences(1).fence_id(), 8u);
  ASSERT_EQ(snapshot.fences(1).body_ids_size(), 1);  // body 3, not the host
  EXPECT_EQ(snapshot.fences(1).body_ids(0), 3u);
  ASSERT_EQ(snapshot.contacts_size(), 1);
  EXPECT_EQ(snapshot.contacts(0).body_id(), 2u);
  EXPECT_EQ(snapshot.contacts(0).other_body_id(), 3u);

  auto writer = client->OpenUpdateStream("arena", /*client_id=*/0);
  ASSERT_TRUE(IsOk(writer));
  // A small fast body crosses the thin fence within one step.
  const uint64_t crossed = Move(writer->get(), 1, MakeVec3(50, 0.5f, 0));
  auto update = (*watch)->Read();
  ASSERT_TRUE(IsOk(update));
  ASSERT_TRUE(update->has_update());
  EXPECT_EQ(update->update().version(), crossed);
  EXPECT_EQ(Describe(update->update()),
            (std::vector<std::string>{"KIND_ENTER 7/0 1 0", "KIND_EXIT 7/0 1 0"}));
  const v1::WatchEvent& enter = update->update().events(0);
  EXPECT_NEAR(enter.point().x(), -0.01f, 1e-4f);
  EXPECT_NEAR(enter.point().y(), 0.5f, 1e-4f);
  EXPECT_NEAR(enter.normal().x(), -1.0f, 1e-5f);

  // The host moves away: its fence leaves body 3 behind, and the pair stops touching.
  const uint64_t moved = Move(writer->get(), 2, MakeVec3(20, 0, 5));
  update = (*watch)->Read();
  ASSERT_TRUE(IsOk(update));
  EXPECT_EQ(update->update().version(), moved);
  EXPECT_EQ(Describe(update->update()),
            (std::vector<std::string>{"KIND_EXIT 8/0 3 0", "KIND_CONTACT_END 0/5 2 3"}));

  // Body 3 removed where nothing watches it: no update; the host comes back over body 1.
  ASSERT_TRUE(IsOk(client->RemoveBodies("arena", std::vector<uint64_t>{3})));
  const uint64_t back = Move(writer->get(), 2, MakeVec3(50, 0.5f, 0.5f));
  update = (*watch)->Read();
  ASSERT_TRUE(IsOk(update));
  EXPECT_EQ(update->update().version(), back);
  EXPECT_EQ(Describe(update->update()),
            (std::vector<std::string>{"KIND_ENTER 8/0 1 0", "KIND_CONTACT_BEGIN 0/5 1 2"}));
  EXPECT_TRUE(IsOk((*writer)->Finish()));

  // Deleting the scene ends the stream with NOT_FOUND.
  ASSERT_TRUE(IsOk(client->DeleteScene("arena")));
  auto end = (*watch)->Read();
  EXPECT_EQ(end.status().code(), absl::StatusCode::kNotFound) << end.status();
}

TEST(Watch, RejectsBadRequestsWithFieldPaths) {
  auto server = StartWithScene();
  ASSERT_NE(server, nullptr);
  // Declared after the server, so closed before it stops.
  std::unique_ptr<client::Client> client = server->NewClient();
  struct Case {
    std::string name;
    v1::WatchRequest request;
    absl::StatusCode code;
    std::string prefix;
  };
  std::vector<Case> cases;
  {
    Case c{
        "negative radius", {}, absl::StatusCode::kInvalidArgument, "fences[1].shape.sphere.radius"};
    c.request.set_scene("arena");
    *c.request.add_fences() = MakeFence(1, MakeSphere(1), MakePose(MakeVec3(0, 0, 0)));
    *c.request.add_fences() = MakeFence(2, MakeSphere(-1), MakePose(MakeVec3(0, 0, 0)));
    cases.push_back(c);
  }
  {
    Case c{"duplicate id", {}, absl::StatusCode::kInvalidArgument, "fences[1].id"};
    c.request.set_scene("arena");
    *c.request.add_fences() = MakeFence(4, MakeSphere(1), MakePose(MakeVec3(0, 0, 0)));
    *c.request.add_fences() = MakeFence(4, MakeSphere(1), MakePose(MakeVec3(0, 0, 0)));
    cases.push_back(c);
  }
  {
    Case c{"bad rotation", {}, absl::StatusCode::kInvalidArgument, "fences[0].pose.rotation"};
    c.request.set_scene("arena");
    v1::Fence f = MakeFence(4, MakeSphere(1), MakePose(MakeVec3(0, 0, 0)));
    f.mutable_pose()->mutable_rotation()->set_w(0.5f);
    *c.request.add_fences() = f;
    cases.push_back(c);
  }
  {
    Case c{"unknown scene", {}, absl::StatusCode::kNotFound, "scene"};
    c.request.set_scene("nowhere");
    cases.push_back(c);
  }
  for (const Case& c : cases) {
    auto watch = client->Watch(c.request);
    ASSERT_TRUE(IsOk(watch));
    auto first = (*watch)->Read();
    EXPECT_EQ(first.status().code(), c.code) << c.name << ": " << first.status();
    EXPECT_TRUE(absl::StartsWith(first.status().message(), c.prefix))
        << c.name << ": " << first.status();
  }
}

TEST(Watch, ASlowWatcherGetsAResyncAndEndsInTheRightState) {
  auto server = StartWithScene();
  ASSERT_NE(server, nullptr);
  // Declared after the server, so closed before it stops.
  std::unique_ptr<client::Client> client = server->NewClient();
  constexpr int kBodies = 300;
  constexpr int kPlates = 8;
  std::vector<v1::Body> bodies;
  for (int i = 1; i <= kBodies; ++i) {
    bodies.push_back(MakeBody(i, MakeSphere(0.1f), MakePose(MakeVec3(-10, 0.3f * i, 0))));
  }
  ASSERT_TRUE(IsOk(client->UpsertBodies("arena", bodies)));
  v1::WatchRequest request;
  request.set_scene("arena");
  for (int p = 0; p < kPlates; ++p) {
    *request.add_fences() =
        MakeFence(100 + p, MakeBox(0.02f, 200, 5), MakePose(MakeVec3(-8 + 2 * p, 0, 0)));
  }
  // The room bodies end in.
  *request.add_fences() = MakeFence(900, MakeBox(5, 200, 5), MakePose(MakeVec3(40, 0, 0)));
  request.set_max_queued_events(2 * kBodies * kPlates);
  // The watcher's own connection keeps 64 KiB flow-control windows (no BDP probing to grow
  // them): the transport holds less than one update, so falling behind fills the server's queue
  // however fast the server evaluates and sends.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 64 << 10);
  client::Client slow(
      grpc::CreateCustomChannel(server->address(), grpc::InsecureChannelCredentials(), args),
      client::ClientOptions{});
  auto watch = slow.Watch(request);
  ASSERT_TRUE(IsOk(watch));
  // Read only the starting snapshot, then fall behind: every batch sweeps every body through
  // every plate (enter + exit each), far more than the queue and the transport's buffers hold.
  auto first = (*watch)->Read();
  ASSERT_TRUE(IsOk(first));
  ASSERT_TRUE(first->has_snapshot());
  auto writer = client->OpenUpdateStream("arena", /*client_id=*/0);
  ASSERT_TRUE(IsOk(writer));
  uint64_t last = 0;
  for (int b = 0; b <= 60; ++b) {
    v1::UpdateBatch batch;
    batch.set_scene("arena");
    const float x = b == 60 ? 40.0f : (b % 2 == 0 ? 10.0f : -10.0f);
    for (int i = 1; i <= kBodies; ++i) {
      client::AddMove(i, MakePose(MakeVec3(x, 0.3f * i, 0)), batch.mutable_moves());
    }
    auto ack = (*writer)->Apply(batch);
    ASSERT_TRUE(IsOk(ack));
    last = ack->version();
  }
  EXPECT_TRUE(IsOk((*writer)->Finish()));
  // The acks never wait for the watchers, so the writer may finish before the dispatch has
  // evaluated more than the few updates the transport and the queue hold; reading now could then
  // keep up with it. Read only once the server has replaced the queue by a resync (counted when
  // queued): until the client reads, the updates can only pile up.
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  uint64_t server_resyncs = 0;
  while (server_resyncs == 0 && absl::Now() < deadline) {
    auto stats = client->GetServerStats();
    ASSERT_TRUE(IsOk(stats));
    server_resyncs = stats->watch_resyncs();
    if (server_resyncs == 0) absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_GT(server_resyncs, 0u) << "the watcher's queue never overflowed in 60 s";

  // Rebuild the state from what arrives, up to the last version.
  std::map<uint64_t, std::set<uint64_t>> inside;
  int resyncs = 0;
  uint64_t version = 0;
  while (version < last) {
    auto message = (*watch)->Read();
    ASSERT_TRUE(IsOk(message));
    if (message->has_snapshot()) {
      resyncs += message->snapshot().resync();
      inside.clear();
      for (const v1::FenceContents& f : message->snapshot().fences()) {
        inside[f.fence_id()].insert(f.body_ids().begin(), f.body_ids().end());
      }
      version = message->snapshot().version();
      continue;
    }
    for (const v1::WatchEvent& e : message->update().events()) {
      if (e.kind() == v1::WatchEvent::KIND_ENTER) inside[e.fence_id()].insert(e.body_id());
      if (e.kind() == v1::WatchEvent::KIND_EXIT) inside[e.fence_id()].erase(e.body_id());
    }
    version = message->update().version();
  }
  EXPECT_EQ(version, last);
  EXPECT_GT(resyncs, 0);
  EXPECT_EQ(inside[900].size(), static_cast<size_t>(kBodies));
  for (int p = 0; p < kPlates; ++p) EXPECT_TRUE(inside[100 + p].empty()) << p;
  (*watch)->Cancel();
  EXPECT_EQ((*watch)->Finish().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace collide::integration
