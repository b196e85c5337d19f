// Replicated scenes with real processes only: a three-node NATS JetStream cluster (Debian's
// nats-server, tests/support/nats_cluster.h), two or three collide-server processes started with
// --nats_url, and HAProxy (Debian's haproxy, docker/haproxy.cfg) in front of them, its scene map
// kept by the servers through its runtime API. Writes are acknowledged only once the quorum
// stored them; a follower answers reads at the version asked; a SIGKILLed owner is replaced by a
// follower and the resilient writer's batches apply exactly once across the failover; a
// deposed owner acknowledges nothing; the router follows every takeover and move. The tests'
// lease is short (600 ms) so that each failover takes about a second; the quorum test's is 3 s
// (kQuorumLeaseMs, below). The tests skip, saying why, only
// where nats-server or haproxy is not installed (scripts/lib/setup.sh installs both).

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_status.h"
#include "client/cpp/resilient_update_writer.h"
#include "client/cpp/scene_move.h"
#include "collide/v1/collide.grpc.pb.h"
#include "collide/viewer/v1/viewer.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "integration/haproxy_process.h"
#include "integration/http_probe.h"
#include "integration/metrics_scrape.h"
#include "integration/test_util.h"
#include "support/nats_cluster.h"
#include "support/ports.h"

namespace collide::integration {
namespace {

using client::MakeBody;
using client::MakePose;
using client::MakeSphere;
using client::MakeVec3;
using testing::NatsCluster;
using Clock = std::chrono::steady_clock;

// Every server's --replication_lease_ms: short, so that each failover takes about a second.
constexpr int kLeaseMs = 600;
// The quorum test's lease. An owner stops acknowledging when a renewal (every third of a lease,
// a quorum write in NATS) has not come back within 90% of a lease: on a shared 2-core machine
// running other tests, a 600 ms lease lets a stall of a few hundred milliseconds depose the
// owner that test writes to, and it checks what holds, not how fast a takeover is.
constexpr int kQuorumLeaseMs = 3000;
// The failover drill's lease (it measures the failover).
constexpr int kDrillLeaseMs = kLeaseMs;

// Skips the test when a binary it needs is missing; scripts/lib/setup.sh installs both, so CI
// runs it.
#define REQUIRE_NATS()                                                                      \
  if (testing::FindNatsServer().empty()) {                                                  \
    GTEST_SKIP() << "nats-server is not installed (scripts/lib/setup.sh installs Debian's " \
                    "nats-server); the replication tests need a real JetStream cluster";    \
  }
#define REQUIRE_HAPROXY(binary)                                                         \
  const std::string binary = FindHaproxy();                                             \
  if (binary.empty()) {                                                                 \
    GTEST_SKIP() << "haproxy is not installed (scripts/lib/setup.sh installs Debian's " \
                    "haproxy); the router part of the replication tests needs it";      \
  }

// Polls `done` every 20 ms until it holds or `timeout` passes.
bool WaitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// One command to HAProxy's runtime API (an independent client of the server's own).
std::string AdminCommand(const std::string& address, const std::string& command) {
  const size_t colon = address.rfind(':');
  int port = 0;
  if (!absl::SimpleAtoi(address.substr(colon + 1), &port)) return "";
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval timeout{.tv_sec = 2, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in socket_address = collide::testing::LoopbackAddress(port);
  std::string answer;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&socket_address), sizeof socket_address) == 0) {
    const std::string line = command + "\n";
    if (send(fd, line.data(), line.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(line.size())) {
      char buffer[4096];
      ssize_t n;
      while ((n = recv(fd, buffer, sizeof buffer, 0)) > 0) answer.append(buffer, n);
    }
  }
  close(fd);
  return answer;
}

// The backend HAProxy's scene map names for `scene` (empty when it has no entry).
std::string MapEntry(const HaproxyProcess& haproxy, const std::string& scene) {
  const std::string answer =
      AdminCommand(haproxy.admin_address(), absl::StrCat("show map ", haproxy.map_file()));
  for (absl::string_view line : absl::StrSplit(answer, '\n', absl::SkipEmpty())) {
    std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (words.size() == 3 && words[1] == scene) return words[2];
  }
  return "";
}

v1::SceneOptions Replicated() {
  v1::SceneOptions options;
  options.set_durability(v1::DURABILITY_REPLICATED);
  return options;
}

// Creates a replicated scene, again while the answer is UNAVAILABLE (for at most 20 s): a NATS
// cluster that just started may not answer JetStream requests yet ("no responders"), which
// clients see as UNAVAILABLE, the code that says "try again".
absl::StatusOr<v1::SceneInfo> CreateReplicated(client::Client& client, const std::string& scene) {
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (true) {
    absl::StatusOr<v1::SceneInfo> created = client.CreateScene(scene, Replicated());
    if (created.ok() || !absl::IsUnavailable(created.status()) || Clock::now() > deadline) {
      return created;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// Body `id` at x = id: what batch `id` of the tests' writers adds.
v1::Body BodyFor(uint64_t id) {
  return MakeBody(id, MakeSphere(0.5f), MakePose(MakeVec3(static_cast<float>(id), 0, 0)));
}

// The NATS cluster, `count` collide-servers following it, and (with a haproxy binary) HAProxy in
// front of them whose map the servers keep.
class ReplicatedCluster {
 public:
  // `count` servers; HAProxy's configuration names `count + spare` shards, the spare ones
  // started later with StartSpare (a shard the operator added to the configuration first).
  // `lease_ms` is every server's --replication_lease_ms.
  static std::unique_ptr<ReplicatedCluster> Start(int count, const std::string& haproxy = "",
                                                  int spare = 0, int lease_ms = kLeaseMs) {
    auto cluster = std::unique_ptr<ReplicatedCluster>(new ReplicatedCluster());
    cluster->lease_ms_ = lease_ms;
    auto nats = NatsCluster::Start(3);
    EXPECT_TRUE(IsOk(nats));
    if (!nats.ok()) return nullptr;
    cluster->nats_ = *std::move(nats);
    // Fixed ports, so that HAProxy's configuration names them before they start and a restart
    // keeps them.
    std::vector<std::string> addresses;
    for (int i = 0; i < count + spare; ++i) {
      addresses.push_back(absl::StrCat("127.0.0.1:", FreePort()));
    }
    cluster->addresses_ = addresses;
    if (!haproxy.empty()) {
      auto router = HaproxyProcess::Start(haproxy, COLLIDE_HAPROXY_CFG, addresses);
      EXPECT_TRUE(IsOk(router));
      if (!router.ok()) return nullptr;
      cluster->haproxy_ = *std::move(router);
    }
    for (int i = 0; i < count; ++i) {
      if (!cluster->StartServer(i)) return nullptr;
    }
    if (cluster->haproxy_ != nullptr) {
      client::ClientOptions options;
      options.address = cluster->haproxy_->address();
      options.enable_http_proxy = false;
      auto client = client::Client::Connect(options);
      EXPECT_TRUE(IsOk(client));
      if (!client.ok()) return nullptr;
      cluster->router_ = *std::move(client);
    }
    return cluster;
  }

  // Starts the next server named in HAProxy's configuration that is not running yet; its
  // index, or -1.
  int StartSpare() {
    const int i = size();
    if (i >= static_cast<int>(addresses_.size()) || !StartServer(i)) return -1;
    return i;
  }

  ServerProcess& server(int i) { return *servers_[i]; }
  int size() const { return static_cast<int>(servers_.size()); }
  NatsCluster& nats() { return *nats_; }
  HaproxyProcess& haproxy() { return *haproxy_; }
  client::Client& router() { return *router_; }

  // Starts server `i` on addresses_[i], following the NATS cluster and keeping HAProxy's map.
  bool StartServer(int i) {
    ServerConfig config;
    config.address = addresses_[i];
    config.metrics = true;
    config.extra_flags = {absl::StrCat("--nats_url=", nats_->urls()),
                          absl::StrCat("--replication_lease_ms=", lease_ms_),
                          "--replication_publish_timeout_ms=1000",
                          "--drain_timeout_ms=500",
                          "--log_level=info",
                          "--viewer_address=127.0.0.1:0",
                          absl::StrCat("--viewer_port_file=", ViewerPortFile(i))};
    if (haproxy_ != nullptr) {
      config.extra_flags.push_back("--router_admin=" + haproxy_->admin_address());
      config.extra_flags.push_back("--router_map=" + haproxy_->map_file());
      config.extra_flags.push_back(absl::StrCat("--router_backend=shard_", i + 1));
      config.extra_flags.push_back("--router_sync_ms=300");
    }
    auto server = ServerProcess::Start(config);
    EXPECT_TRUE(IsOk(server)) << i;
    if (!server.ok()) return false;
    servers_.push_back(*std::move(server));
    return true;
  }

  // The port of server `i`'s viewer, as it wrote it when it last started (0: none yet).
  int ViewerPort(int i) const {
    int port = 0;
    std::ifstream(ViewerPortFile(i)) >> port;
    return port;
  }

  // The index of the server at `address`; -1 for none.
  int IndexOf(const std::string& address) const {
    for (int i = 0; i < size(); ++i) {
      if (servers_[i]->running() && servers_[i]->address() == address) return i;
    }
    return -1;
  }

  // The index of the server that owns `scene` as server `asked` reports it (-1: none known).
  int Owner(int asked, const std::string& scene) {
    auto info = servers_[asked]->NewClient()->GetScene(scene);
    if (!info.ok() || !info->has_replication()) return -1;
    return IndexOf(info->replication().owner());
  }

  // Waits until every running server but `except` names the same running owner of `scene` and
  // that owner says it owns it; its index, or -1.
  int WaitForOwner(const std::string& scene, std::chrono::milliseconds timeout, int except = -1) {
    int owner = -1;
    const bool agreed = WaitUntil(
        [&] {
          owner = -1;
          for (int i = 0; i < size(); ++i) {
            if (i == except || !servers_[i]->running()) continue;
            auto info = servers_[i]->NewClient()->GetScene(scene);
            if (!info.ok() || !info->has_replication()) return false;
            const int named = IndexOf(info->replication().owner());
            if (named < 0 || named == except || (owner >= 0 && named != owner)) return false;
            owner = named;
            if (i == named && !info->replication().owned()) return false;
          }
          return owner >= 0;
        },
        timeout);
    return agreed ? owner : -1;
  }

 private:
  ReplicatedCluster() = default;
  std::string ViewerPortFile(int i) const { return files_.File(absl::StrCat("viewer_port_", i)); }

  TempDir files_{"replication"};
  std::unique_ptr<NatsCluster> nats_;
  std::unique_ptr<HaproxyProcess> haproxy_;
  std::vector<std::string> addresses_;
  std::vector<std::unique_ptr<ServerProcess>> servers_;
  std::unique_ptr<client::Client> router_;
  int lease_ms_ = kLeaseMs;
};

// The body ids of `scene` at `server`, and its version.
std::pair<std::vector<uint64_t>, uint64_t> IdsAndVersion(client::Client& client,
                                                         const std::string& scene) {
  std::vector<uint64_t> ids;
  auto bodies = client.GetBodies(scene);
  EXPECT_TRUE(IsOk(bodies)) << scene;
  if (!bodies.ok()) return {ids, 0};
  for (const v1::Body& body : bodies->bodies()) {
    ids.push_back(body.id());
    EXPECT_EQ(body.pose().position().x(), static_cast<float>(body.id())) << body.id();
  }
  std::sort(ids.begin(), ids.end());
  auto info = client.GetScene(scene);
  EXPECT_TRUE(IsOk(info));
  return {ids, info.ok() ? info->stats().version() : 0};
}

// Rejected batches as "sequence: status" lines ("" for none), for a failure to print.
std::string Describe(const std::vector<client::RejectedBatch>& rejected) {
  std::string out;
  for (const client::RejectedBatch& batch : rejected) {
    absl::StrAppend(&out, batch.sequence, ": ", batch.status.ToString(), "\n");
  }
  return out;
}

TEST(Replication, AWriteIsAcknowledgedOnlyOnceAQuorumStoredItAndFollowersReadAtTheVersionAsked) {
  REQUIRE_NATS();
  auto cluster = ReplicatedCluster::Start(2, "", /*spare=*/0, kQuorumLeaseMs);
  ASSERT_NE(cluster, nullptr);
  auto owner = cluster->server(0).NewClient();
  auto follower = cluster->server(1).NewClient();
  auto created = CreateReplicated(*owner, "world");
  ASSERT_TRUE(IsOk(created)) << cluster->server(0).Logs();
  ASSERT_TRUE(created->has_replication());
  EXPECT_TRUE(created->replication().owned());
  EXPECT_EQ(created->replication().owner(), cluster->server(0).address());
  EXPECT_EQ(created->options().durability(), v1::DURABILITY_REPLICATED);
  ASSERT_EQ(cluster->WaitForOwner("world", std::chrono::seconds(20)), 0)
      << cluster->server(1).Logs();

  // Every acknowledged write is readable at the follower with min_version (read-your-writes
  // across servers), and the follower never shows a version the owner did not acknowledge.
  uint64_t version = 0;
  for (uint64_t id = 1; id <= 20; ++id) {
    std::vector<v1::Body> bodies = {BodyFor(id)};
    auto written = owner->UpsertBodies("world", bodies);
    ASSERT_TRUE(IsOk(written)) << id;
    EXPECT_GT(written->version(), version);
    version = written->version();
    v1::OverlapRequest overlap;
    overlap.set_scene("world");
    *overlap.mutable_overlap() =
        client::MakeOverlap(MakeSphere(0.25f), MakePose(MakeVec3(static_cast<float>(id), 0, 0)));
    overlap.set_min_version(version);
    auto read = follower->Overlap(overlap);
    ASSERT_TRUE(IsOk(read)) << id << cluster->server(1).Logs();
    EXPECT_GE(read->version(), version);
    EXPECT_LE(read->version(), version) << "a version the owner has not acknowledged";
    ASSERT_EQ(read->hits_size(), 1) << id;
    EXPECT_EQ(read->hits(0).body_id(), id);
  }
  // The follower refuses writes and names the owner.
  std::vector<v1::Body> refused = {BodyFor(999)};
  EXPECT_TRUE(HasError(follower->UpsertBodies("world", refused).status(),
                       absl::StatusCode::kFailedPrecondition, "scene"));
  auto at_follower = follower->UpsertBodies("world", refused);
  EXPECT_TRUE(absl::StrContains(at_follower.status().message(), cluster->server(0).address()))
      << at_follower.status();
  auto info = follower->GetScene("world");
  ASSERT_TRUE(IsOk(info));
  EXPECT_FALSE(info->replication().owned());
  EXPECT_EQ(info->replication().state(), "following");
  EXPECT_EQ(info->stats().version(), version);
  auto stats = follower->GetServerStats();
  ASSERT_TRUE(IsOk(stats));
  EXPECT_TRUE(stats->replication().enabled());
  EXPECT_TRUE(stats->replication().connected());
  EXPECT_EQ(stats->replication().followed_scenes(), 1u);
  EXPECT_GE(stats->replication().records_applied(), 20u);
  EXPECT_EQ(stats->server_address(), cluster->server(1).address());
  // The same figures on /metrics: the follower up to date, the owner the owner.
  auto follower_metrics = Scrape(cluster->server(1).metrics_port());
  ASSERT_TRUE(IsOk(follower_metrics));
  const std::map<std::string, std::string> world = {{"scene", "world"}};
  EXPECT_EQ(SampleValue(*follower_metrics, "collide_replication_lag_sequences", world), 0.0);
  EXPECT_EQ(SampleValue(*follower_metrics, "collide_replication_lag_seconds", world), 0.0);
  EXPECT_EQ(SampleValue(*follower_metrics, "collide_replication_owner", world), 0.0);
  EXPECT_EQ(SampleValue(*follower_metrics, "collide_replication_readable", world), 1.0);
  EXPECT_EQ(SampleValue(*follower_metrics, "collide_replication_connected"), 1.0);
  EXPECT_EQ(SampleValue(*follower_metrics, "collide_replication_followed_scenes"), 1.0);
  EXPECT_GE(SampleValue(*follower_metrics, "collide_replication_records_applied_total").value_or(0),
            20.0);
  auto owner_metrics = Scrape(cluster->server(0).metrics_port());
  ASSERT_TRUE(IsOk(owner_metrics));
  // Every metric docs/SCALING.md's alert rules name is exposed.
  std::set<std::string> exposed;
  for (const Sample& sample : *follower_metrics) exposed.insert(sample.name);
  for (const Sample& sample : *owner_metrics) exposed.insert(sample.name);
  std::ifstream scaling(COLLIDE_SCALING_MD);
  const std::string doc((std::istreambuf_iterator<char>(scaling)), {});
  const size_t rules = doc.find("- name: collide-replication");
  ASSERT_NE(rules, std::string::npos);
  const std::string block = doc.substr(rules, doc.find("```", rules) - rules);
  int named = 0;
  for (size_t at = block.find("collide_replication_"); at != std::string::npos;
       at = block.find("collide_replication_", at + 1)) {
    size_t end = at;
    while (end < block.size() &&
           (std::isalnum(static_cast<unsigned char>(block[end])) || block[end] == '_')) {
      ++end;
    }
    const std::string name = block.substr(at, end - at);
    EXPECT_TRUE(exposed.contains(name)) << name << " is named by an alert and not exposed";
    ++named;
    at = end - 1;
  }
  EXPECT_GE(named, 7);
  EXPECT_EQ(SampleValue(*owner_metrics, "collide_replication_owner", world), 1.0);
  EXPECT_EQ(SampleValue(*owner_metrics, "collide_replication_owned_scenes"), 1.0);
  EXPECT_EQ(SampleValue(*owner_metrics, "collide_replication_takeovers_total"), 0.0);
  EXPECT_GE(SampleValue(*owner_metrics, "collide_replication_records_published_total").value_or(0),
            20.0);

  // Writes to whichever server owns the scene, again while the answer says to (UNAVAILABLE:
  // the lease or the stream is being renewed or re-elected; FAILED_PRECONDITION: the owner
  // changed), as a writer would; the answer and the owner it came from.
  auto write_to_owner = [&](uint64_t id) {
    absl::StatusOr<v1::WriteResponse> answer = absl::UnknownError("not written");
    int at = -1;
    const auto give_up = Clock::now() + std::chrono::seconds(40);
    while (Clock::now() < give_up) {
      at = cluster->WaitForOwner("world", std::chrono::seconds(30));
      if (at < 0) break;
      std::vector<v1::Body> bodies = {BodyFor(id)};
      client::CallOptions call;
      call.deadline = absl::Seconds(30);
      answer = cluster->server(at).NewClient()->UpsertBodies("world", bodies, call);
      if (answer.ok() ||
          (!absl::IsUnavailable(answer.status()) && !absl::IsFailedPrecondition(answer.status()))) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return std::make_pair(answer, at);
  };
  // One of three NATS nodes down: writes go on.
  ASSERT_TRUE(IsOk(cluster->nats().Signal(1, SIGKILL)));
  auto [with_two, at_two] = write_to_owner(21);
  ASSERT_TRUE(IsOk(with_two)) << cluster->server(0).Logs() << cluster->server(1).Logs();
  version = with_two->version();
  const auto caught_up_from = Clock::now();
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto info = cluster->server(1 - at_two).NewClient()->GetScene("world");
        return info.ok() && info->stats().version() == version;
      },
      std::chrono::seconds(20)))
      << "version " << version << " written at server " << at_two << "\n"
      << cluster->server(0).Logs() << cluster->server(1).Logs();
  std::cerr << "the other server read version " << version << " after "
            << std::chrono::duration<double>(Clock::now() - caught_up_from).count() << " s\n";
  // Two of three down: no quorum, and the write is not acknowledged.
  ASSERT_TRUE(IsOk(cluster->nats().Signal(2, SIGKILL)));
  std::vector<v1::Body> unquorate = {BodyFor(23)};
  client::CallOptions short_call;
  short_call.deadline = absl::Seconds(2);
  auto without_quorum =
      cluster->server(at_two).NewClient()->UpsertBodies("world", unquorate, short_call);
  EXPECT_FALSE(without_quorum.ok()) << "acknowledged without a quorum";
  // The other server never shows it meanwhile.
  auto seen = cluster->server(1 - at_two).NewClient()->GetScene("world");
  ASSERT_TRUE(IsOk(seen));
  EXPECT_EQ(seen->stats().version(), version);
  // The nodes return: nothing acknowledged is lost, and the write is stored once.
  ASSERT_TRUE(IsOk(cluster->nats().Restart(1)));
  ASSERT_TRUE(IsOk(cluster->nats().Restart(2)));
  ASSERT_TRUE(IsOk(cluster->nats().WaitHealthy(std::chrono::seconds(30))));
  // Either server may own the scene now: the old owner renewed its key, or the other took it
  // over while the owner could not renew.
  auto [back, now_owner] = write_to_owner(22);
  ASSERT_TRUE(IsOk(back)) << cluster->server(0).Logs() << cluster->server(1).Logs();
  auto writer = cluster->server(now_owner).NewClient();
  auto reader = cluster->server(1 - now_owner).NewClient();
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto info = reader->GetScene("world");
        return info.ok() && info->stats().version() == back->version();
      },
      std::chrono::seconds(20)));
  auto [owner_ids, owner_version] = IdsAndVersion(*writer, "world");
  auto [follower_ids, follower_version] = IdsAndVersion(*reader, "world");
  EXPECT_EQ(owner_ids, follower_ids);
  EXPECT_EQ(owner_version, follower_version);
  for (uint64_t id = 1; id <= 21; ++id) {
    EXPECT_TRUE(std::binary_search(owner_ids.begin(), owner_ids.end(), id)) << id;
  }
  EXPECT_TRUE(std::binary_search(owner_ids.begin(), owner_ids.end(), 22u));
}

// The failover drill: a resilient writer streams batches through the router while the owner is
// SIGKILLed, round after round; every acknowledged batch is on the new owner exactly once, the
// router's map follows each takeover, and the time from the kill to the first acknowledgement
// after it is printed (COLLIDE_FAILOVER_ROUNDS sets the rounds, 3 by default; docs/SCALING.md
// has the 100-round run). Between rounds the surviving third server and one NATS node (each in
// turn) are restarted too.
TEST(Replication, AKilledOwnersFollowerTakesOverAndTheWritersBatchesApplyExactlyOnce) {
  REQUIRE_NATS();
  REQUIRE_HAPROXY(haproxy);
  auto cluster = ReplicatedCluster::Start(3, haproxy, /*spare=*/0, kDrillLeaseMs);
  ASSERT_NE(cluster, nullptr);
  const std::string scene = "arena";
  auto created = CreateReplicated(cluster->router(), scene);
  ASSERT_TRUE(IsOk(created)) << cluster->haproxy().Logs();
  int owner = cluster->WaitForOwner(scene, std::chrono::seconds(20));
  ASSERT_GE(owner, 0);
  ASSERT_TRUE(WaitUntil(
      [&] { return MapEntry(cluster->haproxy(), scene) == absl::StrCat("shard_", owner + 1); },
      std::chrono::seconds(10)))
      << MapEntry(cluster->haproxy(), scene);
  const uint64_t created_version = created->stats().version();

  client::ClientOptions options;
  options.address = cluster->haproxy().address();
  options.enable_http_proxy = false;
  auto writer_client = client::Client::Connect(options);
  ASSERT_TRUE(IsOk(writer_client));
  client::ResilientUpdateWriterOptions writer_options;
  writer_options.initial_backoff = absl::Milliseconds(10);
  writer_options.max_backoff = absl::Milliseconds(100);
  writer_options.give_up_after = absl::Seconds(30);
  auto writer = client::ResilientUpdateWriter::Open(writer_client->get(), scene, writer_options);
  ASSERT_TRUE(IsOk(writer));

  int rounds = 3;
  if (const char* env = std::getenv("COLLIDE_FAILOVER_ROUNDS")) {
    ASSERT_TRUE(absl::SimpleAtoi(env, &rounds) && rounds >= 1) << env;
  }
  constexpr uint64_t kPerRound = 60;
  uint64_t sent = 0;
  int moved_by_nats_restart = 0;
  std::vector<double> gap_ms;
  std::vector<double> failover_ms;
  std::vector<double> takeover_ms;
  // The ack times of every batch, from a thread that waits for each in turn.
  for (int round = 0; round < rounds; ++round) {
    std::mutex mu;
    std::vector<Clock::time_point> acked(kPerRound, Clock::time_point{});
    const uint64_t first = sent + 1;
    absl::Status waited;
    std::thread waiter([&] {
      for (uint64_t k = 0; k < kPerRound; ++k) {
        waited = (*writer)->WaitAcknowledged(first + k, absl::Now() + absl::Seconds(60));
        if (!waited.ok()) {
          waited = absl::Status(waited.code(),
                                absl::StrCat("batch ", first + k, ": ", waited.message()));
          return;
        }
        std::lock_guard<std::mutex> lock(mu);
        acked[k] = Clock::now();
      }
    });
    Clock::time_point killed{};
    Clock::time_point owned_at{};
    // How much each server had logged at the kill.
    std::vector<size_t> log_marks(cluster->size(), 0);
    std::thread poller;
    for (uint64_t k = 0; k < kPerRound; ++k) {
      v1::UpdateBatch batch;
      *batch.add_ops() = client::MakeUpsertOp(BodyFor(first + k));
      auto sequence = (*writer)->Send(batch);
      ASSERT_TRUE(IsOk(sequence));
      ASSERT_EQ(*sequence, first + k);
      ++sent;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      if (k == kPerRound / 3) {
        // Mid-stream, once the stream flows (a batch of the round acknowledged: right after the
        // restarts between rounds the owner may still be refusing writes UNAVAILABLE, which the
        // writer resends, and the failover is measured from the last ack before the kill), the
        // owner dies; a poller notes when another server owns the scene.
        ASSERT_TRUE(WaitUntil(
            [&] {
              std::lock_guard<std::mutex> lock(mu);
              return acked[0] != Clock::time_point{};
            },
            std::chrono::seconds(20)))
            << "round " << round << ": no batch acknowledged; writer: unavailable "
            << (*writer)->stats().unavailable << ", redirected " << (*writer)->stats().redirected
            << ", reconnects " << (*writer)->stats().reconnects << "\n"
            << cluster->server(owner).Logs();
        for (int i = 0; i < cluster->size(); ++i) log_marks[i] = cluster->server(i).Logs().size();
        ASSERT_TRUE(IsOk(cluster->server(owner).Stop(SIGKILL)));
        killed = Clock::now();
        poller = std::thread([&, dead = owner] {
          std::vector<std::unique_ptr<client::Client>> others;
          for (int i = 0; i < cluster->size(); ++i) {
            if (i != dead) others.push_back(cluster->server(i).NewClient());
          }
          while (Clock::now() - killed < std::chrono::seconds(30)) {
            for (auto& other : others) {
              auto info = other->GetScene(scene);
              if (info.ok() && info->replication().owned()) {
                owned_at = Clock::now();
                return;
              }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
          }
        });
      }
    }
    waiter.join();
    poller.join();
    ASSERT_NE(owned_at, Clock::time_point{}) << "round " << round << ": no takeover";
    ASSERT_TRUE(IsOk((*writer)->Flush(absl::Now() + absl::Seconds(30))))
        << "round " << round << ": " << (*writer)->status();
    // The first acknowledgement of a batch sent after the kill (only a live owner can have
    // acknowledged it; an acknowledgement the dead owner sent just before the kill may still
    // be read after it: not counted), and the last one read before the kill.
    Clock::time_point first_after = Clock::time_point::max();
    Clock::time_point last_before = Clock::time_point::min();
    for (uint64_t k = 0; k < kPerRound; ++k) {
      if (k > kPerRound / 3) first_after = std::min(first_after, acked[k]);
      if (acked[k] <= killed) last_before = std::max(last_before, acked[k]);
    }
    ASSERT_TRUE(waited.ok()) << "round " << round << ": " << waited;
    ASSERT_NE(first_after, Clock::time_point::max()) << "round " << round;
    ASSERT_NE(last_before, Clock::time_point::min()) << "round " << round;
    gap_ms.push_back(std::chrono::duration<double, std::milli>(first_after - last_before).count());
    failover_ms.push_back(std::chrono::duration<double, std::milli>(first_after - killed).count());
    takeover_ms.push_back(std::chrono::duration<double, std::milli>(owned_at - killed).count());
    const int dead = owner;
    owner = cluster->WaitForOwner(scene, std::chrono::seconds(20), dead);
    ASSERT_GE(owner, 0) << "round " << round;
    ASSERT_NE(owner, dead);
    if (takeover_ms.back() > 5 * kDrillLeaseMs) {
      // A slow takeover: what each server that could take it over logged since the kill.
      for (int i = 0; i < cluster->size(); ++i) {
        if (i == dead) continue;
        const std::string logs = cluster->server(i).Logs();
        std::cout << "round " << round << ": takeover after " << takeover_ms.back()
                  << " ms; server " << i << (i == owner ? " (the new owner)" : "")
                  << " since the kill:\n"
                  << logs.substr(std::min(log_marks[i], logs.size())).substr(0, 8192) << "\n";
      }
    }

    // The router's map follows the takeover.
    ASSERT_TRUE(WaitUntil(
        [&] { return MapEntry(cluster->haproxy(), scene) == absl::StrCat("shard_", owner + 1); },
        std::chrono::seconds(10)))
        << MapEntry(cluster->haproxy(), scene);
    const std::vector<client::RejectedBatch> rejected = (*writer)->TakeRejected();
    ASSERT_TRUE(rejected.empty()) << "round " << round << ": " << rejected.size()
                                  << " batches rejected, the first " << rejected[0].sequence << ": "
                                  << rejected[0].status;
    // Exactly what was acknowledged, once: one body and one version per batch.
    auto new_owner = cluster->server(owner).NewClient();
    auto [ids, version] = IdsAndVersion(*new_owner, scene);
    std::vector<uint64_t> expected(sent);
    for (uint64_t i = 0; i < sent; ++i) expected[i] = i + 1;
    ASSERT_EQ(ids, expected) << "round " << round;
    ASSERT_EQ(version, created_version + sent) << "round " << round;
    // The killed server comes back (same port) as a follower, and catches up.
    ASSERT_TRUE(IsOk(cluster->server(dead).RestartOnSamePort()));
    ASSERT_EQ(cluster->WaitForOwner(scene, std::chrono::seconds(20)), owner);
    ASSERT_TRUE(WaitUntil(
        [&] {
          auto info = cluster->server(dead).NewClient()->GetScene(scene);
          return info.ok() && info->stats().version() == version;
        },
        std::chrono::seconds(20)))
        << cluster->server(dead).Logs();
    // Between rounds the other survivors restart in turn: the third server (neither the owner
    // nor the one just killed) stops cleanly and comes back as a follower, then NATS node
    // `round % 3` is SIGKILLed and started again on its store; the next round begins only once
    // the cluster is healthy, every server names the owner and the restarted one caught up.
    int third = -1;
    for (int i = 0; i < cluster->size(); ++i) {
      if (i != owner && i != dead) third = i;
    }
    ASSERT_GE(third, 0);
    ASSERT_TRUE(IsOk(cluster->server(third).Stop(SIGTERM))) << "round " << round;
    ASSERT_TRUE(IsOk(cluster->server(third).RestartOnSamePort())) << "round " << round;
    const int node = round % cluster->nats().size();
    ASSERT_TRUE(IsOk(cluster->nats().Signal(node, SIGKILL))) << "round " << round;
    ASSERT_TRUE(IsOk(cluster->nats().Restart(node))) << "round " << round;
    ASSERT_TRUE(IsOk(cluster->nats().WaitHealthy(std::chrono::seconds(30))))
        << "round " << round << ": " << cluster->nats().Logs(node);
    // With a 600 ms lease the owner may lose the scene while its NATS connection moves off the
    // killed node (the client reconnects after longer than a lease): then another server took
    // it over, with nothing written meanwhile; counted, and the map must follow it too.
    // Three leases: an owner that could not renew meanwhile has lost the scene by then.
    std::this_thread::sleep_for(std::chrono::milliseconds(3 * kDrillLeaseMs));
    const int before = owner;
    owner = cluster->WaitForOwner(scene, std::chrono::seconds(20));
    ASSERT_GE(owner, 0) << "round " << round;
    if (owner != before) ++moved_by_nats_restart;
    ASSERT_TRUE(WaitUntil(
        [&] { return MapEntry(cluster->haproxy(), scene) == absl::StrCat("shard_", owner + 1); },
        std::chrono::seconds(10)))
        << "round " << round << ": " << MapEntry(cluster->haproxy(), scene);
    ASSERT_TRUE(WaitUntil(
        [&] {
          auto info = cluster->server(third).NewClient()->GetScene(scene);
          return info.ok() && info->stats().version() == version;
        },
        std::chrono::seconds(20)))
        << "round " << round << ": " << cluster->server(third).Logs();
    // One line a round, so a long drill shows where it is.
    std::printf(
        "round %d of %d: %llu batches acknowledged, kill to first ack %d ms, to takeover %d ms\n",
        round + 1, rounds, static_cast<unsigned long long>(sent),
        static_cast<int>(failover_ms.back()), static_cast<int>(takeover_ms.back()));
    std::fflush(stdout);
  }
  ASSERT_TRUE(IsOk((*writer)->Close(absl::Now() + absl::Seconds(10))));
  const client::ResilientUpdateWriterStats stats = (*writer)->stats();
  EXPECT_EQ(stats.acknowledged, sent);
  EXPECT_EQ(stats.rejected, 0u);
  EXPECT_GE(stats.reconnects, static_cast<uint64_t>(rounds));
  auto server_stats = cluster->server(owner).NewClient()->GetServerStats();
  ASSERT_TRUE(IsOk(server_stats));
  EXPECT_GE(server_stats->replication().takeovers(), 1u);
  auto owner_metrics = Scrape(cluster->server(owner).metrics_port());
  ASSERT_TRUE(IsOk(owner_metrics));
  EXPECT_GE(SampleValue(*owner_metrics, "collide_replication_takeovers_total").value_or(0), 1.0);
  EXPECT_EQ(SampleValue(*owner_metrics, "collide_replication_owner", {{"scene", scene}}), 1.0);
  auto summary = [](std::vector<double> ms) {
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    const size_t p99 = std::min(sorted.size() - 1, (sorted.size() * 99 + 99) / 100 - 1);
    return absl::StrCat("p50 ", static_cast<int>(sorted[sorted.size() / 2]), " ms, p99 ",
                        static_cast<int>(sorted[p99]), " ms, max ", static_cast<int>(sorted.back()),
                        " ms; each: ", absl::StrJoin(ms, ", ", [](std::string* out, double v) {
                          absl::StrAppend(out, static_cast<int>(v));
                        }));
  };
  std::printf(
      "%d rounds, lease %d ms; the scene changed owner during %d of the %d NATS node restarts "
      "between rounds\n",
      rounds, kDrillLeaseMs, moved_by_nats_restart, rounds);
  std::printf(
      "last acknowledged write before the SIGKILL to the first after it (through HAProxy): %s\n",
      summary(gap_ms).c_str());
  std::printf(
      "SIGKILL of the owner to the first acknowledged write after it (through HAProxy): "
      "%s\n",
      summary(failover_ms).c_str());
  std::printf("SIGKILL of the owner to a follower owning the scene: %s\n",
              summary(takeover_ms).c_str());
  std::printf(
      "writer: %llu batches, %llu acknowledged, %llu duplicates, %llu resent, %llu "
      "reconnects\n",
      static_cast<unsigned long long>(stats.sent),
      static_cast<unsigned long long>(stats.acknowledged),
      static_cast<unsigned long long>(stats.duplicates),
      static_cast<unsigned long long>(stats.resent),
      static_cast<unsigned long long>(stats.reconnects));
}

// A resilient writer whose stream reaches a follower (a router not yet following a takeover, a
// writer pointed at the wrong server) is answered with the owner's address (Error.moved_to) and
// nothing applied: it resends on a new stream rather than dropping the batch as rejected, and
// once that server owns the scene the batch applies once.
TEST(Replication, AWriterAnsweredByAFollowerResendsUntilTheBatchReachesTheOwner) {
  REQUIRE_NATS();
  auto cluster = ReplicatedCluster::Start(2);
  ASSERT_NE(cluster, nullptr);
  ASSERT_TRUE(IsOk(CreateReplicated(*cluster->server(0).NewClient(), "redirected")));
  ASSERT_EQ(cluster->WaitForOwner("redirected", std::chrono::seconds(20)), 0);
  auto at_follower = cluster->server(1).NewClient();
  client::ResilientUpdateWriterOptions options;
  options.initial_backoff = absl::Milliseconds(10);
  options.max_backoff = absl::Milliseconds(100);
  options.give_up_after = absl::Seconds(30);
  auto writer = client::ResilientUpdateWriter::Open(at_follower.get(), "redirected", options);
  ASSERT_TRUE(IsOk(writer));
  v1::UpdateBatch batch;
  *batch.add_ops() = client::MakeUpsertOp(BodyFor(7));
  ASSERT_TRUE(IsOk((*writer)->Send(batch)));
  ASSERT_TRUE(
      WaitUntil([&] { return (*writer)->stats().redirected >= 2; }, std::chrono::seconds(10)));
  EXPECT_EQ(Describe((*writer)->TakeRejected()), "");
  EXPECT_FALSE(IsOk((*writer)->Flush(absl::Now() + absl::Milliseconds(200))));
  // The owner dies; the follower takes the scene over and the resent batch applies there (while
  // it takes over it answers UNAVAILABLE, which the writer answers by resending too).
  ASSERT_TRUE(IsOk(cluster->server(0).Stop(SIGKILL)));
  ASSERT_TRUE(IsOk((*writer)->Flush(absl::Now() + absl::Seconds(20))))
      << (*writer)->status() << cluster->server(1).Logs();
  EXPECT_EQ(Describe((*writer)->TakeRejected()), "");
  auto [ids, version] = IdsAndVersion(*at_follower, "redirected");
  EXPECT_EQ(ids, (std::vector<uint64_t>{7}));
  ASSERT_TRUE(IsOk((*writer)->Close(absl::Now() + absl::Seconds(10))));
  EXPECT_EQ((*writer)->stats().rejected, 0u);
  EXPECT_EQ((*writer)->stats().acknowledged, 1u);
}

// An owner whose lease runs out before its renewal comes back (every NATS node stopped) refuses
// writes with UNAVAILABLE until the bucket answers again, and answers every later batch of the
// same stream the same way, unapplied, even once it can write again: a batch applied behind a
// refused one would make the refused one a duplicate when it is resent. A resilient writer
// resends the refused batches on a new stream until they apply, each exactly once.
TEST(Replication, AnOwnerWhoseLeaseRanOutRefusesWritesUnavailableAndTheWriterResendsThem) {
  REQUIRE_NATS();
  auto cluster = ReplicatedCluster::Start(1);
  ASSERT_NE(cluster, nullptr);
  auto client = cluster->server(0).NewClient();
  ASSERT_TRUE(IsOk(CreateReplicated(*client, "stalled")));
  ASSERT_EQ(cluster->WaitForOwner("stalled", std::chrono::seconds(20)), 0);
  NatsCluster& nats = cluster->nats();
  auto stop_nats = [&] {
    for (int i = 0; i < nats.size(); ++i) ASSERT_TRUE(IsOk(nats.Signal(i, SIGSTOP)));
  };
  auto continue_nats = [&] {
    for (int i = 0; i < nats.size(); ++i) ASSERT_TRUE(IsOk(nats.Signal(i, SIGCONT)));
  };
  // Until the owner acknowledges a write again (a new body each time).
  uint64_t probe = 1000;
  auto wait_writable = [&] {
    return WaitUntil(
        [&] {
          std::vector<v1::Body> bodies = {BodyFor(probe++)};
          return client->UpsertBodies("stalled", bodies).ok();
        },
        std::chrono::seconds(30));
  };

  // A plain stream: its first batch after the lease ran out is refused UNAVAILABLE, and so is
  // its next one once the owner writes again.
  auto stream = client->OpenUpdateStream("stalled", /*client_id=*/77);
  ASSERT_TRUE(IsOk(stream));
  stop_nats();
  absl::SleepFor(absl::Milliseconds(3 * kLeaseMs));
  v1::UpdateBatch first;
  first.set_scene("stalled");
  *first.add_ops() = client::MakeUpsertOp(BodyFor(1));
  auto refused = (*stream)->Apply(first);
  continue_nats();
  ASSERT_TRUE(IsOk(refused));
  ASSERT_TRUE(refused->has_error()) << refused->DebugString();
  EXPECT_EQ(refused->error().code(), static_cast<int>(absl::StatusCode::kUnavailable))
      << refused->DebugString();
  EXPECT_TRUE(absl::StartsWith(refused->error().message(), "scene: ")) << refused->DebugString();
  ASSERT_TRUE(wait_writable()) << cluster->server(0).Logs();
  v1::UpdateBatch second;
  second.set_scene("stalled");
  *second.add_ops() = client::MakeUpsertOp(BodyFor(2));
  auto same = (*stream)->Apply(second);
  ASSERT_TRUE(IsOk(same));
  EXPECT_EQ(same->error().code(), static_cast<int>(absl::StatusCode::kUnavailable))
      << same->DebugString();
  EXPECT_EQ(same->error().message(), refused->error().message());
  (*stream)->Cancel();
  auto [ids, version] = IdsAndVersion(*client, "stalled");
  for (uint64_t id : ids) EXPECT_GE(id, 1000u) << "a refused batch was applied";

  // A resilient writer sending a batch every 20 ms while the bucket stops answering for a while.
  client::ResilientUpdateWriterOptions options;
  options.initial_backoff = absl::Milliseconds(10);
  options.max_backoff = absl::Milliseconds(100);
  options.give_up_after = absl::Seconds(30);
  auto writer = client::ResilientUpdateWriter::Open(client.get(), "stalled", options);
  ASSERT_TRUE(IsOk(writer));
  constexpr uint64_t kBatches = 150;
  for (uint64_t i = 0; i < kBatches; ++i) {
    if (i == 30) stop_nats();
    if (i == 30 + 3 * kLeaseMs / 20) continue_nats();
    v1::UpdateBatch batch;
    *batch.add_ops() = client::MakeUpsertOp(BodyFor(1 + i));
    ASSERT_TRUE(IsOk((*writer)->Send(batch)));
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_TRUE(IsOk((*writer)->Close(absl::Now() + absl::Seconds(30))))
      << (*writer)->status() << cluster->server(0).Logs();
  EXPECT_EQ(Describe((*writer)->TakeRejected()), "");
  const client::ResilientUpdateWriterStats stats = (*writer)->stats();
  EXPECT_EQ(stats.rejected, 0u);
  EXPECT_EQ(stats.acknowledged, kBatches);
  EXPECT_GE(stats.unavailable, 1u) << "no batch was sent while the lease had run out";
  // Each batch applied once: one version each (no probe ran meanwhile).
  auto [after_ids, after_version] = IdsAndVersion(*client, "stalled");
  EXPECT_EQ(after_version, version + kBatches);
  for (uint64_t i = 0; i < kBatches; ++i) {
    EXPECT_TRUE(std::binary_search(after_ids.begin(), after_ids.end(), 1 + i)) << 1 + i;
  }
}

// The viewer says which server answers: its address, and for a replicated scene whether it owns
// or follows it, whom it follows and how far behind it is.
TEST(Replication, TheViewerNamesTheAnsweringServerAndItsRole) {
  REQUIRE_NATS();
  auto cluster = ReplicatedCluster::Start(2);
  ASSERT_NE(cluster, nullptr);
  auto owner = cluster->server(0).NewClient();
  ASSERT_TRUE(IsOk(CreateReplicated(*owner, "viewed")));
  ASSERT_EQ(cluster->WaitForOwner("viewed", std::chrono::seconds(20)), 0);
  std::vector<v1::Body> bodies = {BodyFor(1), BodyFor(2)};
  auto written = owner->UpsertBodies("viewed", bodies);
  ASSERT_TRUE(IsOk(written));
  auto follower = cluster->server(1).NewClient();
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto info = follower->GetScene("viewed");
        return info.ok() && info->replication().state() == "following" &&
               info->stats().version() == written->version();
      },
      std::chrono::seconds(20)))
      << cluster->server(1).Logs();
  for (int i = 0; i < 2; ++i) {
    const int port = cluster->ViewerPort(i);
    ASSERT_NE(port, 0) << i;
    const HttpAnswer http =
        HttpExchange(port, HttpRequestLine("GET", "/viewer/api/scene?name=viewed"));
    ASSERT_EQ(http.status, 200) << i << ": " << http.body;
    viewer::v1::ScenePage page;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(http.body, &page).ok()) << http.body;
    EXPECT_EQ(page.server_address(), cluster->server(i).address());
    EXPECT_EQ(page.bodies_size(), 2) << i;
    ASSERT_TRUE(page.has_replication()) << i << ": " << http.body;
    EXPECT_EQ(page.replication().owned(), i == 0) << http.body;
    EXPECT_EQ(page.replication().owner(), cluster->server(0).address()) << http.body;
    EXPECT_EQ(page.replication().state(), i == 0 ? "owner" : "following") << http.body;
    EXPECT_EQ(page.replication().applied_sequence() > 0, true) << http.body;
    // The scene list says the same.
    const HttpAnswer listed = HttpExchange(port, HttpRequestLine("GET", "/viewer/api/scenes"));
    ASSERT_EQ(listed.status, 200) << listed.body;
    v1::ListScenesResponse scenes;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(listed.body, &scenes).ok());
    ASSERT_EQ(scenes.scenes_size(), 1) << listed.body;
    EXPECT_EQ(scenes.scenes(0).replication().owned(), i == 0) << listed.body;
    EXPECT_EQ(scenes.scenes(0).replication().owner(), cluster->server(0).address());
  }
}

// A partitioned owner (SIGSTOP) loses the scene to a follower; continued, it acknowledges no
// write, tells its writers the new owner, and nothing it was sent reaches the scene.
TEST(Replication, ADeposedOwnerCannotAcknowledgeAWrite) {
  REQUIRE_NATS();
  auto cluster = ReplicatedCluster::Start(2);
  ASSERT_NE(cluster, nullptr);
  auto old_owner = cluster->server(0).NewClient();
  ASSERT_TRUE(IsOk(CreateReplicated(*old_owner, "fenced")));
  ASSERT_EQ(cluster->WaitForOwner("fenced", std::chrono::seconds(20)), 0);
  std::vector<v1::Body> first = {BodyFor(1)};
  auto written = old_owner->UpsertBodies("fenced", first);
  ASSERT_TRUE(IsOk(written));

  ASSERT_EQ(kill(cluster->server(0).pid(), SIGSTOP), 0);
  auto new_owner = cluster->server(1).NewClient();
  const bool took_over = WaitUntil(
      [&] {
        auto info = new_owner->GetScene("fenced");
        return info.ok() && info->replication().owned();
      },
      std::chrono::seconds(20));
  ASSERT_EQ(kill(cluster->server(0).pid(), SIGCONT), 0);
  ASSERT_TRUE(took_over) << cluster->server(1).Logs();
  std::vector<v1::Body> second = {BodyFor(2)};
  auto accepted = new_owner->UpsertBodies("fenced", second);
  ASSERT_TRUE(IsOk(accepted));

  // The old owner, continued, still believes for a moment that it owns the scene: whatever it
  // answers, it is never an acknowledgement.
  client::CallOptions call;
  call.deadline = absl::Seconds(10);
  for (uint64_t id = 100; id < 105; ++id) {
    std::vector<v1::Body> stale = {BodyFor(id)};
    auto answer = old_owner->UpsertBodies("fenced", stale, call);
    EXPECT_FALSE(answer.ok()) << "a deposed owner acknowledged body " << id;
  }
  // It names the new owner once it noticed.
  ASSERT_TRUE(WaitUntil(
      [&] {
        std::vector<v1::Body> stale = {BodyFor(200)};
        auto answer = old_owner->UpsertBodies("fenced", stale, call);
        return !answer.ok() &&
               absl::StrContains(answer.status().message(), cluster->server(1).address());
      },
      std::chrono::seconds(20)))
      << cluster->server(0).Logs();
  auto [ids, version] = IdsAndVersion(*new_owner, "fenced");
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(version, accepted->version());
  // The old owner rebuilds its copy from the stream and follows: the same state.
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto info = old_owner->GetScene("fenced");
        return info.ok() && info->replication().state() == "following" &&
               info->stats().version() == accepted->version();
      },
      std::chrono::seconds(20)))
      << cluster->server(0).Logs();
  auto [old_ids, old_version] = IdsAndVersion(*old_owner, "fenced");
  EXPECT_EQ(old_ids, ids);
  auto stats = old_owner->GetServerStats();
  ASSERT_TRUE(IsOk(stats));
  EXPECT_GE(stats->replication().depositions(), 1u);
}

// `collide scene move` to a shard the hash does not name: the router sends the scene there from
// then on (the destination's import claimed the map entry before it answered).
TEST(Replication, TheRoutersMapFollowsASceneMove) {
  REQUIRE_NATS();
  REQUIRE_HAPROXY(haproxy);
  auto cluster = ReplicatedCluster::Start(2, haproxy);
  ASSERT_NE(cluster, nullptr);
  const std::string scene = "movable";
  ASSERT_TRUE(IsOk(cluster->router().CreateScene(scene)));
  std::vector<v1::Body> bodies = {BodyFor(1), BodyFor(2)};
  auto written = cluster->router().UpsertBodies(scene, bodies);
  ASSERT_TRUE(IsOk(written));
  int source = -1;
  for (int i = 0; i < cluster->size(); ++i) {
    if (cluster->server(i).NewClient()->GetScene(scene).ok()) source = i;
  }
  ASSERT_GE(source, 0);
  const int destination = 1 - source;
  CommandResult moved = RunCommand(
      {CliPath(), absl::StrCat("--address=", cluster->server(source).address()), "--timeout=60",
       "scene", "move", scene, "--to", cluster->server(destination).address()});
  ASSERT_EQ(moved.exit_code, 0) << moved.err << moved.out;
  EXPECT_EQ(MapEntry(cluster->haproxy(), scene), absl::StrCat("shard_", destination + 1));
  // Through the router: the scene, as written, and writable.
  auto [ids, version] = IdsAndVersion(cluster->router(), scene);
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(version, written->version());
  std::vector<v1::Body> more = {BodyFor(3)};
  ASSERT_TRUE(IsOk(cluster->router().UpsertBodies(scene, more)));
  EXPECT_TRUE(cluster->server(destination).NewClient()->GetBodies(scene).ok());
  EXPECT_FALSE(cluster->server(source).NewClient()->GetBodies(scene).ok());
  // Back again: the map follows again.
  CommandResult back = RunCommand(
      {CliPath(), absl::StrCat("--address=", cluster->server(destination).address()),
       "--timeout=60", "scene", "move", scene, "--to", cluster->server(source).address()});
  ASSERT_EQ(back.exit_code, 0) << back.err << back.out;
  EXPECT_EQ(MapEntry(cluster->haproxy(), scene), absl::StrCat("shard_", source + 1));
  auto [back_ids, back_version] = IdsAndVersion(cluster->router(), scene);
  EXPECT_EQ(back_ids, (std::vector<uint64_t>{1, 2, 3}));
}

// Every body of `scene` as `client` reads it, serialized and sorted: equal lists are equal
// contents.
std::vector<std::string> Contents(client::Client& client, const std::string& scene) {
  std::vector<std::string> contents;
  auto bodies = client.GetBodies(scene);
  EXPECT_TRUE(IsOk(bodies)) << scene;
  if (!bodies.ok()) return contents;
  for (const v1::Body& body : bodies->bodies()) contents.push_back(body.SerializeAsString());
  std::sort(contents.begin(), contents.end());
  return contents;
}

// Scale-out: a 4th shard (named in HAProxy's configuration before it starts, as an operator
// adds it) comes up, scenes of the other three are moved onto it with `collide scene move`, the
// router's map follows each, and reads and writes through the router reach it with the scenes'
// exact contents and versions; the scenes left where they were stay reachable.
TEST(Replication, AFourthShardTakesScenesMovedOntoItThroughTheRoutersMap) {
  REQUIRE_NATS();
  REQUIRE_HAPROXY(haproxy);
  auto cluster = ReplicatedCluster::Start(3, haproxy, /*spare=*/1);
  ASSERT_NE(cluster, nullptr);
  constexpr int kScenes = 6;
  constexpr int kMoved = 4;
  std::vector<std::string> scenes;
  std::vector<std::vector<std::string>> contents;
  std::vector<uint64_t> versions;
  for (int i = 0; i < kScenes; ++i) {
    const std::string scene = absl::StrCat("room-", i);
    const int home = i % 3;
    auto direct = cluster->server(home).NewClient();
    ASSERT_TRUE(IsOk(direct->CreateScene(scene))) << scene;
    for (uint64_t id = 1; id <= 5; ++id) {
      std::vector<v1::Body> bodies = {BodyFor(100 * i + id)};
      ASSERT_TRUE(IsOk(direct->UpsertBodies(scene, bodies))) << scene;
    }
    std::vector<uint64_t> removed = {100 * static_cast<uint64_t>(i) + 2};
    ASSERT_TRUE(IsOk(direct->RemoveBodies(scene, removed))) << scene;
    // The server claims the scene in the router's map whatever the hash names.
    ASSERT_TRUE(WaitUntil(
        [&] { return MapEntry(cluster->haproxy(), scene) == absl::StrCat("shard_", home + 1); },
        std::chrono::seconds(10)))
        << scene << ": " << MapEntry(cluster->haproxy(), scene);
    scenes.push_back(scene);
    contents.push_back(Contents(*direct, scene));
    ASSERT_EQ(contents.back().size(), 4u) << scene;
    auto info = direct->GetScene(scene);
    ASSERT_TRUE(IsOk(info));
    versions.push_back(info->stats().version());
    EXPECT_EQ(Contents(cluster->router(), scene), contents.back()) << scene;
  }

  const int fourth = cluster->StartSpare();
  ASSERT_EQ(fourth, 3);
  auto at_fourth = cluster->server(fourth).NewClient();
  for (int i = 0; i < kMoved; ++i) {
    const std::string& scene = scenes[i];
    const int home = i % 3;
    CommandResult moved = RunCommand(
        {CliPath(), absl::StrCat("--address=", cluster->server(home).address()), "--timeout=60",
         "scene", "move", scene, "--to", cluster->server(fourth).address()});
    ASSERT_EQ(moved.exit_code, 0) << scene << ": " << moved.err << moved.out;
    EXPECT_EQ(MapEntry(cluster->haproxy(), scene), "shard_4") << scene;
    // Exact state on the 4th shard, and through the router.
    EXPECT_EQ(Contents(*at_fourth, scene), contents[i]) << scene;
    EXPECT_EQ(Contents(cluster->router(), scene), contents[i]) << scene;
    auto info = cluster->router().GetScene(scene);
    ASSERT_TRUE(IsOk(info)) << scene;
    EXPECT_EQ(info->stats().version(), versions[i]) << scene;
    EXPECT_FALSE(cluster->server(home).NewClient()->GetScene(scene).ok()) << scene;
    // A write through the router lands on the 4th shard.
    std::vector<v1::Body> more = {BodyFor(100 * i + 50)};
    auto written = cluster->router().UpsertBodies(scene, more);
    ASSERT_TRUE(IsOk(written)) << scene;
    EXPECT_EQ(written->version(), versions[i] + 1) << scene;
    auto bodies = at_fourth->GetBodies(scene);
    ASSERT_TRUE(IsOk(bodies)) << scene;
    EXPECT_EQ(bodies->bodies_size(), 5) << scene;
  }
  // The map still points the scenes at the 4th shard after a full sync of every server's map.
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  for (int i = 0; i < kScenes; ++i) {
    const std::string expected = i < kMoved ? "shard_4" : absl::StrCat("shard_", i % 3 + 1);
    EXPECT_EQ(MapEntry(cluster->haproxy(), scenes[i]), expected) << scenes[i];
    if (i >= kMoved) {
      EXPECT_EQ(Contents(cluster->router(), scenes[i]), contents[i]) << scenes[i];
    }
  }
  auto listed = at_fourth->ListScenes();
  ASSERT_TRUE(IsOk(listed));
  EXPECT_EQ(listed->size(), static_cast<size_t>(kMoved));
}

}  // namespace
}  // namespace collide::integration
