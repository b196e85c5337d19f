#include "integration/haproxy_process.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "integration/test_util.h"
#include "support/ports.h"

namespace collide::integration {
namespace {

constexpr auto kStartTimeout = std::chrono::seconds(20);

bool Executable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

bool Accepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in address = collide::testing::LoopbackAddress(port);
  const bool ok = connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return ok;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

std::string FindHaproxy() {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path == nullptr ? "" : path, ':')) {
    if (dir.empty()) continue;
    std::string candidate = absl::StrCat(dir, "/haproxy");
    if (Executable(candidate)) return candidate;
  }
  // Debian installs it in /usr/sbin, which an ordinary user's PATH may lack.
  return Executable("/usr/sbin/haproxy") ? "/usr/sbin/haproxy" : "";
}

namespace {

// The `server shard-1 ...` line `body` for shard `i` (0-based) at `address`: its name
// shard-<i+1>, `id <i+1>` when it has one, every other word kept.
std::string ServerLineFor(absl::string_view body, size_t i, const std::string& address) {
  std::vector<std::string> words = absl::StrSplit(body, ' ', absl::SkipEmpty());
  words[1] = absl::StrCat("shard-", i + 1);
  words[2] = address;
  for (size_t w = 3; w + 1 < words.size(); ++w) {
    if (words[w] == "id") words[w + 1] = absl::StrCat(i + 1);
  }
  return absl::StrJoin(words, " ");
}

}  // namespace

absl::StatusOr<std::string> HaproxyConfigFor(absl::string_view template_text,
                                             const HaproxyPorts& ports,
                                             const std::vector<std::string>& shards) {
  std::vector<std::string> out;
  int grpc_binds = 0;
  int stats_binds = 0;
  int admin_sockets = 0;
  int maps = 0;
  int server_groups = 0;
  int shard_backends = 0;
  // Inside a `backend shard_<n>` section: 1 for shard_1 (kept, to be repeated per shard), 2 for
  // another (dropped).
  int in_shard_backend = 0;
  std::vector<std::string> shard_backend;
  auto end_shard_backend = [&] {
    if (in_shard_backend == 1) {
      for (size_t i = 0; i < shards.size(); ++i) {
        out.push_back(absl::StrCat("backend shard_", i + 1));
        for (const std::string& line : shard_backend) {
          absl::string_view body = absl::StripLeadingAsciiWhitespace(line);
          const std::string indent = line.substr(0, line.size() - body.size());
          out.push_back(absl::StartsWith(body, "server shard-1 ")
                            ? absl::StrCat(indent, ServerLineFor(body, i, shards[i]))
                            : line);
        }
        out.push_back("");
      }
      ++shard_backends;
    }
    in_shard_backend = 0;
    shard_backend.clear();
  };
  constexpr absl::string_view kMapFile = "/usr/local/etc/haproxy/scenes.map";
  for (absl::string_view line : absl::StrSplit(template_text, '\n')) {
    absl::string_view body = absl::StripLeadingAsciiWhitespace(line);
    const std::string indent(line.substr(0, line.size() - body.size()));
    if (in_shard_backend != 0) {
      if (!indent.empty() && !body.empty()) {
        if (in_shard_backend == 1) shard_backend.emplace_back(line);
        continue;
      }
      end_shard_backend();
      if (body.empty()) continue;
    }
    if (body == "backend shard_1") {
      in_shard_backend = 1;
    } else if (absl::StartsWith(body, "backend shard_")) {
      in_shard_backend = 2;
    } else if (absl::StartsWith(body, "bind 0.0.0.0:8080 ")) {
      out.push_back(absl::StrCat(indent, "bind 127.0.0.1:", ports.grpc,
                                 body.substr(std::string_view("bind 0.0.0.0:8080").size())));
      ++grpc_binds;
    } else if (body == "bind 0.0.0.0:8404") {
      out.push_back(absl::StrCat(indent, "bind 127.0.0.1:", ports.stats));
      ++stats_binds;
    } else if (absl::StartsWith(body, "stats socket ipv4@0.0.0.0:9999 ")) {
      out.push_back(
          absl::StrCat(indent, "stats socket ipv4@127.0.0.1:", ports.admin,
                       body.substr(std::string_view("stats socket ipv4@0.0.0.0:9999").size())));
      ++admin_sockets;
    } else if (absl::StrContains(body, kMapFile) && !absl::StartsWith(body, "#")) {
      out.push_back(absl::StrCat(indent, absl::StrReplaceAll(body, {{kMapFile, ports.map_file}})));
      ++maps;
    } else if (absl::StartsWith(body, "server shard-1 ")) {
      for (size_t i = 0; i < shards.size(); ++i) {
        out.push_back(absl::StrCat(indent, ServerLineFor(body, i, shards[i])));
      }
      ++server_groups;
    } else if (absl::StartsWith(body, "server shard-")) {
      continue;
    } else {
      out.push_back(std::string(line));
    }
  }
  end_shard_backend();
  if (grpc_binds != 1 || stats_binds != 1 || admin_sockets != 1 || maps != 1 ||
      server_groups != 2 || shard_backends != 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "haproxy.cfg: expected one `bind 0.0.0.0:8080 ...`, one `bind 0.0.0.0:8404`, one "
        "`stats socket ipv4@0.0.0.0:9999 ...`, one use of ",
        kMapFile, ", a `server shard-1 ...` line in two backends and one `backend shard_1`; found ",
        grpc_binds, ", ", stats_binds, ", ", admin_sockets, ", ", maps, ", ", server_groups,
        " and ", shard_backends));
  }
  return absl::StrJoin(out, "\n");
}

absl::StatusOr<std::unique_ptr<HaproxyProcess>> HaproxyProcess::Start(
    const std::string& binary, const std::string& template_path,
    const std::vector<std::string>& shards, int port) {
  std::ifstream in(template_path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", template_path));
  std::stringstream text;
  text << in.rdbuf();
  if (port == 0) port = FreePort();
  auto dir = std::make_unique<testing::TempDir>("haproxy");
  HaproxyPorts ports{
      .grpc = port, .stats = FreePort(), .admin = FreePort(), .map_file = dir->File("scenes.map")};
  std::ofstream(ports.map_file).flush();
  absl::StatusOr<std::string> config = HaproxyConfigFor(text.str(), ports, shards);
  if (!config.ok()) return config.status();
  const std::string config_path = dir->File("haproxy.cfg");
  std::ofstream(config_path) << *config << "\n";
  const std::string log_path = dir->File("haproxy.log");
  std::unique_ptr<HaproxyProcess> process(
      new HaproxyProcess(port, ports.admin, ports.map_file, std::move(dir)));

  // -db: stay in the foreground, the log on stdout.
  process->pid_ = SpawnWithLog({binary, "-db", "-f", config_path}, log_path);
  if (process->pid_ < 0) return absl::InternalError("fork failed");
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(process->pid_, &status, WNOHANG) == process->pid_) {
      process->pid_ = -1;
      return absl::InternalError(
          absl::StrCat("haproxy exited at start (status ", status, "): ", process->Logs()));
    }
    if (Accepts(port)) return process;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("haproxy does not accept connections on port ", port, ": ", process->Logs()));
}

HaproxyProcess::~HaproxyProcess() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  for (int i = 0; i < 100; ++i) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
}

std::string HaproxyProcess::address() const { return absl::StrCat("127.0.0.1:", port_); }

std::string HaproxyProcess::admin_address() const {
  return absl::StrCat("127.0.0.1:", admin_port_);
}

std::string HaproxyProcess::Logs() const { return ReadFile(dir_->File("haproxy.log")); }

}  // namespace collide::integration
