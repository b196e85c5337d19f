#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/cpp/client.h"
#include "collide/v1/collide.pb.h"
#include "gtest/gtest.h"
#include "support/server_process.h"

namespace collide::integration {

// The server process of tests/support, by the names the integration tests have always used.
using testing::ServerConfig;
using testing::ServerProcess;
using testing::TempDir;

/// The collide CLI binary built with the tests.
const char* CliPath();

/// Success when `status` is OK; the code and message otherwise.
::testing::AssertionResult IsOk(const absl::Status& status);
/// The same for a StatusOr.
template <typename T>
::testing::AssertionResult IsOk(const absl::StatusOr<T>& value) {
  return IsOk(value.status());
}

/// Success when `status` has `code` and its message starts with `path_prefix` (the contract's
/// field path; empty: any message).
::testing::AssertionResult HasError(const absl::Status& status, absl::StatusCode code,
                                    absl::string_view path_prefix);

/// Success when the server's copy of a body equals what was sent: id, shape, position, rotation
/// (absent = identity, compared after normalising within 1e-6), filter bits (absent = the
/// defaults 1 / all), user data and kind.
::testing::AssertionResult SameBody(const v1::Body& got, const v1::Body& sent);

/// Success when both lists hold the same bodies in the same order (see SameBody).
::testing::AssertionResult SameBodies(const std::vector<v1::Body>& got,
                                      const std::vector<v1::Body>& sent);

/// The bodies of a GetBodies answer as a vector.
std::vector<v1::Body> BodiesOf(const v1::GetBodiesResponse& response);

/// The trailer an honest exporter writes after `messages` (a header and chunks): the counts, and
/// the CRC-32C over the header, the chunks and the counts (collide.proto, SceneExportTrailer),
/// computed bit by bit, independently of the server's table-driven one.
v1::SceneExportMessage HonestTrailer(const std::vector<v1::SceneExportMessage>& messages);

/// `count` spheres, boxes and capsules with ids first_id, first_id + 1, ... and rotations drawn
/// from `seed` as clients write them: any direction, some about one axis only, some the quarter
/// turn (0, 0, 0.7071068, 0.7071068), lengths up to 5e-4 from 1 (the API accepts 1e-3).
std::vector<v1::Body> RandomlyRotatedBodies(int count, uint32_t seed, uint64_t first_id = 1);

/// What a command printed, and how it exited.
struct CommandResult {
  /// The exit code, or 128 + the signal that ended it.
  int exit_code = -1;
  /// Everything written to stdout.
  std::string out;
  /// Everything written to stderr.
  std::string err;
};
/// Runs `argv` (argv[0] a path) without a shell, with the test's environment plus `env`
/// (`NAME=value` each), and collects its output.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::vector<std::string>& env = {});

/// Starts `argv` (argv[0] a path) as a child process with stdout and stderr appended to
/// `log_path`, killed (SIGKILL) if the test process dies; returns its pid, or -1 when fork fails.
pid_t SpawnWithLog(std::vector<std::string> argv, const std::string& log_path);

/// A port for a server that must listen on a port known before it starts or keep its port across
/// restarts: support/ports.h's ReservePort (outside the ephemeral range, held by this process).
int FreePort();

/// A port on 127.0.0.1 that refuses every connection for as long as this object lives: it is
/// bound (without SO_REUSEADDR) and never listened on, so no other process can take it, as one
/// could take a killed server's port and answer in its place.
class RefusingPort {
 public:
  RefusingPort();
  ~RefusingPort();
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;
  /// `127.0.0.1:<port>`.
  const std::string& address() const { return address_; }

 private:
  int fd_ = -1;
  std::string address_;
};

/// GetServerStats of the server `client` talks to (a test failure when the call fails).
v1::GetServerStatsResponse ServerStats(client::Client& client);

/// Polls ServerStats until `done(stats)` holds (up to 30 s); returns the last stats.
template <typename F>
v1::GetServerStatsResponse WaitForServerStats(client::Client& client, F done) {
  v1::GetServerStatsResponse stats = ServerStats(client);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done(stats) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stats = ServerStats(client);
  }
  return stats;
}

}  // namespace collide::integration
