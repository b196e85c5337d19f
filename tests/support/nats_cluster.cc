#include "support/nats_cluster.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "support/ports.h"

namespace collide::testing {
namespace {

bool Executable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

// The body of GET http://127.0.0.1:<port><path>, or empty when it does not answer.
std::string HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval timeout{.tv_sec = 2, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  std::string answer;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) {
    const std::string request = absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
        static_cast<ssize_t>(request.size())) {
      char buffer[4096];
      ssize_t n;
      while ((n = recv(fd, buffer, sizeof buffer, 0)) > 0) answer.append(buffer, n);
    }
  }
  close(fd);
  return answer;
}

// True when a /jsz answer names the JetStream meta group's leader ("meta_cluster": {...
// "leader": "n1" ...}).
bool HasMetaLeader(const std::string& jsz) {
  const size_t meta = jsz.find("\"meta_cluster\"");
  if (meta == std::string::npos) return false;
  size_t at = jsz.find("\"leader\"", meta);
  if (at == std::string::npos) return false;
  at = jsz.find('"', at + 8);  // the value's opening quote
  return at != std::string::npos && at + 1 < jsz.size() && jsz[at + 1] != '"';
}

}  // namespace

std::string FindNatsServer() {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path == nullptr ? "" : path, ':')) {
    if (dir.empty()) continue;
    std::string candidate = absl::StrCat(dir, "/nats-server");
    if (Executable(candidate)) return candidate;
  }
  return Executable("/usr/sbin/nats-server") ? "/usr/sbin/nats-server" : "";
}

absl::StatusOr<std::unique_ptr<NatsCluster>> NatsCluster::Start(int nodes) {
  std::unique_ptr<NatsCluster> cluster(new NatsCluster());
  cluster->binary_ = FindNatsServer();
  if (cluster->binary_.empty()) {
    return absl::FailedPreconditionError("no nats-server (Debian's nats-server package)");
  }
  cluster->nodes_.resize(nodes);
  for (Node& node : cluster->nodes_) {
    node.client_port = ReservePort();
    node.cluster_port = ReservePort();
    node.monitor_port = ReservePort();
  }
  std::vector<std::string> routes;
  for (const Node& node : cluster->nodes_) {
    routes.push_back(absl::StrCat("nats-route://127.0.0.1:", node.cluster_port));
  }
  for (int i = 0; i < nodes; ++i) {
    const Node& node = cluster->nodes_[i];
    std::ofstream config(cluster->dir_.File(absl::StrCat("n", i, ".conf")));
    config << "server_name: n" << i << "\n"
           << "listen: 127.0.0.1:" << node.client_port << "\n"
           << "http: 127.0.0.1:" << node.monitor_port << "\n"
           << "jetstream { store_dir: \"" << cluster->dir_.File(absl::StrCat("store", i))
           << "\" }\n";
    if (nodes > 1) {
      config << "cluster {\n  name: collide\n  listen: 127.0.0.1:" << node.cluster_port
             << "\n  routes: [" << absl::StrJoin(routes, ", ") << "]\n}\n";
    }
  }
  for (int i = 0; i < nodes; ++i) {
    if (absl::Status status = cluster->Launch(i); !status.ok()) return status;
  }
  if (absl::Status status = cluster->WaitHealthy(std::chrono::seconds(30)); !status.ok()) {
    return status;
  }
  return cluster;
}

absl::Status NatsCluster::Launch(int i) {
  const std::string config = dir_.File(absl::StrCat("n", i, ".conf"));
  const std::string log = dir_.File(absl::StrCat("n", i, ".log"));
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    execl(binary_.c_str(), binary_.c_str(), "-c", config.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  nodes_[i].pid = pid;
  nodes_[i].stopped = false;
  return absl::OkStatus();
}

NatsCluster::~NatsCluster() {
  for (Node& node : nodes_) {
    if (node.pid <= 0) continue;
    if (node.stopped) kill(node.pid, SIGCONT);
    kill(node.pid, SIGKILL);
    int status = 0;
    waitpid(node.pid, &status, 0);
  }
}

std::string NatsCluster::urls() const {
  std::vector<std::string> urls;
  for (const Node& node : nodes_) {
    urls.push_back(absl::StrCat("nats://127.0.0.1:", node.client_port));
  }
  return absl::StrJoin(urls, ",");
}

absl::Status NatsCluster::Signal(int i, int signal) {
  Node& node = nodes_[i];
  if (node.pid <= 0) return absl::FailedPreconditionError(absl::StrCat("node ", i, " is down"));
  if (signal == SIGKILL && node.stopped) kill(node.pid, SIGCONT);
  if (kill(node.pid, signal) != 0) return absl::InternalError("kill failed");
  if (signal == SIGSTOP) node.stopped = true;
  if (signal == SIGCONT) node.stopped = false;
  if (signal == SIGKILL || signal == SIGTERM) {
    int status = 0;
    waitpid(node.pid, &status, 0);
    node.pid = -1;
    node.stopped = false;
  }
  return absl::OkStatus();
}

absl::Status NatsCluster::Restart(int i) {
  if (nodes_[i].pid > 0) return absl::FailedPreconditionError("the node runs");
  return Launch(i);
}

absl::Status NatsCluster::WaitHealthy(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    bool all = true;
    for (const Node& node : nodes_) {
      if (node.pid <= 0 || node.stopped) continue;
      const std::string answer = HttpGet(node.monitor_port, "/healthz");
      if (!absl::StrContains(answer, "\"status\":\"ok\"") &&
          !absl::StrContains(answer, "\"status\": \"ok\"")) {
        all = false;
        break;
      }
      // /healthz answers ok before the JetStream meta group has a leader, and until it has one
      // every JetStream request gets "no responders": wait for the node to name one.
      if (nodes_.size() > 1 && !HasMetaLeader(HttpGet(node.monitor_port, "/jsz"))) {
        all = false;
        break;
      }
    }
    if (all) return absl::OkStatus();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::string logs;
  for (int i = 0; i < size(); ++i) absl::StrAppend(&logs, "\n--- node ", i, "\n", Logs(i));
  return absl::DeadlineExceededError(absl::StrCat("the NATS cluster is not healthy:", logs));
}

std::string NatsCluster::Logs(int i) const {
  std::ifstream in(dir_.File(absl::StrCat("n", i, ".log")));
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace collide::testing
