#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "support/server_process.h"

namespace collide::integration {

/// The haproxy binary on $PATH or in /usr/sbin (Debian's haproxy, which scripts/lib/setup.sh
/// installs); empty when there is none.
std::string FindHaproxy();

/// docker/haproxy.cfg (`template_text`) made to run here: its gRPC frontend bound to
/// 127.0.0.1:`port`, the stats frontend to 127.0.0.1:`stats_port`, and the `server shard-1` line
/// of each backend repeated once per address of `shards` as `shard-<i>` (1-based) with that
/// address and `id <i>` (every other word of the line kept), the template's other shard lines
/// dropped. An error when the template does not have those lines.
absl::StatusOr<std::string> HaproxyConfigFor(absl::string_view template_text, int port,
                                             int stats_port,
                                             const std::vector<std::string>& shards);

/// HAProxy as a child process (SIGKILLed if the test process dies) with the configuration
/// HaproxyConfigFor makes from docker/haproxy.cfg for `shards`, listening on 127.0.0.1:port().
class HaproxyProcess {
 public:
  /// Starts `binary` with the configuration for `shards` on a free port (`port` when not 0) and
  /// waits (up to 20 s) until it accepts connections.
  static absl::StatusOr<std::unique_ptr<HaproxyProcess>> Start(
      const std::string& binary, const std::string& template_path,
      const std::vector<std::string>& shards, int port = 0);
  HaproxyProcess(const HaproxyProcess&) = delete;
  HaproxyProcess& operator=(const HaproxyProcess&) = delete;
  /// Stops it (SIGTERM, then SIGKILL).
  ~HaproxyProcess();

  /// `127.0.0.1:<port>`.
  std::string address() const;
  /// The gRPC frontend's port.
  int port() const { return port_; }
  /// What HAProxy printed (its log and errors).
  std::string Logs() const;

 private:
  HaproxyProcess(int port, std::unique_ptr<testing::TempDir> dir)
      : port_(port), dir_(std::move(dir)) {}

  int port_;
  std::unique_ptr<testing::TempDir> dir_;
  pid_t pid_ = -1;
};

}  // namespace collide::integration
