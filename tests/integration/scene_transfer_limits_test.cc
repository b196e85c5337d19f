// ExportScene and ImportScene as streams of the server's stream registry, against real server
// processes: both count toward --max_streams and show in GetServerStats and the
// collide_streams_* metrics; imports are capped by --max_concurrent_imports (the N+1th is
// refused, a slot frees once an import ends); an export whose client stops reading and an
// import whose client stops sending are ended by the stall watchdog (--stream_stall_timeout_ms);
// --max_concurrent_imports at its extremes.

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "collide/v1/collide.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "integration/metrics_scrape.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using client::MakeBody;
using client::MakePose;
using client::MakeSphere;
using client::MakeVec3;
using std::chrono::milliseconds;
using std::chrono::seconds;

std::unique_ptr<ServerProcess> StartServer(std::vector<std::string> flags, bool metrics = false) {
  ServerConfig config;
  config.extra_flags = std::move(flags);
  config.metrics = metrics;
  auto server = ServerProcess::Start(config);
  EXPECT_TRUE(IsOk(server));
  return server.ok() ? *std::move(server) : nullptr;
}

// A channel with its own HTTP/2 connection whose flow-control windows stay at 64 KiB (no BDP
// probing to grow them), so that a client that stops reading stops the server's writes soon.
std::shared_ptr<grpc::Channel> NewSmallWindowConnection(const std::string& address, int id) {
  grpc::ChannelArguments args;
  args.SetInt("collide.transfer_limits_connection", id);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 64 << 10);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

// A scene `name` (durability none) of `count` spheres, ids 1..count.
void MakeScene(client::Client& client, const std::string& name, int count) {
  v1::SceneOptions options;
  options.set_durability(v1::DURABILITY_NONE);
  ASSERT_TRUE(IsOk(client.CreateScene(name, options)));
  std::vector<v1::Body> bodies;
  for (int i = 0; i < count; ++i) {
    bodies.push_back(MakeBody(
        static_cast<uint64_t>(i) + 1, MakeSphere(0.25f),
        MakePose(MakeVec3(static_cast<float>(i % 100), static_cast<float>(i / 100), 0.0f))));
    if (bodies.size() == 5000 || i + 1 == count) {
      ASSERT_TRUE(IsOk(client.UpsertBodies(name, bodies)));
      bodies.clear();
    }
  }
}

// Every message of an export of `scene`.
absl::StatusOr<std::vector<v1::SceneExportMessage>> Export(client::Client& client,
                                                           const std::string& scene) {
  std::vector<v1::SceneExportMessage> messages;
  absl::Status status = client.ExportScene(scene, [&](const v1::SceneExportMessage& m) {
    messages.push_back(m);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return messages;
}

// Imports `messages` as `name`.
absl::StatusOr<v1::SceneInfo> Import(client::Client& client,
                                     const std::vector<v1::SceneExportMessage>& messages,
                                     const std::string& name) {
  size_t next = 0;
  return client.ImportScene(
      [&](v1::SceneExportMessage* m) -> absl::StatusOr<bool> {
        if (next == messages.size()) return false;
        *m = messages[next++];
        return true;
      },
      name);
}

// An ImportScene call held open by the test: it sends what the test asks, when it asks.
struct OpenImport {
  explicit OpenImport(const std::shared_ptr<grpc::Channel>& channel)
      : stub(v1::Collide::NewStub(channel)) {
    context.set_deadline(std::chrono::system_clock::now() + seconds(120));
    writer = stub->ImportScene(&context, &response);
  }
  grpc::Status Finish() {
    writer->WritesDone();
    return writer->Finish();
  }

  std::unique_ptr<v1::Collide::Stub> stub;
  grpc::ClientContext context;
  v1::ImportSceneResponse response;
  std::unique_ptr<grpc::ClientWriter<v1::ImportSceneRequest>> writer;
};

bool IsRefused(const absl::Status& status, const std::string& flag) {
  return status.code() == absl::StatusCode::kResourceExhausted &&
         absl::StartsWith(status.message(), "streams: ") &&
         absl::StrContains(status.message(), flag);
}

TEST(SceneTransferLimits, ImportsPastMaxConcurrentImportsAreRefusedUntilOneEnds) {
  auto server = StartServer({"--max_concurrent_imports=2"}, /*metrics=*/true);
  ASSERT_NE(server, nullptr);
  std::unique_ptr<client::Client> client = server->NewClient();
  MakeScene(*client, "src", 100);
  auto messages = Export(*client, "src");
  ASSERT_TRUE(IsOk(messages));

  // Two imports held open (each has sent its header and waits).
  std::vector<std::unique_ptr<OpenImport>> open;
  for (int i = 0; i < 2; ++i) {
    open.push_back(std::make_unique<OpenImport>(client->channel()));
    v1::ImportSceneRequest header;
    *header.mutable_message() = messages->front();
    header.set_scene(absl::StrCat("held", i));
    ASSERT_TRUE(open.back()->writer->Write(header));
  }
  v1::GetServerStatsResponse stats =
      WaitForServerStats(*client, [](const auto& s) { return s.import_streams() == 2; });
  ASSERT_EQ(stats.import_streams(), 2u);
  // The third is refused at once, before it takes any memory.
  absl::StatusOr<v1::SceneInfo> third = Import(*client, *messages, "third");
  EXPECT_TRUE(IsRefused(third.status(), "--max_concurrent_imports")) << third.status();
  EXPECT_TRUE(HasError(client->GetScene("third").status(), absl::StatusCode::kNotFound, "scene"));
  stats = ServerStats(*client);
  EXPECT_EQ(stats.import_streams(), 2u);
  EXPECT_GE(stats.streams_refused(), 1u);
  // Exports are not imports: one runs meanwhile.
  EXPECT_TRUE(IsOk(Export(*client, "src")));

  auto samples = Scrape(server->metrics_port());
  ASSERT_TRUE(IsOk(samples));
  EXPECT_EQ(SampleValue(*samples, "collide_streams_open", {{"kind", "import"}}), 2.0);
  EXPECT_EQ(SampleValue(*samples, "collide_streams_refused_total", {{"kind", "import"}}), 1.0);
  EXPECT_EQ(SampleValue(*samples, "collide_streams_opened_total", {{"kind", "export"}}), 2.0);
  EXPECT_EQ(SampleValue(*samples, "collide_streams_open", {{"kind", "export"}}), 0.0);

  // The first held import ends (its stream stops before the trailer: nothing is imported);
  // its slot is free again.
  grpc::Status ended = open[0]->Finish();
  EXPECT_EQ(ended.error_code(), grpc::StatusCode::DATA_LOSS) << ended.error_message();
  stats = WaitForServerStats(*client, [](const auto& s) { return s.import_streams() == 1; });
  ASSERT_EQ(stats.import_streams(), 1u);
  auto fourth = Import(*client, *messages, "fourth");
  ASSERT_TRUE(IsOk(fourth));
  EXPECT_EQ(fourth->stats().body_count(), 100u);
  // The second one completes: every slot is free.
  for (size_t i = 1; i < messages->size(); ++i) {
    v1::ImportSceneRequest request;
    *request.mutable_message() = (*messages)[i];
    ASSERT_TRUE(open[1]->writer->Write(request));
  }
  EXPECT_TRUE(open[1]->Finish().ok());
  EXPECT_TRUE(IsOk(client->GetScene("held1")));
  EXPECT_TRUE(HasError(client->GetScene("held0").status(), absl::StatusCode::kNotFound, "scene"));
  stats = WaitForServerStats(*client, [](const auto& s) { return s.import_streams() == 0; });
  EXPECT_EQ(stats.import_streams(), 0u);
  EXPECT_EQ(stats.export_streams(), 0u);
}

// A stream's slot is free once its client has its status: streams opened back to back, each
// after the previous one ended, are never refused at a bound of one (before, the slot was freed
// only when the server's reactor was done, after the status reached the client).
TEST(SceneTransferLimits, AStreamThatEndedNeverHoldsItsSlotAgainstTheNext) {
  auto server = StartServer({"--max_concurrent_imports=1", "--max_streams=1"});
  ASSERT_NE(server, nullptr);
  std::unique_ptr<client::Client> client = server->NewClient();
  MakeScene(*client, "src", 10);
  auto messages = Export(*client, "src");
  ASSERT_TRUE(IsOk(messages));
  // An import refused for its content (the scene exists), an export, a query stream and an
  // update stream, in turn, many times.
  constexpr int kRounds = 100;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE(round);
    absl::StatusOr<v1::SceneInfo> refused = Import(*client, *messages, "src");
    ASSERT_EQ(refused.status().code(), absl::StatusCode::kAlreadyExists) << refused.status();
    ASSERT_TRUE(IsOk(Export(*client, "src")));
    auto queries = client->OpenQueryStream("src");
    ASSERT_TRUE(IsOk(queries));
    v1::QueryBatch batch;
    batch.set_scene("src");
    *batch.add_queries() = client::MakeRaycastQuery(
        1, client::MakeRaycast(MakeVec3(-5, 0, 0), MakeVec3(1, 0, 0), 100));
    auto answer = (*queries)->Run(batch);
    ASSERT_TRUE(IsOk(answer));
    ASSERT_TRUE(IsOk(client::BatchStatus(*answer)));
    ASSERT_TRUE(IsOk((*queries)->Finish()));
    auto writer = client->OpenUpdateStream("src", /*client_id=*/7);
    ASSERT_TRUE(IsOk(writer));
    v1::UpdateBatch update;
    update.set_scene("src");
    *update.add_ops() =
        client::MakeSetPoseOp(1, MakePose(MakeVec3(0, 0, static_cast<float>(round))));
    auto ack = (*writer)->Apply(update);
    ASSERT_TRUE(IsOk(ack));
    ASSERT_TRUE(IsOk(client::AckStatus(*ack)));
    ASSERT_TRUE(IsOk((*writer)->Finish()));
  }
}

TEST(SceneTransferLimits, ExportsAndImportsCountTowardMaxStreams) {
  auto server = StartServer({"--max_streams=2"});
  ASSERT_NE(server, nullptr);
  std::unique_ptr<client::Client> client = server->NewClient();
  MakeScene(*client, "src", 100);
  auto messages = Export(*client, "src");
  ASSERT_TRUE(IsOk(messages));
  std::vector<std::unique_ptr<OpenImport>> open;
  for (int i = 0; i < 2; ++i) open.push_back(std::make_unique<OpenImport>(client->channel()));
  ASSERT_EQ(WaitForServerStats(*client, [](const auto& s) { return s.import_streams() == 2; })
                .import_streams(),
            2u);
  // Both kinds are refused while the two streams are open.
  EXPECT_TRUE(IsRefused(Export(*client, "src").status(), "--max_streams"));
  EXPECT_TRUE(IsRefused(Import(*client, *messages, "copy").status(), "--max_streams"));
  auto updates = client->OpenUpdateStream("src", 0);
  if (updates.ok()) {
    EXPECT_TRUE(IsRefused((*updates)->Finish(), "--max_streams"));
  } else {
    EXPECT_TRUE(IsRefused(updates.status(), "--max_streams"));
  }
  for (auto& import : open) {
    EXPECT_EQ(import->Finish().error_code(), grpc::StatusCode::DATA_LOSS);
  }
  ASSERT_EQ(WaitForServerStats(*client, [](const auto& s) { return s.import_streams() == 0; })
                .import_streams(),
            0u);
  EXPECT_TRUE(IsOk(Import(*client, *messages, "copy")));
  EXPECT_TRUE(IsOk(Export(*client, "copy")));
}

TEST(SceneTransferLimits, AnExportWhoseClientStopsReadingIsCut) {
  auto server = StartServer({"--stream_stall_timeout_ms=500"});
  ASSERT_NE(server, nullptr);
  std::unique_ptr<client::Client> client = server->NewClient();
  // About 4 MB of chunks: far more than the stalled connection's 64 KiB window.
  MakeScene(*client, "src", 60000);
  auto stub = v1::Collide::NewStub(NewSmallWindowConnection(server->address(), 1));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(120));
  v1::ExportSceneRequest request;
  request.set_scene("src");
  auto stalled = stub->ExportScene(&context, request);
  v1::SceneExportMessage message;
  ASSERT_TRUE(stalled->Read(&message));
  ASSERT_TRUE(message.has_header());
  // The client reads nothing more: the watchdog ends the export.
  v1::GetServerStatsResponse stats = WaitForServerStats(
      *client, [](const auto& s) { return s.streams_stalled() == 1 && s.export_streams() == 0; });
  EXPECT_EQ(stats.streams_stalled(), 1u);
  EXPECT_EQ(stats.export_streams(), 0u);
  int chunks = 0;
  while (stalled->Read(&message)) {
    EXPECT_FALSE(message.has_trailer());
    ++chunks;
  }
  const grpc::Status status = stalled->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "stream: ")) << status.error_message();
  // A reading client still exports the whole scene.
  auto whole = Export(*client, "src");
  ASSERT_TRUE(IsOk(whole));
  EXPECT_TRUE(whole->back().has_trailer());
  EXPECT_EQ(whole->back().trailer().body_count(), 60000u);
  EXPECT_GT(static_cast<int>(whole->size()), chunks + 2);
}

TEST(SceneTransferLimits, AnImportWhoseClientStopsSendingIsCutAndLeavesNothing) {
  auto server = StartServer({"--stream_stall_timeout_ms=500"});
  ASSERT_NE(server, nullptr);
  std::unique_ptr<client::Client> client = server->NewClient();
  MakeScene(*client, "src", 100);
  auto messages = Export(*client, "src");
  ASSERT_TRUE(IsOk(messages));
  OpenImport stalled(client->channel());
  // The header and the first chunk, then nothing.
  for (int i = 0; i < 2; ++i) {
    v1::ImportSceneRequest request;
    *request.mutable_message() = (*messages)[i];
    if (i == 0) request.set_scene("copy");
    ASSERT_TRUE(stalled.writer->Write(request));
  }
  v1::GetServerStatsResponse stats = WaitForServerStats(
      *client, [](const auto& s) { return s.streams_stalled() == 1 && s.import_streams() == 0; });
  EXPECT_EQ(stats.streams_stalled(), 1u);
  EXPECT_EQ(stats.import_streams(), 0u);
  const grpc::Status status = stalled.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "stream: ")) << status.error_message();
  EXPECT_TRUE(absl::StrContains(status.error_message(), "sent no message"))
      << status.error_message();
  EXPECT_TRUE(HasError(client->GetScene("copy").status(), absl::StatusCode::kNotFound, "scene"));
  // An import that keeps sending is not cut.
  EXPECT_TRUE(IsOk(Import(*client, *messages, "copy")));
}

TEST(SceneTransferLimits, MaxConcurrentImportsAtItsExtremes) {
  struct Case {
    std::string flag;
    bool starts;
    bool imports;  // an import is accepted (else refused with `streams: `)
  };
  const std::string max32 = std::to_string(std::numeric_limits<uint32_t>::max());
  const std::string max64 = std::to_string(std::numeric_limits<uint64_t>::max());
  const std::vector<Case> cases = {
      {"--max_concurrent_imports=garbage", false, false},
      {"--max_concurrent_imports=", false, false},
      {"--max_concurrent_imports=-1", false, false},
      {"--max_concurrent_imports=1.5", false, false},
      {"--max_concurrent_imports=" + max64, false, false},
      {"--max_concurrent_imports=4294967296", false, false},
      {"--max_concurrent_imports=0", true, false},
      {"--max_concurrent_imports=1", true, true},
      {"--max_concurrent_imports=" + max32, true, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.flag);
    ServerConfig config;
    config.extra_flags = {c.flag};
    auto server = ServerProcess::Start(config);
    ASSERT_EQ(server.ok(), c.starts) << server.status();
    if (!c.starts) {
      EXPECT_TRUE(absl::StrContains(server.status().message(), "max_concurrent_imports"))
          << server.status();
      continue;
    }
    std::unique_ptr<client::Client> client = (*server)->NewClient();
    MakeScene(*client, "src", 10);
    auto messages = Export(*client, "src");
    ASSERT_TRUE(IsOk(messages));
    auto imported = Import(*client, *messages, "copy");
    if (c.imports) {
      EXPECT_TRUE(IsOk(imported));
    } else {
      EXPECT_TRUE(IsRefused(imported.status(), "--max_concurrent_imports")) << imported.status();
      EXPECT_TRUE(
          HasError(client->GetScene("copy").status(), absl::StatusCode::kNotFound, "scene"));
    }
  }
}

}  // namespace
}  // namespace collide::integration
