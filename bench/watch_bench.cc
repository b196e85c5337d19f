// Update throughput with standing queries: the same stream of move batches applied to the
// reference scene with no watcher, with a watcher of no fences (the observer hook alone), with
// a watcher of 10,000 fixed fences placed beside the bodies' cube (never reached: the cost of
// the fence tree alone), with the same fences among the bodies, and with those plus a contact
// watch, as moves per second and as ratios to the stream without a watcher measured in the same
// run. Medians of several runs, the variants alternating within each run.
//
//   collide-bench-watch [--bodies N] [--fences F] [--batch B] [--runs R]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "bench/reference_scene.h"
#include "scene/scene.h"
#include "watch/watcher.h"

namespace collide::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int bodies = 20000;
  int fences = 10000;
  int batch = 1000;
  int runs = 5;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
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

enum class Variant { kNone, kEmptyWatcher, kFarFences, kFences, kFencesAndContacts };

// Builds the scene, attaches the variant's watcher, then applies every round of moves in
// batches of `batch`; returns moves per second and counts the events.
double Drive(const ReferenceScene& ref, const Options& o, const std::vector<FenceSpec>& fences,
             const std::vector<FenceSpec>& far_fences, Variant variant, uint64_t* events) {
  auto scene = std::make_shared<Scene>("bench", SceneOptions{});
  UpdateBatch create;
  for (size_t i = 0; i < ref.shapes.size(); ++i) {
    create.ops.push_back(
        UpsertOp(BodyDesc{.id = i + 1, .shape = ref.shapes[i], .pose = ref.poses[i]}));
  }
  if (!scene->Apply(create).ok()) std::abort();
  std::unique_ptr<Watcher> watcher;
  if (variant != Variant::kNone) {
    std::vector<FenceSpec> f;
    if (variant == Variant::kFarFences) {
      f = far_fences;
    } else if (variant != Variant::kEmptyWatcher) {
      f = fences;
    }
    std::vector<ContactWatchSpec> contacts;
    if (variant == Variant::kFencesAndContacts) contacts.push_back(ContactWatchSpec{.id = 1});
    watcher = std::make_unique<Watcher>(std::move(f), std::move(contacts), 1 << 20);
    if (!watcher->Attach(scene).ok()) std::abort();
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
  const Clock::time_point start = Clock::now();
  for (int round = 0; round < ref.rounds; ++round) {
    for (int begin = 0; begin < n; begin += o.batch) {
      batch.ops.clear();
      for (int i = begin; i < std::min(n, begin + o.batch); ++i) {
        poses[i].position += ref.moves[static_cast<size_t>(round) * n + i];
        batch.ops.push_back(SetPoseOp(static_cast<uint64_t>(i + 1), poses[i]));
      }
      if (!scene->Apply(batch).ok()) std::abort();
      moves += static_cast<int64_t>(batch.ops.size());
      drain();
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return static_cast<double>(moves) / seconds;
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
    } else {
      std::fprintf(stderr, "usage: %s [--bodies N] [--fences F] [--batch B] [--runs R]\n", argv[0]);
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
      "batch; %d fixed fences; median of %d runs\n",
      o.bodies, side, o.batch, o.fences, o.runs);
  const Variant variants[] = {Variant::kNone, Variant::kEmptyWatcher, Variant::kFarFences,
                              Variant::kFences, Variant::kFencesAndContacts};
  const char* names[] = {"no watcher", "watcher, no fences", "watcher, fences elsewhere",
                         "watcher, fences", "watcher, fences + contacts"};
  std::vector<std::vector<double>> rates(std::size(variants));
  std::vector<uint64_t> events(std::size(variants));
  for (int run = 0; run < o.runs; ++run) {
    for (size_t v = 0; v < std::size(variants); ++v) {
      uint64_t e = 0;
      rates[v].push_back(Drive(ref, o, fences, far_fences, variants[v], &e));
      events[v] = e;
    }
  }
  const double base = Median(rates[0]);
  std::printf("%-28s %12s %8s %14s\n", "variant", "moves/s", "ratio", "events/run");
  for (size_t v = 0; v < std::size(variants); ++v) {
    std::printf("%-28s %12.0f %8.2f %14llu\n", names[v], Median(rates[v]), Median(rates[v]) / base,
                static_cast<unsigned long long>(events[v]));
  }
  return 0;
}

}  // namespace
}  // namespace collide::bench

int main(int argc, char** argv) { return collide::bench::Main(argc, argv); }
