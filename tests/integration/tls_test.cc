// TLS: the server serves with --tls_cert/--tls_key, and with --tls_ca requires client
// certificates. Certificates are made at test time with the openssl command (the test is skipped
// where there is none): a CA, a server certificate for 127.0.0.1 / localhost, a client
// certificate.

#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "client/cpp/query_batcher.h"
#include "client/cpp/resilient_update_writer.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

std::string FindOpenssl() {
  for (const char* path : {"/usr/bin/openssl", "/usr/local/bin/openssl", "/bin/openssl"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

// Writes ca.pem, server.{pem,key}, client.{pem,key} into `dir`; false (with a message) on
// failure.
::testing::AssertionResult MakeCertificates(const std::string& openssl, const TempDir& dir) {
  std::ofstream(dir.File("server.ext")) << "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
  std::ofstream(dir.File("client.ext")) << "extendedKeyUsage=clientAuth\n";
  std::vector<std::vector<std::string>> steps = {
      {openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
       "-nodes", "-keyout", dir.File("ca.key"), "-out", dir.File("ca.pem"), "-days", "2", "-subj",
       "/CN=collide test CA"},
  };
  for (const char* who : {"server", "client"}) {
    std::string name = who;
    steps.push_back({openssl, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                     "-nodes", "-keyout", dir.File(name + ".key"), "-out", dir.File(name + ".csr"),
                     "-subj", "/CN=" + (name == "server" ? std::string("localhost") : name)});
    steps.push_back({openssl, "x509", "-req", "-in", dir.File(name + ".csr"), "-CA",
                     dir.File("ca.pem"), "-CAkey", dir.File("ca.key"), "-CAcreateserial", "-out",
                     dir.File(name + ".pem"), "-days", "2", "-extfile", dir.File(name + ".ext")});
  }
  for (const std::vector<std::string>& step : steps) {
    CommandResult result = RunCommand(step);
    if (result.exit_code != 0) {
      return ::testing::AssertionFailure() << step[1] << " failed: " << result.err;
    }
  }
  return ::testing::AssertionSuccess();
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    openssl_ = FindOpenssl();
    if (openssl_.empty()) GTEST_SKIP() << "no openssl command to make test certificates";
    ASSERT_TRUE(MakeCertificates(openssl_, certs_));
  }

  std::string Pem(const std::string& name) { return *client::ReadTextFile(certs_.File(name)); }

  std::unique_ptr<client::Client> Connect(const ServerProcess& server, bool tls,
                                          bool client_certificate,
                                          const std::string& server_name = "",
                                          const std::string& token = "") {
    client::ClientOptions options;
    options.tls_server_name = server_name;
    options.bearer_token = token;
    options.address = server.address();
    options.enable_http_proxy = false;
    options.default_deadline = absl::Seconds(5);
    options.use_tls = tls;
    if (tls) options.tls_root_cert_pem = Pem("ca.pem");
    if (client_certificate) {
      options.tls_client_cert_pem = Pem("client.pem");
      options.tls_client_key_pem = Pem("client.key");
    }
    return *client::Client::Connect(options);
  }

  std::string openssl_;
  TempDir certs_{"certs"};
};

TEST_F(TlsTest, ClientsThatVerifyTheServerGetAnswersAndPlaintextClientsDoNot) {
  ServerConfig config;
  config.extra_flags = {"--tls_cert=" + certs_.File("server.pem"),
                        "--tls_key=" + certs_.File("server.key")};
  auto server = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(server));
  auto secure = Connect(**server, /*tls=*/true, /*client_certificate=*/false);
  EXPECT_TRUE(IsOk(secure->CreateScene("arena")));
  auto scenes = secure->ListScenes();
  ASSERT_TRUE(IsOk(scenes));
  EXPECT_EQ(scenes->size(), 1u);
  auto plaintext = Connect(**server, /*tls=*/false, /*client_certificate=*/false);
  EXPECT_FALSE(plaintext->ListScenes().ok());

  // The CLI too, with --tls_ca.
  CommandResult cli = RunCommand({CliPath(), "--address=" + (*server)->address(),
                                  "--tls_ca=" + certs_.File("ca.pem"), "scene", "list"});
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_TRUE(absl::StartsWith(cli.out, "arena  version 0")) << cli.out;
}

TEST_F(TlsTest, WithTlsCaTheServerRequiresAClientCertificate) {
  ServerConfig config;
  config.extra_flags = {"--tls_cert=" + certs_.File("server.pem"),
                        "--tls_key=" + certs_.File("server.key"),
                        "--tls_ca=" + certs_.File("ca.pem")};
  auto server = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(server));
  auto anonymous = Connect(**server, /*tls=*/true, /*client_certificate=*/false);
  EXPECT_FALSE(anonymous->ListScenes().ok());
  auto known = Connect(**server, /*tls=*/true, /*client_certificate=*/true);
  EXPECT_TRUE(IsOk(known->ListScenes()));
}

TEST_F(TlsTest, TheServerNameOverrideIsWhatTheCertificateIsCheckedAgainst) {
  ServerConfig config;
  config.extra_flags = {"--tls_cert=" + certs_.File("server.pem"),
                        "--tls_key=" + certs_.File("server.key")};
  auto server = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(server));
  EXPECT_TRUE(IsOk(Connect(**server, true, false, "localhost")->ListScenes()));
  EXPECT_TRUE(HasError(Connect(**server, true, false, "elsewhere.example")->ListScenes().status(),
                       absl::StatusCode::kUnavailable, ""));
}

TEST_F(TlsTest, TheResilientWriterAndTheBatcherWorkOverTlsWithAToken) {
  ServerConfig config;
  config.token_file_contents = "admin-token admin\n";
  config.extra_flags = {"--tls_cert=" + certs_.File("server.pem"),
                        "--tls_key=" + certs_.File("server.key")};
  auto server = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(server));
  auto client = Connect(**server, true, false, "", "admin-token");
  ASSERT_TRUE(IsOk(client->CreateScene("arena")));
  auto writer = client::ResilientUpdateWriter::Open(client.get(), "arena");
  ASSERT_TRUE(IsOk(writer));
  v1::UpdateBatch batch;
  *batch.add_ops() = client::MakeUpsertOp(
      client::MakeBody(1, client::MakeSphere(1), client::MakePose(client::MakeVec3(0, 0, 5))));
  ASSERT_TRUE(IsOk((*writer)->Send(batch)));
  ASSERT_TRUE(IsOk((*writer)->Close(absl::Now() + absl::Seconds(10))));
  auto batcher = client::QueryBatcher::Open(client.get(), "arena");
  ASSERT_TRUE(IsOk(batcher));
  auto answer = (*batcher)->Add(client::MakeRaycastQuery(
      1, client::MakeRaycast(client::MakeVec3(0, 0, 0), client::MakeVec3(0, 0, 1), 10)));
  (*batcher)->Flush();
  auto result = answer.get();
  ASSERT_TRUE(IsOk(result));
  ASSERT_EQ(result->result.hits_size(), 1);
  EXPECT_EQ(result->result.hits(0).body_id(), 1u);
  // Without the token, the writer stops on UNAUTHENTICATED instead of retrying.
  auto anonymous = Connect(**server, true, false);
  auto refused = client::ResilientUpdateWriter::Open(anonymous.get(), "arena");
  ASSERT_TRUE(IsOk(refused));
  ASSERT_TRUE(IsOk((*refused)->Send(batch)));
  EXPECT_TRUE(HasError((*refused)->Flush(absl::Now() + absl::Seconds(10)),
                       absl::StatusCode::kUnauthenticated, ""));
}

}  // namespace
}  // namespace collide::integration
