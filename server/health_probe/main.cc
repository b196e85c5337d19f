// collide-health-probe: asks a server's grpc.health.v1.Health service whether it serves, and
// exits 0 only when the answer is SERVING (1 otherwise), printing one line about the outcome:
// the container HEALTHCHECK of docker/Dockerfile. The health service needs no token.

#include <grpc/grpc.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "base/program_flags.h"
#include "client/health/health_check.h"
#include "collide/version.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

ABSL_FLAG(std::string, address, "127.0.0.1:50051", "The server's address host:port.");
ABSL_FLAG(std::string, service, "",
          "The service whose status to ask for; empty: the whole server (collide-server also "
          "answers for collide.v1.Collide).");
ABSL_FLAG(absl::Duration, timeout, absl::Seconds(2),
          "How long to wait for the answer, connection included (e.g. 2s, 500ms).");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM CA certificates: connect with TLS and verify the server's certificate against "
          "them.");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM client certificate chain (with --tls_key), for a server that requires client "
          "certificates.");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert.");
ABSL_FLAG(std::string, tls_server_name, "",
          "The name to verify the server's certificate against, when not the host of --address.");

namespace collide {
namespace {

// Exit codes: Docker reads 0 as healthy and 1 as unhealthy (and reserves 2).
constexpr int kHealthy = 0;
constexpr int kUnhealthy = 1;

bool ReadFile(const std::string& path, std::string* contents) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  *contents = text.str();
  return static_cast<bool>(in) || in.eof();
}

int Main() {
  const std::string address = absl::GetFlag(FLAGS_address);
  const absl::Duration timeout = absl::GetFlag(FLAGS_timeout);
  if (timeout <= absl::ZeroDuration()) {
    std::fprintf(stderr, "--timeout: must be > 0\n");
    return kUnhealthy;
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
  const std::string ca = absl::GetFlag(FLAGS_tls_ca);
  const std::string cert = absl::GetFlag(FLAGS_tls_cert);
  const std::string key = absl::GetFlag(FLAGS_tls_key);
  if (!ca.empty() || !cert.empty() || !key.empty()) {
    if (ca.empty() || cert.empty() != key.empty()) {
      std::fprintf(stderr, "--tls_ca is needed for TLS; --tls_cert and --tls_key go together\n");
      return kUnhealthy;
    }
    grpc::SslCredentialsOptions ssl;
    for (const auto& [flag, path, out] : {std::tuple{"--tls_ca", ca, &ssl.pem_root_certs},
                                          std::tuple{"--tls_cert", cert, &ssl.pem_cert_chain},
                                          std::tuple{"--tls_key", key, &ssl.pem_private_key}}) {
      if (!path.empty() && !ReadFile(path, out)) {
        std::fprintf(stderr, "%s: cannot read %s\n", flag, path.c_str());
        return kUnhealthy;
      }
    }
    credentials = grpc::SslCredentials(ssl);
    if (!absl::GetFlag(FLAGS_tls_server_name).empty()) {
      args.SetSslTargetNameOverride(absl::GetFlag(FLAGS_tls_server_name));
    }
  }
  const std::string service = absl::GetFlag(FLAGS_service);
  const char* const subject = service.empty() ? "server" : service.c_str();
  absl::StatusOr<ServingStatus> status =
      CheckHealth(grpc::CreateCustomChannel(address, credentials, args), service, timeout);
  if (!status.ok()) {
    std::printf("%s at %s: health check failed: %s\n", subject, address.c_str(),
                status.status().ToString().c_str());
    return kUnhealthy;
  }
  std::printf("%s at %s: %s\n", subject, address.c_str(), ServingStatusName(*status).c_str());
  return *status == ServingStatus::kServing ? kHealthy : kUnhealthy;
}

}  // namespace
}  // namespace collide

int main(int argc, char** argv) {
  collide::ParseProgramFlags(
      argc, argv,
      {.name = "collide-health-probe",
       .usage = "exits 0 when the collide server at --address reports SERVING through "
                "grpc.health.v1, 1 otherwise.",
       .flags_file = "server/health_probe/main.cc",
       .version = collide::kVersionLine});
  // gRPC shut down here, on this thread, before exit: see client/cpp/grpc_runtime.h.
  grpc_init();
  int code = collide::Main();
  grpc_shutdown_blocking();
  return code;
}
