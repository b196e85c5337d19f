// PortReservation: the gRPC address held from before the data directory is opened until the
// server binds it (nothing else can take the port meanwhile, port 0 becomes one port for every
// address of the host), and its refusals.

#include "server/infra/listen_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace collide {
namespace {

// Binds (and listens on) `port` of `host` (IPv4 or IPv6, numeric) the way gRPC does, with
// SO_REUSEADDR; the socket, or -1 with errno set when the bind fails.
int BindLikeGrpc(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos;
  const int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  int result = -1;
  if (v6) {
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    sockaddr_in6 address{};
    address.sin6_family = AF_INET6;
    address.sin6_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET6, host.c_str(), &address.sin6_addr);
    result = bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  } else {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, host.c_str(), &address.sin_addr);
    result = bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  }
  if (result != 0 || listen(fd, 1) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int PortOf(const std::string& address) {
  int port = 0;
  EXPECT_TRUE(absl::SimpleAtoi(address.substr(address.rfind(':') + 1), &port)) << address;
  return port;
}

TEST(PortReservation, HoldsAPickedPortUntilReleased) {
  absl::StatusOr<PortReservation> reserved = PortReservation::Reserve("127.0.0.1:0", "address");
  ASSERT_TRUE(reserved.ok()) << reserved.status();
  const int port = PortOf(reserved->address());
  ASSERT_GT(port, 0);
  EXPECT_EQ(reserved->address(), absl::StrCat("127.0.0.1:", port));
  // Nobody can take it meanwhile, not even with SO_REUSEADDR as gRPC binds.
  EXPECT_EQ(BindLikeGrpc("127.0.0.1", port), -1);
  reserved->Release();
  const int fd = BindLikeGrpc("127.0.0.1", port);
  EXPECT_GE(fd, 0) << "the released port could not be bound";
  if (fd >= 0) close(fd);
}

TEST(PortReservation, TakesAPortLeftInTimeWaitByAServerThatWasKilled) {
  // A server's side of a connection it closed first stays in TIME_WAIT on its port; a restart
  // on the same port (tests' RestartOnSamePort, a supervisor's) must still get it.
  const int listener = BindLikeGrpc("127.0.0.1", 0);
  ASSERT_GE(listener, 0);
  sockaddr_in bound{};
  socklen_t length = sizeof(bound);
  getsockname(listener, reinterpret_cast<sockaddr*>(&bound), &length);
  const int port = ntohs(bound.sin_port);
  const int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<const sockaddr*>(&bound), sizeof(bound)), 0);
  const int accepted = accept(listener, nullptr, nullptr);
  ASSERT_GE(accepted, 0);
  close(accepted);  // the server's side closes first: TIME_WAIT on `port`
  close(listener);
  char byte;
  EXPECT_EQ(recv(client, &byte, 1, 0), 0);
  close(client);
  absl::StatusOr<PortReservation> reserved =
      PortReservation::Reserve(absl::StrCat("127.0.0.1:", port), "address");
  EXPECT_TRUE(reserved.ok()) << reserved.status();
}

TEST(PortReservation, AHostOfTwoAddressesGetsOnePortOnBoth) {
  absl::StatusOr<PortReservation> reserved = PortReservation::Reserve("localhost:0", "address");
  ASSERT_TRUE(reserved.ok()) << reserved.status();
  const int port = PortOf(reserved->address());
  EXPECT_TRUE(absl::StartsWith(reserved->address(), "localhost:"));
  EXPECT_EQ(BindLikeGrpc("127.0.0.1", port), -1);
  reserved->Release();
  const int fd = BindLikeGrpc("127.0.0.1", port);
  EXPECT_GE(fd, 0);
  if (fd >= 0) close(fd);
}

TEST(PortReservation, RefusesAPortInUseAndAnAddressOfAnotherHost) {
  const int busy = BindLikeGrpc("127.0.0.1", 0);
  ASSERT_GE(busy, 0);
  sockaddr_in bound{};
  socklen_t length = sizeof(bound);
  getsockname(busy, reinterpret_cast<sockaddr*>(&bound), &length);
  const std::string address = absl::StrCat("127.0.0.1:", ntohs(bound.sin_port));
  absl::StatusOr<PortReservation> refused = PortReservation::Reserve(address, "address");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(refused.status().message(), absl::StrCat("address: cannot listen on ", address,
                                                     " (the port is in use by another process)"));
  close(busy);
  // TEST-NET-1 (RFC 5737): never an address of this host.
  absl::StatusOr<PortReservation> foreign = PortReservation::Reserve("192.0.2.1:0", "address");
  ASSERT_FALSE(foreign.ok());
  EXPECT_TRUE(absl::StrContains(foreign.status().message(), "not an address of this host"))
      << foreign.status();
  for (const char* bad : {"garbage", "127.0.0.1:x", "127.0.0.1:65536", "no.such.host.invalid:0"}) {
    absl::StatusOr<PortReservation> parsed = PortReservation::Reserve(bad, "address");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_TRUE(absl::StartsWith(parsed.status().message(), "address: cannot listen on "))
        << parsed.status();
  }
}

TEST(PortReservation, PassesAUnixSocketThrough) {
  absl::StatusOr<PortReservation> reserved =
      PortReservation::Reserve("unix:/tmp/collide-never.sock", "address");
  ASSERT_TRUE(reserved.ok()) << reserved.status();
  EXPECT_EQ(reserved->address(), "unix:/tmp/collide-never.sock");
}

}  // namespace
}  // namespace collide
