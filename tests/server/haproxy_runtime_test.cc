// The HAProxy runtime API client (server/infra/haproxy_runtime.h) against a fake runtime socket
// on loopback: what it sends, what it makes of answers (good, garbage, none, too slow), and the
// parsing of `show map` and of change answers. integration/Replication.* runs it against a real
// HAProxy.

#include "server/infra/haproxy_runtime.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace collide {
namespace {

// A listener on 127.0.0.1 that serves one connection: reads one line, then answers `answer`
// (after `delay`) and closes, as HAProxy's runtime API does.
class FakeRuntime {
 public:
  FakeRuntime(std::string answer, std::chrono::milliseconds delay = std::chrono::milliseconds(0))
      : answer_(std::move(answer)), delay_(delay) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address);
    socklen_t length = sizeof address;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    listen(fd_, 1);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeRuntime() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }
  // The line received (without its newline), once the connection was served.
  std::string received() {
    thread_.join();
    thread_ = std::thread([] {});
    return received_;
  }

 private:
  void Serve() {
    const int connection = accept(fd_, nullptr, nullptr);
    if (connection < 0) return;
    char c;
    while (recv(connection, &c, 1, 0) == 1 && c != '\n') received_.push_back(c);
    std::this_thread::sleep_for(delay_);
    send(connection, answer_.data(), answer_.size(), MSG_NOSIGNAL);
    close(connection);
  }

  const std::string answer_;
  const std::chrono::milliseconds delay_;
  int fd_ = -1;
  int port_ = 0;
  std::string received_;
  std::thread thread_;
};

constexpr auto kTimeout = std::chrono::milliseconds(500);

TEST(HaproxyCommand, SendsOneLineAndReturnsTheWholeAnswer) {
  const std::string map = "0x55d0c1e0 arena shard_2\n0x55d0c1f0 world.1 shard_1\n\n";
  FakeRuntime runtime(map);
  absl::StatusOr<std::string> answer =
      HaproxyCommand(runtime.address(), "show map /etc/haproxy/scenes.map", kTimeout);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(*answer, map);
  EXPECT_EQ(runtime.received(), "show map /etc/haproxy/scenes.map");
  const auto entries = ParseHaproxyMap(*answer);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0], (std::pair<std::string, std::string>{"arena", "shard_2"}));
  EXPECT_EQ(entries[1], (std::pair<std::string, std::string>{"world.1", "shard_1"}));
}

TEST(HaproxyCommand, RefusesACommandWithANewlineBeforeConnecting) {
  absl::StatusOr<std::string> answer =
      HaproxyCommand("127.0.0.1:1", "set map m a b\nshutdown sessions", kTimeout);
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(answer.status().message(), "router_admin: ")) << answer.status();
}

TEST(HaproxyCommand, NoListenerNoAnswerAndBadAddressesAreUnavailableAndNamed) {
  // Nothing listens on port 1 of loopback.
  absl::StatusOr<std::string> refused = HaproxyCommand("127.0.0.1:1", "show map m", kTimeout);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(refused.status().message(),
                                "router_admin: HAProxy's runtime "
                                "API at 127.0.0.1:1: "))
      << refused.status();
  for (const char* bad : {"nohost", ":80", "127.0.0.1:99999999", "127.0.0.1:x"}) {
    absl::StatusOr<std::string> answer = HaproxyCommand(bad, "show map m", kTimeout);
    EXPECT_EQ(answer.status().code(), absl::StatusCode::kUnavailable) << bad;
    EXPECT_TRUE(absl::StartsWith(answer.status().message(), "router_admin: ")) << bad;
  }
  // A runtime that does not answer within the timeout.
  FakeRuntime slow("", std::chrono::milliseconds(1500));
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::string> late = HaproxyCommand(slow.address(), "show map m", kTimeout);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(late.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(late.status().message(), "no answer in time")) << late.status();
  EXPECT_LT(took, std::chrono::milliseconds(1400)) << "the timeout was not kept";
}

TEST(HaproxyAnswerStatus, EmptyIsDoneAndAnythingElseIsTheError) {
  EXPECT_TRUE(HaproxyAnswerStatus("set map m a b", "").ok());
  EXPECT_TRUE(HaproxyAnswerStatus("set map m a b", "\n\n").ok());
  const absl::Status missing = HaproxyAnswerStatus("set map m a b", "entry not found.\n");
  EXPECT_EQ(missing.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(missing.message(),
            "router_admin: HAProxy answered `set map m a b` with: entry not found.");
  const absl::Status unknown =
      HaproxyAnswerStatus("show map x", "Unknown map identifier. Please use #<id> or <file>.\n");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kFailedPrecondition);
}

TEST(ParseHaproxyMap, KeepsOnlyWellFormedEntries) {
  EXPECT_TRUE(ParseHaproxyMap("").empty());
  EXPECT_TRUE(ParseHaproxyMap("Unknown map identifier.\n").empty());
  const auto entries = ParseHaproxyMap(
      "0x1 a shard_1\n"
      "garbage line here\n"
      "0x2 b\n"                 // no value
      "0x3 c shard_3 extra\n"   // four words
      "notpointer d shard_4\n"  // no pointer
      "  0x5   e   shard_5  \n"
      "\x01\xff\n");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].first, "a");
  EXPECT_EQ(entries[1], (std::pair<std::string, std::string>{"e", "shard_5"}));
}

}  // namespace
}  // namespace collide
