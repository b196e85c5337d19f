// How the server starts and reports itself: the port file and the first stdout line, the health
// service (no token needed), refusal of a non-loopback address without a token file, and
// refusal of bad flags.

#include <future>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_status.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

// grpc.health.v1.HealthCheckResponse.ServingStatus.
constexpr int kServing = 1;

// Calls grpc.health.v1.Health/Check for `service` (encoded by hand: field 1, a string) and
// returns the status field of the answer.
absl::StatusOr<int> HealthCheck(const std::shared_ptr<grpc::Channel>& channel,
                                const std::string& service) {
  std::string request;
  if (!service.empty()) {
    request = absl::StrCat(std::string(1, '\x0a'),
                           std::string(1, static_cast<char>(service.size())), service);
  }
  grpc::Slice slice(request);
  grpc::ByteBuffer request_buffer(&slice, 1);
  grpc::ByteBuffer response_buffer;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::GenericStub stub(channel);
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request_buffer,
                 &response_buffer, [&](grpc::Status status) { done.set_value(status); });
  grpc::Status status = done.get_future().get();
  if (!status.ok()) return client::FromGrpcStatus(status);
  grpc::Slice answer;
  if (!response_buffer.TrySingleSlice(&answer).ok() &&
      !response_buffer.DumpToSingleSlice(&answer).ok()) {
    return absl::DataLossError("health: unreadable answer");
  }
  std::string bytes(reinterpret_cast<const char*>(answer.begin()), answer.size());
  // An empty message is status 0 (UNKNOWN); otherwise field 1 as a one-byte varint.
  if (bytes.empty()) return 0;
  if (bytes.size() != 2 || bytes[0] != '\x08') return absl::DataLossError("health: unexpected");
  return static_cast<int>(bytes[1]);
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
  EXPECT_EQ(*overall, kServing);
  auto service = HealthCheck(client->channel(), "collide.v1.Collide");
  ASSERT_TRUE(IsOk(service));
  EXPECT_EQ(*service, kServing);
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
       {"--durability=sometimes", "--log_level=loud", "--tls_cert=/nonexistent"}) {
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

}  // namespace
}  // namespace collide::integration
