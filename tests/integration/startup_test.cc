// How the server starts and reports itself: the port file and the first stdout line, the health
// service (no token needed), refusal of a non-loopback address without a token file, and
// refusal of bad flags.

#include <chrono>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/cpp/client.h"
#include "client/cpp/grpc_status.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/health/v1/health.pb.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"

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
