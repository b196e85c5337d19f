#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace collide {

/// True when `address` (`host:port`, `[v6]:port`, `unix:...`) can only be reached from this
/// machine: localhost, 127.0.0.0/8, ::1 or a unix socket.
bool IsLoopbackAddress(absl::string_view address);

/// `address` without its port: `host` of `host:port`, `[v6]` of `[v6]:port`.
absl::string_view HostOf(absl::string_view address);

/// The refusal of a non-loopback `address` for `flag` when no token file protects it:
/// FAILED_PRECONDITION `flag: refusing to serve ADDRESS (not a loopback address) without
/// --token_file; ...`.
absl::Status RemoteRefused(absl::string_view flag, absl::string_view address);

/// A checked address of an HTTP listener (--metrics_address, --viewer_address).
struct HttpAddress {
  /// The host as given (`127.0.0.1`, `localhost`, `[::1]`, `0.0.0.0`, ...).
  std::string host;
  /// 0 picks a free port.
  int port = 0;
  /// The form the HTTP server binds: a numeric host (`localhost` is 127.0.0.1) and the port.
  std::string bind;
};

/// Parses `address`, `host:port`: the host an IPv4 address, `localhost` or a bracketed IPv6
/// address, the port 0 to 65535 in decimal. INVALID_ARGUMENT `flag: ...` otherwise. A host that
/// is not a loopback one is refused (FAILED_PRECONDITION, RemoteRefused) unless `allow_remote`
/// (a token file or --allow_insecure_remote, as for the gRPC address).
absl::StatusOr<HttpAddress> ParseHttpAddress(absl::string_view address, bool allow_remote,
                                             absl::string_view flag);

/// Why `address` cannot be listened on, found by binding it with a plain socket: "the port is
/// in use by another process", "not an address of this host", "the host does not resolve", or
/// the system's reason.
std::string WhyCannotListen(const std::string& address);

/// The gRPC address held from before the data directory is opened until the gRPC server binds
/// it: every address its host resolves to is bound and listened on (with SO_REUSEADDR, as gRPC
/// binds, so a port left in TIME_WAIT by a server just killed can be taken again; the listening
/// socket keeps every other process off the port) by a plain socket that accepts nothing, and
/// port 0 is resolved to one free port for all of them. A client that connects meanwhile waits in
/// the backlog and is reset at Release(), which closes the sockets just before the gRPC server
/// binds the same port. A `unix:` address is passed through unreserved.
class PortReservation {
 public:
  /// Binds `address` (`host:port`, `[v6]:port`). UNAVAILABLE `flag: cannot listen on ADDRESS
  /// (why)` when a port is in use or the host is not this machine's.
  static absl::StatusOr<PortReservation> Reserve(const std::string& address,
                                                 absl::string_view flag);
  PortReservation(PortReservation&& other) noexcept;
  PortReservation& operator=(PortReservation&& other) noexcept;
  PortReservation(const PortReservation&) = delete;
  PortReservation& operator=(const PortReservation&) = delete;
  /// Release()s.
  ~PortReservation();

  /// The address to bind: the host as given with the reserved port (`address` for `unix:`).
  const std::string& address() const { return address_; }
  /// Closes the reserving sockets (idempotent).
  void Release();

 private:
  PortReservation() = default;

  std::string address_;
  std::vector<int> sockets_;
};

}  // namespace collide
