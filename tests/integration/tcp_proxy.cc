#include "integration/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "support/ports.h"

namespace collide::integration {
namespace {

// How often the proxy's threads look for a stop.
constexpr int kPollMs = 20;

// Writes all of `data`; false when the peer is gone.
bool WriteAll(int fd, const char* data, ssize_t size) {
  while (size > 0) {
    ssize_t written = send(fd, data, static_cast<size_t>(size), MSG_NOSIGNAL);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    data += written;
    size -= written;
  }
  return true;
}

}  // namespace

// Every socket of the proxy is close-on-exec: a server child forked while a connection is open
// must not inherit it, or closing the proxy's end would not close the connection (the child's
// copy keeps it open) and the client would never see it end.

absl::StatusOr<std::unique_ptr<TcpProxy>> TcpProxy::Start(int target_port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError("socket failed");
  sockaddr_in addr = collide::testing::LoopbackAddress(0);
  socklen_t length = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 16) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) != 0) {
    close(fd);
    return absl::InternalError("bind/listen failed");
  }
  std::unique_ptr<TcpProxy> proxy(new TcpProxy(fd, target_port));
  proxy->address_ = absl::StrCat("127.0.0.1:", ntohs(addr.sin_port));
  proxy->acceptor_ = std::thread([p = proxy.get()] { p->AcceptLoop(); });
  return proxy;
}

TcpProxy::TcpProxy(int listen_fd, int target_port)
    : listen_fd_(listen_fd), target_port_(target_port) {}

TcpProxy::~TcpProxy() {
  stopping_ = true;
  acceptor_.join();
  close(listen_fd_);
  std::lock_guard<std::mutex> lock(mu_);
  for (std::unique_ptr<Connection>& connection : connections_) connection->pump.join();
}

void TcpProxy::Freeze() {
  std::lock_guard<std::mutex> lock(mu_);
  for (std::unique_ptr<Connection>& connection : connections_) connection->frozen = true;
}

void TcpProxy::AcceptLoop() {
  while (!stopping_) {
    pollfd listener{listen_fd_, POLLIN, 0};
    if (poll(&listener, 1, kPollMs) <= 0) continue;
    int client_fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client_fd < 0) continue;
    int target_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in target = collide::testing::LoopbackAddress(target_port_);
    if (target_fd < 0 ||
        connect(target_fd, reinterpret_cast<sockaddr*>(&target), sizeof(target)) != 0) {
      // The target is down: the client sees its connection closed, as it would without us.
      if (target_fd >= 0) close(target_fd);
      close(client_fd);
      continue;
    }
    auto connection = std::make_unique<Connection>();
    connection->client_fd = client_fd;
    connection->target_fd = target_fd;
    Connection* raw = connection.get();
    std::lock_guard<std::mutex> lock(mu_);
    connection->pump = std::thread([this, raw] { Pump(raw); });
    connections_.push_back(std::move(connection));
  }
}

void TcpProxy::Pump(Connection* connection) {
  char buffer[16384];
  while (!stopping_) {
    pollfd fds[2] = {{connection->client_fd, POLLIN, 0}, {connection->target_fd, POLLIN, 0}};
    int ready = poll(fds, 2, kPollMs);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    bool open = true;
    for (int side = 0; side < 2 && open; ++side) {
      if ((fds[side].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      ssize_t got = recv(fds[side].fd, buffer, sizeof(buffer), 0);
      if (got <= 0) {
        open = got < 0 && (errno == EINTR || errno == EAGAIN);
        continue;
      }
      if (side == 1 && connection->frozen) continue;  // the target's bytes are lost
      open = WriteAll(side == 0 ? connection->target_fd : connection->client_fd, buffer, got);
    }
    if (!open) break;
  }
  close(connection->client_fd);
  close(connection->target_fd);
}

}  // namespace collide::integration
