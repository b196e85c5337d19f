// Memory per body: the reference scene's bodies (bench/reference_scene.h) loaded into a Scene in
// this process, the scene's bytes by part (each structure's capacity, SceneMemory) and the
// process's resident set before and after; then the same bodies loaded into a real
// collide-server through the C++ client, its GetServerStats figures and /proc/PID/status, once
// after the load and once after a restart (which loads the scene from its snapshot).
//
//   collide-bench-memory [--bodies 100000,1000000] [--no_server] [--settle_seconds 3]
//
// Prints tables per size and the lines `memory_per_body_scene_stat_<n>` and
// `memory_per_body_rss_<n>` (bytes per body of the server's own stat and of its resident set
// after the load, settled), which scripts/bench reports.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/reference_messages.h"
#include "bench/reference_scene.h"
#include "client/cpp/client.h"
#include "scene/scene.h"
#include "scene/update_batch.h"
#include "support/server_process.h"

namespace collide::bench {
namespace {

struct Config {
  std::vector<int> bodies = {100000, 1000000};
  bool server = true;
  double settle_seconds = 3.0;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "%s\nusage: collide-bench-memory [--bodies N[,N...]] [--no_server] "
               "[--settle_seconds S]\n",
               why);
  std::exit(2);
}

Config ParseArgs(int argc, char** argv) {
  Config config;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(("missing value of " + arg).c_str());
      return argv[++i];
    };
    if (arg == "--bodies") {
      config.bodies.clear();
      std::string list = value();
      for (size_t begin = 0; begin <= list.size();) {
        size_t end = list.find(',', begin);
        if (end == std::string::npos) end = list.size();
        const int n = std::atoi(list.substr(begin, end - begin).c_str());
        if (n < 2) Usage("--bodies: each count must be at least 2");
        config.bodies.push_back(n);
        begin = end + 1;
      }
    } else if (arg == "--no_server") {
      config.server = false;
    } else if (arg == "--settle_seconds") {
      config.settle_seconds = std::atof(value().c_str());
      if (!(config.settle_seconds >= 0)) Usage("--settle_seconds: must be >= 0");
    } else {
      Usage(("unknown argument " + arg).c_str());
    }
  }
  return config;
}

// A `<field>   <n> kB` line of /proc/self/status, in bytes.
uint64_t SelfStatusBytes(const char* field) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  uint64_t bytes = 0;
  const size_t len = std::strlen(field);
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, field, len) == 0) {
      bytes = std::strtoull(line + len, nullptr, 10) * 1024;
      break;
    }
  }
  std::fclose(f);
  return bytes;
}

void Row(const char* name, double bytes, int n) {
  std::printf("%-34s %14.0f %10.1f\n", name, bytes, bytes / n);
}

void PrintParts(const SceneMemory& m, int n) {
  Row("bodies (Body table)", m.bodies, n);
  Row("tree nodes (binary, hot + cold)", m.trees.nodes, n);
  Row("tree leaves", m.trees.leaves, n);
  Row("tree 8-wide nodes", m.trees.wide, n);
  Row("tree 8-wide maps", m.trees.wide_maps, n);
  Row("tree build scratch", m.trees.scratch, n);
  Row("tree objects", m.trees.fixed, n);
  Row("id map", m.id_map, n);
  Row("per-body extra (user data)", m.extra, n);
  Row("client marks", m.client_marks, n);
  Row("history", m.history, n);
  Row("write scratch", m.write_scratch, n);
  Row("scene object", m.fixed, n);
  Row("total (scene stat)", m.Total(), n);
}

UpdateBatch UpsertChunk(const ReferenceScene& ref, size_t first, size_t count) {
  UpdateBatch batch;
  batch.ops.reserve(count);
  for (size_t i = first; i < first + count; ++i) {
    batch.ops.push_back(UpsertOp(BodyDesc{.id = i, .shape = ref.shapes[i], .pose = ref.poses[i]}));
  }
  return batch;
}

// The bodies loaded into a Scene here as the server loads them (Apply, 10,000 upserts a batch),
// then the same state restored the way a restart does (Scene::Restore from the state).
void InProcess(const ReferenceScene& ref, int n) {
  constexpr size_t kChunk = 10000;
  SceneOptions options;
  options.max_bodies = static_cast<uint32_t>(n);
  std::printf("\n-- in process, %d bodies: loaded by 10,000-upsert batches --\n", n);
  std::printf("%-34s %14s %10s\n", "part", "bytes", "per body");
  const uint64_t rss_before = SelfStatusBytes("VmRSS:");
  SceneMemory loaded;
  SceneState state;
  {
    Scene scene("memory", options);
    for (size_t first = 0; first < static_cast<size_t>(n); first += kChunk) {
      const size_t count = std::min(kChunk, static_cast<size_t>(n) - first);
      if (auto r = scene.Apply(UpsertChunk(ref, first, count)); !r.ok()) {
        std::fprintf(stderr, "apply: %s\n", r.status().ToString().c_str());
        std::exit(1);
      }
    }
    const uint64_t rss_after = SelfStatusBytes("VmRSS:");
    loaded = scene.Memory();
    PrintParts(loaded, n);
    if (scene.Stats().memory_bytes != loaded.Total()) {
      std::fprintf(stderr, "Stats().memory_bytes %zu != Memory().Total() %zu\n",
                   scene.Stats().memory_bytes, loaded.Total());
      std::exit(1);
    }
    Row("process RSS growth", static_cast<double>(rss_after) - rss_before, n);
    // The same scene once the load's tick has left the retained window (`history_ticks` ticks
    // later, nothing changed since): the history gives its records and index back.
    for (uint64_t t = 1; t <= options.history_ticks; ++t) {
      UpdateBatch advance;
      advance.tick = t;
      if (auto r = scene.Apply(advance); !r.ok()) {
        std::fprintf(stderr, "apply tick %d: %s\n", static_cast<int>(t),
                     r.status().ToString().c_str());
        std::exit(1);
      }
    }
    std::printf("\n-- in process, %d bodies: loaded, then %u ticks with no change --\n", n,
                options.history_ticks);
    std::printf("%-34s %14s %10s\n", "part", "bytes", "per body");
    PrintParts(scene.Memory(), n);
    state = scene.CaptureState();
  }
  std::printf("\n-- in process, %d bodies: restored from its state (a restart) --\n", n);
  std::printf("%-34s %14s %10s\n", "part", "bytes", "per body");
  auto restored = Scene::Restore("memory", options, state);
  if (!restored.ok()) {
    std::fprintf(stderr, "restore: %s\n", restored.status().ToString().c_str());
    std::exit(1);
  }
  state = SceneState{};
  PrintParts((*restored)->Memory(), n);
}

uint64_t SceneStatOf(const v1::GetServerStatsResponse& stats, const std::string& scene) {
  for (const auto& row : stats.scene_stats()) {
    if (row.name() == scene) return row.memory_bytes();
  }
  return 0;
}

// The bodies through a real collide-server; returns false on any failure.
bool ThroughServer(const ReferenceScene& ref, int n, const Config& config) {
  auto server = testing::ServerProcess::Start();
  if (!server.ok()) {
    std::fprintf(stderr, "server: %s\n", server.status().ToString().c_str());
    return false;
  }
  auto settle = [&] {
    std::this_thread::sleep_for(std::chrono::duration<double>(config.settle_seconds));
  };
  const uint64_t rss_empty = (*server)->RssBytes();
  const std::string scene = "memory";
  {
    auto c = (*server)->NewClient();
    v1::CreateSceneRequest create;
    create.set_scene(scene);
    create.mutable_options()->set_max_bodies(static_cast<uint32_t>(n));
    if (auto s = c->CreateScene(create); !s.ok()) {
      std::fprintf(stderr, "create scene: %s\n", s.status().ToString().c_str());
      return false;
    }
    if (!UpsertReferenceBodies(*c, scene, ref)) return false;
  }
  auto read = [&](const char* when) -> std::pair<double, double> {
    auto c = (*server)->NewClient();
    auto stats = c->GetServerStats();
    if (!stats.ok()) {
      std::fprintf(stderr, "stats: %s\n", stats.status().ToString().c_str());
      return {-1, -1};
    }
    const double stat = static_cast<double>(SceneStatOf(*stats, scene));
    const double rss = static_cast<double>((*server)->RssBytes());
    std::printf("%-26s %14.0f %9.1f %14.0f %9.1f %14.0f %9.1f\n", when, stat, stat / n, rss,
                rss / n, static_cast<double>(stats->resident_memory_bytes()),
                static_cast<double>(stats->resident_memory_bytes()) / n);
    return {stat, rss};
  };
  std::printf("\n-- collide-server, %d bodies (empty server: VmRSS %.0f bytes) --\n", n,
              static_cast<double>(rss_empty));
  std::printf("%-26s %14s %9s %14s %9s %14s %9s\n", "when", "scene stat", "/body", "VmRSS", "/body",
              "stats RSS", "/body");
  read("after the load");
  settle();
  const auto [stat_settled, rss_settled] = read("settled");
  std::printf("peak VmHWM %.0f bytes (%.1f per body)\n",
              static_cast<double>((*server)->PeakRssBytes()),
              static_cast<double>((*server)->PeakRssBytes()) / n);
  if (stat_settled < 0) return false;
  const std::string suffix = n % 1000000 == 0 ? std::to_string(n / 1000000) + "m"
                             : n % 1000 == 0  ? std::to_string(n / 1000) + "k"
                                              : std::to_string(n);
  std::printf("memory_per_body_scene_stat_%s %.1f\n", suffix.c_str(), stat_settled / n);
  // The whole resident set over the bodies (the empty server's share included).
  std::printf("memory_per_body_rss_%s %.1f\n", suffix.c_str(), rss_settled / n);
  std::fflush(stdout);
  if (auto code = (*server)->Stop(SIGTERM); !code.ok()) return false;
  if (auto s = (*server)->Restart(); !s.ok()) {
    std::fprintf(stderr, "restart: %s\n", s.ToString().c_str());
    return false;
  }
  settle();
  return read("after a restart").first >= 0;
}

}  // namespace
}  // namespace collide::bench

int main(int argc, char** argv) {
  using namespace collide::bench;
  const Config config = ParseArgs(argc, argv);
  bool ok = true;
  for (int n : config.bodies) {
    // The reference scene (side 250 at 100,000 bodies), its side grown with the cube root of the
    // count beyond that (the same density).
    const float side = 250.0f * std::cbrt(std::max(1.0f, static_cast<float>(n) / 100000.0f));
    const ReferenceScene ref = MakeReferenceScene(n, side, 0, 0);
    InProcess(ref, n);
    if (config.server) ok = ThroughServer(ref, n, config) && ok;
  }
  return ok ? 0 : 1;
}
