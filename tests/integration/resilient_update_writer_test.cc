// ResilientUpdateWriter against a real server that is killed and restarted on the same port and
// data directory in the middle of an update stream: every batch is applied exactly once (the
// scene's version counts the applied batches), the final bodies are the locally computed ones,
// rejected batches are reported once and never resent, and the writer's limits (max_pending,
// give-up, non-retryable errors) hold.

#include "client/cpp/resilient_update_writer.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "gtest/gtest.h"
#include "integration/tcp_proxy.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using client::MakeBody;
using client::MakePose;
using client::MakeSphere;
using client::MakeVec3;
using client::ResilientUpdateWriter;
using client::ResilientUpdateWriterOptions;

constexpr int kBodies = 100;
constexpr uint64_t kClientId = 0x5eed;

std::unique_ptr<ServerProcess> StartServer(std::vector<std::string> flags = {}) {
  ServerConfig config;
  config.extra_flags = std::move(flags);
  auto server = ServerProcess::Start(config);
  EXPECT_TRUE(IsOk(server));
  return server.ok() ? *std::move(server) : nullptr;
}

// A scene of kBodies spheres (ids 1..kBodies) under durability always; returns its version.
uint64_t MakeScene(client::Client& client, const std::string& scene) {
  v1::SceneOptions options;
  options.set_durability(v1::DURABILITY_ALWAYS);
  EXPECT_TRUE(IsOk(client.CreateScene(scene, options)));
  std::vector<v1::Body> bodies;
  for (int i = 1; i <= kBodies; ++i) {
    bodies.push_back(MakeBody(i, MakeSphere(0.5f), MakePose(MakeVec3(i, 0, 0))));
  }
  auto write = client.UpsertBodies(scene, bodies);
  EXPECT_TRUE(IsOk(write));
  return write.ok() ? write->version() : 0;
}

// Batch b moves every tenth body (from b % 10) to a position that encodes b.
v1::UpdateBatch MoveBatch(int b, std::map<uint64_t, v1::Vec3>* expected) {
  v1::UpdateBatch batch;
  for (int i = 1 + b % 10; i <= kBodies; i += 10) {
    v1::Vec3 at = MakeVec3(static_cast<float>(i), static_cast<float>(b), 0.25f * (b % 7));
    client::AddMove(i, MakePose(at), batch.mutable_moves());
    if (expected != nullptr) (*expected)[i] = at;
  }
  return batch;
}

// The client of a test: reconnects fast (the server is down for a fraction of a second).
std::unique_ptr<client::Client> FastReconnectingClient(const std::string& address,
                                                       const std::string& token = "") {
  client::ClientOptions options;
  options.address = address;
  options.bearer_token = token;
  options.enable_http_proxy = false;
  options.max_reconnect_backoff = absl::Milliseconds(200);
  return *client::Client::Connect(options);
}

std::unique_ptr<client::Client> FastReconnectingClient(const ServerProcess& server,
                                                       const std::string& token = "") {
  return FastReconnectingClient(server.address(), token);
}

TEST(ResilientUpdateWriter, AppliesEveryBatchExactlyOnceAcrossServerRestarts) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  auto admin = server->NewClient();
  const uint64_t initial_version = MakeScene(*admin, "arena");
  auto client = FastReconnectingClient(*server);

  ResilientUpdateWriterOptions options;
  options.client_id = kClientId;
  options.max_pending = 64;  // the sender blocks while the server is down
  options.max_backoff = absl::Milliseconds(100);
  auto writer = ResilientUpdateWriter::Open(client.get(), "arena", options);
  ASSERT_TRUE(IsOk(writer));

  // The sender: kBatches batches; batch kRejected moves a body that does not exist.
  constexpr int kBatches = 600;
  constexpr int kRejected = 10;
  std::map<uint64_t, v1::Vec3> expected;
  absl::Status send_status;
  std::thread sender([&] {
    for (int b = 0; b < kBatches; ++b) {
      v1::UpdateBatch batch = MoveBatch(b, b == kRejected ? nullptr : &expected);
      if (b == kRejected) client::AddMove(9999, MakePose(MakeVec3(0, 0, 0)), batch.mutable_moves());
      absl::StatusOr<uint64_t> sequence = (*writer)->Send(std::move(batch));
      if (!sequence.ok()) {
        send_status = sequence.status();
        return;
      }
      if (*sequence != static_cast<uint64_t>(b + 1)) {
        send_status = absl::InternalError("sequences out of order");
        return;
      }
    }
  });

  // Two restarts in the middle of the stream, each once a third more of it is acknowledged. The
  // server is killed (no drain), stays down a moment (the writer fails to reconnect and backs
  // off), and comes back on the same port and data.
  for (uint64_t through : {uint64_t{kBatches / 3}, uint64_t{2 * kBatches / 3}}) {
    ASSERT_TRUE(IsOk((*writer)->WaitAcknowledged(through, absl::Now() + absl::Seconds(60))));
    auto killed = server->Stop(SIGKILL);
    ASSERT_TRUE(IsOk(killed));
    absl::SleepFor(absl::Milliseconds(300));
    ASSERT_TRUE(IsOk(server->RestartOnSamePort())) << server->Logs();
  }
  sender.join();
  ASSERT_TRUE(IsOk(send_status));
  ASSERT_TRUE(IsOk((*writer)->Flush(absl::Now() + absl::Seconds(60))));

  client::ResilientUpdateWriterStats stats = (*writer)->stats();
  EXPECT_EQ(stats.sent, uint64_t{kBatches});
  EXPECT_EQ(stats.acknowledged, uint64_t{kBatches});
  EXPECT_EQ(stats.rejected, 1u);
  EXPECT_GE(stats.reconnects, 2u);
  // Whether a batch was applied but its ack lost when the server died depends on where the kill
  // lands (between the log's fsync and the ack reaching the client); the deterministic check of
  // duplicate acks is BatchesWhoseAcksWereLostAreAcknowledgedAsDuplicates below.
  std::printf("reconnects %llu, resent %llu, duplicate acks %llu\n",
              static_cast<unsigned long long>(stats.reconnects),
              static_cast<unsigned long long>(stats.resent),
              static_cast<unsigned long long>(stats.duplicates));

  // The rejected batch is reported once, with its error, and was not retried.
  std::vector<client::RejectedBatch> rejected = (*writer)->TakeRejected();
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].sequence, uint64_t{kRejected + 1});
  EXPECT_TRUE(HasError(rejected[0].status, absl::StatusCode::kNotFound, "moves.ids["));

  // Exactly once: one version per applied batch, and the final poses are the last ones sent.
  admin = server->NewClient();
  auto info = admin->GetScene("arena");
  ASSERT_TRUE(IsOk(info));
  EXPECT_EQ(info->stats().version(), initial_version + kBatches - 1);
  EXPECT_EQ((*writer)->latest_version(), initial_version + kBatches - 1);
  auto bodies = admin->GetBodies("arena");
  ASSERT_TRUE(IsOk(bodies));
  ASSERT_EQ(bodies->bodies_size(), kBodies);
  for (const v1::Body& body : bodies->bodies()) {
    const v1::Vec3& want = expected.at(body.id());
    EXPECT_EQ(body.pose().position().x(), want.x()) << body.id();
    EXPECT_EQ(body.pose().position().y(), want.y()) << body.id();
    EXPECT_EQ(body.pose().position().z(), want.z()) << body.id();
  }
  EXPECT_TRUE(IsOk((*writer)->Close(absl::Now() + absl::Seconds(10))));
}

// A stress test of the writer's shared state (ThreadSanitizer cannot check it against Debian's
// uninstrumented gRPC and Abseil: see scripts/test). Eight threads Send at once, two more Flush
// and read the counters, and the server is killed and restarted twice underneath. Sequences must
// be handed out exactly once each (1..N, no gap, no repeat), and every batch applied exactly
// once: the scene's version grows by N, and each body ends where its thread's last batch put it.
TEST(ResilientUpdateWriter, ConcurrentSendsAndFlushesAcrossRestartsApplyEachBatchOnce) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  auto admin = server->NewClient();
  const uint64_t initial_version = MakeScene(*admin, "arena");
  auto client = FastReconnectingClient(*server);
  ResilientUpdateWriterOptions options;
  options.max_pending = 32;  // senders block while the server is down
  options.max_backoff = absl::Milliseconds(100);
  options.give_up_after = absl::InfiniteDuration();
  auto writer = ResilientUpdateWriter::Open(client.get(), "arena", options);
  ASSERT_TRUE(IsOk(writer));

  constexpr int kSenders = 8;
  constexpr int kBatchesPerSender = 120;
  constexpr int kTotal = kSenders * kBatchesPerSender;
  // Sender s owns bodies s + 1, s + 1 + kSenders, ... (disjoint sets of kBodies / kSenders).
  std::vector<std::vector<uint64_t>> sequences(kSenders);
  std::vector<std::map<uint64_t, v1::Vec3>> last_pose(kSenders);
  std::vector<absl::Status> send_status(kSenders);
  std::atomic<int> sent{0};
  std::vector<std::thread> senders;
  for (int s = 0; s < kSenders; ++s) {
    senders.emplace_back([&, s] {
      for (int b = 0; b < kBatchesPerSender; ++b) {
        v1::UpdateBatch batch;
        for (int i = s + 1; i <= kBodies; i += kSenders) {
          v1::Vec3 at = MakeVec3(static_cast<float>(i), static_cast<float>(b), 0.5f * s);
          client::AddMove(i, MakePose(at), batch.mutable_moves());
          last_pose[s][i] = at;
        }
        absl::StatusOr<uint64_t> sequence = (*writer)->Send(std::move(batch));
        if (!sequence.ok()) {
          send_status[s] = sequence.status();
          return;
        }
        sequences[s].push_back(*sequence);
        sent.fetch_add(1);
      }
    });
  }
  std::atomic<bool> done{false};
  std::vector<absl::Status> flush_status(2);
  std::vector<std::thread> flushers;
  for (int f = 0; f < 2; ++f) {
    flushers.emplace_back([&, f] {
      while (!done) {
        const client::ResilientUpdateWriterStats stats = (*writer)->stats();
        if (stats.acknowledged > stats.sent) {
          flush_status[f] = absl::InternalError("more acknowledged than sent");
          return;
        }
        (*writer)->pending();
        (*writer)->latest_version();
        // Either everything sent so far is acknowledged in time, or it is not yet.
        absl::Status status = (*writer)->Flush(absl::Now() + absl::Milliseconds(50));
        if (!status.ok() && status.code() != absl::StatusCode::kDeadlineExceeded) {
          flush_status[f] = status;
          return;
        }
      }
    });
  }

  // Two kills, each once a third more of the batches has been handed to Send.
  for (int third = 1; third <= 2; ++third) {
    while (sent.load() < third * kTotal / 3) absl::SleepFor(absl::Milliseconds(1));
    ASSERT_TRUE(IsOk(server->Stop(SIGKILL)));
    ASSERT_TRUE(IsOk(server->RestartOnSamePort())) << server->Logs();
  }
  for (std::thread& sender : senders) sender.join();
  const absl::Status flushed = (*writer)->Flush(absl::Now() + absl::Seconds(60));
  done = true;
  for (std::thread& flusher : flushers) flusher.join();
  for (int s = 0; s < kSenders; ++s) ASSERT_TRUE(IsOk(send_status[s])) << "sender " << s;
  for (int f = 0; f < 2; ++f) EXPECT_TRUE(IsOk(flush_status[f])) << "flusher " << f;
  ASSERT_TRUE(IsOk(flushed));

  // Sequences 1..kTotal, each handed out once; each sender's in increasing order.
  std::vector<uint64_t> all;
  for (int s = 0; s < kSenders; ++s) {
    EXPECT_TRUE(std::is_sorted(sequences[s].begin(), sequences[s].end())) << "sender " << s;
    all.insert(all.end(), sequences[s].begin(), sequences[s].end());
  }
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), size_t{kTotal});
  for (int k = 0; k < kTotal; ++k) ASSERT_EQ(all[k], uint64_t(k + 1));

  const client::ResilientUpdateWriterStats stats = (*writer)->stats();
  EXPECT_EQ(stats.sent, uint64_t{kTotal});
  EXPECT_EQ(stats.acknowledged, uint64_t{kTotal});
  EXPECT_EQ(stats.rejected, 0u);
  EXPECT_GE(stats.reconnects, 2u);
  std::printf("%d batches from %d threads: reconnects %llu, resent %llu, duplicate acks %llu\n",
              kTotal, kSenders, static_cast<unsigned long long>(stats.reconnects),
              static_cast<unsigned long long>(stats.resent),
              static_cast<unsigned long long>(stats.duplicates));
  admin = server->NewClient();
  auto info = admin->GetScene("arena");
  ASSERT_TRUE(IsOk(info));
  EXPECT_EQ(info->stats().version(), initial_version + kTotal);
  EXPECT_EQ((*writer)->latest_version(), initial_version + kTotal);
  auto bodies = admin->GetBodies("arena");
  ASSERT_TRUE(IsOk(bodies));
  ASSERT_EQ(bodies->bodies_size(), kBodies);
  for (const v1::Body& body : bodies->bodies()) {
    const v1::Vec3& want = last_pose[(body.id() - 1) % kSenders].at(body.id());
    EXPECT_EQ(body.pose().position().y(), want.y()) << body.id();
    EXPECT_EQ(body.pose().position().z(), want.z()) << body.id();
  }
  EXPECT_TRUE(IsOk((*writer)->Close(absl::Now() + absl::Seconds(10))));
}

// The same restart, made deterministic: the client's connection goes through a proxy that loses
// the server's answers, so the last batches are applied and logged but never acknowledged before
// the server dies. After the restart the writer resends them, and every one is acknowledged as a
// duplicate and not applied again.
TEST(ResilientUpdateWriter, BatchesWhoseAcksWereLostAreAcknowledgedAsDuplicates) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  auto admin = server->NewClient();
  const uint64_t initial_version = MakeScene(*admin, "arena");
  int port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(server->address().substr(server->address().rfind(':') + 1), &port));
  auto proxy = TcpProxy::Start(port);
  ASSERT_TRUE(IsOk(proxy));
  client::ClientOptions options;
  options.address = (*proxy)->address();
  options.enable_http_proxy = false;
  options.max_reconnect_backoff = absl::Milliseconds(200);
  auto client = *client::Client::Connect(options);
  auto writer = ResilientUpdateWriter::Open(client.get(), "arena");
  ASSERT_TRUE(IsOk(writer));

  constexpr int kAcknowledged = 30;
  constexpr int kLost = 20;
  std::map<uint64_t, v1::Vec3> expected;
  for (int b = 0; b < kAcknowledged; ++b)
    ASSERT_TRUE(IsOk((*writer)->Send(MoveBatch(b, &expected))));
  ASSERT_TRUE(IsOk((*writer)->Flush(absl::Now() + absl::Seconds(30))));
  (*proxy)->Freeze();
  for (int b = kAcknowledged; b < kAcknowledged + kLost; ++b) {
    ASSERT_TRUE(IsOk((*writer)->Send(MoveBatch(b, &expected))));
  }
  // Wait (on the server) until every lost batch is applied, then make them durable: a durable
  // unary write after them covers them in the log.
  const uint64_t applied = initial_version + kAcknowledged + kLost;
  v1::RaycastRequest wait;
  wait.set_scene("arena");
  *wait.mutable_ray() = client::MakeRaycast(MakeVec3(0, 0, 0), MakeVec3(1, 0, 0), 1);
  wait.set_min_version(applied);
  ASSERT_TRUE(IsOk(admin->Raycast(wait)));
  auto marker = admin->UpsertBodies(
      "arena",
      std::vector<v1::Body>{MakeBody(kBodies + 1, MakeSphere(1), MakePose(MakeVec3(0, 50, 0)))});
  ASSERT_TRUE(IsOk(marker));
  ASSERT_EQ(marker->version(), applied + 1);
  EXPECT_EQ((*writer)->pending(), size_t{kLost});

  ASSERT_TRUE(IsOk(server->Stop(SIGKILL)));
  ASSERT_TRUE(IsOk(server->RestartOnSamePort())) << server->Logs();
  ASSERT_TRUE(IsOk((*writer)->Flush(absl::Now() + absl::Seconds(30))));
  client::ResilientUpdateWriterStats stats = (*writer)->stats();
  EXPECT_EQ(stats.acknowledged, uint64_t{kAcknowledged + kLost});
  EXPECT_EQ(stats.duplicates, uint64_t{kLost});
  EXPECT_GE(stats.resent, uint64_t{kLost});
  EXPECT_GE(stats.reconnects, 1u);

  admin = server->NewClient();
  auto info = admin->GetScene("arena");
  ASSERT_TRUE(IsOk(info));
  EXPECT_EQ(info->stats().version(), applied + 1);
  auto bodies = admin->GetBodies("arena");
  ASSERT_TRUE(IsOk(bodies));
  ASSERT_EQ(bodies->bodies_size(), kBodies + 1);
  for (const v1::Body& body : bodies->bodies()) {
    if (body.id() > kBodies) continue;
    const v1::Vec3& want = expected.at(body.id());
    EXPECT_EQ(body.pose().position().y(), want.y()) << body.id();
    EXPECT_EQ(body.pose().position().z(), want.z()) << body.id();
  }
  EXPECT_TRUE(IsOk((*writer)->Close(absl::Now() + absl::Seconds(10))));
}

TEST(ResilientUpdateWriter, DuplicateAcksCountAsAcknowledged) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  auto client = server->NewClient();
  const uint64_t initial_version = MakeScene(*client, "arena");
  ResilientUpdateWriterOptions options;
  options.client_id = kClientId;
  {
    auto first = ResilientUpdateWriter::Open(client.get(), "arena", options);
    ASSERT_TRUE(IsOk(first));
    for (int b = 0; b < 5; ++b) ASSERT_TRUE(IsOk((*first)->Send(MoveBatch(b, nullptr))));
    ASSERT_TRUE(IsOk((*first)->Close(absl::Now() + absl::Seconds(10))));
  }
  // A second writer with the same id resends sequences 3..5 (already applied), then 6 and 7.
  options.first_sequence = 3;
  auto second = ResilientUpdateWriter::Open(client.get(), "arena", options);
  ASSERT_TRUE(IsOk(second));
  for (int b = 0; b < 5; ++b) ASSERT_TRUE(IsOk((*second)->Send(MoveBatch(b, nullptr))));
  ASSERT_TRUE(IsOk((*second)->Flush(absl::Now() + absl::Seconds(10))));
  client::ResilientUpdateWriterStats stats = (*second)->stats();
  EXPECT_EQ(stats.acknowledged, 5u);
  EXPECT_EQ(stats.duplicates, 3u);
  EXPECT_EQ(stats.rejected, 0u);
  EXPECT_EQ((*second)->pending(), 0u);
  auto info = client->GetScene("arena");
  ASSERT_TRUE(IsOk(info));
  EXPECT_EQ(info->stats().version(), initial_version + 5 + 2);
}

TEST(ResilientUpdateWriter, KeepsBatchesWhileTheServerIsDownAndBoundsThem) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  auto admin = server->NewClient();
  const uint64_t initial_version = MakeScene(*admin, "arena");
  ASSERT_TRUE(IsOk(server->Stop(SIGKILL)));
  auto client = FastReconnectingClient(*server);
  ResilientUpdateWriterOptions options;
  options.max_pending = 3;
  options.send_timeout = absl::ZeroDuration();
  auto writer = ResilientUpdateWriter::Open(client.get(), "arena", options);
  ASSERT_TRUE(IsOk(writer));
  EXPECT_NE((*writer)->client_id(), 0u);  // a random id was picked
  for (int b = 0; b < 3; ++b) ASSERT_TRUE(IsOk((*writer)->Send(MoveBatch(b, nullptr))));
  // Full: the fourth is refused at once.
  EXPECT_TRUE(HasError((*writer)->Send(MoveBatch(3, nullptr)).status(),
                       absl::StatusCode::kResourceExhausted, "update writer: 3 batches"));
  // Another scene's batch is refused before it is kept.
  v1::UpdateBatch other = MoveBatch(0, nullptr);
  other.set_scene("elsewhere");
  EXPECT_TRUE(
      HasError((*writer)->Send(other).status(), absl::StatusCode::kInvalidArgument, "scene: "));
  EXPECT_TRUE(HasError((*writer)->Flush(absl::Now() + absl::Milliseconds(100)),
                       absl::StatusCode::kDeadlineExceeded, ""));
  EXPECT_EQ((*writer)->pending(), 3u);

  ASSERT_TRUE(IsOk(server->RestartOnSamePort())) << server->Logs();
  ASSERT_TRUE(IsOk((*writer)->Flush(absl::Now() + absl::Seconds(30))));
  auto info = server->NewClient()->GetScene("arena");
  ASSERT_TRUE(IsOk(info));
  EXPECT_EQ(info->stats().version(), initial_version + 3);
  ASSERT_TRUE(IsOk((*writer)->Close(absl::Now() + absl::Seconds(10))));
  EXPECT_TRUE(HasError((*writer)->Send(MoveBatch(0, nullptr)).status(),
                       absl::StatusCode::kFailedPrecondition, ""));
}

TEST(ResilientUpdateWriter, GivesUpAfterTheLimitAndHandsBackWhatIsUnacknowledged) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  MakeScene(*server->NewClient(), "arena");
  ASSERT_TRUE(IsOk(server->Stop(SIGKILL)));
  // The killed server's port could be taken by another test's server (with its own "arena")
  // before the writer gives up; a port that refuses for as long as the test runs cannot.
  RefusingPort dead;
  auto client = FastReconnectingClient(dead.address());
  ResilientUpdateWriterOptions options;
  // 3 s from Open: the Send right after Open must come before the writer gives up, even on a
  // loaded machine (sanitizers, ctest -j); the test waits that long for the give-up.
  options.give_up_after = absl::Seconds(3);
  auto writer = ResilientUpdateWriter::Open(client.get(), "arena", options);
  ASSERT_TRUE(IsOk(writer));
  ASSERT_TRUE(IsOk((*writer)->Send(MoveBatch(0, nullptr))));
  EXPECT_TRUE(HasError((*writer)->Flush(absl::Now() + absl::Seconds(30)),
                       absl::StatusCode::kUnavailable, "update writer: gave up reconnecting"));
  EXPECT_TRUE(HasError((*writer)->Send(MoveBatch(1, nullptr)).status(),
                       absl::StatusCode::kUnavailable, "update writer: gave up"));
  std::vector<v1::UpdateBatch> left = (*writer)->TakeUnacknowledged();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].client_sequence(), 1u);
  EXPECT_EQ(left[0].scene(), "arena");
}

// A writer whose batches are answered by a server that does not write the scene (here, a scene
// marked as moving) resends them, never as rejected, and gives up after the limit with that
// answer, which names the server that does.
TEST(ResilientUpdateWriter, GivesUpOnAnswersNamingAnotherServerWithTheAnswer) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  auto admin = server->NewClient();
  const uint64_t version = MakeScene(*admin, "arena");
  ASSERT_TRUE(IsOk(admin->SetSceneMoving("arena", "10.0.0.4:50051")));
  ResilientUpdateWriterOptions options;
  options.initial_backoff = absl::Milliseconds(10);
  options.max_backoff = absl::Milliseconds(100);
  options.give_up_after = absl::Seconds(2);
  auto writer = ResilientUpdateWriter::Open(admin.get(), "arena", options);
  ASSERT_TRUE(IsOk(writer));
  ASSERT_TRUE(IsOk((*writer)->Send(MoveBatch(0, nullptr))));
  const absl::Status flushed = (*writer)->Flush(absl::Now() + absl::Seconds(30));
  EXPECT_TRUE(HasError(flushed, absl::StatusCode::kFailedPrecondition,
                       "update writer: gave up after 2s of batches refused unapplied by servers "
                       "that could not write the scene: scene: scene \"arena\" moved to "
                       "10.0.0.4:50051"))
      << flushed;
  const client::ResilientUpdateWriterStats stats = (*writer)->stats();
  EXPECT_GE(stats.redirected, 2u);
  EXPECT_EQ(stats.rejected, 0u);
  EXPECT_TRUE((*writer)->TakeRejected().empty());
  EXPECT_EQ((*writer)->TakeUnacknowledged().size(), 1u);
  auto info = admin->GetScene("arena");
  ASSERT_TRUE(IsOk(info));
  EXPECT_EQ(info->stats().version(), version);  // nothing was applied
}

// The contract on a final failure (resilient_update_writer.h): the reader thread finds it, so a
// Send that runs before then keeps its batch and succeeds; Flush reports the failure for every
// batch not acknowledged; every call after that reports it too, and the batches are handed
// back. The writer is opened while the server is down, so that its first Send cannot meet the
// refusal (nothing can refuse the stream before the server is back): no race decides the test.
TEST(ResilientUpdateWriter, StopsOnAnErrorThatRetryingCannotFix) {
  ServerConfig config;
  config.token_file_contents = "admin-token admin\nreader-token reader\n";
  auto server = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(server));
  const uint64_t initial_version = MakeScene(*(*server)->NewClient("admin-token"), "arena");
  ASSERT_TRUE(IsOk((*server)->Stop(SIGKILL)));
  auto client = FastReconnectingClient(**server, "reader-token");
  ResilientUpdateWriterOptions options;
  options.give_up_after = absl::InfiniteDuration();  // only the refusal may end the writer
  auto writer = ResilientUpdateWriter::Open(client.get(), "arena", options);
  ASSERT_TRUE(IsOk(writer));
  auto sent = (*writer)->Send(MoveBatch(0, nullptr));
  ASSERT_TRUE(IsOk(sent));
  EXPECT_EQ(*sent, 1u);
  EXPECT_TRUE(IsOk((*writer)->status()));

  ASSERT_TRUE(IsOk((*server)->RestartOnSamePort())) << (*server)->Logs();
  EXPECT_TRUE(HasError((*writer)->Flush(absl::Now() + absl::Seconds(60)),
                       absl::StatusCode::kPermissionDenied, ""));
  // Known now: every later call reports it.
  EXPECT_TRUE(HasError((*writer)->status(), absl::StatusCode::kPermissionDenied, ""));
  EXPECT_TRUE(HasError((*writer)->Send(MoveBatch(1, nullptr)).status(),
                       absl::StatusCode::kPermissionDenied, ""));
  EXPECT_TRUE(HasError((*writer)->WaitAcknowledged(1, absl::Now() + absl::Seconds(60)),
                       absl::StatusCode::kPermissionDenied, ""));
  client::ResilientUpdateWriterStats stats = (*writer)->stats();
  EXPECT_EQ(stats.sent, 1u);
  EXPECT_EQ(stats.acknowledged, 0u);
  EXPECT_EQ(stats.reconnects, 0u);  // refused on the first stream, and not retried
  std::vector<v1::UpdateBatch> left = (*writer)->TakeUnacknowledged();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].client_sequence(), 1u);
  auto info = (*server)->NewClient("admin-token")->GetScene("arena");
  ASSERT_TRUE(IsOk(info));
  EXPECT_EQ(info->stats().version(), initial_version);  // nothing was applied
  EXPECT_TRUE(HasError((*writer)->Close(absl::Now() + absl::Seconds(10)),
                       absl::StatusCode::kPermissionDenied, ""));
}

TEST(ResilientUpdateWriter, ReportsRejectedBatchesThroughTheCallback) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  auto client = server->NewClient();
  MakeScene(*client, "arena");
  absl::Mutex mu;
  std::vector<uint64_t> rejected;
  ResilientUpdateWriterOptions options;
  options.on_rejected = [&](const client::RejectedBatch& batch) {
    absl::MutexLock lock(&mu);
    rejected.push_back(batch.sequence);
  };
  auto writer = ResilientUpdateWriter::Open(client.get(), "arena", options);
  ASSERT_TRUE(IsOk(writer));
  for (int b = 0; b < 6; ++b) {
    v1::UpdateBatch batch = MoveBatch(b, nullptr);
    if (b % 2 == 1) *batch.add_ops() = client::MakeRemoveOp(4242);
    ASSERT_TRUE(IsOk((*writer)->Send(std::move(batch))));
  }
  ASSERT_TRUE(IsOk((*writer)->Close(absl::Now() + absl::Seconds(10))));
  absl::MutexLock lock(&mu);
  EXPECT_EQ(rejected, (std::vector<uint64_t>{2, 4, 6}));
  EXPECT_TRUE((*writer)->TakeRejected().empty());
}

}  // namespace
}  // namespace collide::integration
