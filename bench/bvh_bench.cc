// Micro-benchmark of the tree layer on the reference workload's bounding boxes
// (shared/bench/README.md): N bodies in a cube of side L, Q rays of length 0.1 L, 5 rounds of
// moving every body by (u - .5, u - .5, u - .5).
//
// Reports build times (incremental and bulk), ray traversal rates (closest hit emulated by
// clipping each ray at the first fat box it enters), the move-all-bodies rate for each update
// strategy of DynamicTree with the ray rate after the moves, and the tree's height and SAH cost.
// When built with Bullet (COLLIDE_BENCH_WITH_BULLET), btDbvtBroadphase runs the same work on
// the same boxes in the same process and the ratios are printed. Each figure is the median of
// three runs.
//
// Usage: collide-bench-bvh [--quick] [N L Q]   (defaults 100000 250 200000; --quick: 10000 120
// 20000)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "bench/stats.h"
#include "bvh/dynamic_tree.h"
#include "geom/aabb.h"
#include "geom/vec3.h"

#ifdef COLLIDE_BENCH_WITH_BULLET
#include <btBulletCollisionCommon.h>
#endif

namespace collide {
namespace {

using Clock = std::chrono::steady_clock;
using bench::Median;

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs `f` (which returns its own elapsed seconds) three times and returns the median.
double Median3(const std::function<double()>& f) {
  // (A braced list runs its elements in order.)
  return Median({f(), f(), f()});
}

struct Workload {
  int n = 0;
  float world = 0.0f;
  std::vector<Aabb> boxes;  // tight bounds of each body
  std::vector<Vec3> ray_origin;
  std::vector<Vec3> ray_dir;  // unit
  float ray_length = 0.0f;
  std::vector<Vec3> steps;  // 5 rounds x n
  static constexpr int kRounds = 5;
};

// The reference scene, drawn exactly in the order of bullet_reference.cc.
Workload MakeWorkload(int n, float world, int q) {
  Workload w;
  w.n = n;
  w.world = world;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> uniform(0, 1);
  auto u = [&] { return uniform(rng); };
  auto vec = [&](float scale, float offset) {
    float x = u();
    float y = u();
    float z = u();
    return Vec3{scale * (x + offset), scale * (y + offset), scale * (z + offset)};
  };
  w.boxes.resize(n);
  for (int i = 0; i < n; ++i) {
    int kind = i % 3;
    float radius = 0.0f;
    Vec3 half{};
    float half_height = 0.0f;
    if (kind == 0) {
      radius = 0.25f + 1.25f * u();
    } else if (kind == 1) {
      half = vec(1.0f, 0.0f) + Vec3{0.25f, 0.25f, 0.25f};
    } else {
      radius = 0.25f + 0.5f * u();
      half_height = 0.5f * (0.5f + 2.0f * u());
    }
    Vec3 position = vec(world, 0.0f);
    float qx = u() - 0.5f;
    float qy = u() - 0.5f;
    float qz = u() - 0.5f;
    float qw = u() - 0.5f;
    float len = std::sqrt(qx * qx + qy * qy + qz * qz + qw * qw);
    qx /= len;
    qy /= len;
    qz /= len;
    qw /= len;
    // Rotation matrix of the unit quaternion.
    float r[3][3] = {
        {1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)},
        {2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)},
        {2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)}};
    Vec3 extent{};
    for (int a = 0; a < 3; ++a) {
      if (kind == 0) {
        extent[a] = radius;
      } else if (kind == 1) {
        extent[a] =
            std::fabs(r[a][0]) * half.x + std::fabs(r[a][1]) * half.y + std::fabs(r[a][2]) * half.z;
      } else {
        extent[a] = std::fabs(r[a][1]) * half_height + radius;  // segment along local Y
      }
    }
    w.boxes[i] = {position - extent, position + extent};
  }
  w.ray_origin.resize(q);
  w.ray_dir.resize(q);
  for (int i = 0; i < q; ++i) {
    w.ray_origin[i] = vec(world, 0.0f);
    w.ray_dir[i] = Normalize(vec(1.0f, -0.5f));
  }
  w.ray_length = 0.1f * world;
  w.steps.resize(static_cast<size_t>(Workload::kRounds) * n);
  for (Vec3& s : w.steps) s = vec(1.0f, -0.5f);
  return w;
}

struct RayResult {
  double seconds = 0.0;
  double hit_fraction = 0.0;
  double leaves_per_ray = 0.0;
};

// Closest hit emulated on boxes: each reported proxy clips the ray at its entry distance.
RayResult CastRays(const DynamicTree& tree, const Workload& w) {
  RayResult result;
  int64_t hits = 0;
  int64_t leaves = 0;
  auto start = Clock::now();
  const int q = static_cast<int>(w.ray_origin.size());
  for (int i = 0; i < q; ++i) {
    const Vec3 origin = w.ray_origin[i];
    const Vec3 dir = w.ray_dir[i];
    const Vec3 inv{1.0f / dir.x, 1.0f / dir.y, 1.0f / dir.z};
    bool hit = false;
    tree.Raycast(origin, dir, w.ray_length, ~0u, [&](uint32_t, int32_t proxy, float max_d) {
      ++leaves;
      float t0, t1;
      if (!RayAabbInterval(tree.FatAabb(proxy), origin, inv, max_d, &t0, &t1)) return max_d;
      hit = true;
      return t0;
    });
    hits += hit;
  }
  result.seconds = Seconds(start);
  result.hit_fraction = static_cast<double>(hits) / q;
  result.leaves_per_ray = static_cast<double>(leaves) / q;
  return result;
}

double MedianRays(const DynamicTree& tree, const Workload& w, RayResult* last) {
  return Median3([&] {
    *last = CastRays(tree, w);
    return last->seconds;
  });
}

void PrintTree(const char* label, const DynamicTree& tree) {
  std::printf("  %-34s height %d, SAH cost %.1f, %.1f MB\n", label, tree.Height(), tree.SahCost(),
              static_cast<double>(tree.MemoryBytes()) / (1 << 20));
}

enum class MoveStrategy { kReinsert, kEnlargeRefit, kEnlargeRebuild, kEnlargeRefitRebuild };

const char* StrategyName(MoveStrategy s) {
  switch (s) {
    case MoveStrategy::kReinsert:
      return "MoveProxy (re-insert)";
    case MoveStrategy::kEnlargeRefit:
      return "EnlargeProxy + Refit";
    case MoveStrategy::kEnlargeRebuild:
      return "EnlargeProxy + RebuildEnlarged";
    case MoveStrategy::kEnlargeRefitRebuild:
      return "Enlarge + Refit, Rebuild on SAH";
  }
  return "";
}

// Moves every body for all rounds (as many ticks); returns the seconds taken and leaves the tree
// moved. With `optimize`, each round ends with DynamicTree::Optimize (the 8-wide query form).
double MoveAll(DynamicTree* tree, const Workload& w, std::span<const int32_t> proxies,
               MoveStrategy strategy, bool optimize) {
  std::vector<Aabb> boxes = w.boxes;
  const float base_cost = tree->SahCost();
  auto start = Clock::now();
  for (int round = 0; round < Workload::kRounds; ++round) {
    const Vec3* step = w.steps.data() + static_cast<size_t>(round) * w.n;
    if (strategy == MoveStrategy::kReinsert) {
      for (int i = 0; i < w.n; ++i) {
        boxes[i].min += step[i];
        boxes[i].max += step[i];
        tree->MoveProxy(proxies[i], boxes[i]);
      }
      if (optimize) tree->Optimize();
      continue;
    }
    for (int i = 0; i < w.n; ++i) {
      boxes[i].min += step[i];
      boxes[i].max += step[i];
      tree->EnlargeProxy(proxies[i], boxes[i]);
    }
    if (strategy == MoveStrategy::kEnlargeRebuild) {
      tree->RebuildEnlarged();
    } else {
      tree->Refit();
      // A rebuild policy: rebuild when the tree has aged by half its built cost.
      if (strategy == MoveStrategy::kEnlargeRefitRebuild && tree->SahCost() > 1.5f * base_cost) {
        tree->Rebuild();
      }
    }
    if (optimize) tree->Optimize();
  }
  return Seconds(start);
}

#ifdef COLLIDE_BENCH_WITH_BULLET
// Bullet's broadphase ray callback with the same emulated closest hit. btDbvt does not clip
// the ray during traversal, so every box along the ray is visited.
struct BulletRay : btBroadphaseRayCallback {
  Vec3 origin;
  Vec3 inv;
  float best = 0.0f;
  bool hit = false;
  int64_t* leaves = nullptr;
  bool process(const btBroadphaseProxy* proxy) override {
    ++*leaves;
    Aabb box{{proxy->m_aabbMin.x(), proxy->m_aabbMin.y(), proxy->m_aabbMin.z()},
             {proxy->m_aabbMax.x(), proxy->m_aabbMax.y(), proxy->m_aabbMax.z()}};
    float t0, t1;
    if (RayAabbInterval(box, origin, inv, best, &t0, &t1)) {
      hit = true;
      best = t0;
    }
    return true;
  }
};

struct BulletTree {
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher{&config};
  btDbvtBroadphase broadphase;
  std::vector<btBroadphaseProxy*> proxies;
};

btVector3 Bt(const Vec3& v) { return {v.x, v.y, v.z}; }

RayResult BulletRays(BulletTree* bt, const Workload& w) {
  RayResult result;
  int64_t hits = 0;
  int64_t leaves = 0;
  const int q = static_cast<int>(w.ray_origin.size());
  auto start = Clock::now();
  for (int i = 0; i < q; ++i) {
    BulletRay cb;
    cb.origin = w.ray_origin[i];
    const Vec3 dir = w.ray_dir[i];
    cb.inv = {1.0f / dir.x, 1.0f / dir.y, 1.0f / dir.z};
    cb.best = w.ray_length;
    cb.leaves = &leaves;
    // As btCollisionWorld's single ray callback sets it up.
    for (int a = 0; a < 3; ++a) {
      cb.m_rayDirectionInverse[a] = dir[a] == 0.0f ? BT_LARGE_FLOAT : 1.0f / dir[a];
      cb.m_signs[a] = cb.m_rayDirectionInverse[a] < 0.0f;
    }
    cb.m_lambda_max = w.ray_length;
    bt->broadphase.rayTest(Bt(cb.origin), Bt(cb.origin + dir * w.ray_length), cb);
    hits += cb.hit;
  }
  result.seconds = Seconds(start);
  result.hit_fraction = static_cast<double>(hits) / q;
  result.leaves_per_ray = static_cast<double>(leaves) / q;
  return result;
}
#endif

int Run(int n, float world, int q) {
  std::printf("collide-bench-bvh: N = %d, L = %.0f, Q = %d rays of length %.1f (medians of 3)\n", n,
              world, q, 0.1 * world);
  const Workload w = MakeWorkload(n, world, q);
  std::vector<uint32_t> users(n);
  std::vector<uint32_t> categories(n, 1u);
  for (int i = 0; i < n; ++i) users[i] = static_cast<uint32_t>(i);
  std::vector<int32_t> proxies(n);

  // Builds.
  DynamicTree incremental;
  double t_insert = Median3([&] {
    incremental = DynamicTree();
    auto start = Clock::now();
    for (int i = 0; i < n; ++i) proxies[i] = incremental.CreateProxy(w.boxes[i], users[i], 1u);
    return Seconds(start);
  });
  DynamicTree bulk;
  double t_bulk = Median3([&] {
    bulk = DynamicTree();
    auto start = Clock::now();
    bulk.Build(w.boxes, users, categories, proxies);
    return Seconds(start);
  });
  std::printf("build: incremental %.1f ms (%.2f M inserts/s), bulk binned SAH %.1f ms\n",
              1e3 * t_insert, n / t_insert / 1e6, 1e3 * t_bulk);
  PrintTree("incremental tree:", incremental);
  PrintTree("bulk tree:", bulk);

  // Rays, on the binary tree and on its 8-wide form.
  RayResult r;
  double t_rays_incremental = MedianRays(incremental, w, &r);
  std::printf("rays, incremental binary tree: %.2f M rays/s (box hit %.1f%%, %.2f leaves/ray)\n",
              q / t_rays_incremental / 1e6, 100 * r.hit_fraction, r.leaves_per_ray);
  double t_rays_binary = MedianRays(bulk, w, &r);
  std::printf("rays, bulk binary tree:        %.2f M rays/s (box hit %.1f%%, %.2f leaves/ray)\n",
              q / t_rays_binary / 1e6, 100 * r.hit_fraction, r.leaves_per_ray);
  DynamicTree optimized;
  double t_optimize = Median3([&] {
    optimized = bulk;
    auto start = Clock::now();
    optimized.Optimize();
    return Seconds(start);
  });
  double t_rays = MedianRays(optimized, w, &r);
  std::printf(
      "rays, bulk 8-wide form:        %.2f M rays/s (box hit %.1f%%, %.2f leaves/ray); "
      "Optimize %.2f ms\n",
      q / t_rays / 1e6, 100 * r.hit_fraction, r.leaves_per_ray, 1e3 * t_optimize);
  incremental.Optimize();
  double t_rays_inc_wide = MedianRays(incremental, w, &r);
  std::printf("rays, incremental 8-wide form: %.2f M rays/s\n", q / t_rays_inc_wide / 1e6);

  // Moves, each strategy from a copy of the bulk tree (ids 0..n-1), each round ending with
  // Optimize so that queries could follow every tick.
  std::printf("move all bodies, %d rounds (each round + Optimize):\n", Workload::kRounds);
  double best_move_rate = 0.0;
  double rays_after_best = 0.0;
  for (MoveStrategy s : {MoveStrategy::kReinsert, MoveStrategy::kEnlargeRefit,
                         MoveStrategy::kEnlargeRebuild, MoveStrategy::kEnlargeRefitRebuild}) {
    DynamicTree moved;
    double t_move = Median3([&] {
      moved = bulk;
      return MoveAll(&moved, w, proxies, s, /*optimize=*/true);
    });
    double t_after = MedianRays(moved, w, &r);
    double move_rate = Workload::kRounds * static_cast<double>(n) / t_move;
    std::printf("  %-34s %.2f M moves/s; rays after: %.2f M rays/s (%.2f leaves/ray)\n",
                StrategyName(s), move_rate / 1e6, q / t_after / 1e6, r.leaves_per_ray);
    PrintTree("  tree after:", moved);
    if (s == MoveStrategy::kEnlargeRefit) {
      best_move_rate = move_rate;
      rays_after_best = q / t_after;
    }
  }

#ifdef COLLIDE_BENCH_WITH_BULLET
  // The same work on Bullet's btDbvtBroadphase.
  BulletTree* bt = nullptr;
  double t_bt_insert = Median3([&] {
    delete bt;
    bt = new BulletTree();
    bt->proxies.resize(n);
    auto start = Clock::now();
    for (int i = 0; i < n; ++i) {
      bt->proxies[i] = bt->broadphase.createProxy(Bt(w.boxes[i].min), Bt(w.boxes[i].max), 0,
                                                  nullptr, 1, -1, &bt->dispatcher);
    }
    return Seconds(start);
  });
  RayResult br;
  double t_bt_rays = Median3([&] {
    br = BulletRays(bt, w);
    return br.seconds;
  });
  // Bullet's moves change its tree, so each run starts from a fresh copy of the scene.
  auto bullet_moves = [&](BulletTree* fresh) {
    fresh->proxies.resize(n);
    for (int i = 0; i < n; ++i) {
      fresh->proxies[i] = fresh->broadphase.createProxy(Bt(w.boxes[i].min), Bt(w.boxes[i].max), 0,
                                                        nullptr, 1, -1, &fresh->dispatcher);
    }
    std::vector<Aabb> boxes = w.boxes;
    auto start = Clock::now();
    for (int round = 0; round < Workload::kRounds; ++round) {
      const Vec3* step = w.steps.data() + static_cast<size_t>(round) * n;
      for (int i = 0; i < n; ++i) {
        boxes[i].min += step[i];
        boxes[i].max += step[i];
        fresh->broadphase.setAabb(fresh->proxies[i], Bt(boxes[i].min), Bt(boxes[i].max),
                                  &fresh->dispatcher);
      }
    }
    return Seconds(start);
  };
  double t_bt_move = Median3([&] {
    BulletTree fresh;
    return bullet_moves(&fresh);
  });
  BulletTree moved_bt;
  bullet_moves(&moved_bt);
  RayResult br_after;
  double t_bt_rays_after = Median3([&] {
    br_after = BulletRays(&moved_bt, w);
    return br_after.seconds;
  });
  std::printf(
      "bullet btDbvtBroadphase: insert %.1f ms, %.2f M rays/s (%.2f leaves/ray), "
      "%.2f M moves/s, rays after moves %.2f M rays/s\n",
      1e3 * t_bt_insert, q / t_bt_rays / 1e6, br.leaves_per_ray,
      Workload::kRounds * static_cast<double>(n) / t_bt_move / 1e6, q / t_bt_rays_after / 1e6);
  std::printf(
      "ratios vs bullet: rays (bulk, 8-wide) %.1fx, moves (enlarge + refit) %.1fx, "
      "rays after moves %.1fx\n",
      t_bt_rays / t_rays, best_move_rate * t_bt_move / (Workload::kRounds * double(n)),
      rays_after_best * t_bt_rays_after / q);
  delete bt;
#else
  (void)best_move_rate;
  (void)rays_after_best;
#endif
  return 0;
}

}  // namespace
}  // namespace collide

int main(int argc, char** argv) {
  int n = 100000;
  float world = 250.0f;
  int q = 200000;
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      n = 10000;
      world = 120.0f;
      q = 20000;
    } else if (positional == 0) {
      n = std::atoi(argv[i]);
      ++positional;
    } else if (positional == 1) {
      world = static_cast<float>(std::atof(argv[i]));
      ++positional;
    } else {
      q = std::atoi(argv[i]);
      ++positional;
    }
  }
  if (n < 1 || !(world > 0.0f) || q < 1) {
    std::fprintf(stderr, "usage: %s [--quick] [N L Q]\n", argv[0]);
    return 2;
  }
  return collide::Run(n, world, q);
}
