// A real Prometheus (Debian's prometheus binary) scrapes collide-server's /metrics every second
// while the known workload runs; once it has scraped after the workload, its HTTP query API
// answers the workload's counts.

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "integration/metrics_scrape.h"
#include "integration/metrics_workload.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

// How long Prometheus may take to start, and to scrape once more after the workload (it
// scrapes every second): generous bounds for a loaded machine, not expectations.
constexpr auto kReadyTimeout = std::chrono::seconds(60);
constexpr auto kScrapeTimeout = std::chrono::seconds(60);

std::string UrlEncode(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') {
      out.push_back(c);
    } else {
      absl::StrAppend(&out, "%", absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
    }
  }
  return out;
}

// The value of the first sample of an instant query's answer; nullopt when the answer holds
// none (or Prometheus does not answer).
std::optional<double> Query(int port, absl::string_view promql) {
  absl::StatusOr<std::string> body =
      HttpGet(port, absl::StrCat("/api/v1/query?query=", UrlEncode(promql)));
  if (!body.ok()) return std::nullopt;
  // {"status":"success","data":{"resultType":"vector","result":[{"metric":{...},
  // "value":[<time>,"<value>"]}]}}
  const size_t at = body->find("\"value\":[");
  if (at == std::string::npos) return std::nullopt;
  const size_t open = body->find('"', body->find(',', at));
  const size_t close = body->find('"', open + 1);
  if (open == std::string::npos || close == std::string::npos) return std::nullopt;
  double value = 0;
  if (!absl::SimpleAtod(body->substr(open + 1, close - open - 1), &value)) return std::nullopt;
  return value;
}

// A Prometheus server as a child process, killed with the test.
class PrometheusProcess {
 public:
  PrometheusProcess(const std::string& binary, const TempDir& dir, int port,
                    const std::string& target)
      : port_(port), log_(dir.File("prometheus.log")) {
    const std::string config = dir.File("prometheus.yml");
    std::ofstream(config) << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                          << "scrape_configs:\n  - job_name: collide\n"
                          << "    static_configs:\n      - targets: ['" << target << "']\n";
    pid_ = SpawnWithLog({binary, absl::StrCat("--config.file=", config),
                         absl::StrCat("--storage.tsdb.path=", dir.File("tsdb")),
                         absl::StrCat("--web.listen-address=127.0.0.1:", port), "--log.level=warn"},
                        log_);
  }
  ~PrometheusProcess() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
  }

  /// Waits until /-/ready answers 200.
  bool WaitReady() const {
    const auto deadline = std::chrono::steady_clock::now() + kReadyTimeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (HttpGet(port_, "/-/ready").ok()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  int port() const { return port_; }
  std::string Log() const {
    std::ifstream in(log_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  const int port_;
  const std::string log_;
  pid_t pid_ = -1;
};

TEST(Prometheus, ARealPrometheusScrapesTheWorkloadsCounts) {
  const std::string binary = FindOnPath("prometheus");
  if (binary.empty()) {
    GTEST_SKIP() << "prometheus is not installed (scripts/setup.sh installs Debian's prometheus)";
  }
  ServerConfig config;
  config.metrics = true;
  auto server = ServerProcess::Start(config);
  ASSERT_TRUE(IsOk(server));
  TempDir dir("prometheus");
  PrometheusProcess prometheus(binary, dir, FreePort(),
                               absl::StrCat("127.0.0.1:", (*server)->metrics_port()));
  ASSERT_TRUE(prometheus.WaitReady()) << prometheus.Log();

  Workload done;
  RunWorkload(**server, &done);
  if (HasFatalFailure()) return;
  const double finished =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();

  // A scrape that started after the workload ended sees all of it.
  const auto deadline = std::chrono::steady_clock::now() + kScrapeTimeout;
  bool scraped = false;
  while (!scraped && std::chrono::steady_clock::now() < deadline) {
    const std::optional<double> last = Query(prometheus.port(), "timestamp(up{job=\"collide\"})");
    scraped = last.has_value() && *last > finished &&
              Query(prometheus.port(), "up{job=\"collide\"}") == 1.0;
    if (!scraped) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_TRUE(scraped) << "no successful scrape after the workload\n" << prometheus.Log();

  const int port = prometheus.port();
  EXPECT_EQ(Query(port, "collide_queries_total{kind=\"raycast\",mode=\"closest\"}"),
            kUnaryRaycasts);
  EXPECT_EQ(Query(port, "collide_queries_total{kind=\"overlap\",mode=\"all\"}"),
            kStreamBatches * kQueriesPerBatch);
  EXPECT_EQ(Query(port, "sum(collide_queries_total)"),
            kUnaryRaycasts + kStreamBatches * kQueriesPerBatch);
  EXPECT_EQ(Query(port, "collide_query_hits_total"), static_cast<double>(done.hits));
  EXPECT_EQ(Query(port, "collide_query_batches_total{rpc=\"QueryStream\"}"), kStreamBatches);
  EXPECT_EQ(Query(port, "collide_update_batches_total"), kMoveBatches + 1);
  EXPECT_EQ(Query(port, "collide_update_ops_total{op=\"move\"}"), kMoveBatches * kMovesPerBatch);
  EXPECT_EQ(Query(port, "collide_update_batches_rejected_total{grpc_code=\"NOT_FOUND\"}"), 1.0);
  EXPECT_EQ(Query(port,
                  "grpc_server_handled_total{grpc_service=\"collide.v1.Collide\","
                  "grpc_method=\"Raycast\",grpc_type=\"unary\",grpc_code=\"OK\"}"),
            kUnaryRaycasts);
  EXPECT_EQ(Query(port, "grpc_server_msg_received_total{grpc_method=\"UpdateStream\"}"),
            kMoveBatches + 1);
  EXPECT_EQ(Query(port, "collide_scene_bodies{scene=\"arena\"}"), kBodies);
  EXPECT_EQ(Query(port, "collide_scene_version{scene=\"arena\"}"),
            static_cast<double>(done.version));
}

}  // namespace
}  // namespace collide::integration
