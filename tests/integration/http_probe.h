#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/string_view.h"

namespace collide::integration {

/// What a raw HTTP/1.1 exchange got back.
struct HttpAnswer {
  /// False when nothing came back within the timeout (or the connection failed).
  bool answered = false;
  /// The status code of the status line (0 when there was none).
  int status = 0;
  /// The header lines, each ending in \r\n, without the status line.
  std::string headers;
  /// Everything after the header.
  std::string body;
  /// How long the answer took, from connecting to the server closing the connection.
  std::chrono::steady_clock::duration elapsed{};

  /// The value of header `name` (case-insensitive), or "" when absent.
  std::string Header(absl::string_view name) const;
};

/// Sends `request` (a whole request, written as is) to 127.0.0.1:`port` and reads until the
/// server closes the connection or `timeout` passes.
HttpAnswer HttpExchange(int port, absl::string_view request,
                        std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));

/// `METHOD path HTTP/1.1` with a Host header and an empty body (Content-Length: 0).
std::string HttpRequestLine(absl::string_view method, absl::string_view path);

/// Connections to 127.0.0.1 that each send `bytes` one byte a second, from a thread of their
/// own, each reopened as soon as the server closes it (so `per_port` stay open on each port all
/// along) or, with `silent`, connections that send nothing at all.
class SlowClients {
 public:
  SlowClients(std::vector<int> ports, int per_port, std::string bytes, bool silent = false);
  /// Closes every connection.
  ~SlowClients();
  SlowClients(const SlowClients&) = delete;
  SlowClients& operator=(const SlowClients&) = delete;

  /// Connections the server closed so far.
  int closed_by_server() const { return closed_by_server_.load(); }
  /// Connections open now.
  int open() const { return open_.load(); }

 private:
  void Run();

  const std::vector<int> ports_;
  const int per_port_;
  const std::string bytes_;
  const bool silent_;
  std::atomic<bool> stop_{false};
  std::atomic<int> closed_by_server_{0};
  std::atomic<int> open_{0};
  std::thread thread_;
};

}  // namespace collide::integration
