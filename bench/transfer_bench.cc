// Export and import rates through a running collide-server, with the memory both sides take:
// for each body count, a scene of that many bodies (spheres, boxes and capsules), then
//
// - `collide scene export` of it into a file (length-delimited protobuf, and JSON lines), and
// - `collide scene import` of the pb file under a new name (durable when answered),
//
// each run as a child process of the `collide` CLI: its wall time (bodies/s), the CLI's peak
// resident memory (ru_maxrss of the child) and the server's before the step, at its peak during
// it (VmHWM, reset before each step through /proc/<pid>/clear_refs) and after it (an import
// leaves the new scene behind).
//
//   collide-bench-transfer --cli PATH --server_pid P [--address 127.0.0.1:50051]
//                          [--bodies 100000,1000000] [--dir DIR]
//
// Start the server first (collide-server --address=127.0.0.1:0 ...); --server_pid is its pid.
// The scenes the bench creates ("bench-src-N", "bench-copy-N") are deleted at the end.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"

namespace collide::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Config {
  std::string address = "127.0.0.1:50051";
  std::string cli;
  std::string dir = "/tmp";
  int server_pid = 0;
  std::vector<int> bodies = {100000, 1000000};
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "%s\nusage: collide-bench-transfer --cli PATH --server_pid P [--address A] "
               "[--bodies 100000,1000000] [--dir DIR]\n",
               why);
  std::exit(2);
}

Config ParseArgs(int argc, char** argv) {
  Config config;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) Usage(("missing value for " + flag).c_str());
    const std::string value = argv[++i];
    if (flag == "--address") {
      config.address = value;
    } else if (flag == "--cli") {
      config.cli = value;
    } else if (flag == "--dir") {
      config.dir = value;
    } else if (flag == "--server_pid") {
      if (!absl::SimpleAtoi(value, &config.server_pid) || config.server_pid <= 0) {
        Usage("--server_pid: a process id");
      }
    } else if (flag == "--bodies") {
      config.bodies.clear();
      for (absl::string_view part : absl::StrSplit(value, ',')) {
        int count = 0;
        if (!absl::SimpleAtoi(part, &count) || count <= 0 || count > 10000000) {
          Usage("--bodies: counts in [1, 10000000]");
        }
        config.bodies.push_back(count);
      }
    } else {
      Usage(("unknown flag " + flag).c_str());
    }
  }
  if (config.cli.empty()) Usage("--cli is required");
  if (config.server_pid == 0) Usage("--server_pid is required");
  return config;
}

// A /proc/<pid>/status field in bytes (VmRSS, VmHWM).
uint64_t ProcStatusBytes(int pid, const char* field) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) {
      uint64_t kb = 0;
      if (std::sscanf(line.c_str() + std::strlen(field) + 1, "%lu", &kb) == 1) return kb * 1024;
    }
  }
  return 0;
}

// Resets the process's peak resident memory (VmHWM) to its current size.
void ResetPeak(int pid) {
  std::ofstream out(absl::StrCat("/proc/", pid, "/clear_refs"));
  out << "5\n";
}

struct ChildRun {
  int exit_code = -1;
  double seconds = 0;
  uint64_t peak_rss = 0;  // bytes
};

// Runs the CLI with `args`, its output to /dev/null; its exit, wall time and peak memory.
ChildRun RunCli(const Config& config, std::vector<std::string> args) {
  // The CLI's --timeout bounds the whole stream (10 s by default): far more here.
  args.insert(args.begin(), {config.cli, "--address=" + config.address, "--timeout=3600"});
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  const auto start = Clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    execv(argv[0], argv.data());
    _exit(127);
  }
  ChildRun run;
  int status = 0;
  struct rusage usage {};
  if (pid < 0 || wait4(pid, &status, 0, &usage) != pid) return run;
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.peak_rss = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
  return run;
}

absl::Status Populate(client::Client& client, const std::string& scene, int count) {
  v1::SceneOptions options;
  options.set_max_bodies(static_cast<uint32_t>(count));
  options.set_durability(v1::DURABILITY_PERIODIC);
  if (absl::StatusOr<v1::SceneInfo> s = client.CreateScene(scene, options); !s.ok()) {
    return s.status();
  }
  constexpr int kBatch = 20000;
  std::vector<v1::Body> bodies;
  bodies.reserve(kBatch);
  for (int i = 0; i < count; ++i) {
    const float x = static_cast<float>(i % 1000) * 2.0f;
    const float y = static_cast<float>((i / 1000) % 1000) * 2.0f;
    const float z = static_cast<float>(i / 1000000) * 2.0f;
    v1::Shape shape = i % 3 == 0   ? client::MakeSphere(0.5f)
                      : i % 3 == 1 ? client::MakeBox(0.5f, 0.25f, 0.75f)
                                   : client::MakeCapsule(0.25f, 0.5f);
    bodies.push_back(client::MakeBody(static_cast<uint64_t>(i) + 1, shape,
                                      client::MakePose(client::MakeVec3(x, y, z))));
    if (static_cast<int>(bodies.size()) == kBatch || i + 1 == count) {
      absl::StatusOr<v1::WriteResponse> w = client.UpsertBodies(scene, bodies);
      if (!w.ok()) return w.status();
      bodies.clear();
    }
  }
  return absl::OkStatus();
}

double Mb(uint64_t bytes) { return static_cast<double>(bytes) / 1048576.0; }

int Run(const Config& config) {
  client::ClientOptions options;
  options.address = config.address;
  options.default_deadline = absl::Minutes(5);
  auto client = client::Client::Connect(options);
  if (!client.ok()) {
    std::fprintf(stderr, "connect: %s\n", client.status().ToString().c_str());
    return 1;
  }
  // Sizes in MB: the file, the CLI's peak; the server's before the step, its peak during it and
  // after it.
  std::printf("%-9s %-13s %8s %10s %8s %8s %10s %10s %10s\n", "bodies", "step", "seconds",
              "bodies/s", "file", "cli peak", "srv before", "srv peak", "srv after");
  for (int count : config.bodies) {
    const std::string src = absl::StrCat("bench-src-", count);
    const std::string copy = absl::StrCat("bench-copy-", count);
    if (absl::Status s = Populate(**client, src, count); !s.ok()) {
      std::fprintf(stderr, "populate %d: %s\n", count, s.ToString().c_str());
      return 1;
    }
    struct Step {
      const char* name;
      std::vector<std::string> args;
      std::string file;
    };
    const std::string pb = absl::StrCat(config.dir, "/", src, ".pb");
    const std::string jsonl = absl::StrCat(config.dir, "/", src, ".jsonl");
    const std::vector<Step> steps = {
        {"export pb", {"scene", "export", src, pb}, pb},
        {"export jsonl", {"scene", "export", src, jsonl, "--format=jsonl"}, jsonl},
        {"import pb", {"scene", "import", pb, "--name", copy}, pb},
    };
    for (const Step& step : steps) {
      const uint64_t server_before = ProcStatusBytes(config.server_pid, "VmRSS:");
      ResetPeak(config.server_pid);
      const ChildRun run = RunCli(config, step.args);
      const uint64_t server_peak = ProcStatusBytes(config.server_pid, "VmHWM:");
      const uint64_t server_after = ProcStatusBytes(config.server_pid, "VmRSS:");
      if (run.exit_code != 0) {
        std::fprintf(stderr, "%s of %d bodies: the CLI exited with %d\n", step.name, count,
                     run.exit_code);
        return 1;
      }
      std::error_code error;
      const uint64_t file_bytes = std::filesystem::file_size(step.file, error);
      std::printf("%-9d %-13s %8.2f %10.0f %8.1f %8.1f %10.1f %10.1f %10.1f\n", count, step.name,
                  run.seconds, count / run.seconds, Mb(file_bytes), Mb(run.peak_rss),
                  Mb(server_before), Mb(server_peak), Mb(server_after));
      std::fflush(stdout);
    }
    std::filesystem::remove(pb);
    std::filesystem::remove(jsonl);
    (*client)->DeleteScene(copy).IgnoreError();
    (*client)->DeleteScene(src).IgnoreError();
  }
  return 0;
}

}  // namespace
}  // namespace collide::bench

int main(int argc, char** argv) {
  return collide::bench::Run(collide::bench::ParseArgs(argc, argv));
}
