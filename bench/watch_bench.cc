// Update throughput with standing queries: the same stream of move batches applied to the
// reference scene with no watcher, and with a watcher of no fences (the observer hook alone), of
// 10,000 fixed fences placed beside the bodies' cube (never reached: the cost of the fence tree
// alone), of the same fences among the bodies, and of those plus a contact watch, as moves per
// second and as ratios to the stream without a watcher measured in the same run. Each watcher
// runs either inline, on the writer's thread after every batch (Watcher::Attach), or as the
// server runs it, on a WatchDispatcher's workers. Rates are per CPU second, so that other
// processes on a shared machine do not move them: the writer's (its thread's CPU time over its
// Apply calls: what an UpdateStream's acks wait for) and the whole work's (the process's CPU
// time until the workers have evaluated every batch). Medians of several runs, the variants
// alternating within each run.
//
//   collide-bench-watch [--bodies N] [--fences F] [--batch B] [--runs R] [--threads T]

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <random>
#include <vector>

#include "bench/reference_scene.h"
#include "bench/stats.h"
#include "scene/scene.h"
#include "watch/watch_dispatcher.h"
#include "watch/watcher.h"

namespace collide::bench {
namespace {

struct Options {
  int bodies = 20000;
  int fences = 10000;
  int batch = 1000;
  int runs = 5;
  int threads = 2;
};

// CPU seconds of the calling thread, or of the whole process.
double CpuSeconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

std::vector<FenceSpec> MakeFences(int count, float side, float offset) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  auto u = [&] { return uniform(rng); };
  std::vector<FenceSpec> fences;
  for (int i = 0; i < count; ++i) {
    FenceSpec f;
    f.id = static_cast<uint64_t>(i + 1);
    const float a = u(), b = u(), c = u();
    f.pose.position = Vec3{side * a + offset, side * b, side * c};
    if (i % 2 == 0) {
      f.shape = Sphere{0.5f + 2.5f * u()};
    } else {
      const float x = u(), y = u(), z = u();
      f.shape = Box{{0.5f + 2.0f * x, 0.5f + 2.0f * y, 0.5f + 2.0f * z}};
    }
    fences.push_back(f);
  }
  return fences;
}

enum class Fences { kNone, kFar, kAmong, kAmongWithContacts };

struct Variant {
  const char* name;
  bool watcher;
  Fences fences;
  bool dispatched;
};

struct Rates {
  // Moves per CPU second of the writer's thread (its Apply calls), and of the whole process until
  // every batch was evaluated for the watcher.
  double writer = 0.0;
  double total = 0.0;
};

// Builds the scene, attaches the variant's watcher, then applies every round of moves in
// batches of `batch`; counts the events.
Rates Drive(const ReferenceScene& ref, const Options& o, const std::vector<FenceSpec>& fences,
            const std::vector<FenceSpec>& far_fences, const Variant& variant, uint64_t* events) {
  auto scene = std::make_shared<Scene>("bench", SceneOptions{});
  UpdateBatch create;
  for (size_t i = 0; i < ref.shapes.size(); ++i) {
    create.ops.push_back(
        UpsertOp(BodyDesc{.id = i + 1, .shape = ref.shapes[i], .pose = ref.poses[i]}));
  }
  if (!scene->Apply(create).ok()) std::abort();
  std::unique_ptr<WatchDispatcher> dispatcher;
  std::shared_ptr<Watcher> watcher;
  std::unique_ptr<WatchDispatcher::Attachment> attachment;
  if (variant.watcher) {
    std::vector<FenceSpec> f;
    if (variant.fences == Fences::kFar) {
      f = far_fences;
    } else if (variant.fences != Fences::kNone) {
      f = fences;
    }
    std::vector<ContactWatchSpec> contacts;
    if (variant.fences == Fences::kAmongWithContacts) contacts.push_back(ContactWatchSpec{.id = 1});
    // A queue that never overflows: every event is counted.
    watcher = std::make_shared<Watcher>(std::move(f), std::move(contacts), size_t{1} << 28);
    if (variant.dispatched) {
      dispatcher = std::make_unique<WatchDispatcher>(
          WatchDispatcher::Options{.threads = static_cast<size_t>(o.threads)});
      attachment = dispatcher->Attach(scene, watcher);
      dispatcher->WaitIdle();
    } else if (!watcher->Attach(scene).ok()) {
      std::abort();
    }
  }
  WatchMessage message;
  auto drain = [&] {
    if (watcher == nullptr) return;
    while (watcher->queue().Pop(&message)) {
      if (auto* u = std::get_if<WatchUpdate>(&message)) *events += u->events.size();
    }
  };
  drain();
  std::vector<Pose> poses = ref.poses;
  const int n = static_cast<int>(poses.size());
  UpdateBatch batch;
  int64_t moves = 0;
  const double writer_start = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
  const double process_start = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
  for (int round = 0; round < ref.rounds; ++round) {
    for (int begin = 0; begin < n; begin += o.batch) {
      batch.ops.clear();
      for (int i = begin; i < std::min(n, begin + o.batch); ++i) {
        poses[i].position += ref.moves[static_cast<size_t>(round) * n + i];
        batch.ops.push_back(SetPoseOp(static_cast<uint64_t>(i + 1), poses[i]));
      }
      if (!scene->Apply(batch).ok()) std::abort();
      moves += static_cast<int64_t>(batch.ops.size());
      if (dispatcher == nullptr) drain();
    }
  }
  const double writer_seconds = CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - writer_start;
  if (dispatcher != nullptr) {
    dispatcher->WaitIdle();
    drain();
  }
  const double process_seconds = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - process_start;
  if (watcher != nullptr && watcher->queue().overflows() > 0) std::abort();
  return Rates{.writer = static_cast<double>(moves) / writer_seconds,
               .total = static_cast<double>(moves) / process_seconds};
}

int Main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--bodies")) {
      o.bodies = std::atoi(argv[i + 1]);
    } else if (!std::strcmp(argv[i], "--fences")) {
      o.fences = std::atoi(argv[i + 1]);
    } else if (!std::strcmp(argv[i], "--batch")) {
      o.batch = std::atoi(argv[i + 1]);
    } else if (!std::strcmp(argv[i], "--runs")) {
      o.runs = std::atoi(argv[i + 1]);
    } else if (!std::strcmp(argv[i], "--threads")) {
      o.threads = std::max(1, std::atoi(argv[i + 1]));
    } else {
      std::fprintf(stderr,
                   "usage: %s [--bodies N] [--fences F] [--batch B] [--runs R] [--threads T]\n",
                   argv[0]);
      return 2;
    }
  }
  const float side = 120.0f;
  const ReferenceScene ref = MakeReferenceScene(o.bodies, side, 0, 8);
  const std::vector<FenceSpec> fences = MakeFences(o.fences, side, 0.0f);
  // The same fences in a cube beside the bodies' (which they never reach): the tree's cost alone.
  const std::vector<FenceSpec> far_fences = MakeFences(o.fences, side, 2.0f * side);
  std::printf(
      "reference scene: %d bodies, side %.0f; 8 rounds of moving every body, %d moves per "
      "batch; %d fixed fences; dispatched watchers on %d worker threads; median of %d runs\n",
      o.bodies, side, o.batch, o.fences, o.threads, o.runs);
  const Variant variants[] = {
      {"no watcher", false, Fences::kNone, false},
      {"inline: no fences", true, Fences::kNone, false},
      {"inline: fences elsewhere", true, Fences::kFar, false},
      {"inline: fences", true, Fences::kAmong, false},
      {"inline: fences + contacts", true, Fences::kAmongWithContacts, false},
      {"dispatched: no fences", true, Fences::kNone, true},
      {"dispatched: fences elsewhere", true, Fences::kFar, true},
      {"dispatched: fences", true, Fences::kAmong, true},
      {"dispatched: fences + contacts", true, Fences::kAmongWithContacts, true},
  };
  std::vector<std::vector<double>> writer(std::size(variants));
  std::vector<std::vector<double>> total(std::size(variants));
  std::vector<uint64_t> events(std::size(variants));
  for (int run = 0; run < o.runs; ++run) {
    for (size_t v = 0; v < std::size(variants); ++v) {
      uint64_t e = 0;
      const Rates rates = Drive(ref, o, fences, far_fences, variants[v], &e);
      writer[v].push_back(rates.writer);
      total[v].push_back(rates.total);
      events[v] = e;
    }
  }
  const double base = Median(writer[0]);
  const double total_base = Median(total[0]);
  std::printf("%-31s %13s %7s %13s %7s %11s\n", "variant", "writer mv/cpu", "ratio", "total mv/cpu",
              "ratio", "events/run");
  for (size_t v = 0; v < std::size(variants); ++v) {
    std::printf("%-31s %13.0f %7.2f %13.0f %7.2f %11llu\n", variants[v].name, Median(writer[v]),
                Median(writer[v]) / base, Median(total[v]), Median(total[v]) / total_base,
                static_cast<unsigned long long>(events[v]));
  }
  return 0;
}

}  // namespace
}  // namespace collide::bench

int main(int argc, char** argv) { return collide::bench::Main(argc, argv); }
