#include "server/infra/haproxy_runtime.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace collide {
namespace {

using Clock = std::chrono::steady_clock;

absl::Status Unavailable(const std::string& address, absl::string_view what) {
  return absl::UnavailableError(
      absl::StrCat("router_admin: HAProxy's runtime API at ", address, ": ", what));
}

// Waits until `fd` is ready for `events`, at most until `deadline`.
bool WaitFor(int fd, short events, Clock::time_point deadline) {
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{.fd = fd, .events = events, .revents = 0};
    const int n = poll(&p, 1, static_cast<int>(left));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

}  // namespace

absl::StatusOr<std::string> HaproxyCommand(const std::string& address, absl::string_view command,
                                           std::chrono::milliseconds timeout) {
  if (command.find('\n') != absl::string_view::npos) {
    return absl::InvalidArgumentError("router_admin: a command holds a newline");
  }
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) return Unavailable(address, "not host:port");
  std::string host = address.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string port = address.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0 || found == nullptr) {
    return Unavailable(address, "the host does not resolve");
  }
  const Clock::time_point deadline = Clock::now() + timeout;
  const int fd = socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    freeaddrinfo(found);
    return Unavailable(address, std::strerror(errno));
  }
  const int connected = connect(fd, found->ai_addr, found->ai_addrlen);
  freeaddrinfo(found);
  auto fail = [&](absl::string_view what) {
    close(fd);
    return Unavailable(address, what);
  };
  if (connected != 0 && errno != EINPROGRESS) return fail(std::strerror(errno));
  if (connected != 0) {
    if (!WaitFor(fd, POLLOUT, deadline)) return fail("no connection in time");
    int error = 0;
    socklen_t length = sizeof error;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) return fail(std::strerror(error));
  }
  const std::string line = absl::StrCat(command, "\n");
  size_t sent = 0;
  while (sent < line.size()) {
    if (!WaitFor(fd, POLLOUT, deadline)) return fail("could not send in time");
    const ssize_t n = send(fd, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) return fail(std::strerror(errno));
    if (n > 0) sent += static_cast<size_t>(n);
  }
  std::string answer;
  char buffer[4096];
  while (true) {
    if (!WaitFor(fd, POLLIN, deadline)) return fail("no answer in time");
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n == 0) break;  // HAProxy closes after answering one command
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return fail(std::strerror(errno));
    }
    answer.append(buffer, static_cast<size_t>(n));
    if (answer.size() > (64u << 20)) return fail("an answer over 64 MiB");
  }
  close(fd);
  return answer;
}

std::vector<std::pair<std::string, std::string>> ParseHaproxyMap(absl::string_view answer) {
  std::vector<std::pair<std::string, std::string>> entries;
  for (absl::string_view line : absl::StrSplit(answer, '\n')) {
    std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (words.size() != 3 || !absl::StartsWith(words[0], "0x")) continue;
    entries.emplace_back(std::string(words[1]), std::string(words[2]));
  }
  return entries;
}

absl::Status HaproxyAnswerStatus(absl::string_view command, absl::string_view answer) {
  const absl::string_view trimmed = absl::StripAsciiWhitespace(answer);
  if (trimmed.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("router_admin: HAProxy answered `", command, "` with: ", trimmed));
}

}  // namespace collide
