// Past-tick queries on the reference scene (shared/bench/README.md): N bodies (100,000 by
// default) in a scene keeping a 64-tick history; each tick moves 10% of the bodies by the
// reference scene's random steps. Then the reference rays are cast (closest hit) at the current
// tick and at past ticks 0 to 63 ticks back, and the ratio of each to the current cast is
// reported, with the history's memory per retained tick and the writer's cost per tick with and
// without history. Each run casts every set three times in rounds; a time is the median over all
// rounds of all --runs runs, a ratio the median of the ratios taken within each round. Times are
// given by the wall clock and by the thread's CPU time (steadier on a shared machine).
//
//   collide-bench-history [--bodies N] [--ticks K] [--rays Q] [--runs R]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench/reference_scene.h"
#include "bench/stats.h"
#include "history/past_tick.h"
#include "query/batch.h"
#include "query/query_engine.h"
#include "query/run_query.h"
#include "scene/scene.h"

namespace collide::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int bodies = 100000;
  uint32_t ticks = 64;
  int rays = 20000;
  int runs = 3;
};

// A scene of the reference bodies, all dynamic, driven through `ticks` + 1 ticks of moves of
// 10% of the bodies (a fresh random 10% each tick). Returns the time per tick spent in Apply.
std::unique_ptr<Scene> Drive(const ReferenceScene& ref, uint32_t history_ticks, int ticks,
                             double* apply_ms_per_tick) {
  auto scene = std::make_unique<Scene>("bench", SceneOptions{.history_ticks = history_ticks});
  const int n = static_cast<int>(ref.poses.size());
  UpdateBatch create;
  create.tick = 0;
  for (int i = 0; i < n; ++i) {
    create.ops.push_back(UpsertOp(BodyDesc{
        .id = static_cast<uint64_t>(i + 1), .shape = ref.shapes[i], .pose = ref.poses[i]}));
  }
  if (!scene->Apply(create).ok()) std::abort();
  std::vector<Pose> poses = ref.poses;
  std::mt19937 rng(7);
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  double total = 0;
  for (int t = 1; t <= ticks; ++t) {
    std::shuffle(order.begin(), order.end(), rng);
    UpdateBatch batch;
    batch.tick = static_cast<uint64_t>(t);
    for (int k = 0; k < n / 10; ++k) {
      const int i = order[k];
      poses[i].position =
          poses[i].position + ref.moves[static_cast<size_t>(t % ref.rounds) * n + i];
      batch.ops.push_back(SetPoseOp(static_cast<uint64_t>(i + 1), poses[i]));
    }
    const auto start = Clock::now();
    if (!scene->Apply(batch).ok()) std::abort();
    total += std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  }
  *apply_ms_per_tick = total / ticks;
  return scene;
}

// The calling thread's CPU time in nanoseconds: unlike the wall clock, it does not count the
// time other processes of a shared machine hold the core.
double ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// Nanoseconds (wall clock, and CPU time through `cpu_ns`) per closest-hit raycast at `ticks_back`
// ticks before the current one (-1: a plain current query, without at_tick). Returns the hit
// count through `hits`.
double CastAt(const Scene& scene, const ReferenceScene& ref, int ticks_back, long* hits,
              double* cpu_ns) {
  std::vector<Query> queries(ref.rays.size());
  const uint64_t now = scene.tick();
  for (size_t i = 0; i < ref.rays.size(); ++i) {
    queries[i].shape_query = RaycastQuery{.ray = ref.rays[i]};
    if (ticks_back >= 0) queries[i].at_tick = now - static_cast<uint64_t>(ticks_back);
  }
  std::vector<QueryHit> out;
  long found = 0;
  const auto start = Clock::now();
  const double cpu_start = ThreadCpuNs();
  scene.ReadWithHistory([&](const CollisionWorld& world, const PoseHistory& history, uint64_t) {
    for (const Query& q : queries) {
      out.clear();
      const std::optional<TickPoint> at = PastTickOf(history, q);
      found += (at.has_value() ? RunQuery(PastTick(world, history, *at), q, &out)
                               : RunQuery(CurrentTree(world), q, &out))
                   .hit_count;
    }
    return 0;
  });
  const double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  *cpu_ns = (ThreadCpuNs() - cpu_start) / static_cast<double>(queries.size());
  *hits = found;
  return ns / static_cast<double>(queries.size());
}

int Main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--bodies"))
      o.bodies = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--ticks"))
      o.ticks = static_cast<uint32_t>(std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--rays"))
      o.rays = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--runs"))
      o.runs = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: %s [--bodies N] [--ticks K] [--rays Q] [--runs R]\n", argv[0]);
      return 2;
    }
  }
  const float side = o.bodies >= 100000 ? 250.0f : 120.0f;
  const ReferenceScene ref = MakeReferenceScene(o.bodies, side, o.rays, 8);
  std::printf(
      "reference scene: %d bodies, side %.0f, %d rays; %u-tick window, 10%% of bodies "
      "moving per tick; median of %d runs\n",
      o.bodies, side, o.rays, o.ticks, o.runs);

  const int back[] = {-1, 0, 1, 4, 8, 16, 32, static_cast<int>(o.ticks) - 1};
  std::vector<std::vector<double>> ns(std::size(back));
  std::vector<std::vector<double>> ratios(std::size(back));
  std::vector<std::vector<double>> cpu_ns(std::size(back));
  std::vector<std::vector<double>> cpu_ratios(std::size(back));
  std::vector<double> apply_hist, apply_none, bytes_per_tick, index_per_tick;
  size_t segments = 0;
  std::vector<long> hit_counts(std::size(back));
  for (int run = 0; run < o.runs; ++run) {
    double ms_none = 0, ms_hist = 0;
    const SceneStats base = Drive(ref, 0, static_cast<int>(o.ticks), &ms_none)->Stats();
    std::unique_ptr<Scene> scene = Drive(ref, o.ticks, static_cast<int>(o.ticks), &ms_hist);
    const SceneStats stats = scene->Stats();
    apply_none.push_back(ms_none);
    apply_hist.push_back(ms_hist);
    // Retained ticks hold records for ticks oldest+1 .. tick.
    const double ticks_held = static_cast<double>(stats.tick - stats.oldest_tick);
    bytes_per_tick.push_back(static_cast<double>(stats.history_bytes - base.history_bytes) /
                             ticks_held);
    scene->ReadWithHistory([&](const CollisionWorld&, const PoseHistory& history, uint64_t) {
      index_per_tick.push_back(static_cast<double>(history.IndexBytes()) / ticks_held);
      segments = history.SegmentCount();
      return 0;
    });
    // Rounds of every cast back to back, each ratio taken within its round, so that a change
    // of the machine's load between casts moves both sides of a ratio alike.
    for (int round = 0; round < 3; ++round) {
      double current = 0;
      double current_cpu = 0;
      for (size_t b = 0; b < std::size(back); ++b) {
        double cpu = 0;
        ns[b].push_back(CastAt(*scene, ref, back[b], &hit_counts[b], &cpu));
        cpu_ns[b].push_back(cpu);
        if (b == 0) {
          current = ns[b].back();
          current_cpu = cpu;
        }
        ratios[b].push_back(ns[b].back() / current);
        cpu_ratios[b].push_back(cpu / current_cpu);
      }
    }
  }
  std::printf("%-28s %10s %8s %10s %8s %10s\n", "raycast (closest)", "ns/query", "ratio", "cpu ns",
              "ratio", "hits");
  for (size_t b = 0; b < std::size(back); ++b) {
    std::string label =
        back[b] < 0 ? "current (no at_tick)" : "at_tick = now - " + std::to_string(back[b]);
    std::printf("%-28s %10.0f %8.2f %10.0f %8.2f %10ld\n", label.c_str(), Median(ns[b]),
                Median(ratios[b]), Median(cpu_ns[b]), Median(cpu_ratios[b]), hit_counts[b]);
  }
  std::printf(
      "history memory: %.0f bytes per retained tick (%.1f bytes per moved body), of which %.0f in "
      "the spatial index (%zu segments)\n",
      Median(bytes_per_tick), Median(bytes_per_tick) / (o.bodies / 10), Median(index_per_tick),
      segments);
  std::printf("apply per tick (%d moves): %.2f ms with history, %.2f ms without (ratio %.2f)\n",
              o.bodies / 10, Median(apply_hist), Median(apply_none),
              Median(apply_hist) / Median(apply_none));
  return 0;
}

}  // namespace
}  // namespace collide::bench

int main(int argc, char** argv) { return collide::bench::Main(argc, argv); }
