// Chaos against the real server: clients that cancel or vanish mid-stream (the server's live
// stream count returns to 0), a client that stops reading (the server holds at most one answer
// for it and ends the stream with RESOURCE_EXHAUSTED after --stream_stall_timeout_ms), a
// thousand concurrent streams, SIGKILL under a concurrent write load (every acknowledged write
// is there after the restart), and a full disk (a file size limit on the server process: writes
// are refused with a clear error, queries go on, nothing unsynced is acknowledged, and a
// restart with space recovers). The server's counters come from the admin rpc GetServerStats.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
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

namespace collide::integration {
namespace {

using client::MakeAabbQuery;
using client::MakeBody;
using client::MakePose;
using client::MakeRegion;
using client::MakeSphere;
using client::MakeVec3;
using std::chrono::milliseconds;
using std::chrono::seconds;

// The environment variable that makes VanishingClient.Child act (it is skipped otherwise).
constexpr char kChildAddressVar[] = "COLLIDE_CHAOS_CHILD_ADDRESS";

// A channel with its own HTTP/2 connection.
std::shared_ptr<grpc::Channel> NewConnection(const std::string& address, int id) {
  grpc::ChannelArguments args;
  args.SetInt("collide.chaos_connection", id);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

// A call context with a 60 s deadline (no test waits forever).
std::unique_ptr<grpc::ClientContext> NewContext() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  return context;
}

v1::GetServerStatsResponse Stats(v1::Collide::Stub& stub) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(10));
  v1::GetServerStatsResponse stats;
  grpc::Status status = stub.GetServerStats(&context, v1::GetServerStatsRequest(), &stats);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return stats;
}

// Polls until `done(stats)` holds (up to 20 s); returns the last stats.
template <typename F>
v1::GetServerStatsResponse WaitForStats(v1::Collide::Stub& stub, F done) {
  v1::GetServerStatsResponse stats = Stats(stub);
  const auto deadline = std::chrono::steady_clock::now() + seconds(20);
  while (!done(stats) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
    stats = Stats(stub);
  }
  return stats;
}

bool NoStreams(const v1::GetServerStatsResponse& stats) {
  return stats.update_streams() == 0 && stats.query_streams() == 0 && stats.outbound_bytes() == 0;
}

// `count` spheres of radius 0.5 along x from id `first`.
std::vector<v1::Body> Spheres(uint64_t first, int count) {
  std::vector<v1::Body> bodies;
  for (int i = 0; i < count; ++i) {
    const uint64_t id = first + static_cast<uint64_t>(i);
    bodies.push_back(
        MakeBody(id, MakeSphere(0.5f), MakePose(MakeVec3(static_cast<float>(i), 0, 0))));
  }
  return bodies;
}

// A batch of `queries` AABB queries over the whole scene, each returning up to `max_hits`.
v1::QueryBatch WideQueries(const std::string& scene, int queries, uint32_t max_hits) {
  v1::QueryBatch batch;
  batch.set_scene(scene);
  for (int i = 0; i < queries; ++i) {
    v1::Query query = MakeAabbQuery(
        static_cast<uint64_t>(i), MakeRegion(MakeVec3(-1e6, -1e6, -1e6), MakeVec3(1e6, 1e6, 1e6)));
    query.set_mode(v1::MODE_ALL);
    query.set_max_hits(max_hits);
    *batch.add_queries() = query;
  }
  return batch;
}

v1::UpdateBatch MoveBatch(const std::string& scene, uint64_t id, float x) {
  v1::UpdateBatch batch;
  batch.set_scene(scene);
  batch.mutable_moves()->add_ids(id);
  for (float v : {x, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f}) batch.mutable_moves()->add_poses(v);
  return batch;
}

ServerConfig WithFlags(std::vector<std::string> flags) {
  ServerConfig config;
  config.extra_flags = std::move(flags);
  return config;
}

class ChaosTest : public ::testing::Test {
 protected:
  void StartServer(ServerConfig config) {
    auto server = ServerProcess::Start(std::move(config));
    ASSERT_TRUE(IsOk(server));
    server_ = *std::move(server);
    client_ = server_->NewClient();
    stub_ = v1::Collide::NewStub(client_->channel());
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<client::Client> client_;
  std::unique_ptr<v1::Collide::Stub> stub_;
};

// Run by CancelledAndVanishedClientsLeaveNoStream in a child process (the test binary itself):
// opens streams, answers "ready" on stdout once each has an answer, then waits to be killed.
TEST(VanishingClient, Child) {
  const char* address = std::getenv(kChildAddressVar);
  if (address == nullptr)
    GTEST_SKIP() << "run by ChaosTest.CancelledAndVanishedClientsLeaveNoStream";
  auto stub = v1::Collide::NewStub(NewConnection(address, 1));
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReaderWriter<v1::QueryBatch, v1::QueryBatchResult>>>
      queries;
  std::vector<std::unique_ptr<grpc::ClientReaderWriter<v1::UpdateBatch, v1::UpdateAck>>> updates;
  for (int i = 0; i < 8; ++i) {
    contexts.push_back(NewContext());
    queries.push_back(stub->QueryStream(contexts.back().get()));
    ASSERT_TRUE(queries.back()->Write(WideQueries("chaos", 2, 8)));
    v1::QueryBatchResult result;
    ASSERT_TRUE(queries.back()->Read(&result));
    contexts.push_back(NewContext());
    updates.push_back(stub->UpdateStream(contexts.back().get()));
    ASSERT_TRUE(updates.back()->Write(MoveBatch("chaos", 1, 0.5f)));
    v1::UpdateAck ack;
    ASSERT_TRUE(updates.back()->Read(&ack));
    // A batch in flight when the client vanishes.
    ASSERT_TRUE(queries.back()->Write(WideQueries("chaos", 2, 8)));
  }
  std::printf("ready\n");
  std::fflush(stdout);
  pause();
}

TEST_F(ChaosTest, CancelledAndVanishedClientsLeaveNoStream) {
  StartServer(ServerConfig{});
  ASSERT_TRUE(IsOk(client_->CreateScene("chaos")));
  ASSERT_TRUE(IsOk(client_->UpsertBodies("chaos", Spheres(1, 20))));

  // Cancelled: streams with a batch each in flight, cancelled before their answer is read.
  for (int round = 0; round < 3; ++round) {
    std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
    std::vector<std::unique_ptr<grpc::ClientReaderWriter<v1::QueryBatch, v1::QueryBatchResult>>>
        queries;
    std::vector<std::unique_ptr<grpc::ClientReaderWriter<v1::UpdateBatch, v1::UpdateAck>>> updates;
    for (int i = 0; i < 10; ++i) {
      contexts.push_back(NewContext());
      queries.push_back(stub_->QueryStream(contexts.back().get()));
      ASSERT_TRUE(queries.back()->Write(WideQueries("chaos", 4, 20)));
      contexts.push_back(NewContext());
      updates.push_back(stub_->UpdateStream(contexts.back().get()));
      ASSERT_TRUE(updates.back()->Write(MoveBatch("chaos", 2, 1.0f + static_cast<float>(i))));
    }
    v1::GetServerStatsResponse open = WaitForStats(
        *stub_, [](const auto& s) { return s.query_streams() == 10 && s.update_streams() == 10; });
    EXPECT_EQ(open.query_streams(), 10u);
    EXPECT_EQ(open.update_streams(), 10u);
    for (auto& context : contexts) context->TryCancel();
    for (auto& stream : queries)
      EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
    for (auto& stream : updates)
      EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
    v1::GetServerStatsResponse after = WaitForStats(*stub_, NoStreams);
    EXPECT_TRUE(NoStreams(after)) << after.DebugString();
  }

  // Vanished: a child process opens streams and is killed with SIGKILL (its connection drops).
  for (int round = 0; round < 2; ++round) {
    int out[2];
    ASSERT_EQ(pipe(out), 0);
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    const std::string env = absl::StrCat(kChildAddressVar, "=", server_->address());
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      putenv(const_cast<char*>(env.c_str()));
      execl(self.c_str(), self.c_str(), "--gtest_filter=VanishingClient.Child", nullptr);
      _exit(127);
    }
    close(out[1]);
    std::string said;
    char buffer[256];
    ssize_t n;
    while (!absl::StrContains(said, "ready") && (n = read(out[0], buffer, sizeof buffer)) > 0) {
      said.append(buffer, static_cast<size_t>(n));
    }
    close(out[0]);
    ASSERT_TRUE(absl::StrContains(said, "ready")) << said;
    v1::GetServerStatsResponse open = Stats(*stub_);
    EXPECT_EQ(open.query_streams(), 8u);
    EXPECT_EQ(open.update_streams(), 8u);
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    v1::GetServerStatsResponse after = WaitForStats(*stub_, NoStreams);
    EXPECT_TRUE(NoStreams(after)) << after.DebugString();
  }
  // The server still answers.
  auto bodies = client_->GetBodies("chaos", {});
  ASSERT_TRUE(IsOk(bodies));
  EXPECT_EQ(bodies->bodies_size(), 20);
}

TEST_F(ChaosTest, AClientThatStopsReadingIsEndedWithResourceExhaustedAndHeldToOneAnswer) {
  StartServer(WithFlags({"--stream_stall_timeout_ms=1500"}));
  ASSERT_TRUE(IsOk(client_->CreateScene("chaos")));
  ASSERT_TRUE(IsOk(client_->UpsertBodies("chaos", Spheres(1, 1000))));
  // Each answer: 48 queries x 1,000 hits, about 2 MB.
  const v1::QueryBatch batch = WideQueries("chaos", 48, 1000);

  auto stub = v1::Collide::NewStub(NewConnection(server_->address(), 2));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(60));
  auto stream = stub->QueryStream(&context);
  // The client sends batches and reads nothing: once its connection's windows are full, the
  // server cannot write the answer it holds, reads no more, and the client's writes block.
  std::atomic<int> sent{0};
  std::thread writer([&] {
    while (sent.load() < 1000 && stream->Write(batch)) sent.fetch_add(1);
  });
  // While it does not read, the server holds at most one answer for it.
  uint64_t most = 0;
  v1::GetServerStatsResponse stats = WaitForStats(*stub_, [&](const auto& s) {
    most = std::max<uint64_t>(most, s.outbound_bytes());
    return s.streams_stalled() == 1;
  });
  writer.join();
  EXPECT_EQ(stats.streams_stalled(), 1u);
  EXPECT_GT(most, 0u);
  EXPECT_LE(most, 48u * 1000u * 64u);  // one answer: under 64 bytes per hit
  stats = WaitForStats(*stub_, NoStreams);
  EXPECT_TRUE(NoStreams(stats)) << stats.DebugString();

  // The client sees the stream end with RESOURCE_EXHAUSTED (after any answers that got through).
  v1::QueryBatchResult result;
  int answers = 0;
  while (stream->Read(&result)) ++answers;
  EXPECT_LT(answers, sent.load());
  grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "stream: ")) << status.error_message();
  // Other clients are served meanwhile and after.
  EXPECT_TRUE(IsOk(client_->GetScene("chaos")));
}

TEST_F(ChaosTest, AThousandConcurrentStreamsOpenServeAndClose) {
  StartServer(ServerConfig{});
  ASSERT_TRUE(IsOk(client_->CreateScene("chaos")));
  ASSERT_TRUE(IsOk(client_->UpsertBodies("chaos", Spheres(1, 10))));
  constexpr int kConnections = 4;
  constexpr int kPerConnection = 250;  // 125 query and 125 update streams per connection
  std::vector<std::unique_ptr<v1::Collide::Stub>> stubs;
  for (int c = 0; c < kConnections; ++c) {
    stubs.push_back(v1::Collide::NewStub(NewConnection(server_->address(), 100 + c)));
  }
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReaderWriter<v1::QueryBatch, v1::QueryBatchResult>>>
      queries;
  std::vector<std::unique_ptr<grpc::ClientReaderWriter<v1::UpdateBatch, v1::UpdateAck>>> updates;
  for (int c = 0; c < kConnections; ++c) {
    for (int i = 0; i < kPerConnection / 2; ++i) {
      contexts.push_back(NewContext());
      queries.push_back(stubs[c]->QueryStream(contexts.back().get()));
      contexts.push_back(NewContext());
      updates.push_back(stubs[c]->UpdateStream(contexts.back().get()));
    }
  }
  // Every stream is used while all are open.
  for (size_t i = 0; i < queries.size(); ++i) {
    ASSERT_TRUE(queries[i]->Write(WideQueries("chaos", 1, 20)));
    ASSERT_TRUE(updates[i]->Write(MoveBatch("chaos", 1 + i % 10, static_cast<float>(i))));
  }
  v1::GetServerStatsResponse open = WaitForStats(
      *stub_, [](const auto& s) { return s.query_streams() + s.update_streams() == 1000; });
  EXPECT_EQ(open.query_streams(), 500u);
  EXPECT_EQ(open.update_streams(), 500u);
  for (size_t i = 0; i < queries.size(); ++i) {
    v1::QueryBatchResult result;
    ASSERT_TRUE(queries[i]->Read(&result));
    ASSERT_FALSE(result.has_error()) << result.error().message();
    ASSERT_EQ(result.results_size(), 1);
    EXPECT_EQ(result.results(0).hits_size(), 10);
    v1::UpdateAck ack;
    ASSERT_TRUE(updates[i]->Read(&ack));
    EXPECT_FALSE(ack.has_error()) << ack.error().message();
  }
  for (auto& stream : queries) {
    ASSERT_TRUE(stream->WritesDone());
    EXPECT_TRUE(stream->Finish().ok());
  }
  for (auto& stream : updates) {
    ASSERT_TRUE(stream->WritesDone());
    EXPECT_TRUE(stream->Finish().ok());
  }
  v1::GetServerStatsResponse after = WaitForStats(*stub_, NoStreams);
  EXPECT_TRUE(NoStreams(after)) << after.DebugString();
  EXPECT_GE(after.streams_opened(), 1000u);
  auto scene = client_->GetScene("chaos");
  ASSERT_TRUE(IsOk(scene));
  EXPECT_EQ(scene->stats().version(), 1u + 500u);
}

TEST_F(ChaosTest, MaxStreamsRefusesTheStreamBeyondItAndServesAgainOnceOneCloses) {
  StartServer(WithFlags({"--max_streams=3"}));
  ASSERT_TRUE(IsOk(client_->CreateScene("chaos")));
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReaderWriter<v1::QueryBatch, v1::QueryBatchResult>>>
      streams;
  for (int i = 0; i < 4; ++i) {
    contexts.push_back(NewContext());
    streams.push_back(stub_->QueryStream(contexts.back().get()));
    streams.back()->Write(WideQueries("chaos", 1, 1));
    v1::QueryBatchResult result;
    const bool answered = streams.back()->Read(&result);
    EXPECT_EQ(answered, i < 3) << i;
  }
  grpc::Status refused = streams.back()->Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(absl::StartsWith(refused.error_message(), "streams: ")) << refused.error_message();
  streams.pop_back();
  streams.back()->WritesDone();
  EXPECT_TRUE(streams.back()->Finish().ok());
  streams.pop_back();
  WaitForStats(*stub_, [](const auto& s) { return s.query_streams() == 2; });
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(60));
  auto stream = stub_->QueryStream(&context);
  ASSERT_TRUE(stream->Write(WideQueries("chaos", 1, 1)));
  v1::QueryBatchResult result;
  EXPECT_TRUE(stream->Read(&result));
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(Stats(*stub_).streams_refused(), 1u);
  for (auto& s : streams) {
    s->WritesDone();
    EXPECT_TRUE(s->Finish().ok());
  }
}

TEST_F(ChaosTest, SigkillUnderLoadKeepsEveryAcknowledgedWrite) {
  StartServer(ServerConfig{});
  constexpr int kWriters = 4;
  for (int w = 0; w < kWriters; ++w) ASSERT_TRUE(IsOk(client_->CreateScene(absl::StrCat("s", w))));
  // Each writer streams batches that create one new body each (id = its sequence) and records
  // the sequences acknowledged; a fifth thread upserts through unary calls.
  std::vector<std::vector<uint64_t>> acked(kWriters + 1);
  std::atomic<bool> stop{false};
  std::atomic<int> acks{0};
  std::vector<std::thread> threads;
  const std::string address = server_->address();
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      auto stub = v1::Collide::NewStub(NewConnection(address, 200 + w));
      grpc::ClientContext context;
      auto stream = stub->UpdateStream(&context);
      const std::string scene = absl::StrCat("s", w);
      uint64_t sent = 0;
      // Up to 8 batches in flight: writes and reads interleave.
      std::thread reader([&] {
        v1::UpdateAck ack;
        while (stream->Read(&ack)) {
          if (!ack.has_error()) {
            acked[w].push_back(ack.client_sequence());
            acks.fetch_add(1);
          }
        }
      });
      while (!stop.load()) {
        ++sent;
        v1::UpdateBatch batch;
        batch.set_scene(scene);
        batch.set_client_id(1000 + w);
        batch.set_client_sequence(sent);
        *batch.add_ops()->mutable_upsert() =
            MakeBody(sent, MakeSphere(0.25f), MakePose(MakeVec3(static_cast<float>(sent), 1, 2)));
        if (!stream->Write(batch)) break;
      }
      context.TryCancel();
      reader.join();
      stream->Finish();
    });
  }
  threads.emplace_back([&] {
    auto client = server_->NewClient();
    for (uint64_t id = 1; !stop.load(); ++id) {
      const std::vector<v1::Body> bodies = {MakeBody(
          1000000 + id, MakeSphere(1.0f), MakePose(MakeVec3(0, 0, static_cast<float>(id))))};
      auto written = client->UpsertBodies("s0", bodies);
      if (!written.ok()) break;
      acked[kWriters].push_back(id);
      acks.fetch_add(1);
    }
  });
  // Kill once a good number of writes were acknowledged (the load goes on meanwhile).
  const auto deadline = std::chrono::steady_clock::now() + seconds(30);
  while (acks.load() < 400 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  ASSERT_TRUE(IsOk(server_->Stop(SIGKILL)));
  stop = true;
  for (std::thread& t : threads) t.join();
  ASSERT_GE(acks.load(), 400);

  ASSERT_TRUE(IsOk(server_->Restart()));
  auto client = server_->NewClient();
  for (int w = 0; w <= kWriters; ++w) {
    const std::string scene = w == kWriters ? "s0" : absl::StrCat("s", w);
    std::vector<uint64_t> ids;
    for (uint64_t sequence : acked[w]) ids.push_back(w == kWriters ? 1000000 + sequence : sequence);
    // A writer the load starved may have no acknowledgement before the kill: nothing of its to
    // check (and GetBodies with no ids would answer every body of the scene).
    if (ids.empty()) continue;
    auto got = client->GetBodies(scene, ids);
    ASSERT_TRUE(IsOk(got));
    EXPECT_EQ(got->missing_ids_size(), 0) << "writer " << w << " lost acknowledged bodies";
    for (const v1::Body& body : got->bodies()) {
      const uint64_t id = body.id();
      const float expected =
          w == kWriters ? static_cast<float>(id - 1000000) : static_cast<float>(id);
      EXPECT_EQ(w == kWriters ? body.pose().position().z() : body.pose().position().x(), expected);
    }
  }
}

TEST_F(ChaosTest, AFullDiskRefusesWritesServesQueriesAndAcknowledgesNothingLost) {
  // 256 KiB per file: the first log segment (4 MiB by default) hits it.
  ServerConfig config;
  config.file_size_limit_bytes = 256 << 10;
  StartServer(config);
  ASSERT_TRUE(IsOk(client_->CreateScene("disk")));
  std::vector<uint64_t> acked;
  absl::Status refused;
  for (uint64_t id = 1; id <= 5000; ++id) {
    std::vector<v1::Body> bodies;
    for (int k = 0; k < 10; ++k) {
      bodies.push_back(
          MakeBody(id * 100 + k, MakeSphere(0.5f),
                   MakePose(MakeVec3(static_cast<float>(id), static_cast<float>(k), 0))));
    }
    auto written = client_->UpsertBodies("disk", bodies);
    if (!written.ok()) {
      refused = written.status();
      break;
    }
    EXPECT_TRUE(written->durable());
    acked.push_back(id);
  }
  ASSERT_FALSE(refused.ok()) << "the file size limit was never reached";
  EXPECT_TRUE(HasError(refused, absl::StatusCode::kResourceExhausted, "data_dir: "));
  EXPECT_TRUE(absl::StrContains(refused.message(), "disk is full")) << refused;
  ASSERT_FALSE(acked.empty());

  // Later writes are refused the same way, streamed ones too; queries are still answered.
  EXPECT_TRUE(HasError(client_->UpsertBodies("disk", Spheres(1, 1)).status(),
                       absl::StatusCode::kResourceExhausted, "data_dir: "));
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(60));
    auto stream = stub_->UpdateStream(&context);
    ASSERT_TRUE(stream->Write(MoveBatch("disk", 100, 3.0f)));
    v1::UpdateAck ack;
    ASSERT_TRUE(stream->Read(&ack));
    EXPECT_EQ(ack.error().code(), static_cast<int>(grpc::StatusCode::RESOURCE_EXHAUSTED));
    EXPECT_TRUE(absl::StartsWith(ack.error().message(), "data_dir: ")) << ack.error().message();
    stream->WritesDone();
    EXPECT_TRUE(stream->Finish().ok());
  }
  v1::GetServerStatsResponse stats = Stats(*stub_);
  EXPECT_FALSE(stats.writable());
  EXPECT_FALSE(stats.write_error().empty());
  auto first = client_->GetBodies("disk", std::vector<uint64_t>{100});
  ASSERT_TRUE(IsOk(first));
  EXPECT_EQ(first->bodies_size(), 1);
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(60));
    auto stream = stub_->QueryStream(&context);
    ASSERT_TRUE(stream->Write(WideQueries("disk", 1, 5)));
    v1::QueryBatchResult result;
    ASSERT_TRUE(stream->Read(&result));
    EXPECT_FALSE(result.has_error());
    EXPECT_EQ(result.results(0).hits_size(), 5);
    stream->WritesDone();
    EXPECT_TRUE(stream->Finish().ok());
  }

  // With space again (no limit) a restart recovers every acknowledged write and takes new ones.
  server_->Stop(SIGKILL).IgnoreError();
  server_->config().file_size_limit_bytes = 0;
  ASSERT_TRUE(IsOk(server_->Restart()));
  auto client = server_->NewClient();
  std::vector<uint64_t> ids;
  for (uint64_t id : acked) {
    for (uint64_t k = 0; k < 10; ++k) ids.push_back(id * 100 + k);
  }
  auto got = client->GetBodies("disk", ids);
  ASSERT_TRUE(IsOk(got));
  EXPECT_EQ(got->missing_ids_size(), 0);
  EXPECT_EQ(static_cast<size_t>(got->bodies_size()), ids.size());
  EXPECT_TRUE(IsOk(client->UpsertBodies("disk", Spheres(1, 1))));
}

}  // namespace
}  // namespace collide::integration
