// Watch under every limit, over a real collide-server:
// - Watch streams count toward --max_streams and --max_watch_streams (RESOURCE_EXHAUSTED
//   `streams: ...` beyond them) and in GetServerStats;
// - --max_watch_fences refuses the watch that would pass it; --max_watch_contents ends the watch
//   whose state would pass it;
// - a client that stops reading blocks no writer (every batch is acknowledged) and the stall
//   watchdog ends its stream with RESOURCE_EXHAUSTED `stream: ...`;
// - a backlog with no room (--max_watch_backlog_bytes=0) makes every watcher resync while the
//   writer goes on, and every watcher still ends in the right state;
// - a storm of 2,000 Watch streams from one client stays within the memory bound of
//   docs/SECURITY.md (the server's VmRSS before, during and after is printed) and the server
//   serves throughout;
// - every new flag at 0, 1 and its largest value (and one past it), and the numeric fields of
//   WatchRequest at their extremes.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "collide/v1/collide.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"
#include "sanitizers.h"

namespace collide::integration {
namespace {

using client::MakeBody;
using client::MakeBox;
using client::MakePose;
using client::MakeSphere;
using client::MakeVec3;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr uint64_t kMax64 = std::numeric_limits<uint64_t>::max();
constexpr uint32_t kMax32 = std::numeric_limits<uint32_t>::max();

// The memory bound of docs/SECURITY.md ("Watch memory"), in bytes: per Watch stream, per fence
// or contact watch, per contents entry; plus the queued and backlog byte limits and one copy of
// each watched scene.
constexpr uint64_t kStreamBytes = 48 << 10;
constexpr uint64_t kFenceBytes = 1 << 10;
constexpr uint64_t kEntryBytes = 64;

std::unique_ptr<ServerProcess> StartServer(std::vector<std::string> flags) {
  ServerConfig config;
  config.extra_flags = std::move(flags);
  auto server = ServerProcess::Start(config);
  EXPECT_TRUE(IsOk(server));
  return server.ok() ? *std::move(server) : nullptr;
}

v1::Fence MakeFence(uint64_t id, const v1::Shape& shape, const v1::Pose& pose) {
  v1::Fence fence;
  fence.set_id(id);
  *fence.mutable_shape() = shape;
  *fence.mutable_pose() = pose;
  return fence;
}

// A scene "arena" (durability none) with `count` spheres of radius 0.2 in a column at x = -10
// (0.3 apart along y, ids 1..count).
void MakeColumn(client::Client& client, int count) {
  v1::SceneOptions options;
  options.set_durability(v1::DURABILITY_NONE);
  ASSERT_TRUE(IsOk(client.CreateScene("arena", options)));
  std::vector<v1::Body> bodies;
  for (int i = 1; i <= count; ++i) {
    bodies.push_back(MakeBody(i, MakeSphere(0.2f), MakePose(MakeVec3(-10, 0.3f * i, 0))));
  }
  ASSERT_TRUE(IsOk(client.UpsertBodies("arena", bodies)));
}

// Eight thin plates across the column's path (x = -8, -6, ..., 6) and a room at x = 40.
v1::WatchRequest PlatesRequest() {
  v1::WatchRequest request;
  request.set_scene("arena");
  for (int p = 0; p < 8; ++p) {
    *request.add_fences() =
        MakeFence(100 + p, MakeBox(0.02f, 400, 5), MakePose(MakeVec3(-8 + 2 * p, 0, 0)));
  }
  *request.add_fences() = MakeFence(900, MakeBox(5, 400, 5), MakePose(MakeVec3(40, 0, 0)));
  return request;
}

// Moves bodies 1..count to x.
v1::UpdateBatch Sweep(int count, float x) {
  v1::UpdateBatch batch;
  batch.set_scene("arena");
  for (int i = 1; i <= count; ++i) {
    client::AddMove(i, MakePose(MakeVec3(x, 0.3f * i, 0)), batch.mutable_moves());
  }
  return batch;
}

// What a watcher's messages rebuild: fence contents at a version.
struct Replica {
  std::map<uint64_t, std::set<uint64_t>> inside;
  uint64_t version = 0;
  int resyncs = 0;
  void Take(const v1::WatchResponse& message) {
    if (message.has_snapshot()) {
      inside.clear();
      for (const v1::FenceContents& f : message.snapshot().fences()) {
        inside[f.fence_id()].insert(f.body_ids().begin(), f.body_ids().end());
      }
      resyncs += message.snapshot().resync();
      version = message.snapshot().version();
      return;
    }
    for (const v1::WatchEvent& e : message.update().events()) {
      if (e.kind() == v1::WatchEvent::KIND_ENTER) inside[e.fence_id()].insert(e.body_id());
      if (e.kind() == v1::WatchEvent::KIND_EXIT) inside[e.fence_id()].erase(e.body_id());
    }
    version = message.update().version();
  }
  // Reads `watch` until the replica reaches `last`.
  ::testing::AssertionResult ReadUpTo(client::WatchStream& watch, uint64_t last) {
    while (version < last) {
      auto message = watch.Read();
      if (!message.ok()) return ::testing::AssertionFailure() << message.status();
      Take(*message);
    }
    return ::testing::AssertionSuccess();
  }
};

// The state a fresh watch of `request` starts from.
std::map<uint64_t, std::set<uint64_t>> Truth(client::Client& client,
                                             const v1::WatchRequest& request) {
  auto watch = client.Watch(request);
  EXPECT_TRUE(IsOk(watch));
  if (!watch.ok()) return {};
  auto first = (*watch)->Read();
  EXPECT_TRUE(IsOk(first));
  Replica replica;
  if (first.ok()) replica.Take(*first);
  return replica.inside;
}

// The status a watch ends with, when its first message is an error.
absl::Status FirstReadStatus(client::Client& client, const v1::WatchRequest& request) {
  auto watch = client.Watch(request);
  if (!watch.ok()) return watch.status();
  return (*watch)->Read().status();
}

// A channel with its own HTTP/2 connection whose flow-control windows stay at 64 KiB (no BDP
// probing to grow them), so that a client that stops reading stops the server's writes soon.
std::shared_ptr<grpc::Channel> NewSmallWindowConnection(const std::string& address, int id) {
  grpc::ChannelArguments args;
  args.SetInt("collide.watch_limits_connection", id);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 64 << 10);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

using collide::testing::kSanitized;

TEST(WatchLimits, MaxStreamsCountsWatchStreamsAndRefusesTheOneBeyondIt) {
  auto server = StartServer({"--max_streams=100"});
  ASSERT_NE(server, nullptr);
  std::unique_ptr<client::Client> client = server->NewClient();
  MakeColumn(*client, 10);
  const v1::WatchRequest request = PlatesRequest();
  std::vector<std::unique_ptr<client::WatchStream>> watches;
  for (int i = 0; i < 100; ++i) {
    auto watch = client->Watch(request);
    ASSERT_TRUE(IsOk(watch));
    auto first = (*watch)->Read();
    ASSERT_TRUE(IsOk(first)) << i;
    ASSERT_TRUE(first->has_snapshot());
    watches.push_back(*std::move(watch));
  }
  v1::GetServerStatsResponse stats = ServerStats(*client);
  EXPECT_EQ(stats.watch_streams(), 100u);
  EXPECT_EQ(stats.watch_fences(), 100u * request.fences_size());
  EXPECT_EQ(stats.streams_refused(), 0u);

  // The 101st stream, a Watch or an UpdateStream, is refused.
  EXPECT_TRUE(HasError(FirstReadStatus(*client, request), absl::StatusCode::kResourceExhausted,
                       "streams: "));
  auto writer = client->OpenUpdateStream("arena", 0);
  ASSERT_TRUE(IsOk(writer));
  EXPECT_TRUE(HasError((*writer)->Apply(Sweep(10, 10)).status(),
                       absl::StatusCode::kResourceExhausted, "streams: "));
  stats = ServerStats(*client);
  EXPECT_EQ(stats.streams_refused(), 2u);
  EXPECT_EQ(stats.watch_streams(), 100u);

  // One watch ends: a new one opens in its place.
  watches.back()->Cancel();
  EXPECT_EQ(watches.back()->Finish().code(), absl::StatusCode::kCancelled);
  watches.pop_back();
  stats = WaitForServerStats(*client, [](const auto& s) { return s.watch_streams() == 99; });
  EXPECT_EQ(stats.watch_streams(), 99u);
  auto again = client->Watch(request);
  ASSERT_TRUE(IsOk(again));
  EXPECT_TRUE(IsOk((*again)->Read()));
  EXPECT_EQ(ServerStats(*client).watch_streams(), 100u);
}

// A cancel that reaches the server while a watch's last message is being written (or written but
// not yet reported done) still ends the stream, with nothing more ever queued for it: each round
// uses its own scene, so no later message can end a stream the cancel left open.
TEST(WatchLimits, ACancelDuringTheLastUpdateStillEndsTheWatch) {
  auto server = StartServer({});
  ASSERT_NE(server, nullptr);
  std::unique_ptr<client::Client> client = server->NewClient();
  constexpr int kRounds = 40;
  constexpr int kWatches = 60;
  v1::SceneOptions options;
  options.set_durability(v1::DURABILITY_NONE);
  v1::WatchRequest request;
  *request.add_fences() = MakeFence(1, MakeSphere(1), MakePose(MakeVec3(0, 0, 0)));
  for (int round = 0; round < kRounds; ++round) {
    const std::string scene = absl::StrCat("cancel-", round);
    ASSERT_TRUE(IsOk(client->CreateScene(scene, options)));
    request.set_scene(scene);
    std::vector<std::unique_ptr<client::WatchStream>> watches;
    for (int i = 0; i < kWatches; ++i) {
      auto watch = client->Watch(request);
      ASSERT_TRUE(IsOk(watch));
      ASSERT_TRUE(IsOk((*watch)->Read()));  // the snapshot
      watches.push_back(*std::move(watch));
    }
    // One body enters every fence: one update per watch, then the scene is still.
    ASSERT_TRUE(IsOk(client->UpsertBodies(
        scene, std::vector<v1::Body>{MakeBody(1, MakeSphere(0.5f), MakePose(MakeVec3(0, 0, 0)))})));
    // Each watch is cancelled as soon as its update arrives, when the server may not yet have
    // seen that write complete; half of them without reading it (cancel while writing).
    for (int i = 0; i < kWatches; ++i) {
      if (i % 2 == 0) {
        ASSERT_TRUE(IsOk(watches[i]->Read()));
      }
      watches[i]->Cancel();
    }
    watches.clear();
  }
  const v1::GetServerStatsResponse stats = WaitForServerStats(
      *client, [](const auto& s) { return s.watch_streams() == 0 && s.watch_fences() == 0; });
  EXPECT_EQ(stats.watch_streams(), 0u);
  EXPECT_EQ(stats.watch_fences(), 0u);
}

TEST(WatchLimits, MaxWatchStreamsLeavesTheOtherStreamsToWriters) {
  auto server = StartServer({"--max_watch_streams=3"});
  ASSERT_NE(server, nullptr);
  std::unique_ptr<client::Client> client = server->NewClient();
  MakeColumn(*client, 10);
  std::vector<std::unique_ptr<client::WatchStream>> watches;
  for (int i = 0; i < 3; ++i) {
    auto watch = client->Watch(PlatesRequest());
    ASSERT_TRUE(IsOk(watch));
    ASSERT_TRUE(IsOk((*watch)->Read()));
    watches.push_back(*std::move(watch));
  }
  const absl::Status refused = FirstReadStatus(*client, PlatesRequest());
  EXPECT_TRUE(HasError(refused, absl::StatusCode::kResourceExhausted, "streams: "));
  EXPECT_TRUE(absl::StrContains(refused.message(), "--max_watch_streams")) << refused;
  auto writer = client->OpenUpdateStream("arena", 0);
  ASSERT_TRUE(IsOk(writer));
  auto ack = (*writer)->Apply(Sweep(10, 10));
  ASSERT_TRUE(IsOk(ack));
  EXPECT_FALSE(ack->has_error());
  const v1::GetServerStatsResponse stats = ServerStats(*client);
  EXPECT_EQ(stats.watch_streams(), 3u);
  EXPECT_EQ(stats.update_streams(), 1u);
  EXPECT_EQ(stats.streams_refused(), 1u);
  // The open watches saw the batch.
  for (auto& watch : watches) {
    Replica replica;
    EXPECT_TRUE(replica.ReadUpTo(*watch, ack->version()));
  }
  EXPECT_TRUE(IsOk((*writer)->Finish()));
}

TEST(WatchLimits, MaxWatchFencesRefusesTheWatchThatWouldPassIt) {
  auto server = StartServer({"--max_watch_fences=10"});
  ASSERT_NE(server, nullptr);
  std::unique_ptr<client::Client> client = server->NewClient();
  MakeColumn(*client, 10);
  auto request_of = [](int fences, int contacts) {
    v1::WatchRequest request;
    request.set_scene("arena");
    for (int f = 0; f < fences; ++f) {
      *request.add_fences() = MakeFence(f, MakeSphere(1), MakePose(MakeVec3(f, 0, 0)));
    }
    for (int c = 0; c < contacts; ++c) request.add_contacts()->set_id(c);
    return request;
  };
  auto six = client->Watch(request_of(5, 1));  // five fences and a contact watch: 6
  ASSERT_TRUE(IsOk(six));
  ASSERT_TRUE(IsOk((*six)->Read()));
  const absl::Status refused = FirstReadStatus(*client, request_of(5, 0));
  EXPECT_TRUE(HasError(refused, absl::StatusCode::kResourceExhausted, "fences: ")) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "--max_watch_fences")) << refused;
  auto four = client->Watch(request_of(2, 2));
  ASSERT_TRUE(IsOk(four));
  ASSERT_TRUE(IsOk((*four)->Read()));
  EXPECT_EQ(ServerStats(*client).watch_fences(), 10u);
  // A watch with nothing to watch takes nothing.
  auto empty = client->Watch(request_of(0, 0));
  ASSERT_TRUE(IsOk(empty));
  EXPECT_TRUE(IsOk((*empty)->Read()));
  // Once the six are given back, five fit.
  (*six)->Cancel();
  EXPECT_EQ((*six)->Finish().code(), absl::StatusCode::kCancelled);
  const v1::GetServerStatsResponse stats =
      WaitForServerStats(*client, [](const auto& s) { return s.watch_fences() == 4; });
  EXPECT_EQ(stats.watch_fences(), 4u);
  auto five = client->Watch(request_of(5, 0));
  ASSERT_TRUE(IsOk(five));
  EXPECT_TRUE(IsOk((*five)->Read()));
}

TEST(WatchLimits, MaxWatchContentsEndsTheWatchWhoseStateWouldPassIt) {
  auto server = StartServer({"--max_watch_contents=100"});
  ASSERT_NE(server, nullptr);
  std::unique_ptr<client::Client> client = server->NewClient();
  MakeColumn(*client, 50);
  // A box around the column holds its 50 bodies.
  v1::WatchRequest one;
  one.set_scene("arena");
  *one.add_fences() = MakeFence(1, MakeBox(1, 10, 1), MakePose(MakeVec3(-10, 7.5f, 0)));
  auto first = client->Watch(one);
  ASSERT_TRUE(IsOk(first));
  auto snapshot = (*first)->Read();
  ASSERT_TRUE(IsOk(snapshot));
  EXPECT_EQ(snapshot->snapshot().fences(0).body_ids_size(), 50);
  EXPECT_EQ(ServerStats(*client).watch_contents(), 50u);

  // Two such fences hold 100 more: the watch ends at its start.
  v1::WatchRequest two = one;
  *two.add_fences() = MakeFence(2, MakeBox(1, 10, 1), MakePose(MakeVec3(-10, 7.5f, 0)));
  const absl::Status ended = FirstReadStatus(*client, two);
  EXPECT_TRUE(HasError(ended, absl::StatusCode::kResourceExhausted, "fences: ")) << ended;
  EXPECT_TRUE(absl::StrContains(ended.message(), "--max_watch_contents")) << ended;
  v1::GetServerStatsResponse stats = ServerStats(*client);
  EXPECT_EQ(stats.watch_exhausted(), 1u);
  EXPECT_EQ(stats.watch_contents(), 50u);

  // The first goes on: ten bodies leave its fence.
  auto writer = client->OpenUpdateStream("arena", 0);
  ASSERT_TRUE(IsOk(writer));
  auto ack = (*writer)->Apply(Sweep(10, 10));
  ASSERT_TRUE(IsOk(ack));
  auto update = (*first)->Read();
  ASSERT_TRUE(IsOk(update));
  ASSERT_TRUE(update->has_update());
  EXPECT_EQ(update->update().version(), ack->version());
  EXPECT_EQ(update->update().events_size(), 10);
  EXPECT_EQ(ServerStats(*client).watch_contents(), 40u);
  EXPECT_TRUE(IsOk((*writer)->Finish()));
}

TEST(WatchLimits, AClientThatStopsReadingBlocksNoWriterAndIsEndedByTheStallWatchdog) {
  auto server = StartServer({"--stream_stall_timeout_ms=1500"});
  ASSERT_NE(server, nullptr);
  std::unique_ptr<client::Client> client = server->NewClient();
  constexpr int kBodies = 1000;
  MakeColumn(*client, kBodies);
  const v1::WatchRequest request = PlatesRequest();
  // The stalled client: its own connection; it reads the snapshot and nothing more.
  auto stalled_stub = v1::Collide::NewStub(NewSmallWindowConnection(server->address(), 1));
  grpc::ClientContext stalled_context;
  stalled_context.set_deadline(std::chrono::system_clock::now() + seconds(120));
  stalled_context.AddMetadata("x-collide-scene", "arena");
  auto stalled = stalled_stub->Watch(&stalled_context, request);
  v1::WatchResponse message;
  ASSERT_TRUE(stalled->Read(&message));
  ASSERT_TRUE(message.has_snapshot());
  // A reading watcher.
  auto reading = client->Watch(request);
  ASSERT_TRUE(IsOk(reading));
  Replica replica;
  auto first = (*reading)->Read();
  ASSERT_TRUE(IsOk(first));
  replica.Take(*first);

  // Every batch sweeps the 1,000 bodies across the eight plates (16,000 events, about 0.7 MB
  // per update): the stalled client's flow-control window fills at once. Every batch is
  // acknowledged all the same.
  auto writer = client->OpenUpdateStream("arena", 0);
  ASSERT_TRUE(IsOk(writer));
  uint64_t last = 0;
  uint64_t most_queued = 0;
  for (int b = 0; b < 30; ++b) {
    auto ack = (*writer)->Apply(Sweep(kBodies, b % 2 == 0 ? 10.0f : -10.0f));
    ASSERT_TRUE(IsOk(ack)) << b;
    ASSERT_FALSE(ack->has_error()) << ack->error().message();
    last = ack->version();
    // The reading watcher keeps up.
    ASSERT_TRUE(replica.ReadUpTo(**reading, last));
    if (b % 5 == 0) most_queued = std::max(most_queued, ServerStats(*client).watch_queued_bytes());
  }
  auto room = (*writer)->Apply(Sweep(kBodies, 40.0f));
  ASSERT_TRUE(IsOk(room));
  last = room->version();
  ASSERT_TRUE(replica.ReadUpTo(**reading, last));
  EXPECT_TRUE(IsOk((*writer)->Finish()));
  EXPECT_EQ(replica.inside[900].size(), static_cast<size_t>(kBodies));
  EXPECT_EQ(replica.inside, Truth(*client, request));
  EXPECT_LE(most_queued, 128u << 20);

  // The watchdog ends the stalled stream; the reading one stays.
  v1::GetServerStatsResponse stats = WaitForServerStats(
      *client, [](const auto& s) { return s.streams_stalled() == 1 && s.watch_streams() == 1; });
  EXPECT_EQ(stats.streams_stalled(), 1u);
  EXPECT_EQ(stats.watch_streams(), 1u);
  while (stalled->Read(&message)) {
  }
  const grpc::Status status = stalled->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "stream: ")) << status.error_message();
  EXPECT_TRUE(IsOk(client->GetScene("arena")));
}

TEST(WatchLimits, ABacklogWithNoRoomResyncsEveryWatcherWhileTheWriterGoesOn) {
  auto server = StartServer({"--max_watch_backlog_bytes=0"});
  ASSERT_NE(server, nullptr);
  std::unique_ptr<client::Client> client = server->NewClient();
  MakeColumn(*client, 40);
  const v1::WatchRequest request = PlatesRequest();
  std::vector<std::unique_ptr<client::WatchStream>> watches;
  std::vector<Replica> replicas(10);
  for (int i = 0; i < 10; ++i) {
    auto watch = client->Watch(request);
    ASSERT_TRUE(IsOk(watch));
    auto first = (*watch)->Read();
    ASSERT_TRUE(IsOk(first));
    replicas[i].Take(*first);
    watches.push_back(*std::move(watch));
  }
  auto writer = client->OpenUpdateStream("arena", 0);
  ASSERT_TRUE(IsOk(writer));
  uint64_t last = 0;
  for (int b = 0; b < 30; ++b) {
    auto ack = (*writer)->Apply(Sweep(40, b == 29 ? 40.0f : (b % 2 == 0 ? 10.0f : -10.0f)));
    ASSERT_TRUE(IsOk(ack));
    last = ack->version();
  }
  EXPECT_TRUE(IsOk((*writer)->Finish()));
  const auto truth = Truth(*client, request);
  EXPECT_EQ(truth.at(900).size(), 40u);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(replicas[i].ReadUpTo(*watches[i], last)) << i;
    EXPECT_EQ(replicas[i].version, last);
    EXPECT_GT(replicas[i].resyncs, 0) << i;
    EXPECT_EQ(replicas[i].inside, truth) << i;
  }
  const v1::GetServerStatsResponse stats = ServerStats(*client);
  EXPECT_GE(stats.watch_resyncs(), 10u);
  EXPECT_EQ(stats.watch_backlog_bytes(), 0u);
}

TEST(WatchLimits, AStormOfTwoThousandWatchStreamsStaysWithinTheDocumentedMemoryBound) {
  constexpr uint64_t kStreams = 2000;
  constexpr uint64_t kFencesPerWatch = 10;
  constexpr uint64_t kMaxFences = kStreams * kFencesPerWatch;
  constexpr uint64_t kMaxContents = 120000;
  constexpr uint64_t kQueued = 8 << 20;
  constexpr uint64_t kBacklog = 4 << 20;
  auto server = StartServer({"--max_streams=3000", absl::StrCat("--max_watch_streams=", kStreams),
                             absl::StrCat("--max_watch_fences=", kMaxFences),
                             absl::StrCat("--max_watch_contents=", kMaxContents),
                             absl::StrCat("--max_watch_queued_bytes=", kQueued),
                             absl::StrCat("--max_watch_backlog_bytes=", kBacklog),
                             "--max_streams_per_connection=4096"});
  ASSERT_NE(server, nullptr);
  std::unique_ptr<client::Client> client = server->NewClient();
  // 1,000 spheres along x, 1 apart.
  v1::SceneOptions options;
  options.set_durability(v1::DURABILITY_NONE);
  ASSERT_TRUE(IsOk(client->CreateScene("arena", options)));
  std::vector<v1::Body> bodies;
  for (int i = 1; i <= 1000; ++i) {
    bodies.push_back(MakeBody(i, MakeSphere(0.4f), MakePose(MakeVec3(i, 0, 0))));
  }
  ASSERT_TRUE(IsOk(client->UpsertBodies("arena", bodies)));
  auto scene = client->GetScene("arena");
  ASSERT_TRUE(IsOk(scene));
  const uint64_t scene_bytes = scene->stats().memory_bytes();
  const uint64_t before = server->RssBytes();

  // Each watch: a plate at x = 0.5 that body 1 crosses in every batch, eight small fences, and a
  // box over a stretch of 50 bodies; every 100th watch's box covers all 1,000 (those pass
  // --max_watch_contents once enough of them are open).
  auto request_of = [](uint64_t w) {
    v1::WatchRequest request;
    request.set_scene("arena");
    *request.add_fences() = MakeFence(0, MakeBox(0.01f, 5, 5), MakePose(MakeVec3(0.5f, 0, 0)));
    for (uint64_t f = 1; f <= 8; ++f) {
      const float x = static_cast<float>((w * 8 + f) % 1000 + 1);
      *request.add_fences() = MakeFence(f, MakeSphere(0.1f), MakePose(MakeVec3(x, 0, 0)));
    }
    const bool greedy = w % 100 == 0;
    const float from = greedy ? 0.0f : static_cast<float>((w * 37) % 950);
    const float half = greedy ? 501.0f : 25.0f;
    *request.add_fences() =
        MakeFence(9, MakeBox(half, 1, 1), MakePose(MakeVec3(from + half, 0, 0)));
    return request;
  };
  const uint64_t opened_before = ServerStats(*client).streams_opened();
  std::vector<std::unique_ptr<client::WatchStream>> watches;
  int started = 0, ended = 0;
  for (uint64_t w = 0; w < kStreams; ++w) {
    auto watch = client->Watch(request_of(w));
    ASSERT_TRUE(IsOk(watch));
    watches.push_back(*std::move(watch));
  }
  // Every original is read before the extras are sent: Watch returns once the request is sent,
  // and the server starts calls on several threads, so an extra sent at once could be
  // registered before a late original and take its slot.
  std::vector<bool> live(watches.size(), false);
  for (size_t w = 0; w < watches.size(); ++w) {
    auto first = watches[w]->Read();
    if (first.ok()) {
      ++started;
      live[w] = true;
    } else {
      EXPECT_TRUE(HasError(first.status(), absl::StatusCode::kResourceExhausted, "fences: ")) << w;
      ++ended;
    }
  }
  EXPECT_EQ(started + ended, static_cast<int>(kStreams));
  EXPECT_GT(started, 1000);
  EXPECT_GT(ended, 0);  // the watches that came once --max_watch_contents was reached

  // The originals that ended gave their slots back (when their calls were done) and their
  // fences (when their watchers were dropped, which may come later). Watches of one fence that
  // holds no body, now or after the writer's batches, take those slots, so that the server holds
  // exactly --max_watch_streams Watch streams while the extras come: no watch ends meanwhile
  // (nothing is written until the writer starts).
  v1::GetServerStatsResponse storm = WaitForServerStats(*client, [&](const auto& s) {
    return s.watch_streams() == static_cast<uint32_t>(started) &&
           s.watch_fences() == static_cast<uint64_t>(started) * kFencesPerWatch;
  });
  EXPECT_EQ(storm.streams_opened() - opened_before, kStreams);
  ASSERT_EQ(storm.watch_streams(), static_cast<uint32_t>(started));
  v1::WatchRequest empty_request;
  empty_request.set_scene("arena");
  *empty_request.add_fences() = MakeFence(0, MakeSphere(0.1f), MakePose(MakeVec3(-1000.0f, 0, 0)));
  std::vector<std::unique_ptr<client::WatchStream>> fillers;
  for (int w = 0; w < ended; ++w) {
    auto filler = client->Watch(empty_request);
    ASSERT_TRUE(IsOk(filler));
    ASSERT_TRUE(IsOk((*filler)->Read())) << w;
    fillers.push_back(*std::move(filler));
  }
  storm = ServerStats(*client);
  ASSERT_EQ(storm.watch_streams(), kStreams);
  const uint64_t refused_before = storm.streams_refused();
  // 200 more than --max_watch_streams allows.
  int refused = 0;
  for (int w = 0; w < 200; ++w) {
    const absl::Status status = FirstReadStatus(*client, request_of(w + 1));
    const bool streams_refused =
        HasError(status, absl::StatusCode::kResourceExhausted, "streams: ");
    EXPECT_TRUE(streams_refused) << w << ": " << status;
    refused += streams_refused;
  }
  EXPECT_EQ(refused, 200);
  storm = ServerStats(*client);
  EXPECT_EQ(storm.watch_streams(), kStreams);
  EXPECT_EQ(storm.streams_refused() - refused_before, 200u);

  // A writer moves bodies while the storm is open; only every other watcher reads.
  auto writer = client->OpenUpdateStream("arena", 0);
  ASSERT_TRUE(IsOk(writer));
  uint64_t last = 0;
  uint64_t most_rss = server->RssBytes();
  v1::GetServerStatsResponse most;
  for (int b = 0; b < 20; ++b) {
    v1::UpdateBatch batch;
    batch.set_scene("arena");
    client::AddMove(1, MakePose(MakeVec3(b % 2 == 0 ? 0.0f : 1.0f, 0, 0)), batch.mutable_moves());
    for (int k = 0; k < 99; ++k) {
      const uint64_t id = 2 + (b * 99 + k) % 999;
      const float x = static_cast<float>((id * 7 + b * 13) % 1000 + 1);
      client::AddMove(id, MakePose(MakeVec3(x, 0, 0)), batch.mutable_moves());
    }
    auto ack = (*writer)->Apply(batch);
    ASSERT_TRUE(IsOk(ack)) << b;
    ASSERT_FALSE(ack->has_error()) << ack->error().message();
    last = ack->version();
    most_rss = std::max(most_rss, server->RssBytes());
    const v1::GetServerStatsResponse stats = ServerStats(*client);
    EXPECT_LE(stats.watch_streams(), kStreams);
    EXPECT_LE(stats.watch_fences(), kMaxFences);
    EXPECT_LE(stats.watch_contents(), kMaxContents);
    EXPECT_LE(stats.watch_queued_bytes(), kQueued);
    EXPECT_LE(stats.watch_backlog_bytes(), kBacklog);
    most.set_watch_contents(std::max(most.watch_contents(), stats.watch_contents()));
    most.set_watch_queued_bytes(std::max(most.watch_queued_bytes(), stats.watch_queued_bytes()));
  }
  EXPECT_TRUE(IsOk((*writer)->Finish()));
  // Every reading watcher gets to the last version (body 1 crossed its plate in every batch),
  // unless the batches' candidate pairs took it past --max_watch_contents on the way.
  int reached = 0, ended_later = 0;
  for (size_t w = 0; w < watches.size(); w += 2) {
    if (!live[w]) continue;
    Replica replica;
    if (replica.ReadUpTo(*watches[w], last)) {
      ++reached;
      continue;
    }
    ++ended_later;
    EXPECT_TRUE(
        HasError(watches[w]->Read().status(), absl::StatusCode::kResourceExhausted, "fences: "))
        << w;
  }
  EXPECT_GT(reached, 500);
  most_rss = std::max(most_rss, server->RssBytes());
  const v1::GetServerStatsResponse during = ServerStats(*client);
  // The server serves meanwhile.
  EXPECT_TRUE(IsOk(client->GetScene("arena")));
  v1::RaycastRequest ray;
  ray.set_scene("arena");
  *ray.mutable_ray() = client::MakeRaycast(MakeVec3(0, 0, 5), MakeVec3(0, 0, -1), 10);
  EXPECT_TRUE(IsOk(client->Raycast(ray)));

  for (auto& watch : watches) watch->Cancel();
  for (auto& watch : fillers) watch->Cancel();
  for (auto& watch : watches) (void)watch->Finish();
  for (auto& watch : fillers) (void)watch->Finish();
  watches.clear();
  fillers.clear();
  const v1::GetServerStatsResponse after_stats = WaitForServerStats(*client, [](const auto& s) {
    return s.watch_streams() == 0 && s.watch_fences() == 0 && s.watch_contents() == 0 &&
           s.watch_queued_bytes() == 0;
  });
  const uint64_t after = server->RssBytes();
  // The true peak (VmHWM) since the server started, which was before the storm.
  most_rss = std::max(most_rss, server->PeakRssBytes());
  const uint64_t bound = kStreams * kStreamBytes + kMaxFences * kFenceBytes +
                         kMaxContents * kEntryBytes + kQueued + kBacklog + scene_bytes;
  auto mib = [](uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); };
  std::printf(
      "watch storm: %llu streams asked (+200 refused), %d started, %d ended by "
      "--max_watch_contents at their start and %d of the readers later; %d readers reached the "
      "last version; server VmRSS before %.1f MiB, peak (VmHWM) %.1f MiB (+%.1f), "
      "after %.1f MiB; documented bound +%.1f MiB; peak contents %llu, queued bytes %llu, "
      "resyncs %llu, stalled %llu\n",
      static_cast<unsigned long long>(kStreams), started, ended, ended_later, reached, mib(before),
      mib(most_rss), mib(most_rss - before), mib(after), mib(bound),
      static_cast<unsigned long long>(most.watch_contents()),
      static_cast<unsigned long long>(most.watch_queued_bytes()),
      static_cast<unsigned long long>(during.watch_resyncs()),
      static_cast<unsigned long long>(during.streams_stalled()));
  std::fflush(stdout);
  if (kSanitized) {
    std::printf("watch storm: sanitizer build, the RSS bound is not checked\n");
  } else {
    EXPECT_LE(most_rss, before + bound);
    EXPECT_LE(after, before + bound);
  }
  EXPECT_EQ(after_stats.watch_streams(), 0u);
  EXPECT_EQ(after_stats.watch_contents(), 0u);
  EXPECT_TRUE(IsOk(client->GetScene("arena")));
}

// The outcome of one watch of one fence that body 1 walks into, on a server started with one
// flag at an extreme.
enum class Outcome {
  kEvents,   // a snapshot, then an update with the enter
  kResync,   // a snapshot, then a resync snapshot holding the body
  kEnded,    // a snapshot, then RESOURCE_EXHAUSTED `fences: ...`
  kRefused,  // RESOURCE_EXHAUSTED at the start (prefix `streams: ` or `fences: `)
};

struct FlagCase {
  std::string flag;
  bool starts;
  Outcome outcome;
  std::string refusal_prefix;
};

// Runs the one-fence scenario against a started server and checks `c.outcome`.
void CheckOutcome(ServerProcess& server, const FlagCase& c) {
  std::unique_ptr<client::Client> client = server.NewClient();
  v1::SceneOptions options;
  options.set_durability(v1::DURABILITY_NONE);
  ASSERT_TRUE(IsOk(client->CreateScene("arena", options)));
  ASSERT_TRUE(IsOk(client->UpsertBodies(
      "arena",
      std::vector<v1::Body>{MakeBody(1, MakeSphere(0.5f), MakePose(MakeVec3(-5, 0, 0)))})));
  v1::WatchRequest request;
  request.set_scene("arena");
  *request.add_fences() = MakeFence(7, MakeSphere(1), MakePose(MakeVec3(0, 0, 0)));
  auto watch = client->Watch(request);
  ASSERT_TRUE(IsOk(watch));
  auto first = (*watch)->Read();
  if (c.outcome == Outcome::kRefused) {
    EXPECT_TRUE(HasError(first.status(), absl::StatusCode::kResourceExhausted, c.refusal_prefix))
        << c.flag;
    return;
  }
  ASSERT_TRUE(IsOk(first)) << c.flag;
  ASSERT_TRUE(first->has_snapshot());
  EXPECT_EQ(first->snapshot().fences(0).body_ids_size(), 0);
  auto writer = client->OpenUpdateStream("arena", 0);
  ASSERT_TRUE(IsOk(writer));
  v1::UpdateBatch batch;
  batch.set_scene("arena");
  client::AddMove(1, MakePose(MakeVec3(0, 0, 0)), batch.mutable_moves());
  auto ack = (*writer)->Apply(batch);
  ASSERT_TRUE(IsOk(ack)) << c.flag;
  EXPECT_FALSE(ack->has_error());
  auto next = (*watch)->Read();
  switch (c.outcome) {
    case Outcome::kEvents:
      ASSERT_TRUE(IsOk(next)) << c.flag;
      ASSERT_TRUE(next->has_update()) << c.flag;
      EXPECT_EQ(next->update().version(), ack->version());
      ASSERT_EQ(next->update().events_size(), 1);
      EXPECT_EQ(next->update().events(0).kind(), v1::WatchEvent::KIND_ENTER);
      break;
    case Outcome::kResync:
      ASSERT_TRUE(IsOk(next)) << c.flag;
      ASSERT_TRUE(next->has_snapshot()) << c.flag;
      EXPECT_TRUE(next->snapshot().resync());
      EXPECT_EQ(next->snapshot().version(), ack->version());
      ASSERT_EQ(next->snapshot().fences(0).body_ids_size(), 1);
      EXPECT_EQ(next->snapshot().fences(0).body_ids(0), 1u);
      break;
    case Outcome::kEnded:
      EXPECT_TRUE(HasError(next.status(), absl::StatusCode::kResourceExhausted, "fences: "))
          << c.flag;
      break;
    case Outcome::kRefused:
      break;
  }
  EXPECT_TRUE(IsOk((*writer)->Finish()));
}

TEST(WatchLimits, EveryWatchFlagAtItsExtremes) {
  const std::string max32 = std::to_string(kMax32);
  const std::string max64 = std::to_string(kMax64);
  const std::vector<FlagCase> cases = {
      {"--max_watch_streams=0", true, Outcome::kRefused, "streams: "},
      {"--max_watch_streams=1", true, Outcome::kEvents, ""},
      {"--max_watch_streams=" + max32, true, Outcome::kEvents, ""},
      {"--max_watch_streams=4294967296", false, Outcome::kEvents, ""},
      {"--max_watch_fences=0", true, Outcome::kRefused, "fences: "},
      {"--max_watch_fences=1", true, Outcome::kEvents, ""},
      {"--max_watch_fences=" + max32, true, Outcome::kEvents, ""},
      {"--max_watch_fences=-1", false, Outcome::kEvents, ""},
      // The batch's candidate pair is an entry too: with room for one, the body cannot also be
      // held.
      {"--max_watch_contents=0", true, Outcome::kEnded, ""},
      {"--max_watch_contents=1", true, Outcome::kEnded, ""},
      {"--max_watch_contents=2", true, Outcome::kEvents, ""},
      {"--max_watch_contents=" + max32, true, Outcome::kEvents, ""},
      {"--max_watch_contents=4294967296", false, Outcome::kEvents, ""},
      {"--max_watch_queued_bytes=0", true, Outcome::kResync, ""},
      {"--max_watch_queued_bytes=1", true, Outcome::kResync, ""},
      {"--max_watch_queued_bytes=" + max32, true, Outcome::kEvents, ""},
      {"--max_watch_queued_bytes=" + max64, true, Outcome::kEvents, ""},
      {"--max_watch_queued_bytes=18446744073709551616", false, Outcome::kEvents, ""},
      {"--max_watch_backlog_bytes=0", true, Outcome::kResync, ""},
      {"--max_watch_backlog_bytes=1", true, Outcome::kResync, ""},
      {"--max_watch_backlog_bytes=" + max32, true, Outcome::kEvents, ""},
      {"--max_watch_backlog_bytes=" + max64, true, Outcome::kEvents, ""},
      {"--max_watch_backlog_bytes=-1", false, Outcome::kEvents, ""},
      {"--watch_threads=0", false, Outcome::kEvents, ""},
      {"--watch_threads=1", true, Outcome::kEvents, ""},
      {"--watch_threads=64", true, Outcome::kEvents, ""},
      {"--watch_threads=65", false, Outcome::kEvents, ""},
      {"--watch_threads=" + max32, false, Outcome::kEvents, ""},
  };
  for (const FlagCase& c : cases) {
    ServerConfig config;
    config.extra_flags = {c.flag};
    auto server = ServerProcess::Start(config);
    ASSERT_EQ(server.ok(), c.starts) << c.flag << ": " << server.status();
    if (!c.starts) continue;
    CheckOutcome(**server, c);
    // With a limit of 1, the watch beyond an open one is refused.
    if (c.flag == "--max_watch_streams=1" || c.flag == "--max_watch_fences=1") {
      std::unique_ptr<client::Client> client = (*server)->NewClient();
      v1::WatchRequest request;
      request.set_scene("arena");
      *request.add_fences() = MakeFence(1, MakeSphere(1), MakePose(MakeVec3(0, 0, 0)));
      // The scenario's watch has ended; wait until the server has given back what it held.
      WaitForServerStats(
          *client, [](const auto& s) { return s.watch_streams() == 0 && s.watch_fences() == 0; });
      auto open = client->Watch(request);
      ASSERT_TRUE(IsOk(open));
      ASSERT_TRUE(IsOk((*open)->Read())) << c.flag;
      EXPECT_TRUE(HasError(FirstReadStatus(*client, request), absl::StatusCode::kResourceExhausted,
                           c.flag == "--max_watch_streams=1" ? "streams: " : "fences: "))
          << c.flag;
    }
  }
}

TEST(WatchLimits, WatchRequestNumericFieldsAtTheirExtremes) {
  auto server = StartServer({});
  ASSERT_NE(server, nullptr);
  std::unique_ptr<client::Client> client = server->NewClient();
  v1::SceneOptions options;
  options.set_durability(v1::DURABILITY_NONE);
  ASSERT_TRUE(IsOk(client->CreateScene("arena", options)));
  ASSERT_TRUE(IsOk(client->UpsertBodies(
      "arena",
      std::vector<v1::Body>{MakeBody(1, MakeSphere(0.5f), MakePose(MakeVec3(-5, 0, 0))),
                            MakeBody(2, MakeSphere(0.5f), MakePose(MakeVec3(-5, 0.5f, 0)))})));

  // max_queued_events 0 (the default), 1 and 2^32 - 1 (lowered to the server's limit): each
  // watch follows body 1 into fence 2^64 - 1 and out again.
  for (uint32_t queued : {0u, 1u, kMax32}) {
    v1::WatchRequest request;
    request.set_scene("arena");
    request.set_max_queued_events(queued);
    *request.add_fences() = MakeFence(kMax64, MakeSphere(1), MakePose(MakeVec3(0, 0, 0)));
    auto watch = client->Watch(request);
    ASSERT_TRUE(IsOk(watch));
    Replica replica;
    auto first = (*watch)->Read();
    ASSERT_TRUE(IsOk(first)) << queued;
    replica.Take(*first);
    ASSERT_EQ(first->snapshot().fences_size(), 1);
    EXPECT_EQ(first->snapshot().fences(0).fence_id(), kMax64);
    auto writer = client->OpenUpdateStream("arena", 0);
    ASSERT_TRUE(IsOk(writer));
    uint64_t last = 0;
    for (float x : {0.0f, 5.0f, 0.0f}) {
      v1::UpdateBatch batch;
      batch.set_scene("arena");
      client::AddMove(1, MakePose(MakeVec3(x, 0, 0)), batch.mutable_moves());
      auto ack = (*writer)->Apply(batch);
      ASSERT_TRUE(IsOk(ack));
      last = ack->version();
    }
    EXPECT_TRUE(IsOk((*writer)->Finish()));
    ASSERT_TRUE(replica.ReadUpTo(**watch, last)) << queued;
    EXPECT_EQ(replica.inside[kMax64], (std::set<uint64_t>{1})) << queued;
  }

  // attached_to a body that does not exist (999, then 2^64 - 1): the fence holds nothing until
  // a body with that id appears, around bodies 1 and 2.
  ASSERT_TRUE(IsOk(client->UpsertBodies(
      "arena",
      std::vector<v1::Body>{MakeBody(1, MakeSphere(0.5f), MakePose(MakeVec3(-5, 0, 0)))})));
  for (uint64_t host : {uint64_t{999}, kMax64}) {
    v1::WatchRequest request;
    request.set_scene("arena");
    v1::Fence riding = MakeFence(3, MakeSphere(1), MakePose(MakeVec3(0, 0, 0)));
    riding.set_attached_to(host);
    *request.add_fences() = riding;
    auto watch = client->Watch(request);
    ASSERT_TRUE(IsOk(watch));
    auto first = (*watch)->Read();
    ASSERT_TRUE(IsOk(first));
    EXPECT_EQ(first->snapshot().fences(0).body_ids_size(), 0);
    auto written = client->UpsertBodies(
        "arena",
        std::vector<v1::Body>{MakeBody(host, MakeSphere(0.1f), MakePose(MakeVec3(-5, -0.5f, 0)))});
    ASSERT_TRUE(IsOk(written));
    auto update = (*watch)->Read();
    ASSERT_TRUE(IsOk(update));
    ASSERT_TRUE(update->has_update());
    EXPECT_EQ(update->update().version(), written->version());
    ASSERT_GE(update->update().events_size(), 1);
    EXPECT_EQ(update->update().events(0).fence_id(), 3u);
    EXPECT_EQ(update->update().events(0).body_id(), 1u);
    ASSERT_TRUE(IsOk(client->RemoveBodies("arena", std::vector<uint64_t>{host})));
  }

  // Filters and contact categories at 0 (nothing qualifies) and 2^32 - 1; contact id 2^64 - 1.
  {
    v1::WatchRequest request;
    request.set_scene("arena");
    v1::Fence blind = MakeFence(1, MakeSphere(100), MakePose(MakeVec3(0, 0, 0)));
    blind.mutable_filter()->set_mask(0);
    *request.add_fences() = blind;
    v1::Fence all = MakeFence(2, MakeSphere(100), MakePose(MakeVec3(0, 0, 0)));
    all.mutable_filter()->set_mask(kMax32);
    all.mutable_filter()->set_category(kMax32);
    *request.add_fences() = all;
    v1::ContactWatch none;
    none.set_id(kMax64);
    none.set_category_a(0);
    *request.add_contacts() = none;
    v1::ContactWatch every;
    every.set_id(kMax64 - 1);
    every.set_category_a(kMax32);
    every.set_category_b(kMax32);
    *request.add_contacts() = every;
    auto watch = client->Watch(request);
    ASSERT_TRUE(IsOk(watch));
    auto first = (*watch)->Read();
    ASSERT_TRUE(IsOk(first));
    const v1::WatchSnapshot& s = first->snapshot();
    ASSERT_EQ(s.fences_size(), 2);
    EXPECT_EQ(s.fences(0).body_ids_size(), 0);
    EXPECT_EQ(s.fences(1).body_ids_size(), 2);
    ASSERT_EQ(s.contacts_size(), 1);  // bodies 1 and 2 touch, in the all-bits watch only
    EXPECT_EQ(s.contacts(0).contact_id(), kMax64 - 1);
  }

  // Counts: 100,000 fences and 64 contact watches are accepted, one more of either is not; a
  // duplicate id 2^64 - 1 is refused with its path.
  struct Count {
    int fences;
    int contacts;
    absl::StatusCode code;
    std::string prefix;
  };
  for (const Count& c : {Count{100000, 64, absl::StatusCode::kOk, ""},
                         Count{100001, 0, absl::StatusCode::kResourceExhausted, "fences: "},
                         Count{0, 65, absl::StatusCode::kResourceExhausted, "contacts: "}}) {
    v1::WatchRequest request;
    request.set_scene("arena");
    for (int f = 0; f < c.fences; ++f) {
      *request.add_fences() =
          MakeFence(kMax64 - f, MakeSphere(0.5f), MakePose(MakeVec3(f % 1000, f / 1000, 50)));
    }
    for (int k = 0; k < c.contacts; ++k) request.add_contacts()->set_id(k);
    auto watch = client->Watch(request);
    ASSERT_TRUE(IsOk(watch));
    auto first = (*watch)->Read();
    if (c.code == absl::StatusCode::kOk) {
      ASSERT_TRUE(IsOk(first));
      EXPECT_EQ(first->snapshot().fences_size(), c.fences);
    } else {
      EXPECT_TRUE(HasError(first.status(), c.code, c.prefix)) << c.fences << "/" << c.contacts;
    }
  }
  v1::WatchRequest duplicate;
  duplicate.set_scene("arena");
  *duplicate.add_fences() = MakeFence(kMax64, MakeSphere(1), MakePose(MakeVec3(0, 0, 0)));
  *duplicate.add_fences() = MakeFence(kMax64, MakeSphere(1), MakePose(MakeVec3(0, 0, 0)));
  EXPECT_TRUE(HasError(FirstReadStatus(*client, duplicate), absl::StatusCode::kInvalidArgument,
                       "fences[1].id: "));
  // Nothing leaked: every watch above has ended or is ending.
  const v1::GetServerStatsResponse stats = WaitForServerStats(
      *client, [](const auto& s) { return s.watch_streams() == 0 && s.watch_fences() == 0; });
  EXPECT_EQ(stats.watch_streams(), 0u);
  EXPECT_EQ(stats.watch_fences(), 0u);
}

}  // namespace
}  // namespace collide::integration
