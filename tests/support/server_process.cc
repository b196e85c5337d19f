#include "support/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

#ifndef COLLIDE_SERVER_PATH
#error "COLLIDE_SERVER_PATH must name the collide-server binary"
#endif

namespace collide::testing {
namespace {

// How long the server may take to start serving or to exit.
constexpr auto kStartTimeout = std::chrono::seconds(20);
constexpr auto kStopTimeout = std::chrono::seconds(20);
constexpr auto kPollInterval = std::chrono::milliseconds(10);

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int ExitCode(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return -1;
}

}  // namespace

const char* ServerBinaryPath() { return COLLIDE_SERVER_PATH; }

TempDir::TempDir(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = absl::StrCat(base != nullptr && *base != '\0' ? base : "/tmp", "/collide-",
                                     prefix, "-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    std::perror(pattern.c_str());
    std::abort();
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

ServerProcess::ServerProcess(ServerConfig config) : config_(std::move(config)), dir_("server") {}

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::Start(ServerConfig config) {
  std::unique_ptr<ServerProcess> server(new ServerProcess(std::move(config)));
  if (!server->config_.token_file_contents.empty()) {
    std::ofstream tokens(server->dir_.File("tokens"));
    tokens << server->config_.token_file_contents;
    if (!tokens) return absl::InternalError("cannot write the token file");
  }
  absl::Status launched = server->Launch(server->config_.address);
  if (!launched.ok()) return launched;
  return server;
}

ServerProcess::~ServerProcess() {
  if (running()) Stop(SIGTERM).IgnoreError();
}

absl::Status ServerProcess::Launch(const std::string& address) {
  if (running()) return absl::FailedPreconditionError("the server is already running");
  std::string port_file = dir_.File("port");
  std::filesystem::remove(port_file);
  const std::string metrics_port_file = dir_.File("metrics_port");
  std::filesystem::remove(metrics_port_file);
  metrics_port_ = 0;
  ++launches_;
  std::string log_file = dir_.File("server.log");
  std::vector<std::string> words = {
      config_.binary.empty() ? std::string(COLLIDE_SERVER_PATH) : config_.binary,
      absl::StrCat("--address=", address),
      absl::StrCat("--port_file=", port_file),
  };
  if (config_.collide_server_flags) {
    words.push_back(absl::StrCat("--data_dir=", data_dir()));
    words.push_back("--log_level=warn");
  }
  if (!config_.token_file_contents.empty()) {
    words.push_back(absl::StrCat("--token_file=", dir_.File("tokens")));
  }
  if (config_.metrics) {
    words.push_back("--metrics_address=127.0.0.1:0");
    words.push_back(absl::StrCat("--metrics_port_file=", metrics_port_file));
  }
  for (const std::string& flag : config_.extra_flags) words.push_back(flag);
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);

  const rlim_t file_size_limit = config_.file_size_limit_bytes;
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    // The child: only async-signal-safe calls until exec. The server dies with the test.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (file_size_limit != 0) {
      const struct rlimit limit = {file_size_limit, file_size_limit};
      setrlimit(RLIMIT_FSIZE, &limit);
    }
    int log = open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log >= 0) {
      dup2(log, STDOUT_FILENO);
      dup2(log, STDERR_FILENO);
      close(log);
    }
    // Nothing else of the test's goes to the server: a socket the test holds open (a client's
    // connection, a proxy's) must close when the test closes it, not live on in the child.
    close_range(STDERR_FILENO + 1, ~0U, 0);
    execv(argv[0], argv.data());
    _exit(127);
  }
  pid_ = pid;

  auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int wait_status = 0;
    if (waitpid(pid_, &wait_status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::InternalError(absl::StrCat("collide-server exited with ", ExitCode(wait_status),
                                              " before serving:\n", Logs()));
    }
    std::string text = ReadFile(port_file);
    int port = 0;
    if (!text.empty() && text.back() == '\n' &&
        absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &port) && port > 0) {
      // (The server writes its metrics port file before its port file.)
      const std::string metrics_text = config_.metrics ? ReadFile(metrics_port_file) : "";
      if (config_.metrics &&
          !absl::SimpleAtoi(absl::StripAsciiWhitespace(metrics_text), &metrics_port_)) {
        Stop(SIGKILL).IgnoreError();
        return absl::InternalError(
            absl::StrCat("collide-server wrote no metrics port file:\n", Logs()));
      }
      address_ = absl::StrCat("127.0.0.1:", port);
      return absl::OkStatus();
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  Stop(SIGKILL).IgnoreError();
  return absl::DeadlineExceededError(
      absl::StrCat("collide-server wrote no port file within 20 s:\n", Logs()));
}

absl::StatusOr<int> ServerProcess::Stop(int signal) {
  if (!running()) return absl::FailedPreconditionError("the server is not running");
  kill(pid_, signal);
  auto deadline = std::chrono::steady_clock::now() + kStopTimeout;
  int wait_status = 0;
  bool exited = false;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid_, &wait_status, WNOHANG) == pid_) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  if (!exited) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &wait_status, 0);
    pid_ = -1;
    return absl::DeadlineExceededError(
        absl::StrCat("collide-server did not exit within 20 s of signal ", signal));
  }
  pid_ = -1;
  return ExitCode(wait_status);
}

absl::Status ServerProcess::Restart() { return Launch(config_.address); }

absl::Status ServerProcess::RestartOnSamePort() {
  // The configured host with the port the server had bound.
  std::string address = config_.address.substr(0, config_.address.rfind(':'));
  return Launch(absl::StrCat(address, address_.substr(address_.rfind(':'))));
}

std::unique_ptr<client::Client> ServerProcess::NewClient(const std::string& token) const {
  client::ClientOptions options;
  options.address = address_;
  options.bearer_token = token;
  options.enable_http_proxy = false;
  options.default_deadline = absl::Seconds(10);
  return *client::Client::Connect(options);
}

uint64_t ServerProcess::RssBytes() const { return StatusBytes("VmRSS:"); }

uint64_t ServerProcess::PeakRssBytes() const { return StatusBytes("VmHWM:"); }

uint64_t ServerProcess::StatusBytes(absl::string_view field) const {
  if (!running()) return 0;
  const std::string status = ReadFile(absl::StrCat("/proc/", pid_, "/status"));
  const size_t at = status.find(field.data(), 0, field.size());
  if (at == std::string::npos) return 0;
  const size_t end = status.find('\n', at);
  absl::string_view line =
      absl::string_view(status).substr(at + field.size(), end - at - field.size());
  line = absl::StripAsciiWhitespace(line);
  uint64_t kib = 0;
  if (!absl::SimpleAtoi(line.substr(0, line.find(' ')), &kib)) return 0;
  return kib * 1024;
}

std::string ServerProcess::Logs() const { return ReadFile(dir_.File("server.log")); }

}  // namespace collide::testing
