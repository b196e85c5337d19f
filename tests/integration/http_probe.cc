#include "integration/http_probe.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "support/ports.h"

namespace collide::integration {
namespace {

using Clock = std::chrono::steady_clock;

// A non-blocking socket connecting to 127.0.0.1:`port`; -1 when none could be made.
int ConnectNonBlocking(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address = collide::testing::LoopbackAddress(port);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0 &&
      errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  return fd;
}

int MillisecondsLeft(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

}  // namespace

std::string HttpAnswer::Header(absl::string_view name) const {
  for (absl::string_view line : absl::StrSplit(headers, "\r\n")) {
    const size_t colon = line.find(':');
    if (colon != absl::string_view::npos && absl::EqualsIgnoreCase(line.substr(0, colon), name)) {
      return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    }
  }
  return "";
}

std::string HttpRequestLine(absl::string_view method, absl::string_view path) {
  return absl::StrCat(method, " ", path,
                      " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n");
}

HttpAnswer HttpExchange(int port, absl::string_view request, std::chrono::milliseconds timeout) {
  HttpAnswer answer;
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + timeout;
  const int fd = ConnectNonBlocking(port);
  if (fd < 0) return answer;
  size_t sent = 0;
  std::string received;
  bool closed = false;
  while (!closed && Clock::now() < deadline) {
    pollfd poller{fd, static_cast<short>(POLLIN | (sent < request.size() ? POLLOUT : 0)), 0};
    if (poll(&poller, 1, MillisecondsLeft(deadline)) <= 0) continue;
    if ((poller.revents & POLLOUT) && sent < request.size()) {
      const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n > 0) sent += static_cast<size_t>(n);
    }
    if (poller.revents & (POLLIN | POLLHUP | POLLERR)) {
      char buffer[16384];
      const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
      if (n > 0) {
        received.append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        closed = true;
      }
    }
  }
  close(fd);
  answer.elapsed = Clock::now() - start;
  const size_t end = received.find("\r\n\r\n");
  if (!closed || end == std::string::npos) return answer;
  const size_t line_end = received.find("\r\n");
  const std::string status_line = received.substr(0, line_end);
  std::vector<std::string> words = absl::StrSplit(status_line, ' ');
  if (words.size() < 2 || !absl::StartsWith(words[0], "HTTP/1.")) return answer;
  answer.status = std::atoi(words[1].c_str());
  answer.answered = true;
  answer.headers = received.substr(line_end + 2, end + 2 - line_end - 2);
  answer.body = received.substr(end + 4);
  return answer;
}

SlowClients::SlowClients(std::vector<int> ports, int per_port, std::string bytes, bool silent)
    : ports_(std::move(ports)),
      per_port_(per_port),
      bytes_(std::move(bytes)),
      silent_(silent),
      thread_([this] { Run(); }) {}

SlowClients::~SlowClients() {
  stop_.store(true);
  thread_.join();
}

void SlowClients::Run() {
  struct Connection {
    int fd;
    int port;
    size_t sent;
  };
  std::vector<Connection> connections;
  for (const int port : ports_) {
    for (int i = 0; i < per_port_; ++i) connections.push_back({ConnectNonBlocking(port), port, 0});
  }
  Clock::time_point next_byte = Clock::now();
  while (!stop_.load()) {
    std::vector<pollfd> pollers;
    for (const Connection& c : connections) pollers.push_back({c.fd, POLLIN, 0});
    poll(pollers.data(), pollers.size(), std::min(100, MillisecondsLeft(next_byte)));
    int open = 0;
    for (size_t i = 0; i < connections.size(); ++i) {
      Connection& c = connections[i];
      bool gone = c.fd < 0;
      if (!gone && (pollers[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        char buffer[4096];
        const ssize_t n = recv(c.fd, buffer, sizeof(buffer), 0);
        gone = n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
      }
      if (gone) {
        // The server gave up on it (or answered it): another takes its place.
        if (c.fd >= 0) {
          close(c.fd);
          closed_by_server_.fetch_add(1);
        }
        c = {ConnectNonBlocking(c.port), c.port, 0};
      }
      open += c.fd >= 0;
    }
    open_.store(open);
    if (!silent_ && Clock::now() >= next_byte) {
      next_byte += std::chrono::seconds(1);
      for (Connection& c : connections) {
        if (c.fd < 0 || c.sent >= bytes_.size()) continue;
        if (send(c.fd, bytes_.data() + c.sent, 1, MSG_NOSIGNAL) == 1) ++c.sent;
      }
    }
  }
  for (const Connection& c : connections) {
    if (c.fd >= 0) close(c.fd);
  }
}

}  // namespace collide::integration
