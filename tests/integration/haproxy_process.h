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

/// Where HaproxyConfigFor puts what the template binds on 0.0.0.0 and reads from its image.
struct HaproxyPorts {
  /// The gRPC frontend (the template's 0.0.0.0:8080).
  int grpc = 0;
  /// The stats page (0.0.0.0:8404).
  int stats = 0;
  /// The runtime API, `stats socket ... level admin` (0.0.0.0:9999).
  int admin = 0;
  /// The scene map's file (/usr/local/etc/haproxy/scenes.map).
  std::string map_file;
};

/// docker/haproxy.cfg (`template_text`) made to run here: its frontends, runtime API and map
/// moved to `ports` (all on 127.0.0.1), the `server shard-1` line of each backend that has one
/// repeated once per address of `shards` as `shard-<i>` (1-based) with that address and `id <i>`
/// (every other word of the line kept), `backend shard_1` repeated as `backend shard_<i>` per
/// shard (its server line as above), the template's other shard lines and backends dropped. An
/// error when the template does not have those lines.
absl::StatusOr<std::string> HaproxyConfigFor(absl::string_view template_text,
                                             const HaproxyPorts& ports,
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
  /// `127.0.0.1:<port>` of its runtime API (a collide-server's --router_admin).
  std::string admin_address() const;
  /// The scene map's file, as the configuration names it (a collide-server's --router_map).
  const std::string& map_file() const { return map_file_; }
  /// What HAProxy printed (its log and errors).
  std::string Logs() const;

 private:
  HaproxyProcess(int port, int admin_port, std::string map_file,
                 std::unique_ptr<testing::TempDir> dir)
      : port_(port),
        admin_port_(admin_port),
        map_file_(std::move(map_file)),
        dir_(std::move(dir)) {}

  int port_;
  int admin_port_;
  std::string map_file_;
  std::unique_ptr<testing::TempDir> dir_;
  pid_t pid_ = -1;
};

}  // namespace collide::integration
