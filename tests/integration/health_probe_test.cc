// collide-health-probe (the container HEALTHCHECK) against the real server: exit 0 and
// SERVING while the server serves, exit 1 with the reason otherwise.

#include <csignal>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

CommandResult Probe(const std::vector<std::string>& flags) {
  std::vector<std::string> argv = {COLLIDE_HEALTH_PROBE_PATH};
  argv.insert(argv.end(), flags.begin(), flags.end());
  return RunCommand(argv);
}

TEST(HealthProbe, ExitsZeroWhenTheServerAndItsServiceAreServing) {
  ServerConfig config;
  config.token_file_contents = "secret admin\n";  // the health service needs no token
  auto server = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(server));
  const std::string address = (*server)->address();
  CommandResult whole = Probe({"--address=" + address, "--timeout=5s"});
  EXPECT_EQ(whole.exit_code, 0) << whole.out << whole.err;
  EXPECT_EQ(whole.out, absl::StrCat("server at ", address, ": SERVING\n"));
  CommandResult service =
      Probe({"--address=" + address, "--service=collide.v1.Collide", "--timeout=5s"});
  EXPECT_EQ(service.exit_code, 0) << service.out << service.err;
  EXPECT_EQ(service.out, absl::StrCat("collide.v1.Collide at ", address, ": SERVING\n"));
}

TEST(HealthProbe, ExitsOneForAnUnknownServiceOrAStoppedServer) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(IsOk(server));
  const std::string address = (*server)->address();
  CommandResult unknown = Probe({"--address=" + address, "--service=nope", "--timeout=5s"});
  EXPECT_EQ(unknown.exit_code, 1) << unknown.out << unknown.err;
  EXPECT_TRUE(absl::StrContains(unknown.out, "NOT_FOUND")) << unknown.out;

  auto stopped = (*server)->Stop(SIGTERM);
  ASSERT_TRUE(IsOk(stopped));
  CommandResult down = Probe({"--address=" + address, "--timeout=5s"});
  EXPECT_EQ(down.exit_code, 1) << down.out << down.err;
  EXPECT_TRUE(absl::StrContains(down.out, "health check failed")) << down.out;
}

TEST(HealthProbe, ExitsOneOnBadFlagsNeverTwo) {
  // Docker reserves exit code 2; every failure of the probe is 1.
  for (const char* flag : {"--timeout=0s", "--timeout=soon", "--no_such_flag", "--tls_cert=x.pem",
                           "--tls_ca=/nonexistent/ca.pem"}) {
    CommandResult result = Probe({"--address=127.0.0.1:1", flag});
    EXPECT_EQ(result.exit_code, 1) << flag << ": " << result.out << result.err;
  }
}

TEST(HealthProbe, HelpListsItsFlagsUnderTheirSourcePathAndVersionNamesTheBuild) {
  CommandResult help = Probe({"--help"});
  const std::string text = help.out + help.err;
  EXPECT_TRUE(absl::StrContains(text, "Flags from server/health_probe/main.cc:")) << text;
  EXPECT_FALSE(absl::StrContains(text, "Flags from /")) << text;
  EXPECT_FALSE(absl::StrContains(text, "Flags from ..")) << text;
  CommandResult version = Probe({"--version"});
  EXPECT_TRUE(absl::StartsWith(version.out, "collide-health-probe ")) << version.out;
  EXPECT_TRUE(absl::StrContains(version.out, " build)\n")) << version.out;
}

}  // namespace
}  // namespace collide::integration
