#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"

namespace collide::integration {

/// A TCP proxy on 127.0.0.1 that forwards every connection to a target port, and can lose the
/// target's answers: after Freeze, the bytes the target sends on the connections open at that
/// moment are dropped (so a client never sees the acks of what the server applied). A
/// connection closes on both sides when either side closes.
class TcpProxy {
 public:
  /// Listens on 127.0.0.1:0 and forwards to 127.0.0.1:`target_port`.
  static absl::StatusOr<std::unique_ptr<TcpProxy>> Start(int target_port);
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;
  /// Closes the listener and every connection.
  ~TcpProxy();

  /// `127.0.0.1:<port>` to connect to.
  const std::string& address() const { return address_; }
  /// From now on, drops what the target sends on the connections open now.
  void Freeze();

 private:
  struct Connection {
    int client_fd;
    int target_fd;
    std::atomic<bool> frozen{false};
    std::thread pump;
  };

  TcpProxy(int listen_fd, int target_port);
  void AcceptLoop();
  void Pump(Connection* connection);

  const int listen_fd_;
  const int target_port_;
  std::string address_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::thread acceptor_;
};

}  // namespace collide::integration
