#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/cpp/client.h"

namespace collide::testing {

/// A temporary directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class TempDir {
 public:
  /// Creates `collide-<prefix>-XXXXXX`; aborts the test binary if it cannot.
  explicit TempDir(const std::string& prefix = "it");
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  /// The directory's path.
  const std::string& path() const { return path_; }
  /// `path()/name`.
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// The collide-server binary of this build tree.
const char* ServerBinaryPath();

/// How to start the server.
struct ServerConfig {
  /// The server binary; empty: the collide-server of this build tree.
  std::string binary;
  /// Passes collide-server's --data_dir (in the scratch directory) and --log_level=warn; false
  /// for a binary that takes neither (the bench's echo server).
  bool collide_server_flags = true;
  /// Token file contents (see the contract); empty: no auth.
  std::string token_file_contents;
  /// The --address to listen on; its port should be 0. Clients connect to 127.0.0.1 either way.
  std::string address = "127.0.0.1:0";
  /// More flags, `--name=value` each (for example `--max_batch_ops=100`).
  std::vector<std::string> extra_flags;
  /// Serves /metrics on 127.0.0.1, port 0 (--metrics_address, --metrics_port_file); the port is
  /// ServerProcess::metrics_port().
  bool metrics = false;
  /// When not 0, the server runs with RLIMIT_FSIZE at this many bytes: a write past it fails
  /// (EFBIG), as on a full disk.
  uint64_t file_size_limit_bytes = 0;
};

/// The real collide-server binary (or ServerConfig::binary) run as a child process on 127.0.0.1
/// with port 0, its data in a temporary directory. The bound port is read from the --port_file the
/// server writes once serving. The server can be stopped (SIGTERM or SIGKILL) and started again on
/// the same data. The child gets SIGKILL when the thread that started it exits (so a crashed test
/// leaves no server behind): start and restart it from the test's main thread.
class ServerProcess {
 public:
  /// Starts the server and waits (up to 20 s) until it serves.
  static absl::StatusOr<std::unique_ptr<ServerProcess>> Start(ServerConfig config = {});
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  /// Stops a running server with SIGTERM (SIGKILL if it does not exit in time).
  ~ServerProcess();

  /// `127.0.0.1:<port>` of the running server.
  const std::string& address() const { return address_; }
  /// The port of the running server's /metrics (ServerConfig::metrics); 0 without.
  int metrics_port() const { return metrics_port_; }
  /// The data directory (kept across restarts).
  std::string data_dir() const { return dir_.File("data"); }
  /// The scratch directory the server's files live in.
  const TempDir& dir() const { return dir_; }
  /// True while the child runs.
  bool running() const { return pid_ > 0; }
  /// The child's process id (-1 when it is not running).
  pid_t pid() const { return pid_; }
  /// The child's resident set size in bytes (VmRSS in /proc/<pid>/status); 0 when it is not
  /// running.
  uint64_t RssBytes() const;
  /// The child's peak resident set size since it started, in bytes (VmHWM); 0 when it is not
  /// running.
  uint64_t PeakRssBytes() const;

  /// Sends `signal` and waits (up to 20 s, then SIGKILL) for the exit. Returns the exit code, or
  /// 128 + signal number when a signal ended it.
  absl::StatusOr<int> Stop(int signal);
  /// Starts the server again on the same data directory (after Stop), possibly on another port.
  absl::Status Restart();
  /// Starts the server again on the same data directory and the same port as before (after
  /// Stop), so that clients holding the old address reconnect to it.
  absl::Status RestartOnSamePort();
  /// The configuration the next Restart uses.
  ServerConfig& config() { return config_; }

  /// A client of this server: the token given, no proxy, a 10 s deadline per unary call.
  std::unique_ptr<client::Client> NewClient(const std::string& token = "") const;
  /// The server's stderr and stdout so far (for failure messages).
  std::string Logs() const;

 private:
  explicit ServerProcess(ServerConfig config);
  // Starts the child listening on `address`.
  absl::Status Launch(const std::string& address);
  // A `<field>   <n> kB` line of /proc/<pid>/status (`field` with its colon), in bytes; 0 when
  // the child is not running.
  uint64_t StatusBytes(absl::string_view field) const;

  ServerConfig config_;
  TempDir dir_;
  pid_t pid_ = -1;
  std::string address_;
  int metrics_port_ = 0;
  int launches_ = 0;
};

}  // namespace collide::testing
