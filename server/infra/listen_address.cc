#include "server/infra/listen_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace collide {
namespace {

// The reason a failed bind() gives, in the operator's words.
std::string BindError(int error) {
  if (error == EADDRINUSE) return "the port is in use by another process";
  if (error == EADDRNOTAVAIL) return "not an address of this host";
  return std::strerror(error);
}

// The addresses `host` (no brackets; empty: every interface) resolves to for listening on
// `port`, or null with the reason.
addrinfo* Resolve(const std::string& host, const std::string& port, std::string* why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found) != 0) {
    *why = "the host does not resolve";
    return nullptr;
  }
  return found;
}

// `address` split into its host (brackets removed) and port text; false without a colon.
bool SplitHostPort(const std::string& address, std::string* host, std::string* port) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return false;
  *host = std::string(HostOf(address));
  if (absl::StartsWith(*host, "[") && absl::EndsWith(*host, "]")) {
    *host = host->substr(1, host->size() - 2);
  }
  *port = address.substr(colon + 1);
  return true;
}

void SetPort(sockaddr* address, int port) {
  if (address->sa_family == AF_INET) {
    reinterpret_cast<sockaddr_in*>(address)->sin_port = htons(static_cast<uint16_t>(port));
  } else if (address->sa_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(address)->sin6_port = htons(static_cast<uint16_t>(port));
  }
}

int PortOf(int fd) {
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) return 0;
  if (bound.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port);
}

}  // namespace

bool IsLoopbackAddress(absl::string_view address) {
  if (absl::StartsWith(address, "unix:") || absl::StartsWith(address, "unix-abstract:")) {
    return true;
  }
  absl::string_view host = HostOf(address);
  if (absl::EqualsIgnoreCase(host, "localhost")) return true;
  if (host == "[::1]" || host == "::1") return true;
  std::vector<absl::string_view> parts = absl::StrSplit(host, '.');
  if (parts.size() != 4) return false;
  for (absl::string_view part : parts) {
    int value = 0;
    if (!absl::SimpleAtoi(part, &value) || value < 0 || value > 255) return false;
  }
  return parts[0] == "127";
}

absl::string_view HostOf(absl::string_view address) {
  if (absl::StartsWith(address, "[")) {
    const size_t close = address.find(']');
    return close == absl::string_view::npos ? address : address.substr(0, close + 1);
  }
  const size_t colon = address.rfind(':');
  return colon == absl::string_view::npos ? address : address.substr(0, colon);
}

absl::Status RemoteRefused(absl::string_view flag, absl::string_view address) {
  return absl::FailedPreconditionError(
      absl::StrCat(flag, ": refusing to serve ", address,
                   " (not a loopback address) without --token_file; set --allow_insecure_remote "
                   "to serve it without authentication"));
}

absl::StatusOr<HttpAddress> ParseHttpAddress(absl::string_view address, bool allow_remote,
                                             absl::string_view flag) {
  auto invalid = [address, flag](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": \"", absl::CEscape(address), "\" is not host:port (", why, ")"));
  };
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos) return invalid("no port");
  HttpAddress parsed;
  parsed.host = std::string(address.substr(0, colon));
  const absl::string_view port = address.substr(colon + 1);
  uint32_t port_number = 0;
  if (port.empty() || port.size() > 5 || !absl::ascii_isdigit(port[0]) ||
      !absl::SimpleAtoi(port, &port_number) || port_number > 65535) {
    return invalid("the port is a number from 0 to 65535");
  }
  parsed.port = static_cast<int>(port_number);
  constexpr absl::string_view kHostForms =
      "the host is an IPv4 address, localhost or [an IPv6 address]";
  if (parsed.host.find('\0') != std::string::npos) return invalid(kHostForms);
  std::string numeric_host;
  if (absl::EqualsIgnoreCase(parsed.host, "localhost")) {
    numeric_host = "127.0.0.1";
  } else if (parsed.host.size() > 2 && parsed.host.front() == '[' && parsed.host.back() == ']') {
    in6_addr v6{};
    if (inet_pton(AF_INET6, parsed.host.substr(1, parsed.host.size() - 2).c_str(), &v6) != 1) {
      return invalid(kHostForms);
    }
    numeric_host = parsed.host;
  } else {
    in_addr v4{};
    if (inet_pton(AF_INET, parsed.host.c_str(), &v4) != 1) return invalid(kHostForms);
    numeric_host = parsed.host;
  }
  if (!allow_remote && !IsLoopbackAddress(absl::StrCat(numeric_host, ":0"))) {
    return RemoteRefused(flag, address);
  }
  parsed.bind = absl::StrCat(numeric_host, ":", parsed.port);
  return parsed;
}

std::string WhyCannotListen(const std::string& address) {
  if (absl::StartsWith(address, "unix")) return "see the log above";
  std::string host, port, why;
  if (!SplitHostPort(address, &host, &port)) return "not host:port";
  addrinfo* found = Resolve(host, port, &why);
  if (found == nullptr) return why;
  std::string reason = "see the log above";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    const int result = bind(fd, a->ai_addr, a->ai_addrlen);
    const int error = errno;
    close(fd);
    if (result == 0) continue;
    reason = BindError(error);
    break;
  }
  freeaddrinfo(found);
  return reason;
}

absl::StatusOr<PortReservation> PortReservation::Reserve(const std::string& address,
                                                         absl::string_view flag) {
  PortReservation reservation;
  reservation.address_ = address;
  if (absl::StartsWith(address, "unix")) return reservation;
  auto refused = [&](absl::string_view why) {
    return absl::UnavailableError(
        absl::StrCat(flag, ": cannot listen on ", address, " (", why, ")"));
  };
  std::string host, port_text, why;
  uint32_t port = 0;
  if (!SplitHostPort(address, &host, &port_text) || !absl::SimpleAtoi(port_text, &port) ||
      port > 65535) {
    return refused("not host:port");
  }
  addrinfo* found = Resolve(host, port_text, &why);
  if (found == nullptr) return refused(why);
  bool has_v4 = false;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) has_v4 |= a->ai_family == AF_INET;
  // Port 0: the first address picks a port and the others take the same one; should another
  // process hold that port on one of them, the whole reservation starts again.
  for (int attempt = 0; attempt < 16 && why.empty(); ++attempt) {
    int chosen = static_cast<int>(port);
    bool taken_elsewhere = false;
    for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
      const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      const int one = 1;
      // As gRPC binds: a port whose last connections are in TIME_WAIT (a server just killed)
      // can be bound again. The listen below is what keeps everyone else off it.
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      if (a->ai_family == AF_INET6 && has_v4) {
        // The IPv4 addresses are reserved by sockets of their own.
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
      }
      SetPort(a->ai_addr, chosen);
      if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 1) != 0) {
        const int error = errno;
        close(fd);
        if (port == 0 && chosen != 0 && error == EADDRINUSE) {
          taken_elsewhere = true;
        } else {
          why = BindError(error);
        }
        break;
      }
      reservation.sockets_.push_back(fd);
      if (chosen == 0) chosen = PortOf(fd);
    }
    if (!taken_elsewhere) {
      if (why.empty() && reservation.sockets_.empty()) why = "no socket could be opened";
      if (why.empty()) {
        reservation.address_ = absl::StrCat(HostOf(address), ":", chosen);
      }
      break;
    }
    reservation.Release();
    for (addrinfo* a = found; a != nullptr; a = a->ai_next) SetPort(a->ai_addr, 0);
  }
  freeaddrinfo(found);
  if (!why.empty() || reservation.sockets_.empty()) {
    reservation.Release();
    return refused(why.empty() ? "no free port" : why);
  }
  return reservation;
}

PortReservation::PortReservation(PortReservation&& other) noexcept
    : address_(std::move(other.address_)), sockets_(std::move(other.sockets_)) {
  other.sockets_.clear();
}

PortReservation& PortReservation::operator=(PortReservation&& other) noexcept {
  if (this != &other) {
    Release();
    address_ = std::move(other.address_);
    sockets_ = std::move(other.sockets_);
    other.sockets_.clear();
  }
  return *this;
}

PortReservation::~PortReservation() { Release(); }

void PortReservation::Release() {
  for (const int fd : sockets_) close(fd);
  sockets_.clear();
}

}  // namespace collide
