// In-process throughput of the durable store: pose updates applied per second through
// Database::Apply at 10,000 bodies in batches of 1,000 moves, under each durability policy,
// against the reference of the same batches applied to a bare Scene (no log) in the same run.
//
//   collide-bench-store [--dir <parent dir>] [--seconds <per run>] [--runs <n>]
//                       [--window <batches in flight>] [--bodies <n>] [--batch <moves>]
//
// Each run starts from an empty data directory created under --dir (default $TMPDIR or /tmp),
// so the numbers are those of that file system. Results are medians over --runs runs.

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <semaphore>
#include <string>
#include <vector>

#include "bench/stats.h"
#include "scene/scene.h"
#include "store/database.h"

namespace collide {
namespace {

using Clock = std::chrono::steady_clock;
using bench::Median;

struct Config {
  std::string dir;
  double seconds = 2.0;
  int runs = 3;
  int window = 16;
  int bodies = 10'000;
  int batch = 1'000;
};

Vec3 Home(int id) {
  return Vec3{static_cast<float>(id % 100) * 10.0f, 0.0f, static_cast<float>(id / 100) * 10.0f};
}

// A pool of move batches, so that generating them is not part of the timing. Batch j moves
// bodies [j * batch, (j + 1) * batch) (mod bodies) to a point within 2 units of their home:
// the steady stream of small moves a game server sends, which sometimes leave a body's fat box.
std::vector<UpdateBatch> MakeMoves(const Config& config) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> offset(-2.0f, 2.0f);
  std::vector<UpdateBatch> pool(64);
  int next = 0;
  for (UpdateBatch& b : pool) {
    for (int i = 0; i < config.batch; ++i, next = (next + 1) % config.bodies) {
      b.ops.push_back(SetPoseOp(
          next, Pose{.position = Home(next) + Vec3{offset(rng), offset(rng), offset(rng)}}));
    }
  }
  return pool;
}

UpdateBatch MakeBodies(const Config& config) {
  UpdateBatch create;
  for (int id = 0; id < config.bodies; ++id) {
    create.ops.push_back(UpsertOp(BodyDesc{.id = static_cast<uint64_t>(id),
                                           .shape = Sphere{0.5f},
                                           .pose = Pose{.position = Home(id)}}));
  }
  return create;
}

std::string MakeTempDir(const std::string& parent) {
  std::string pattern = parent + "/collide-bench-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    std::fprintf(stderr, "mkdtemp %s: %s\n", pattern.c_str(), std::strerror(errno));
    std::exit(1);
  }
  return buffer.data();
}

void RemoveDir(const std::string& dir) {
  if (DIR* d = ::opendir(dir.c_str())) {
    while (struct dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") ::unlink((dir + "/" + name).c_str());
    }
    ::closedir(d);
  }
  ::rmdir(dir.c_str());
}

// Pose updates per second applied to a bare scene: the in-memory ceiling.
double RunScene(const Config& config, const std::vector<UpdateBatch>& moves) {
  Scene scene("bench", SceneOptions{});
  if (!scene.Apply(MakeBodies(config)).ok()) std::exit(1);
  uint64_t updates = 0;
  const Clock::time_point start = Clock::now();
  const auto end = start + std::chrono::duration<double>(config.seconds);
  for (size_t i = 0; Clock::now() < end; ++i) {
    if (!scene.Apply(moves[i % moves.size()]).ok()) std::exit(1);
    updates += moves[i % moves.size()].ops.size();
  }
  return updates / std::chrono::duration<double>(Clock::now() - start).count();
}

// Pose updates per second through Database::Apply with `window` batches in flight; the clock
// stops when the last acknowledgement arrives.
double RunDatabase(const Config& config, const std::vector<UpdateBatch>& moves,
                   DurabilityPolicy policy, int window) {
  const std::string dir = MakeTempDir(config.dir);
  double rate = 0;
  {
    DatabaseOptions options;
    options.durability = policy;
    absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(dir, options);
    if (!db.ok()) {
      std::fprintf(stderr, "open %s: %s\n", dir.c_str(), db.status().ToString().c_str());
      std::exit(1);
    }
    if (!(*db)->CreateScene("bench", SceneOptions{}).ok() ||
        !(*db)->ApplyAndWait("bench", ClientTag{}, MakeBodies(config)).ok()) {
      std::exit(1);
    }
    std::counting_semaphore<1024> slots(window);
    std::atomic<uint64_t> acked{0};
    std::atomic<bool> failed{false};
    uint64_t sent = 0;
    const Clock::time_point start = Clock::now();
    const auto end = start + std::chrono::duration<double>(config.seconds);
    for (size_t i = 0; Clock::now() < end; ++i) {
      slots.acquire();
      const UpdateBatch& batch = moves[i % moves.size()];
      sent += batch.ops.size();
      const uint64_t n = batch.ops.size();
      (*db)->Apply("bench", ClientTag{}, batch, [&, n](absl::StatusOr<ApplyAck> ack) {
        if (!ack.ok()) failed = true;
        acked += n;
        slots.release();
      });
    }
    for (int i = 0; i < window; ++i) slots.acquire();  // every batch acknowledged
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (failed || acked != sent) {
      std::fprintf(stderr, "a batch failed\n");
      std::exit(1);
    }
    rate = acked / elapsed;
    if (!(*db)->Close().ok()) std::exit(1);
  }
  RemoveDir(dir);
  return rate;
}

int Main(int argc, char** argv) {
  Config config;
  const char* tmp = std::getenv("TMPDIR");
  config.dir = tmp != nullptr && *tmp ? tmp : "/tmp";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--dir") {
      config.dir = value;
    } else if (flag == "--seconds") {
      config.seconds = std::atof(value);
    } else if (flag == "--runs") {
      config.runs = std::max(1, std::atoi(value));
    } else if (flag == "--window") {
      config.window = std::clamp(std::atoi(value), 1, 1024);
    } else if (flag == "--bodies") {
      config.bodies = std::max(1, std::atoi(value));
    } else if (flag == "--batch") {
      config.batch = std::max(1, std::atoi(value));
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 1;
    }
  }
  const std::vector<UpdateBatch> moves = MakeMoves(config);
  std::printf(
      "store bench: %d bodies, batches of %d moves, %d in flight, %.1f s per run, median "
      "of %d runs, data under %s\n",
      config.bodies, config.batch, config.window, config.seconds, config.runs, config.dir.c_str());

  std::vector<double> reference;
  for (int r = 0; r < config.runs; ++r) reference.push_back(RunScene(config, moves));
  const double ceiling = Median(reference);
  std::printf("  %-28s %12.0f pose updates/s  (reference)\n", "scene only, no log", ceiling);

  struct Case {
    const char* name;
    DurabilityPolicy policy;
    int window;
  };
  const Case cases[] = {
      {"none", DurabilityPolicy::kNone, config.window},
      {"periodic (100 ms)", DurabilityPolicy::kPeriodic, config.window},
      {"always", DurabilityPolicy::kAlways, config.window},
      {"always, 1 batch in flight", DurabilityPolicy::kAlways, 1},
  };
  for (const Case& c : cases) {
    std::vector<double> rates;
    for (int r = 0; r < config.runs; ++r)
      rates.push_back(RunDatabase(config, moves, c.policy, c.window));
    const double rate = Median(rates);
    std::printf("  %-28s %12.0f pose updates/s  %.2fx the reference\n", c.name, rate,
                rate / ceiling);
  }
  return 0;
}

}  // namespace
}  // namespace collide

int main(int argc, char** argv) { return collide::Main(argc, argv); }
