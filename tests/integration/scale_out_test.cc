// Scale-out through a real router: HAProxy (Debian's haproxy, with docker/haproxy.cfg, its
// addresses replaced by this test's ports) in front of three collide-server processes. Scenes
// created through the router land each on the one shard their x-collide-scene header hashes to;
// every rpc kind works through it; a shard killed with SIGKILL makes its own scenes UNAVAILABLE
// (and only those) until it is back with every acknowledged write; `collide scene list --shards`
// lists each shard's scenes under its name. HAProxy names the shard that answered in the
// x-collide-shard response header (haproxy.cfg), which tells where the router sends a scene.

#include <csignal>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_status.h"
#include "collide/v1/collide.grpc.pb.h"
#include "gtest/gtest.h"
#include "integration/haproxy_process.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using client::MakeBody;
using client::MakeBox;
using client::MakePose;
using client::MakeSphere;
using client::MakeVec3;

constexpr int kShards = 3;
constexpr int kScenes = 30;

// Three servers and HAProxy in front of them, with a client of the router.
class ShardedCluster {
 public:
  // Starts `shards` servers and HAProxy; a test failure (and nullptr) when one does not start.
  static std::unique_ptr<ShardedCluster> Start(const std::string& haproxy, int shards) {
    auto cluster = std::unique_ptr<ShardedCluster>(new ShardedCluster(haproxy));
    for (int i = 0; i < shards; ++i) {
      auto server = ServerProcess::Start();
      EXPECT_TRUE(IsOk(server));
      if (!server.ok()) return nullptr;
      cluster->shards_.push_back(*std::move(server));
    }
    if (!cluster->StartRouter(0)) return nullptr;
    return cluster;
  }

  // Starts one more server (not yet behind the router: StartRouter again for that).
  bool AddShard() {
    auto server = ServerProcess::Start();
    EXPECT_TRUE(IsOk(server));
    if (!server.ok()) return false;
    shards_.push_back(*std::move(server));
    return true;
  }

  // Starts HAProxy (again) for the current shards, on `port` (0: a free one).
  bool StartRouter(int port) {
    router_.reset();
    auto router = HaproxyProcess::Start(haproxy_, COLLIDE_HAPROXY_CFG, Addresses(), port);
    EXPECT_TRUE(IsOk(router));
    if (!router.ok()) return false;
    router_ = *std::move(router);
    client::ClientOptions options;
    options.address = router_->address();
    auto client = client::Client::Connect(options);
    EXPECT_TRUE(IsOk(client));
    if (!client.ok()) return false;
    client_ = *std::move(client);
    return true;
  }

  std::vector<std::string> Addresses() const {
    std::vector<std::string> addresses;
    for (const auto& shard : shards_) addresses.push_back(shard->address());
    return addresses;
  }

  // The index of the shard HAProxy sends `scene`'s calls to: GetServerStats through the router
  // with the scene header, and the x-collide-shard header HAProxy adds to the answer.
  int RoutedShard(const std::string& scene) const {
    auto context = client_->NewContext(scene, /*unary=*/true);
    v1::GetServerStatsRequest request;
    request.set_max_scenes(0);
    v1::GetServerStatsResponse response;
    grpc::Status status =
        v1::Collide::NewStub(client_->channel())->GetServerStats(context.get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    const auto& metadata = context->GetServerInitialMetadata();
    auto it = metadata.find("x-collide-shard");
    EXPECT_NE(it, metadata.end()) << "no x-collide-shard header for " << scene;
    if (it == metadata.end()) return -1;
    std::string name(it->second.data(), it->second.size());
    int index = 0;
    EXPECT_TRUE(absl::StartsWith(name, "shard-") && absl::SimpleAtoi(name.substr(6), &index) &&
                index >= 1 && index <= static_cast<int>(shards_.size()))
        << name;
    return index - 1;
  }

  // The scenes each shard lists (ListScenes on it directly).
  std::vector<std::set<std::string>> ScenesByShard() const {
    std::vector<std::set<std::string>> scenes(shards_.size());
    for (size_t i = 0; i < shards_.size(); ++i) {
      auto listed = shards_[i]->NewClient()->ListScenes();
      EXPECT_TRUE(IsOk(listed)) << "shard " << i;
      if (!listed.ok()) continue;
      for (const v1::SceneInfo& scene : *listed) scenes[i].insert(scene.name());
    }
    return scenes;
  }

  client::Client& router() { return *client_; }
  HaproxyProcess& haproxy() { return *router_; }
  ServerProcess& shard(int i) { return *shards_[i]; }
  int shard_count() const { return static_cast<int>(shards_.size()); }

 private:
  explicit ShardedCluster(std::string haproxy) : haproxy_(std::move(haproxy)) {}

  std::string haproxy_;
  std::vector<std::unique_ptr<ServerProcess>> shards_;
  std::unique_ptr<HaproxyProcess> router_;
  std::unique_ptr<client::Client> client_;
};

// Skips the test when there is no haproxy; scripts/lib/setup.sh installs it, so CI runs it.
#define REQUIRE_HAPROXY(binary)                                                         \
  const std::string binary = FindHaproxy();                                             \
  if (binary.empty()) {                                                                 \
    GTEST_SKIP() << "haproxy is not installed (scripts/lib/setup.sh installs Debian's " \
                    "haproxy); the scale-out test needs it as the router";              \
  }

std::string SceneName(int i) { return absl::StrCat("scene-", i); }

// Two bodies per scene, placed by the scene's number so that no two scenes hold the same.
std::vector<v1::Body> BodiesFor(int i) {
  return {MakeBody(1, MakeSphere(1.0f), MakePose(MakeVec3(0, static_cast<float>(i), 0))),
          MakeBody(2, MakeBox(0.5f, 0.5f, 0.5f), MakePose(MakeVec3(10, static_cast<float>(i), 0)))};
}

TEST(ScaleOut, ScenesCreatedThroughTheRouterLiveOnlyOnTheirOwnShard) {
  REQUIRE_HAPROXY(haproxy);
  auto cluster = ShardedCluster::Start(haproxy, kShards);
  ASSERT_NE(cluster, nullptr);
  std::vector<int> routed(kScenes);
  for (int i = 0; i < kScenes; ++i) {
    ASSERT_TRUE(IsOk(cluster->router().CreateScene(SceneName(i)))) << cluster->haproxy().Logs();
    routed[i] = cluster->RoutedShard(SceneName(i));
  }
  std::vector<std::set<std::string>> held = cluster->ScenesByShard();
  std::set<int> used;
  for (int i = 0; i < kScenes; ++i) {
    std::vector<int> holders;
    for (int s = 0; s < kShards; ++s) {
      if (held[s].count(SceneName(i)) > 0) holders.push_back(s);
    }
    EXPECT_EQ(holders, std::vector<int>{routed[i]}) << SceneName(i);
    used.insert(routed[i]);
    // And every call of it through the router finds it there.
    EXPECT_TRUE(IsOk(cluster->router().GetScene(SceneName(i)))) << SceneName(i);
  }
  EXPECT_GE(used.size(), 2u) << "the 30 scenes all hashed to one shard";
  size_t total = 0;
  for (const auto& scenes : held) total += scenes.size();
  EXPECT_EQ(total, static_cast<size_t>(kScenes));

  // collide scene list --shards: every scene once, on the line of the shard that holds it.
  std::vector<std::string> addresses = cluster->Addresses();
  CommandResult listed = RunCommand(
      {CliPath(), "scene", "list", absl::StrCat("--shards=", absl::StrJoin(addresses, ","))});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  std::map<std::string, std::string> shard_of;
  for (absl::string_view line : absl::StrSplit(listed.out, '\n', absl::SkipEmpty())) {
    std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    ASSERT_GE(words.size(), 2u) << line;
    EXPECT_TRUE(shard_of.emplace(words[1], words[0]).second) << "listed twice: " << line;
  }
  ASSERT_EQ(shard_of.size(), static_cast<size_t>(kScenes)) << listed.out;
  for (int i = 0; i < kScenes; ++i) {
    EXPECT_EQ(shard_of[SceneName(i)], addresses[routed[i]]) << SceneName(i);
  }
  // The JSON form: one entry per shard, in the order given, each with its own scenes.
  CommandResult json = RunCommand({CliPath(), "--json", "scene", "list",
                                   absl::StrCat("--shards=", absl::StrJoin(addresses, ","))});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  size_t at = 0;
  for (int s = 0; s < kShards; ++s) {
    at = json.out.find(absl::StrCat("{\"shard\":\"", addresses[s], "\""), at);
    ASSERT_NE(at, std::string::npos) << json.out;
    const size_t next = json.out.find("{\"shard\":", at + 1);
    const std::string entry = json.out.substr(at, next - at);
    for (int i = 0; i < kScenes; ++i) {
      EXPECT_EQ(absl::StrContains(entry, absl::StrCat("\"name\":\"", SceneName(i), "\"")),
                routed[i] == s)
          << SceneName(i) << " in " << entry;
    }
  }
}

TEST(ScaleOut, EveryRpcKindWorksThroughTheRouter) {
  REQUIRE_HAPROXY(haproxy);
  auto cluster = ShardedCluster::Start(haproxy, kShards);
  ASSERT_NE(cluster, nullptr);
  client::Client& router = cluster->router();
  // One scene on each shard the first scene names reach.
  std::map<int, std::string> scene_on;
  for (int i = 0; i < kScenes && static_cast<int>(scene_on.size()) < kShards; ++i) {
    scene_on.emplace(cluster->RoutedShard(SceneName(i)), SceneName(i));
  }
  ASSERT_GE(scene_on.size(), 2u);
  for (const auto& [shard, scene] : scene_on) {
    SCOPED_TRACE(absl::StrCat(scene, " on shard ", shard));
    ASSERT_TRUE(IsOk(router.CreateScene(scene)));
    std::vector<v1::Body> bodies = BodiesFor(shard);
    auto written = router.UpsertBodies(scene, bodies);
    ASSERT_TRUE(IsOk(written));
    auto got = router.GetBodies(scene);
    ASSERT_TRUE(IsOk(got));
    EXPECT_TRUE(SameBodies(BodiesOf(*got), bodies));
    // The shard itself holds them.
    auto direct = cluster->shard(shard).NewClient()->GetBodies(scene);
    ASSERT_TRUE(IsOk(direct));
    EXPECT_TRUE(SameBodies(BodiesOf(*direct), bodies));

    const float y = static_cast<float>(shard);
    v1::RaycastRequest ray;
    ray.set_scene(scene);
    *ray.mutable_ray() = client::MakeRaycast(MakeVec3(-5, y, 0), MakeVec3(1, 0, 0), 100);
    auto ray_hits = router.Raycast(ray);
    ASSERT_TRUE(IsOk(ray_hits));
    ASSERT_EQ(ray_hits->hits_size(), 1);
    EXPECT_EQ(ray_hits->hits(0).body_id(), 1u);
    EXPECT_NEAR(ray_hits->hits(0).distance(), 4.0f, 1e-4f);

    v1::SphereCastRequest cast;
    cast.set_scene(scene);
    *cast.mutable_cast() =
        client::MakeSphereCast(MakeVec3(20, y, 0), MakeVec3(-1, 0, 0), 100, 0.5f);
    auto cast_hits = router.SphereCast(cast);
    ASSERT_TRUE(IsOk(cast_hits));
    ASSERT_EQ(cast_hits->hits_size(), 1);
    EXPECT_EQ(cast_hits->hits(0).body_id(), 2u);
    EXPECT_NEAR(cast_hits->hits(0).distance(), 9.0f, 1e-3f);

    v1::OverlapRequest overlap;
    overlap.set_scene(scene);
    overlap.set_mode(v1::MODE_ALL);
    *overlap.mutable_overlap() =
        client::MakeOverlap(MakeSphere(20.0f), MakePose(MakeVec3(0, y, 0)));
    auto overlaps = router.Overlap(overlap);
    ASSERT_TRUE(IsOk(overlaps));
    EXPECT_EQ(overlaps->hits_size(), 2);

    // Watch: a fence around x = 30; the update stream moves body 1 into it.
    v1::WatchRequest watch_request;
    watch_request.set_scene(scene);
    v1::Fence* fence = watch_request.add_fences();
    fence->set_id(7);
    *fence->mutable_shape() = MakeBox(2, 2, 2);
    *fence->mutable_pose() = MakePose(MakeVec3(30, y, 0));
    auto watch = router.Watch(watch_request);
    ASSERT_TRUE(IsOk(watch));
    auto snapshot = (*watch)->Read();
    ASSERT_TRUE(IsOk(snapshot));
    ASSERT_TRUE(snapshot->has_snapshot());

    auto writer = router.OpenUpdateStream(scene, /*client_id=*/100 + shard);
    ASSERT_TRUE(IsOk(writer));
    v1::UpdateBatch batch;
    batch.set_scene(scene);
    *batch.add_ops() = client::MakeSetPoseOp(1, MakePose(MakeVec3(30, y, 0)));
    auto ack = (*writer)->Apply(batch);
    ASSERT_TRUE(IsOk(ack));
    ASSERT_TRUE(IsOk(client::AckStatus(*ack)));
    EXPECT_EQ(ack->version(), written->version() + 1);

    auto event = (*watch)->Read();
    ASSERT_TRUE(IsOk(event));
    ASSERT_TRUE(event->has_update());
    ASSERT_EQ(event->update().events_size(), 1);
    EXPECT_EQ(event->update().events(0).kind(), v1::WatchEvent::KIND_ENTER);
    EXPECT_EQ(event->update().events(0).fence_id(), 7u);
    EXPECT_EQ(event->update().events(0).body_id(), 1u);

    auto queries = router.OpenQueryStream(scene);
    ASSERT_TRUE(IsOk(queries));
    v1::QueryBatch query_batch;
    query_batch.set_scene(scene);
    *query_batch.add_queries() = client::MakeRaycastQuery(
        1, client::MakeRaycast(MakeVec3(25, y, 0), MakeVec3(1, 0, 0), 100));
    auto answer = (*queries)->Run(query_batch);
    ASSERT_TRUE(IsOk(answer));
    ASSERT_TRUE(IsOk(client::BatchStatus(*answer)));
    EXPECT_EQ(answer->version(), ack->version());
    ASSERT_EQ(answer->results_size(), 1);
    ASSERT_EQ(answer->results(0).hits_size(), 1);
    EXPECT_EQ(answer->results(0).hits(0).body_id(), 1u);
    EXPECT_NEAR(answer->results(0).hits(0).distance(), 4.0f, 1e-4f);
    EXPECT_TRUE(IsOk((*queries)->Finish()));
    EXPECT_TRUE(IsOk((*writer)->Finish()));
    (*watch)->Cancel();

    std::vector<uint64_t> gone = {2};
    auto removed = router.RemoveBodies(scene, gone);
    ASSERT_TRUE(IsOk(removed));
    auto info = router.GetScene(scene);
    ASSERT_TRUE(IsOk(info));
    EXPECT_EQ(info->stats().version(), removed->version());
    EXPECT_EQ(info->stats().body_count(), 1u);

    // ExportScene through the router, ImportScene of it under a new name (which the router
    // sends to that name's shard), then DeleteScene of the copy.
    std::vector<v1::SceneExportMessage> exported;
    ASSERT_TRUE(IsOk(router.ExportScene(scene, [&](const v1::SceneExportMessage& message) {
      exported.push_back(message);
      return absl::OkStatus();
    })));
    const std::string copy = absl::StrCat(scene, "-copy");
    size_t next = 0;
    auto imported = router.ImportScene(
        [&](v1::SceneExportMessage* message) -> absl::StatusOr<bool> {
          if (next == exported.size()) return false;
          *message = exported[next++];
          return true;
        },
        copy);
    ASSERT_TRUE(IsOk(imported));
    const int copy_shard = cluster->RoutedShard(copy);
    auto copy_bodies = cluster->shard(copy_shard).NewClient()->GetBodies(copy);
    ASSERT_TRUE(IsOk(copy_bodies));
    auto original_bodies = router.GetBodies(scene);
    ASSERT_TRUE(IsOk(original_bodies));
    EXPECT_TRUE(SameBodies(BodiesOf(*copy_bodies), BodiesOf(*original_bodies)));
    EXPECT_TRUE(IsOk(router.DeleteScene(copy)));
    EXPECT_TRUE(HasError(router.GetScene(copy).status(), absl::StatusCode::kNotFound, ""));
    // An import named by its export's header alone (as `collide restore` does) reaches the
    // scene's own shard too: the client sends that name as the scene header.
    ASSERT_TRUE(IsOk(router.DeleteScene(scene)));
    next = 0;
    auto restored =
        router.ImportScene([&](v1::SceneExportMessage* message) -> absl::StatusOr<bool> {
          if (next == exported.size()) return false;
          *message = exported[next++];
          return true;
        });
    ASSERT_TRUE(IsOk(restored));
    EXPECT_EQ(restored->name(), scene);
    auto back = cluster->shard(shard).NewClient()->GetBodies(scene);
    ASSERT_TRUE(IsOk(back));
    EXPECT_TRUE(SameBodies(BodiesOf(*back), BodiesOf(*original_bodies)));
  }
  // Calls that name no scene go to some shard: each answers with its own figures.
  auto stats = router.GetServerStats();
  ASSERT_TRUE(IsOk(stats));
  EXPECT_LE(stats->scenes(), 1u);
  auto listed = router.ListScenes();
  ASSERT_TRUE(IsOk(listed));
  EXPECT_LE(listed->size(), 1u);
}

// Acknowledged unary writes through the router, recorded per scene.
struct Written {
  std::map<std::string, std::vector<v1::Body>> bodies;
  std::map<std::string, uint64_t> version;
};

TEST(ScaleOut, AKilledShardsScenesAreUnavailableUntilItIsBackAndNoOtherShardNotices) {
  REQUIRE_HAPROXY(haproxy);
  auto cluster = ShardedCluster::Start(haproxy, kShards);
  ASSERT_NE(cluster, nullptr);
  client::Client& router = cluster->router();
  Written written;
  std::vector<int> routed(kScenes);
  std::vector<int> count(kShards);
  for (int i = 0; i < kScenes; ++i) {
    const std::string scene = SceneName(i);
    ASSERT_TRUE(IsOk(router.CreateScene(scene)));
    std::vector<v1::Body> bodies = BodiesFor(i);
    auto write = router.UpsertBodies(scene, bodies);
    ASSERT_TRUE(IsOk(write));
    ASSERT_TRUE(write->durable());
    written.bodies[scene] = bodies;
    written.version[scene] = write->version();
    routed[i] = cluster->RoutedShard(scene);
    ++count[routed[i]];
  }
  // The victim holds at least one scene; another shard holds one too (at least two are used).
  int victim = 0;
  for (int s = 1; s < kShards; ++s) {
    if (count[s] > count[victim]) victim = s;
  }
  int survivor_scene = -1;
  for (int i = 0; i < kScenes && survivor_scene < 0; ++i) {
    if (routed[i] != victim) survivor_scene = i;
  }
  ASSERT_GE(survivor_scene, 0);
  // A writer on another shard's scene, open across the kill and the restart.
  auto writer = router.OpenUpdateStream(SceneName(survivor_scene), /*client_id=*/9);
  ASSERT_TRUE(IsOk(writer));
  auto apply_move = [&](float x) {
    const std::string scene = SceneName(survivor_scene);
    v1::UpdateBatch batch;
    batch.set_scene(scene);
    v1::Body moved = written.bodies[scene][0];
    *moved.mutable_pose() = MakePose(MakeVec3(x, static_cast<float>(survivor_scene), 0));
    *batch.add_ops() = client::MakeUpsertOp(moved);
    auto ack = (*writer)->Apply(batch);
    ASSERT_TRUE(IsOk(ack));
    ASSERT_TRUE(IsOk(client::AckStatus(*ack)));
    written.bodies[scene][0] = moved;
    written.version[scene] = ack->version();
  };
  apply_move(1.0f);

  ASSERT_TRUE(IsOk(cluster->shard(victim).Stop(SIGKILL)));
  // The victim's scenes: UNAVAILABLE through the router, for reads and writes (in parallel: the
  // router retries a refused connection before it answers).
  std::vector<int> victims;
  for (int i = 0; i < kScenes; ++i) {
    if (routed[i] == victim) victims.push_back(i);
  }
  std::vector<absl::Status> reads(victims.size());
  std::vector<absl::Status> writes(victims.size());
  {
    std::vector<std::thread> threads;
    for (size_t k = 0; k < victims.size(); ++k) {
      threads.emplace_back([&, k] {
        const std::string scene = SceneName(victims[k]);
        reads[k] = router.GetScene(scene).status();
        std::vector<v1::Body> more = {MakeBody(3, MakeSphere(1), MakePose(MakeVec3(0, 0, 5)))};
        writes[k] = router.UpsertBodies(scene, more).status();
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  for (size_t k = 0; k < victims.size(); ++k) {
    EXPECT_EQ(reads[k].code(), absl::StatusCode::kUnavailable)
        << SceneName(victims[k]) << ": " << reads[k];
    // The router's own answer (haproxy.cfg's http-error), not a shard's.
    EXPECT_TRUE(
        absl::StrContains(reads[k].message(), "router: no connection to this scene's shard"))
        << reads[k];
    EXPECT_EQ(writes[k].code(), absl::StatusCode::kUnavailable)
        << SceneName(victims[k]) << ": " << writes[k];
  }
  // Every other scene answers, takes writes, and the open stream goes on.
  for (int i = 0; i < kScenes; ++i) {
    if (routed[i] == victim) continue;
    const std::string scene = SceneName(i);
    auto bodies = router.GetBodies(scene);
    ASSERT_TRUE(IsOk(bodies)) << scene;
    EXPECT_TRUE(SameBodies(BodiesOf(*bodies), written.bodies[scene])) << scene;
    std::vector<v1::Body> more = {
        MakeBody(4, MakeSphere(0.25f), MakePose(MakeVec3(0, static_cast<float>(i), 7)))};
    auto write = router.UpsertBodies(scene, more);
    ASSERT_TRUE(IsOk(write)) << scene;
    written.bodies[scene].push_back(more[0]);
    written.version[scene] = write->version();
  }
  apply_move(2.0f);
  // The CLI names the shard it cannot list.
  CommandResult listed =
      RunCommand({CliPath(), "scene", "list",
                  absl::StrCat("--shards=", absl::StrJoin(cluster->Addresses(), ","))});
  EXPECT_NE(listed.exit_code, 0) << listed.out;
  EXPECT_TRUE(
      absl::StrContains(listed.err, absl::StrCat("shard ", cluster->shard(victim).address())))
      << listed.err;
  // The shards that answer are listed all the same.
  for (int s = 0; s < cluster->shard_count(); ++s) {
    if (s == victim) continue;
    auto held = cluster->shard(s).NewClient()->ListScenes();
    ASSERT_TRUE(IsOk(held));
    for (const v1::SceneInfo& scene : *held) {
      EXPECT_TRUE(absl::StrContains(
          listed.out, absl::StrCat(cluster->shard(s).address(), "  ", scene.name(), "  ")))
          << scene.name() << " of shard " << s << ": " << listed.out;
    }
  }
  EXPECT_FALSE(absl::StrContains(listed.out, cluster->shard(victim).address())) << listed.out;

  ASSERT_TRUE(IsOk(cluster->shard(victim).RestartOnSamePort()));
  // Every scene is back with every acknowledged write, and answers through the router.
  for (int i = 0; i < kScenes; ++i) {
    const std::string scene = SceneName(i);
    auto info = router.GetScene(scene);
    ASSERT_TRUE(IsOk(info)) << scene << "\n" << cluster->haproxy().Logs();
    EXPECT_EQ(info->stats().version(), written.version[scene]) << scene;
    auto bodies = router.GetBodies(scene);
    ASSERT_TRUE(IsOk(bodies)) << scene;
    EXPECT_TRUE(SameBodies(BodiesOf(*bodies), written.bodies[scene])) << scene;
  }
  apply_move(3.0f);
  EXPECT_TRUE(IsOk((*writer)->Finish()));
  // Still each scene on its own shard only.
  std::vector<std::set<std::string>> held = cluster->ScenesByShard();
  for (int i = 0; i < kScenes; ++i) {
    for (int s = 0; s < kShards; ++s) {
      EXPECT_EQ(held[s].count(SceneName(i)), s == routed[i] ? 1u : 0u) << SceneName(i);
    }
  }
}

// A fourth shard joins: HAProxy restarted with four servers sends a part of the scenes to the
// new one; each of those is moved there with `collide scene move` (from the shard that holds it
// to the shard the router now names), the others stay. Afterwards every scene answers through
// the router with exactly its state (version and bodies), lives on one shard only, and a
// writer that resends through the router batches the old shard applied gets them back as
// duplicates while its new batches apply once.
TEST(ScaleOut, AFourthShardTakesTheScenesWhoseHashMovedByLiveMoves) {
  REQUIRE_HAPROXY(haproxy);
  auto cluster = ShardedCluster::Start(haproxy, kShards);
  ASSERT_NE(cluster, nullptr);
  constexpr uint64_t kWriterId = 77;
  constexpr uint64_t kSent = 3;
  // Batch k of the writer on scene i: one body more (id 100 + k).
  auto writer_batch = [](int i, uint64_t k) {
    v1::UpdateBatch batch;
    batch.set_scene(SceneName(i));
    batch.set_client_id(kWriterId);
    batch.set_client_sequence(k);
    *batch.add_ops() = client::MakeUpsertOp(
        MakeBody(100 + k, MakeSphere(0.5f),
                 MakePose(MakeVec3(static_cast<float>(k) * 3.0f, static_cast<float>(i), 20.0f))));
    return batch;
  };
  Written written;
  std::vector<int> before(kScenes);
  for (int i = 0; i < kScenes; ++i) {
    const std::string scene = SceneName(i);
    ASSERT_TRUE(IsOk(cluster->router().CreateScene(scene)));
    std::vector<v1::Body> bodies = BodiesFor(i);
    ASSERT_TRUE(IsOk(cluster->router().UpsertBodies(scene, bodies)));
    // The writer's batches through the router, each acknowledged.
    auto writer = cluster->router().OpenUpdateStream(scene, kWriterId);
    ASSERT_TRUE(IsOk(writer));
    for (uint64_t k = 1; k <= kSent; ++k) {
      v1::UpdateBatch batch = writer_batch(i, k);
      auto ack = (*writer)->Apply(batch);
      ASSERT_TRUE(IsOk(ack));
      ASSERT_TRUE(IsOk(client::AckStatus(*ack)));
      bodies.push_back(batch.ops(0).upsert());
      written.version[scene] = ack->version();
    }
    ASSERT_TRUE(IsOk((*writer)->Finish()));
    written.bodies[scene] = bodies;
    before[i] = cluster->RoutedShard(scene);
  }

  ASSERT_TRUE(cluster->AddShard());
  ASSERT_TRUE(cluster->StartRouter(0));
  const int added = kShards;
  std::vector<int> after(kScenes);
  std::vector<int> moved;
  for (int i = 0; i < kScenes; ++i) {
    after[i] = cluster->RoutedShard(SceneName(i));
    // Consistent hashing: a scene either stays or goes to the new shard.
    EXPECT_TRUE(after[i] == before[i] || after[i] == added)
        << SceneName(i) << ": shard " << before[i] << " -> " << after[i];
    if (after[i] != before[i]) moved.push_back(i);
  }
  ASSERT_FALSE(moved.empty()) << "no scene hashes to the fourth shard";
  EXPECT_LT(moved.size(), static_cast<size_t>(kScenes));
  // Until moved, a scene the router sends to the new shard is not found there.
  EXPECT_TRUE(HasError(cluster->router().GetScene(SceneName(moved[0])).status(),
                       absl::StatusCode::kNotFound, "scene"));
  for (int i : moved) {
    CommandResult result = RunCommand(
        {CliPath(), absl::StrCat("--address=", cluster->shard(before[i]).address()), "--timeout=60",
         "scene", "move", SceneName(i), "--to", cluster->shard(after[i]).address()});
    ASSERT_EQ(result.exit_code, 0) << SceneName(i) << ": " << result.err << result.out;
    EXPECT_TRUE(absl::StrContains(result.out, absl::StrCat("moved scene ", SceneName(i))))
        << result.out;
    if (i == moved[0]) std::printf("%s", result.out.c_str());
  }
  std::printf("fourth shard: %zu of %d scenes moved to it\n", moved.size(), kScenes);

  // Every scene answers through the router with exactly what was acknowledged.
  for (int i = 0; i < kScenes; ++i) {
    const std::string scene = SceneName(i);
    auto info = cluster->router().GetScene(scene);
    ASSERT_TRUE(IsOk(info)) << scene;
    EXPECT_EQ(info->stats().version(), written.version[scene]) << scene;
    auto bodies = cluster->router().GetBodies(scene);
    ASSERT_TRUE(IsOk(bodies)) << scene;
    EXPECT_TRUE(SameBodies(BodiesOf(*bodies), written.bodies[scene])) << scene;
  }
  std::vector<std::set<std::string>> held = cluster->ScenesByShard();
  for (int i = 0; i < kScenes; ++i) {
    for (int s = 0; s < cluster->shard_count(); ++s) {
      EXPECT_EQ(held[s].count(SceneName(i)), s == after[i] ? 1u : 0u) << SceneName(i);
    }
  }

  // The writer of a moved scene reconnects through the router and resends its batches (as a
  // writer that lost their acknowledgements would): duplicates at the new shard; then a new
  // batch applies once.
  const int i = moved[0];
  const std::string scene = SceneName(i);
  auto writer = cluster->router().OpenUpdateStream(scene, kWriterId);
  ASSERT_TRUE(IsOk(writer));
  for (uint64_t k = 1; k <= kSent; ++k) {
    ASSERT_TRUE(IsOk((*writer)->SendAsIs(writer_batch(i, k))));
    auto ack = (*writer)->ReadAck();
    ASSERT_TRUE(IsOk(ack));
    EXPECT_FALSE(ack->has_error()) << ack->error().message();
    EXPECT_TRUE(ack->duplicate()) << "batch " << k;
  }
  v1::UpdateBatch next = writer_batch(i, kSent + 1);
  ASSERT_TRUE(IsOk((*writer)->SendAsIs(next)));
  auto ack = (*writer)->ReadAck();
  ASSERT_TRUE(IsOk(ack));
  ASSERT_TRUE(IsOk(client::AckStatus(*ack)));
  EXPECT_FALSE(ack->duplicate());
  EXPECT_EQ(ack->version(), written.version[scene] + 1);
  ASSERT_TRUE(IsOk((*writer)->Finish()));
  written.bodies[scene].push_back(next.ops(0).upsert());
  auto bodies = cluster->router().GetBodies(scene);
  ASSERT_TRUE(IsOk(bodies));
  EXPECT_TRUE(SameBodies(BodiesOf(*bodies), written.bodies[scene]));
  // The old shard no longer takes its writes: it names where the scene went.
  auto stale = cluster->shard(before[i]).NewClient()->UpsertBodies(
      scene, std::vector<v1::Body>{MakeBody(999, MakeSphere(1), MakePose(MakeVec3(0, 0, 0)))});
  EXPECT_TRUE(HasError(
      stale.status(), absl::StatusCode::kFailedPrecondition,
      absl::StrCat("scene: scene \"", scene, "\" moved to ", cluster->shard(after[i]).address())))
      << stale.status();
}

}  // namespace
}  // namespace collide::integration
