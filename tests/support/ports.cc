#include "support/ports.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"

namespace collide::testing {
namespace {

// The kernel's ephemeral range (the default when it cannot be read).
std::pair<int, int> EphemeralRange() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 32768, high = 60999;
  if (!(in >> low >> high) || low < 1 || high > 65535 || low > high) return {32768, 60999};
  return {low, high};
}

bool Bindable(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in address = LoopbackAddress(port);
  const bool ok = bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return ok;
}

// Takes the port's lock file; the descriptor stays open (and the lock held) until exit.
bool Lock(int port) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string path =
      absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/collide-test-port-", port);
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return false;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    return false;
  }
  return true;
}

}  // namespace

int ReservePort() {
  static std::mutex mu;
  static std::set<int> taken;
  std::lock_guard<std::mutex> lock(mu);
  const auto [low, high] = EphemeralRange();
  // Below the ephemeral range if it leaves room there, else above it.
  int first = 10000, last = low - 1;
  if (last - first < 1000) {
    first = high + 1;
    last = 65535;
  }
  std::random_device seed;
  std::mt19937 random(seed());
  std::uniform_int_distribution<int> pick(first, last);
  for (int attempt = 0; attempt < 10000; ++attempt) {
    const int port = pick(random);
    if (taken.contains(port) || !Lock(port)) continue;
    taken.insert(port);  // locked from here on, whether bindable or not
    if (Bindable(port)) return port;
  }
  std::fprintf(stderr, "no free port outside the ephemeral range %d-%d\n", low, high);
  std::abort();
}

sockaddr_in LoopbackAddress(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  return address;
}

}  // namespace collide::testing
