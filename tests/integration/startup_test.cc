// How the server starts and reports itself: the port file and the first stdout line, the health
// service (no token needed), refusal of a non-loopback address without a token file, refusal of
// bad flags, every listener bound and checked before the data directory is opened, and --help.

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_status.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/health/v1/health.pb.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"
#include "support/ports.h"

namespace collide::integration {
namespace {

// Calls grpc.health.v1.Health/Check for `service` and returns the status field of the answer.
absl::StatusOr<grpc::health::v1::HealthCheckResponse::ServingStatus> HealthCheck(
    const std::shared_ptr<grpc::Channel>& channel, const std::string& service) {
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  const grpc::Status status =
      grpc::health::v1::Health::NewStub(channel)->Check(&context, request, &response);
  if (!status.ok()) return client::FromGrpcStatus(status);
  return response.status();
}

TEST(Startup, ThePortFileAndTheFirstStdoutLineNameTheBoundPort) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(IsOk(server));
  // The helper read the port from the port file; the server printed the same address.
  EXPECT_TRUE(absl::StartsWith((*server)->address(), "127.0.0.1:"));
  std::string logs = (*server)->Logs();
  EXPECT_TRUE(absl::StrContains(
      logs, absl::StrCat("collide-server listening on ", (*server)->address(), "\n")))
      << logs;
  auto client = (*server)->NewClient();
  EXPECT_TRUE(IsOk(client->ListScenes()));
}

TEST(Startup, TheHealthServiceAnswersWithoutAToken) {
  ServerConfig config;
  config.token_file_contents = "secret admin\n";
  auto server = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(server));
  auto client = (*server)->NewClient();  // No token.
  EXPECT_TRUE(HasError(client->ListScenes().status(), absl::StatusCode::kUnauthenticated, ""));
  auto overall = HealthCheck(client->channel(), "");
  ASSERT_TRUE(IsOk(overall));
  EXPECT_EQ(*overall, grpc::health::v1::HealthCheckResponse::SERVING);
  auto service = HealthCheck(client->channel(), "collide.v1.Collide");
  ASSERT_TRUE(IsOk(service));
  EXPECT_EQ(*service, grpc::health::v1::HealthCheckResponse::SERVING);
}

TEST(Startup, ANonLoopbackAddressNeedsATokenFileOrAllowInsecureRemote) {
  ServerConfig config;
  config.address = "0.0.0.0:0";
  auto refused = ServerProcess::Start(config);
  EXPECT_FALSE(refused.ok()) << "collide-server served on 0.0.0.0 without a token file";

  config.extra_flags = {"--allow_insecure_remote"};
  auto allowed = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(allowed));
  EXPECT_TRUE(IsOk((*allowed)->NewClient()->ListScenes()));

  config.extra_flags = {};
  config.token_file_contents = "secret reader\n";
  auto with_tokens = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(with_tokens));
  EXPECT_TRUE(IsOk((*with_tokens)->NewClient("secret")->ListScenes()));
}

TEST(Startup, BadFlagsStopTheServerBeforeItServes) {
  for (const char* flag :
       {"--durability=sometimes", "--log_level=loud", "--tls_cert=/nonexistent",
        // Replication and the router's map (every value also in service_options_test).
        "--durability=replicated", "--nats_url=127.0.0.1:4222", "--nats_url=nats://a:1,,",
        "--replication_lease_ms=18446744073709551615", "--replication_lease_ms=-1",
        "--replication_lease_ms=nan", "--replication_replicas=0", "--replication_replicas=6",
        "--replication_publish_timeout_ms=99", "--router_sync_ms=4294967296",
        "--router_admin=127.0.0.1:9999", "--advertise_address=nohost"}) {
    ServerConfig config;
    config.extra_flags = {flag};
    auto server = ServerProcess::Start(config);
    EXPECT_FALSE(server.ok()) << flag;
  }
  ServerConfig config;
  config.token_file_contents = "token-without-role\n";
  EXPECT_FALSE(ServerProcess::Start(config).ok()) << "a token line without a role";
  config.token_file_contents = "token superuser\n";
  EXPECT_FALSE(ServerProcess::Start(config).ok()) << "an unknown role";
}

// A port another process listens on (this test's socket), on 127.0.0.1.
class BusyPort {
 public:
  BusyPort() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = collide::testing::LoopbackAddress();
    bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
    listen(fd_, 1);
    socklen_t length = sizeof(address);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~BusyPort() { close(fd_); }
  BusyPort(const BusyPort&) = delete;
  BusyPort& operator=(const BusyPort&) = delete;
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Every file under `dir` with its size and modification time (nanoseconds).
std::map<std::string, std::pair<uintmax_t, int64_t>> Listing(const std::string& dir) {
  std::map<std::string, std::pair<uintmax_t, int64_t>> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    struct stat info {};
    stat(entry.path().c_str(), &info);
    files[entry.path().string()] = {
        entry.is_regular_file() ? entry.file_size() : 0,
        int64_t{info.st_mtim.tv_sec} * 1000000000 + info.st_mtim.tv_nsec};
  }
  return files;
}

// A start-up that must fail: the server is run with `flags` (and a data directory and port
// file of this test's, which must not exist afterwards) and must exit with `exit_code` before
// printing "listening", with `message` in its log.
void ExpectRefusedBeforeTheDataDirectory(const std::string& label, ServerConfig config,
                                         const std::string& message, int exit_code) {
  TempDir scratch("refused");
  const std::string data_dir = scratch.File("data");
  const std::string port_file = scratch.File("port");
  config.extra_flags.push_back(absl::StrCat("--data_dir=", data_dir));
  config.extra_flags.push_back(absl::StrCat("--port_file=", port_file));
  config.extra_flags.push_back("--log_level=info");
  const auto started = std::chrono::steady_clock::now();
  auto server = ServerProcess::Start(config);
  ASSERT_FALSE(server.ok()) << label << ": the server started";
  const std::string logs(server.status().message());
  EXPECT_TRUE(absl::StrContains(logs, absl::StrCat("exited with ", exit_code, " ")))
      << label << ": " << logs;
  EXPECT_TRUE(absl::StrContains(logs, message)) << label << ": " << logs;
  EXPECT_FALSE(absl::StrContains(logs, "listening")) << label << ": " << logs;
  EXPECT_FALSE(absl::StrContains(logs, "opened data directory")) << label << ": " << logs;
  EXPECT_FALSE(std::filesystem::exists(data_dir)) << label << ": the data directory was created";
  EXPECT_FALSE(std::filesystem::exists(port_file)) << label << ": the port file was written";
  // Refused at once, not after a timeout.
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10)) << label;
}

TEST(Startup, EveryListenerIsCheckedBeforeTheDataDirectoryIsOpened) {
  BusyPort busy;
  {
    ServerConfig config;
    config.extra_flags = {absl::StrCat("--metrics_address=", busy.address())};
    ExpectRefusedBeforeTheDataDirectory(
        "a busy metrics port", config,
        absl::StrCat("metrics_address: cannot listen on ", busy.address(),
                     " (the port is in use by another process)"),
        1);
  }
  {
    ServerConfig config;
    config.extra_flags = {absl::StrCat("--viewer_address=", busy.address())};
    ExpectRefusedBeforeTheDataDirectory(
        "a busy viewer port", config,
        absl::StrCat("viewer_address: cannot listen on ", busy.address(),
                     " (the port is in use by another process)"),
        1);
  }
  {
    ServerConfig config;
    config.address = busy.address();
    ExpectRefusedBeforeTheDataDirectory(
        "a busy gRPC port", config,
        absl::StrCat("UNAVAILABLE: address: cannot listen on ", busy.address(),
                     " (the port is in use by another process)"),
        1);
  }
  {
    // The viewer on the metrics port, gRPC on the viewer's: the listener bound second finds the
    // port taken by the first.
    const std::string shared = absl::StrCat("127.0.0.1:", FreePort());
    ServerConfig config;
    config.extra_flags = {"--metrics_address=" + shared, "--viewer_address=" + shared};
    ExpectRefusedBeforeTheDataDirectory("the viewer on the metrics port", config,
                                        "viewer_address: cannot listen on " + shared, 1);
    ServerConfig grpc_on_viewer;
    grpc_on_viewer.address = shared;
    grpc_on_viewer.extra_flags = {"--viewer_address=" + shared};
    ExpectRefusedBeforeTheDataDirectory("gRPC on the viewer port", grpc_on_viewer,
                                        "UNAVAILABLE: address: cannot listen on " + shared, 1);
  }
  {
    ServerConfig config;
    config.extra_flags = {"--viewer_address=0.0.0.0:0"};
    ExpectRefusedBeforeTheDataDirectory(
        "a non-loopback viewer without a token file", config,
        "viewer_address: refusing to serve 0.0.0.0:0 (not a loopback address) without "
        "--token_file",
        2);
  }
  {
    ServerConfig config;
    config.extra_flags = {"--metrics_address=[::]:0"};
    ExpectRefusedBeforeTheDataDirectory(
        "a non-loopback metrics address without a token file", config,
        "metrics_address: refusing to serve [::]:0 (not a loopback address)", 2);
  }
}

TEST(Startup, AListenerThatCannotBeBoundLeavesAnExistingDataDirectoryUntouched) {
  auto first = ServerProcess::Start();
  ASSERT_TRUE(IsOk(first));
  ASSERT_TRUE(IsOk((*first)->NewClient()->CreateScene("kept")));
  ASSERT_TRUE(IsOk((*first)->Stop(SIGTERM)));
  const auto before = Listing((*first)->data_dir());
  ASSERT_FALSE(before.empty());
  BusyPort busy;
  for (const std::string& flag : {absl::StrCat("--viewer_address=", busy.address()),
                                  absl::StrCat("--metrics_address=", busy.address())}) {
    ServerConfig config;
    config.extra_flags = {absl::StrCat("--data_dir=", (*first)->data_dir()), flag,
                          "--log_level=info"};
    auto refused = ServerProcess::Start(config);
    ASSERT_FALSE(refused.ok()) << flag;
    // Not opened (recovered, then closed), let alone changed.
    EXPECT_FALSE(absl::StrContains(refused.status().message(), "recovery finished"))
        << flag << ": " << refused.status().message();
    EXPECT_TRUE(Listing((*first)->data_dir()) == before) << flag << ": the data directory changed";
  }
  // The data is all there for the next start.
  ASSERT_TRUE(IsOk((*first)->Restart()));
  auto scenes = (*first)->NewClient()->ListScenes();
  ASSERT_TRUE(IsOk(scenes));
  EXPECT_EQ(scenes->size(), 1u);
}

TEST(Startup, HelpListsTheServersFlagsUnderTheirSourcePathAndVersionNamesTheBuild) {
  const CommandResult help = RunCommand({testing::ServerBinaryPath(), "--help"});
  EXPECT_EQ(help.exit_code, 1) << help.err;  // Abseil's --help exits 1
  const std::string text = help.out + help.err;
  EXPECT_TRUE(absl::StrContains(text, "Flags from server/main.cc:")) << text;
  // No path of the build (absolute, or relative to the build directory).
  EXPECT_FALSE(absl::StrContains(text, "Flags from /")) << text;
  EXPECT_FALSE(absl::StrContains(text, "Flags from ..")) << text;
  EXPECT_TRUE(absl::StrContains(text, "--max_fences_per_watch")) << text;
  const CommandResult full = RunCommand({testing::ServerBinaryPath(), "--helpfull"});
  for (absl::string_view line : absl::StrSplit(full.out + full.err, '\n')) {
    if (!absl::StartsWith(line, "  Flags from ")) continue;
    EXPECT_FALSE(absl::StrContains(line, "from /")) << line;
    EXPECT_FALSE(absl::StrContains(line, "from ..")) << line;
  }
  const CommandResult version = RunCommand({testing::ServerBinaryPath(), "--version"});
  EXPECT_TRUE(absl::StartsWith(version.out, "collide-server ")) << version.out;
  EXPECT_TRUE(absl::StrContains(version.out, " build)\n")) << version.out;
}

}  // namespace
}  // namespace collide::integration
