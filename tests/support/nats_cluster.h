#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "support/server_process.h"

namespace collide::testing {

/// The nats-server binary on $PATH or in /usr/sbin (Debian's nats-server, which
/// scripts/lib/setup.sh installs); empty when there is none.
std::string FindNatsServer();

/// A NATS cluster with JetStream of `nodes` nats-server processes on 127.0.0.1 (each on free
/// client, cluster and monitoring ports, its store in a temporary directory), children of this
/// process (SIGKILLed if it dies). Nodes can be killed, stopped and started again on the same
/// ports and store, as an operator's nodes would.
class NatsCluster {
 public:
  /// Starts the nodes and waits (up to 30 s) until every one reports JetStream healthy
  /// (/healthz). FAILED_PRECONDITION when there is no nats-server.
  static absl::StatusOr<std::unique_ptr<NatsCluster>> Start(int nodes = 3);
  NatsCluster(const NatsCluster&) = delete;
  NatsCluster& operator=(const NatsCluster&) = delete;
  /// Kills every node (SIGKILL; a SIGSTOPped one is continued first).
  ~NatsCluster();

  /// `nats://127.0.0.1:<port>` of every node, comma-separated (collide-server's --nats_url).
  std::string urls() const;
  int size() const { return static_cast<int>(nodes_.size()); }
  /// Sends `signal` to node `i` (SIGKILL waits for its exit; SIGSTOP and SIGCONT do not).
  absl::Status Signal(int i, int signal);
  /// Starts node `i` again (after SIGKILL) on its ports and store.
  absl::Status Restart(int i);
  /// Waits until every running node reports JetStream healthy.
  absl::Status WaitHealthy(std::chrono::milliseconds timeout);
  bool running(int i) const { return nodes_[i].pid > 0; }
  /// What node `i` printed.
  std::string Logs(int i) const;

 private:
  struct Node {
    int client_port = 0;
    int cluster_port = 0;
    int monitor_port = 0;
    pid_t pid = -1;
    bool stopped = false;
  };
  NatsCluster() : dir_("nats") {}
  absl::Status Launch(int i);

  TempDir dir_;
  std::string binary_;
  std::vector<Node> nodes_;
};

}  // namespace collide::testing
