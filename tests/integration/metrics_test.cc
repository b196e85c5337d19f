// /metrics of a real collide-server (--metrics_address): a known workload through the real
// client, then the scraped exposition holds exactly its counts in the right series, and
// promtool accepts it; bad --metrics_* flags and a busy metrics port stop the start-up with a
// clear message.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_status.h"
#include "collide/version.h"
#include "gtest/gtest.h"
#include "integration/metrics_scrape.h"
#include "integration/metrics_workload.h"
#include "integration/test_util.h"
#include "support/ports.h"

namespace collide::integration {
namespace {

using client::MakePose;
using client::MakeSphere;
using client::MakeVec3;

// The labels of an rpc of collide.v1.Collide, as go-grpc-prometheus names them.
std::map<std::string, std::string> Rpc(const std::string& method, const std::string& type) {
  return {{"grpc_method", method}, {"grpc_service", "collide.v1.Collide"}, {"grpc_type", type}};
}

std::map<std::string, std::string> RpcCode(const std::string& method, const std::string& type,
                                           const std::string& code) {
  std::map<std::string, std::string> labels = Rpc(method, type);
  labels["grpc_code"] = code;
  return labels;
}

TEST(Metrics, TheExpositionCountsAKnownWorkloadExactly) {
  ServerConfig config;
  config.metrics = true;
  auto server = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(server));
  ASSERT_GT((*server)->metrics_port(), 0);
  EXPECT_TRUE(absl::StrContains(
      (*server)->Logs(),
      absl::StrCat("collide-server metrics on 127.0.0.1:", (*server)->metrics_port(), "\n")));

  // Before any call, every method's series exist at 0.
  auto before = Scrape((*server)->metrics_port());
  ASSERT_TRUE(IsOk(before));
  EXPECT_EQ(SampleValue(*before, "grpc_server_started_total", Rpc("Raycast", "unary")), 0.0);
  EXPECT_EQ(SampleValue(*before, "grpc_server_started_total", Rpc("QueryStream", "bidi_stream")),
            0.0);
  EXPECT_EQ(SampleValue(*before, "grpc_server_started_total", Rpc("Watch", "server_stream")), 0.0);
  EXPECT_EQ(
      SampleValue(*before, "grpc_server_handled_total", RpcCode("GetScene", "unary", "NOT_FOUND")),
      0.0);
  EXPECT_EQ(SampleValue(*before, "collide_queries_total", {{"kind", "region"}, {"mode", "any"}}),
            0.0);

  Workload done;
  RunWorkload(**server, &done);
  if (HasFatalFailure()) return;
  ASSERT_GT(done.hits, 0u);

  auto after = Scrape((*server)->metrics_port());
  ASSERT_TRUE(IsOk(after));
  const std::vector<Sample>& s = *after;
  // Per rpc.
  EXPECT_EQ(SampleValue(s, "grpc_server_started_total", Rpc("Raycast", "unary")), kUnaryRaycasts);
  EXPECT_EQ(SampleValue(s, "grpc_server_handled_total", RpcCode("Raycast", "unary", "OK")),
            kUnaryRaycasts);
  EXPECT_EQ(SampleValue(s, "grpc_server_msg_received_total", Rpc("Raycast", "unary")),
            kUnaryRaycasts);
  EXPECT_EQ(SampleValue(s, "grpc_server_msg_sent_total", Rpc("Raycast", "unary")), kUnaryRaycasts);
  EXPECT_EQ(SampleValue(s, "grpc_server_handling_seconds_count", Rpc("Raycast", "unary")),
            kUnaryRaycasts);
  EXPECT_EQ(SampleValue(s, "grpc_server_handling_seconds_bucket",
                        {{"grpc_method", "Raycast"},
                         {"grpc_service", "collide.v1.Collide"},
                         {"grpc_type", "unary"},
                         {"le", "+Inf"}}),
            kUnaryRaycasts);
  EXPECT_EQ(SampleValue(s, "grpc_server_started_total", Rpc("QueryStream", "bidi_stream")), 1.0);
  EXPECT_EQ(
      SampleValue(s, "grpc_server_handled_total", RpcCode("QueryStream", "bidi_stream", "OK")),
      1.0);
  EXPECT_EQ(SampleValue(s, "grpc_server_msg_received_total", Rpc("QueryStream", "bidi_stream")),
            kStreamBatches);
  EXPECT_EQ(SampleValue(s, "grpc_server_msg_sent_total", Rpc("QueryStream", "bidi_stream")),
            kStreamBatches);
  EXPECT_EQ(SampleValue(s, "grpc_server_msg_received_total", Rpc("UpdateStream", "bidi_stream")),
            kMoveBatches + 1);
  EXPECT_EQ(SampleValue(s, "grpc_server_msg_sent_total", Rpc("UpdateStream", "bidi_stream")),
            kMoveBatches + 1);
  EXPECT_EQ(SampleValue(s, "grpc_server_handled_total", RpcCode("GetScene", "unary", "NOT_FOUND")),
            1.0);
  EXPECT_EQ(SampleValue(s, "grpc_server_msg_sent_total", Rpc("UpsertBodies", "unary")), 1.0);

  // Queries.
  EXPECT_EQ(SampleValue(s, "collide_queries_total", {{"kind", "raycast"}, {"mode", "closest"}}),
            kUnaryRaycasts);
  EXPECT_EQ(SampleValue(s, "collide_queries_total", {{"kind", "overlap"}, {"mode", "all"}}),
            kStreamBatches * kQueriesPerBatch);
  EXPECT_EQ(SampleSum(s, "collide_queries_total"),
            kUnaryRaycasts + kStreamBatches * kQueriesPerBatch);
  EXPECT_EQ(SampleValue(s, "collide_query_hits_total"), static_cast<double>(done.hits));
  EXPECT_EQ(SampleValue(s, "collide_query_batches_total", {{"rpc", "Raycast"}}), kUnaryRaycasts);
  EXPECT_EQ(SampleValue(s, "collide_query_batches_total", {{"rpc", "QueryStream"}}),
            kStreamBatches);
  EXPECT_EQ(SampleValue(s, "collide_query_batches_total", {{"rpc", "Overlap"}}), 0.0);

  // Updates: the UpsertBodies call and the moves; the refused batch by its code.
  EXPECT_EQ(SampleValue(s, "collide_update_batches_total"), kMoveBatches + 1);
  EXPECT_EQ(SampleValue(s, "collide_update_ops_total", {{"op", "move"}}),
            kMoveBatches * kMovesPerBatch);
  EXPECT_EQ(SampleValue(s, "collide_update_ops_total", {{"op", "upsert"}}), kBodies);
  EXPECT_EQ(SampleValue(s, "collide_update_ops_total", {{"op", "remove"}}), 0.0);
  EXPECT_EQ(SampleValue(s, "collide_update_batches_rejected_total", {{"grpc_code", "NOT_FOUND"}}),
            1.0);
  EXPECT_EQ(SampleSum(s, "collide_update_batches_rejected_total"), 1.0);

  // Streams.
  EXPECT_EQ(SampleValue(s, "collide_streams_opened_total", {{"kind", "query"}}), 1.0);
  EXPECT_EQ(SampleValue(s, "collide_streams_opened_total", {{"kind", "update"}}), 1.0);
  EXPECT_EQ(SampleValue(s, "collide_streams_opened_total", {{"kind", "watch"}}), 0.0);
  EXPECT_EQ(SampleValue(s, "collide_streams_refused_total", {{"kind", "query"}}), 0.0);

  // The scene, as GetScene reports it.
  EXPECT_EQ(SampleValue(s, "collide_scene_bodies", {{"scene", "arena"}}), kBodies);
  EXPECT_EQ(SampleValue(s, "collide_scene_version", {{"scene", "arena"}}),
            static_cast<double>(done.version));
  EXPECT_TRUE(SampleValue(s, "collide_scene_memory_bytes", {{"scene", "arena"}}).value_or(0) > 0);
  EXPECT_TRUE(SampleValue(s, "collide_scene_log_bytes", {{"scene", "arena"}}).value_or(0) > 0);

  // The store (the default durability, always: every acknowledged write was fsynced).
  EXPECT_EQ(SampleValue(s, "collide_store_writable"), 1.0);
  EXPECT_GT(SampleValue(s, "collide_store_fsync_seconds_count").value_or(0), 0.0);
  EXPECT_GT(SampleValue(s, "collide_store_group_commit_records_sum").value_or(0), 0.0);
  EXPECT_TRUE(SampleValue(s, "collide_store_recovery_seconds").has_value());

  // The process and the build.
  EXPECT_GT(SampleValue(s, "process_resident_memory_bytes").value_or(0), 0.0);
  EXPECT_GT(SampleValue(s, "process_open_fds").value_or(0), 0.0);
  EXPECT_GT(SampleValue(s, "process_threads").value_or(0), 1.0);
  EXPECT_GT(SampleValue(s, "process_start_time_seconds").value_or(0), 1.6e9);
  EXPECT_EQ(SampleValue(s, "collide_build_info",
                        {{"build_type", kBuildType},
                         {"commit", kCommit[0] == '\0' ? "unknown" : kCommit},
                         {"version", kVersion}}),
            1.0);
}

TEST(Metrics, PromtoolAcceptsTheExposition) {
  const std::string promtool = FindOnPath("promtool");
  if (promtool.empty()) {
    GTEST_SKIP() << "promtool is not installed (scripts/setup.sh installs Debian's prometheus)";
  }
  ServerConfig config;
  config.metrics = true;
  auto server = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(server));
  Workload done;
  RunWorkload(**server, &done);
  if (HasFatalFailure()) return;
  auto body = HttpGet((*server)->metrics_port(), "/metrics");
  ASSERT_TRUE(IsOk(body));
  const std::string file = (*server)->dir().File("exposition.txt");
  {
    std::ofstream out(file);
    out << *body;
  }
  CommandResult result =
      RunCommand({"/bin/sh", "-c", absl::StrCat(promtool, " check metrics < ", file)});
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_EQ(result.out + result.err, "") << "promtool's lint found problems";
}

TEST(Metrics, ScenesPastTheBoundAreSummedIntoOther) {
  ServerConfig config;
  config.metrics = true;
  config.extra_flags = {"--metrics_max_scenes=2"};
  auto server = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(server));
  auto client = (*server)->NewClient();
  // Scenes d, c, b, a hold 4, 3, 2, 1 bodies: a and b keep their series, c and d are summed.
  for (int i = 0; i < 4; ++i) {
    const std::string name(1, static_cast<char>('d' - i));
    ASSERT_TRUE(IsOk(client->CreateScene(name)));
    std::vector<v1::Body> bodies;
    for (int b = 0; b < 4 - i; ++b) {
      bodies.push_back(client::MakeBody(static_cast<uint64_t>(b + 1), MakeSphere(1),
                                        MakePose(MakeVec3(3.0f * static_cast<float>(b), 0, 0))));
    }
    ASSERT_TRUE(IsOk(client->UpsertBodies(name, bodies)));
  }
  auto s = Scrape((*server)->metrics_port());
  ASSERT_TRUE(IsOk(s));
  EXPECT_EQ(SampleValue(*s, "collide_scene_bodies", {{"scene", "a"}}), 1.0);
  EXPECT_EQ(SampleValue(*s, "collide_scene_bodies", {{"scene", "b"}}), 2.0);
  EXPECT_EQ(SampleValue(*s, "collide_scene_bodies", {{"scene", "_other"}}), 7.0);
  EXPECT_FALSE(SampleValue(*s, "collide_scene_bodies", {{"scene", "c"}}).has_value());
  EXPECT_EQ(SampleSum(*s, "collide_scene_bodies"), 10.0);

  // 0: every scene is summed; the largest bound keeps every scene's own series.
  for (const auto& [flag, series] : std::vector<std::pair<std::string, size_t>>{
           {"--metrics_max_scenes=0", 1}, {"--metrics_max_scenes=4294967295", 4}}) {
    ASSERT_TRUE(IsOk((*server)->Stop(SIGTERM)));
    (*server)->config().extra_flags = {flag};
    ASSERT_TRUE(IsOk((*server)->Restart()));
    auto again = Scrape((*server)->metrics_port());
    ASSERT_TRUE(IsOk(again));
    size_t count = 0;
    for (const Sample& sample : *again) count += sample.name == "collide_scene_bodies";
    EXPECT_EQ(count, series) << flag;
    EXPECT_EQ(SampleSum(*again, "collide_scene_bodies"), 10.0) << flag;
  }
}

TEST(Metrics, OffByDefault) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(IsOk(server));
  EXPECT_EQ((*server)->metrics_port(), 0);
  EXPECT_FALSE(absl::StrContains((*server)->Logs(), "metrics on"));
}

TEST(Metrics, BadMetricsFlagsStopTheServerWithAClearMessage) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--metrics_address=garbage"}, "metrics_address: \"garbage\" is not host:port"},
      {{"--metrics_address=127.0.0.1:18446744073709551615"}, "the port is a number"},
      {{"--metrics_address=127.0.0.1:65536"}, "the port is a number"},
      {{"--metrics_address=127.0.0.1:-1"}, "the port is a number"},
      {{"--metrics_address=127.0.0.1:"}, "the port is a number"},
      {{"--metrics_address=:9464"}, "the host is"},
      {{"--metrics_address=999.0.0.1:0"}, "the host is"},
      {{"--metrics_address=[::1:0"}, "the host is"},
      {{"--metrics_address=0.0.0.0:0"},
       "metrics_address: refusing to serve 0.0.0.0:0 (not a loopback address) without "
       "--token_file"},
      {{"--metrics_max_scenes=-1"}, "metrics_max_scenes"},
      {{"--metrics_max_scenes=18446744073709551615"}, "metrics_max_scenes"},
      {{"--metrics_max_scenes=many"}, "metrics_max_scenes"},
      {{"--metrics_port_file=/tmp/never-written"}, "--metrics_port_file: needs --metrics_address"},
  };
  for (const auto& [flags, message] : cases) {
    ServerConfig config;
    config.extra_flags = flags;
    auto server = ServerProcess::Start(config);
    ASSERT_FALSE(server.ok()) << flags[0];
    EXPECT_TRUE(absl::StrContains(server.status().message(), message))
        << flags[0] << ": " << server.status().message();
    // Refused, not crashed.
    EXPECT_FALSE(absl::StrContains(server.status().message(), "signal")) << flags[0];
  }
}

TEST(Metrics, ANonLoopbackMetricsAddressNeedsATokenFileOrAllowInsecureRemote) {
  ServerConfig config;
  config.extra_flags = {"--metrics_address=0.0.0.0:0", "--allow_insecure_remote"};
  auto allowed = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(allowed));
  const std::string logs = (*allowed)->Logs();
  const size_t at = logs.find("collide-server metrics on 0.0.0.0:");
  ASSERT_NE(at, std::string::npos) << logs;
  const int port = std::atoi(logs.c_str() + at + std::strlen("collide-server metrics on 0.0.0.0:"));
  EXPECT_TRUE(IsOk(HttpGet(port, "/metrics")));

  config.extra_flags = {"--metrics_address=0.0.0.0:0"};
  config.token_file_contents = "secret reader\n";
  EXPECT_TRUE(IsOk(ServerProcess::Start(config)));
}

TEST(Metrics, AMetricsPortInUseIsAStartupError) {
  // Hold a listening socket on a port, then ask the server for it.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address = collide::testing::LoopbackAddress();
  ASSERT_EQ(bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const int port = ntohs(address.sin_port);

  ServerConfig config;
  config.extra_flags = {absl::StrCat("--metrics_address=127.0.0.1:", port)};
  auto server = ServerProcess::Start(config);
  close(fd);
  ASSERT_FALSE(server.ok());
  EXPECT_TRUE(absl::StrContains(server.status().message(),
                                absl::StrCat("metrics_address: cannot listen on 127.0.0.1:", port)))
      << server.status().message();
  EXPECT_TRUE(absl::StrContains(server.status().message(), "exited with 1"))
      << server.status().message();
}

}  // namespace
}  // namespace collide::integration
