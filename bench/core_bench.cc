// collide-bench-core: the reference workload of shared/bench/README.md, run for collide's
// in-process query engine and for Bullet (btCollisionWorld over btDbvtBroadphase) in the same
// process, single thread, alternating. Prints each figure per run, the hit-rate accounting, and a
// final table of medians: `figure N collide_per_s bullet_per_s ratio`. Built with Embree, it
// also runs the second peer (bench/embree_peer.h: Embree's BVH over collide's own shape
// functions) on the ray figures and the moves, refitted and rebuilt, and prints a second table
// of collide against Embree, with the bodies each ray hit compared.
// Last, a 4,096-ray batch through the scene's query entry point on one thread against a pool
// of two (batch_threads.h), with the machine's load average.
//
//   collide-bench-core [--quick] [--runs R] [--queries Q] [--sizes 10000,100000] [--rounds K]
//                      [--simd auto|sse|avx2|avx512]
//
// --simd picks the traversal kernels' instruction set (bvh/simd_level.h; default: the best the
// CPU has); the tables' headings name the one used.
//
// After the table, the quality of collide's tree after the update rounds: its SAH cost over that
// of a fresh binned-SAH build of the same bodies (1.00 = as good as new).
//
// The sphere casts and overlaps (a tenth of the rays' count) take a few milliseconds a pass on
// collide: each system repeats its pass until kMinTimedSeconds have passed and its rate counts
// every pass, so that one preemption on a shared machine does not decide the figure.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bench/batch_threads.h"
#include "bench/bullet_peer.h"
#if COLLIDE_BENCH_WITH_EMBREE
#include <embree3/rtcore_config.h>

#include "bench/embree_peer.h"
#endif
#include "bench/reference_scene.h"
#include "bench/stats.h"
#include "bvh/simd_level.h"
#include "geom/closest_point.h"
#include "query/batch.h"
#include "query/collector.h"
#include "query/collision_world.h"
#include "query/query_engine.h"
#include "query/run_batch.h"

namespace collide::bench {
namespace {

using Clock = std::chrono::steady_clock;
double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The shortest timed span of a sphere-cast or overlap figure (TimedRate).
constexpr double kMinTimedSeconds = 0.2;

// Runs `pass(first)` (one pass over `queries` queries; `first` is true for the first pass only,
// whose findings are the ones counted) until kMinTimedSeconds have passed, at least once, and
// returns the queries per second over all the passes.
template <typename Pass>
double TimedRate(int queries, Pass&& pass) {
  const Clock::time_point t0 = Clock::now();
  long passes = 0;
  double elapsed = 0.0;
  do {
    pass(passes == 0);
    ++passes;
    elapsed = SecondsSince(t0);
  } while (elapsed < kMinTimedSeconds);
  return static_cast<double>(passes) * queries / elapsed;
}

constexpr int kDefaultRounds = 5;
constexpr float kCastRadius = 0.5f;
constexpr float kOverlapRadius = 2.0f;
constexpr int kBatchSize = 64;

// The figures of one system in one run, in operations per second, and what it found.
struct Figures {
  std::map<std::string, double> per_s;
  std::vector<int> ray_body;        // closest body per ray (-1: miss), before the moves
  std::vector<float> ray_distance;  // its distance
  std::vector<char> ray_inside;     // collide only: the ray started inside its hit body
  long sphere_hits = 0;
  long overlap_contacts = 0;
  long ray_hits_after = 0;
  double sah_after_vs_fresh = 0.0;  // collide only: see RunCollide
};

// update_with_respawns: every round also removes one body in kRespawnStride and adds it back
// at the pose of body (i + n / 2 + 1) % n, which no respawn of the round moved.
constexpr int kRespawnStride = 100;

// The number of update rounds the scene was drawn with.
int RoundsOf(const ReferenceScene& scene) {
  return static_cast<int>(scene.moves.size() / scene.shapes.size());
}

Figures RunCollide(const ReferenceScene& scene) {
  Figures f;
  const int n = static_cast<int>(scene.shapes.size());
  const int q = static_cast<int>(scene.rays.size());
  const int qs = q / 10;
  CollisionWorld world;
  std::vector<BodyDesc> descs(n);
  for (int i = 0; i < n; ++i) {
    descs[i] =
        BodyDesc{.id = static_cast<uint64_t>(i), .shape = scene.shapes[i], .pose = scene.poses[i]};
  }
  std::vector<BodyHandle> handles(n);
  world.AddBulk(descs, handles);
  QueryFilter all;

  f.ray_body.assign(q, -1);
  f.ray_distance.assign(q, 0.0f);
  f.ray_inside.assign(q, 0);
  auto t0 = Clock::now();
  for (int i = 0; i < q; ++i) {
    ClosestHitCollector c(scene.rays[i].max_distance);
    Raycast(world, scene.rays[i], all, c);
    if (c.has_hit()) {
      f.ray_body[i] = static_cast<int>(c.hit().body_id);
      f.ray_distance[i] = c.hit().distance;
      f.ray_inside[i] = c.hit().start_overlapping;
    }
  }
  f.per_s["raycast_closest"] = q / SecondsSince(t0);

  std::vector<Query> queries(q);
  for (int i = 0; i < q; ++i) queries[i] = Query{.shape_query = RaycastQuery{.ray = scene.rays[i]}};
  std::vector<QueryResult> results;
  std::vector<QueryHit> hits;
  results.reserve(kBatchSize);
  hits.reserve(kBatchSize);
  long batch_hits = 0;
  t0 = Clock::now();
  for (int i = 0; i < q; i += kBatchSize) {
    int count = std::min(kBatchSize, q - i);
    results.clear();
    hits.clear();
    RunBatch(CurrentTree(world), std::span<const Query>(queries.data() + i, count), &results,
             &hits);
    batch_hits += static_cast<long>(hits.size());
  }
  f.per_s["raycast_closest_batch64"] = q / SecondsSince(t0);
  long single_hits =
      std::count_if(f.ray_body.begin(), f.ray_body.end(), [](int b) { return b >= 0; });
  if (batch_hits != single_hits) {
    std::fprintf(stderr, "batch and single raycasts disagree: %ld vs %ld hits\n", batch_hits,
                 single_hits);
    std::exit(1);
  }

  f.per_s["spherecast_closest"] = TimedRate(qs, [&](bool first) {
    long hits = 0;
    for (int i = 0; i < qs; ++i) {
      ClosestHitCollector c(scene.rays[i].max_distance);
      SphereCast(world, scene.rays[i], kCastRadius, all, c);
      hits += c.has_hit();
    }
    if (first) f.sphere_hits = hits;
  });

  std::vector<QueryHit> overlap_hits;
  overlap_hits.reserve(64);
  f.per_s["overlap_sphere"] = TimedRate(qs, [&](bool first) {
    long contacts = 0;
    for (int i = 0; i < qs; ++i) {
      AllHitsCollector c(std::numeric_limits<float>::infinity(), 1 << 20, &overlap_hits);
      Pose at;
      at.position = scene.rays[i].origin;
      OverlapShape(world, Sphere{kOverlapRadius}, at, /*detail=*/false, all, c);
      contacts += static_cast<long>(overlap_hits.size());
    }
    if (first) f.overlap_contacts = contacts;
  });

  std::vector<Pose> poses = scene.poses;
  const int rounds = RoundsOf(scene);
  // Moves every body by its step of round k.
  auto move_all = [&](int k) {
    const Vec3* step = scene.moves.data() + static_cast<size_t>(k) * n;
    for (int i = 0; i < n; ++i) {
      poses[i].position += step[i];
      world.SetPose(handles[i], poses[i]);
    }
  };
  t0 = Clock::now();
  for (int k = 0; k < rounds; ++k) {
    move_all(k);
    // As Bullet's updateAabbs ends its round, this ends ours: the tree is tight and its query
    // form current before the next queries.
    world.FinishUpdates();
  }
  f.per_s["update_all_bodies"] = double(rounds) * n / SecondsSince(t0);

  t0 = Clock::now();
  for (int i = 0; i < q; ++i) {
    ClosestHitCollector c(scene.rays[i].max_distance);
    Raycast(world, scene.rays[i], all, c);
    f.ray_hits_after += c.has_hit();
  }
  f.per_s["raycast_closest_after_updates"] = q / SecondsSince(t0);

  // Untimed: how far the moved tree is from a fresh build of the same leaves.
  // (FinishUpdates leaves the binary tree's boxes loose between its quality checks.)
  DynamicTree tree = world.tree(BodyKind::kDynamic);
  tree.Refit();
  DynamicTree fresh = tree;
  fresh.Rebuild();
  f.sah_after_vs_fresh = tree.SahCost() / fresh.SahCost();

  // The rounds of moves again, each also removing one body in kRespawnStride and adding it back
  // where body (i + n / 2 + 1) % n stands (a game's deaths and spawns elsewhere), the batch
  // ended as above.
  t0 = Clock::now();
  for (int k = 0; k < rounds; ++k) {
    move_all(k);
    for (int i = k % kRespawnStride; i < n; i += kRespawnStride) {
      poses[i] = poses[(i + n / 2 + 1) % n];
      world.Remove(handles[i]);
      handles[i] = world.Add(
          BodyDesc{.id = static_cast<uint64_t>(i), .shape = scene.shapes[i], .pose = poses[i]});
    }
    world.FinishUpdates();
  }
  f.per_s["update_with_respawns"] = double(rounds) * n / SecondsSince(t0);
  return f;
}

Figures RunBullet(const ReferenceScene& scene) {
  Figures f;
  const int n = static_cast<int>(scene.shapes.size());
  const int q = static_cast<int>(scene.rays.size());
  const int qs = q / 10;
  BulletPeer bullet(scene);
  f.ray_body.assign(q, -1);
  f.ray_distance.assign(q, 0.0f);
  auto t0 = Clock::now();
  for (int i = 0; i < q; ++i) {
    float d = 0;
    f.ray_body[i] = bullet.RayClosest(scene.rays[i], &d);
    f.ray_distance[i] = d;
  }
  double ray_s = SecondsSince(t0);
  f.per_s["raycast_closest"] = q / ray_s;
  // Bullet has no batch entry point: its per-ray rate is the reference for the batch figure.
  f.per_s["raycast_closest_batch64"] = q / ray_s;
  f.per_s["spherecast_closest"] = TimedRate(qs, [&](bool first) {
    long hits = 0;
    for (int i = 0; i < qs; ++i) hits += bullet.SphereCastClosest(scene.rays[i], kCastRadius);
    if (first) f.sphere_hits = hits;
  });
  f.per_s["overlap_sphere"] = TimedRate(qs, [&](bool first) {
    long contacts = 0;
    for (int i = 0; i < qs; ++i) {
      contacts += bullet.OverlapSphereContacts(scene.rays[i].origin, kOverlapRadius);
    }
    if (first) f.overlap_contacts = contacts;
  });
  t0 = Clock::now();
  const int rounds = RoundsOf(scene);
  for (int k = 0; k < rounds; ++k) bullet.MoveAll(scene, k);
  f.per_s["update_all_bodies"] = double(rounds) * n / SecondsSince(t0);
  t0 = Clock::now();
  for (int i = 0; i < q; ++i) {
    float d = 0;
    f.ray_hits_after += bullet.RayClosest(scene.rays[i], &d) >= 0;
  }
  f.per_s["raycast_closest_after_updates"] = q / SecondsSince(t0);
  t0 = Clock::now();
  for (int k = 0; k < rounds; ++k) {
    bullet.MoveAllRespawning(scene, k, static_cast<size_t>(k % kRespawnStride), kRespawnStride);
  }
  f.per_s["update_with_respawns"] = double(rounds) * n / SecondsSince(t0);
  return f;
}

#if COLLIDE_BENCH_WITH_EMBREE
// The rays on which two runs name different bodies, not counting ties (both hit, at the same
// distance). collide and Embree use the same exact shape functions, so anything else is a
// traversal bug on one side.
long CountRayDisagreements(const Figures& c, const Figures& e) {
  long differ = 0;
  for (size_t i = 0; i < c.ray_body.size(); ++i) {
    if (c.ray_body[i] != e.ray_body[i] &&
        !(c.ray_body[i] >= 0 && e.ray_body[i] >= 0 &&
          std::abs(c.ray_distance[i] - e.ray_distance[i]) <= 1e-5f)) {
      ++differ;
    }
  }
  return differ;
}

// Embree on the figures it can run: closest rays one at a time (rtcIntersect1) and in packets
// of 16 (rtcIntersect16), the rounds of moves (each ending in a commit: a refit or a rebuild),
// and the closest rays after them. `ray_body` keeps the bodies hit before the moves.
Figures RunEmbree(const ReferenceScene& scene, bool refit) {
  Figures f;
  const int n = static_cast<int>(scene.shapes.size());
  const int q = static_cast<int>(scene.rays.size());
  auto t0 = Clock::now();
  EmbreePeer embree(scene, refit);
  f.per_s["build"] = n / SecondsSince(t0);
  f.ray_body.assign(q, -1);
  f.ray_distance.assign(q, 0.0f);
  t0 = Clock::now();
  for (int i = 0; i < q; ++i) {
    float d = 0;
    f.ray_body[i] = embree.RayClosest(scene.rays[i], &d);
    f.ray_distance[i] = d;
  }
  f.per_s["raycast_closest"] = q / SecondsSince(t0);
  Figures packets;
  packets.ray_body.assign(q, -1);
  packets.ray_distance.assign(q, 0.0f);
  t0 = Clock::now();
  embree.RaysClosest16(scene.rays.data(), q, packets.ray_body.data(), packets.ray_distance.data());
  f.per_s["raycast_closest_batch64"] = q / SecondsSince(t0);
  if (const long differ = CountRayDisagreements(f, packets); differ > 0) {
    std::fprintf(stderr, "embree: packets of 16 and single rays disagree on %ld rays\n", differ);
    std::exit(1);
  }
  t0 = Clock::now();
  const int rounds = RoundsOf(scene);
  for (int k = 0; k < rounds; ++k) embree.MoveAll(scene, k);
  f.per_s["update_all_bodies"] = double(rounds) * n / SecondsSince(t0);
  t0 = Clock::now();
  for (int i = 0; i < q; ++i) {
    float d = 0;
    f.ray_hits_after += embree.RayClosest(scene.rays[i], &d) >= 0;
  }
  f.per_s["raycast_closest_after_updates"] = q / SecondsSince(t0);
  return f;
}

#endif

// Independent evidence for one body and one ray, from the signed distance (ClosestPoint)
// sampled densely along the ray and bisected: the first contact (infinity when every sample is
// outside) and the smallest signed distance seen.
struct SampledContact {
  float first = std::numeric_limits<float>::infinity();
  float min_distance = std::numeric_limits<float>::infinity();
};

SampledContact SampleAlongRay(const ReferenceScene& scene, int b, const Ray& ray) {
  SampledContact out;
  constexpr int kSamples = 8000;
  auto sdf = [&](float t) {
    return ClosestPoint(scene.shapes[b], scene.poses[b], ray.origin + ray.direction * t)
        .signed_distance;
  };
  float prev_t = 0.0f;
  for (int s = 0; s <= kSamples; ++s) {
    const float t = ray.max_distance * s / kSamples;
    const float d = sdf(t);
    out.min_distance = std::min(out.min_distance, d);
    if (d <= 0.0f) {
      // solve: sdf(t) = 0 between the last outside sample and this one, by bisection.
      float lo = prev_t, hi = t;
      if (s == 0) lo = hi = 0.0f;
      for (int k = 0; k < 40 && hi - lo > 1e-6f; ++k) {
        const float mid = 0.5f * (lo + hi);
        (sdf(mid) <= 0.0f ? hi : lo) = mid;
      }
      out.first = hi;
      return out;
    }
    prev_t = t;
  }
  return out;
}

// Explains every ray on which collide and Bullet disagree, each by independent evidence (the
// signed distance sampled along the ray for the bodies either side reports): Bullet's
// documented conventions (a body the ray starts inside is ignored; hits within about 0.008 of a
// surface), then which side is wrong. A "collide wrong" count above zero is a bug to fix.
void AccountRays(const ReferenceScene& scene, const Figures& c, const Figures& b) {
  const int q = static_cast<int>(scene.rays.size());
  long agree = 0, start_inside = 0, bullet_grazing = 0, bullet_false_hit = 0, bullet_missed = 0,
       bullet_distance_off = 0, collide_wrong = 0, grazing_either = 0;
  long c_hits = 0, b_hits = 0;
  constexpr float kGraze = 0.01f;        // Bullet's documented grazing tolerance, ~0.008
  constexpr float kDistanceTol = 0.01f;  // GJK-based distances vs the exact ones
  int shown = 0;
  auto report = [&](int i, const char* why) {
    if (shown++ < 10) {
      std::printf("  collide wrong? ray %d (%s): collide body %d at %.5f, bullet body %d at %.5f\n",
                  i, why, c.ray_body[i], c.ray_distance[i], b.ray_body[i], b.ray_distance[i]);
    }
  };
  for (int i = 0; i < q; ++i) {
    const Ray& ray = scene.rays[i];
    const int cb = c.ray_body[i], bb = b.ray_body[i];
    c_hits += cb >= 0;
    b_hits += bb >= 0;
    if (cb == bb && (cb < 0 || std::abs(c.ray_distance[i] - b.ray_distance[i]) <= kDistanceTol)) {
      ++agree;
      continue;
    }
    // Bullet ignores a body the ray starts inside.
    if (cb >= 0 && c.ray_inside[i]) {
      ++start_inside;
      continue;
    }
    // collide's own answer must match the evidence for its body.
    if (cb >= 0) {
      const SampledContact e = SampleAlongRay(scene, cb, ray);
      if (e.first == std::numeric_limits<float>::infinity() && e.min_distance <= kGraze) {
        // A graze thinner than the sampling step: either answer is within the tolerance.
        ++grazing_either;
        continue;
      }
      if (!(std::abs(e.first - c.ray_distance[i]) <= kDistanceTol)) {
        ++collide_wrong;
        report(i, "collide's hit not confirmed by sampling");
        continue;
      }
    }
    if (bb < 0) {
      // Bullet misses a hit collide confirmed.
      ++bullet_missed;
      continue;
    }
    const SampledContact e = SampleAlongRay(scene, bb, ray);
    if (e.first == std::numeric_limits<float>::infinity()) {
      // Bullet's body is never touched by the ray.
      if (e.min_distance <= kGraze) {
        ++bullet_grazing;
      } else {
        ++bullet_false_hit;
      }
      continue;
    }
    if (cb >= 0 && c.ray_distance[i] <= e.first + kDistanceTol) {
      // Bullet's body is touched, but not before collide's confirmed closest hit: Bullet
      // reported it late, or too early on the same body.
      ++bullet_distance_off;
      continue;
    }
    // The ray touches Bullet's body before collide's answer: collide missed it.
    ++collide_wrong;
    report(i, "bullet's body is touched first");
  }
  std::printf(
      "ray accounting (%d rays): collide hits %.2f%%, bullet hits %.2f%%; agree %ld; explained by "
      "Bullet's conventions: ray starts inside %ld (%.2f%%), grazing within %.3f %ld (%.2f%%); "
      "collide grazes within %.3f %ld; Bullet wrong by sampling: false hit %ld, missed hit %ld, "
      "distance off by > %.2f %ld; collide wrong by sampling: %ld\n",
      q, 100.0 * c_hits / q, 100.0 * b_hits / q, agree, start_inside, 100.0 * start_inside / q,
      kGraze, bullet_grazing, 100.0 * bullet_grazing / q, kGraze, grazing_either, bullet_false_hit,
      bullet_missed, kDistanceTol, bullet_distance_off, collide_wrong);
}

}  // namespace
}  // namespace collide::bench

int main(int argc, char** argv) {
  using namespace collide::bench;
  int runs = 3;
  int queries = 200000;
  int rounds = kDefaultRounds;
  std::vector<std::pair<int, float>> sizes = {{10000, 120.f}, {100000, 250.f}};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      runs = 1;
      queries = 20000;
    } else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--queries") && i + 1 < argc) {
      queries = std::max(10, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--simd") && i + 1 < argc) {
      const std::string name = argv[++i];
      collide::SimdLevel level = collide::BestSimdLevel();
      if (name != "auto" && !collide::ParseSimdLevel(name, &level)) {
        std::fprintf(stderr, "--simd: must be auto, sse, avx2 or avx512, got \"%s\"\n",
                     name.c_str());
        return 2;
      }
      if (!collide::SetSimdLevel(level)) {
        std::fprintf(stderr, "--simd: this CPU lacks %s (best: %s)\n", name.c_str(),
                     std::string(collide::SimdLevelName(collide::BestSimdLevel())).c_str());
        return 2;
      }
    } else if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc) {
      sizes.clear();
      for (char* tok = std::strtok(argv[++i], ","); tok; tok = std::strtok(nullptr, ",")) {
        int n = std::atoi(tok);
        sizes.push_back({n, n >= 100000 ? 250.f : 120.f});
      }
    } else {
      std::fprintf(stderr,
                   "usage: %s [--quick] [--runs R] [--queries Q] [--sizes 10000,100000] "
                   "[--rounds K] [--simd auto|sse|avx2|avx512]\n"
                   "Sizes of 100000 and more use the cube side L = 250, smaller ones L = 120.\n"
                   "--rounds: update rounds before the last raycasts (default %d).\n",
                   argv[0], kDefaultRounds);
      return 2;
    }
  }
  const char* kFigures[] = {
      "raycast_closest",   "raycast_closest_batch64",       "spherecast_closest",  "overlap_sphere",
      "update_all_bodies", "raycast_closest_after_updates", "update_with_respawns"};
  std::vector<std::string> table;
#if COLLIDE_BENCH_WITH_EMBREE
  // collide / Embree: the ray figures against the refitted scene (the moves also against the
  // rebuilt one: Embree's other way), as medians of per-run ratios.
  const char* kEmbreeFigures[] = {"raycast_closest", "raycast_closest_batch64", "update_all_bodies",
                                  "raycast_closest_after_updates"};
  std::vector<std::string> embree_table;
#endif
  std::vector<std::string> threads_table;
  std::vector<std::string> quality;
  for (auto [n, side] : sizes) {
    ReferenceScene scene = MakeReferenceScene(n, side, queries, rounds);
    std::map<std::string, std::vector<double>> ratio, ours, theirs;
#if COLLIDE_BENCH_WITH_EMBREE
    std::map<std::string, std::vector<double>> embree_refit_ratio, embree_rebuild_ratio,
        embree_refit, embree_rebuild;
#endif
    std::vector<double> sah_ratio;
    for (int r = 0; r < runs; ++r) {
      // Alternate which system goes first, so drifting machine load hits both alike.
      Figures b, c;
      if (r % 2 == 0) {
        b = RunBullet(scene);
        c = RunCollide(scene);
      } else {
        c = RunCollide(scene);
        b = RunBullet(scene);
      }
      std::printf("run %d N=%d L=%.0f\n", r + 1, n, side);
      for (const char* fig : kFigures) {
        double cv = c.per_s[fig], bv = b.per_s[fig];
        std::printf("  %-30s collide %12.0f/s  bullet %12.0f/s  ratio %6.2f\n", fig, cv, bv,
                    cv / bv);
        ratio[fig].push_back(cv / bv);
        ours[fig].push_back(cv);
        theirs[fig].push_back(bv);
      }
      const int qs = queries / 10;
      std::printf(
          "  sphere casts hit: collide %.1f%%, bullet %.1f%%; overlap contacts/query: collide "
          "%.3f, bullet %.3f; rays hit after moves: collide %.1f%%, bullet %.1f%%\n",
          100.0 * c.sphere_hits / qs, 100.0 * b.sphere_hits / qs, double(c.overlap_contacts) / qs,
          double(b.overlap_contacts) / qs, 100.0 * c.ray_hits_after / queries,
          100.0 * b.ray_hits_after / queries);
      std::printf("  tree SAH cost after %d update rounds: %.3fx a fresh build\n", rounds,
                  c.sah_after_vs_fresh);
      sah_ratio.push_back(c.sah_after_vs_fresh);
      if (r == 0) AccountRays(scene, c, b);
#if COLLIDE_BENCH_WITH_EMBREE
      const Figures e_refit = RunEmbree(scene, /*refit=*/true);
      const Figures e_rebuild = RunEmbree(scene, /*refit=*/false);
      for (const char* fig : kEmbreeFigures) {
        const double cv = c.per_s[fig];
        const double fv = e_refit.per_s.at(fig), bv = e_rebuild.per_s.at(fig);
        std::printf(
            "  %-30s collide %12.0f/s  embree refit %12.0f/s (%5.2f)  rebuild %12.0f/s "
            "(%5.2f)\n",
            fig, cv, fv, cv / fv, bv, cv / bv);
        embree_refit_ratio[fig].push_back(cv / fv);
        embree_rebuild_ratio[fig].push_back(cv / bv);
        embree_refit[fig].push_back(fv);
        embree_rebuild[fig].push_back(bv);
      }
      std::printf(
          "  embree: build %.0f bodies/s; rays naming another body than collide: %ld of %zu; "
          "rays hit after moves: refit %.1f%%, rebuild %.1f%%\n",
          e_refit.per_s.at("build"), CountRayDisagreements(c, e_refit), scene.rays.size(),
          100.0 * e_refit.ray_hits_after / queries, 100.0 * e_rebuild.ray_hits_after / queries);
#endif
      std::fflush(stdout);
    }
#if COLLIDE_BENCH_WITH_EMBREE
    for (const char* fig : kEmbreeFigures) {
      char line[256];
      std::snprintf(line, sizeof line, "%-30s %7d %14.0f %14.0f %8.2f %14.0f %8.2f", fig, n,
                    Median(ours[fig]), Median(embree_refit[fig]), Median(embree_refit_ratio[fig]),
                    Median(embree_rebuild[fig]), Median(embree_rebuild_ratio[fig]));
      embree_table.push_back(line);
    }
#endif
    for (const char* fig : kFigures) {
      char line[256];
      std::snprintf(line, sizeof line, "%-30s %7d %14.0f %14.0f %8.2f", fig, n, Median(ours[fig]),
                    Median(theirs[fig]), Median(ratio[fig]));
      table.push_back(line);
    }
    threads_table.push_back(BatchThreadsRow(scene, runs));
    char line[256];
    std::snprintf(line, sizeof line, "%-30s %7d %8d %8.3f", "tree_sah_after_updates_vs_fresh", n,
                  rounds, Median(sah_ratio));
    quality.push_back(line);
  }
  const std::string simd(collide::SimdLevelName(collide::ActiveSimdLevel()));
  std::printf(
      "\nmedians over %d run(s), single thread, ratio = median of per-run ratios; collide's "
      "traversal: %s (best on this CPU: %s)\n",
      runs, simd.c_str(), std::string(collide::SimdLevelName(collide::BestSimdLevel())).c_str());
  std::printf("%-30s %7s %14s %14s %8s\n", "figure", "N", "collide_per_s", "bullet_per_s", "ratio");
  for (const std::string& line : table) std::printf("%s\n", line.c_str());
#if COLLIDE_BENCH_WITH_EMBREE
  std::printf(
      "\ncollide (%s) against Embree %d.%d.%d (one thread; batch64: Embree's packets of 16), "
      "medians over %d run(s)\n",
      simd.c_str(), RTC_VERSION_MAJOR, RTC_VERSION_MINOR, RTC_VERSION_PATCH, runs);
  std::printf("%-30s %7s %14s %14s %8s %14s %8s\n", "figure", "N", "collide_per_s", "refit_per_s",
              "ratio", "rebuild_per_s", "ratio");
  for (const std::string& line : embree_table) std::printf("%s\n", line.c_str());
#endif
  // The threads the machine gives a process vary with its load: report it beside the scaling.
  double load[3] = {0, 0, 0};
  const int loads = getloadavg(load, 3);
  std::printf(
      "\nbatches of 4,096 rays through AnswerQueries, 1 thread against a pool of 2 (medians over "
      "%d run(s); load average %.2f %.2f %.2f on %u CPUs)\n",
      runs, loads > 0 ? load[0] : 0.0, loads > 1 ? load[1] : 0.0, loads > 2 ? load[2] : 0.0,
      std::thread::hardware_concurrency());
  std::printf("%-30s %7s %14s %14s %8s %6s %6s\n", "figure", "N", "1_thread_per_s",
              "2_threads_per_s", "ratio", "cpus_1", "cpus_2");
  for (const std::string& line : threads_table) std::printf("%s\n", line.c_str());
  std::printf("\ncollide's tree after the update rounds: SAH cost over a fresh build's (median)\n");
  std::printf("%-30s %7s %8s %8s\n", "figure", "N", "rounds", "ratio");
  for (const std::string& line : quality) std::printf("%s\n", line.c_str());
  return 0;
}
