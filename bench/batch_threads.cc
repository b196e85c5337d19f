#include "bench/batch_threads.h"

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <vector>

#include "base/worker_pool.h"
#include "bench/stats.h"
#include "scene/scene.h"
#include "scene/scene_query.h"

namespace collide::bench {
namespace {

constexpr size_t kBatch = 4096;

// The CPU time this process has used, in seconds (all its threads).
double ProcessCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Rays per second through AnswerQueries in batches of kBatch; the hits found, in `hits_found`;
// the process's CPU seconds per wall second meanwhile, in `cpus` (how many CPUs it got).
double RaysPerSecond(const Scene& scene, const std::vector<Query>& queries, const QuerySplit& split,
                     size_t* hits_found, double* cpus) {
  std::vector<absl::Status> status;
  std::vector<QueryResult> results;
  std::vector<QueryHit> hits;
  *hits_found = 0;
  const size_t batches = queries.size() / kBatch;
  const double cpu_start = ProcessCpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  for (size_t b = 0; b < batches; ++b) {
    AnswerQueries(scene, std::span<const Query>(queries).subspan(b * kBatch, kBatch), {}, &status,
                  &results, &hits, split);
    *hits_found += hits.size();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  *cpus = (ProcessCpuSeconds() - cpu_start) / seconds;
  return static_cast<double>(batches * kBatch) / seconds;
}

}  // namespace

std::string BatchThreadsRow(const ReferenceScene& reference, int runs) {
  const int n = static_cast<int>(reference.shapes.size());
  SceneState state;
  for (int i = 0; i < n; ++i) {
    state.bodies.push_back(BodyState{
        .id = static_cast<uint64_t>(i), .shape = reference.shapes[i], .pose = reference.poses[i]});
  }
  auto scene = Scene::Restore("bench", SceneOptions{}, state);
  if (!scene.ok()) {
    std::fprintf(stderr, "cannot build the scene: %s\n", scene.status().ToString().c_str());
    std::exit(1);
  }
  std::vector<Query> queries;
  for (const Ray& ray : reference.rays) queries.push_back(Query{.shape_query = RaycastQuery{ray}});
  WorkerPool pool(2);
  std::vector<double> one, two, ratio, cpus_one, cpus_two;
  for (int r = 0; r < runs; ++r) {
    size_t hits_one = 0;
    size_t hits_two = 0;
    // Alternate which goes first, so drifting machine load hits both alike.
    double a = 0;
    double b = 0;
    double cpus_a = 0;
    double cpus_b = 0;
    if (r % 2 == 0) {
      a = RaysPerSecond(**scene, queries, QuerySplit{}, &hits_one, &cpus_a);
      b = RaysPerSecond(**scene, queries, QuerySplit{.pool = &pool}, &hits_two, &cpus_b);
    } else {
      b = RaysPerSecond(**scene, queries, QuerySplit{.pool = &pool}, &hits_two, &cpus_b);
      a = RaysPerSecond(**scene, queries, QuerySplit{}, &hits_one, &cpus_a);
    }
    cpus_one.push_back(cpus_a);
    cpus_two.push_back(cpus_b);
    if (hits_one != hits_two) {
      std::fprintf(stderr, "one and two threads disagree: %zu vs %zu hits\n", hits_one, hits_two);
      std::exit(1);
    }
    one.push_back(a);
    two.push_back(b);
    ratio.push_back(b / a);
  }
  char line[256];
  std::snprintf(line, sizeof line, "%-30s %7d %14.0f %14.0f %8.2f %6.2f %6.2f",
                "batch4096_threads2_over_1", n, Median(one), Median(two), Median(ratio),
                Median(cpus_one), Median(cpus_two));
  return line;
}

}  // namespace collide::bench
