// Do quantised child boxes pay for the body tree's 8-wide query form? (issue 30, "quantised
// child boxes if they pay").
//
// The reference scene's bodies (shared/bench/README.md, bench/reference_scene.h), as their tight
// boxes, are built into a DynamicTree by binned SAH and collapsed into its 8-wide form (WideTree:
// float child boxes, 256 bytes a node, four cache lines). A copy of that form is made with each
// node's child boxes quantised to 8 bits on a per-node grid, as the mesh layer's nodes hold them
// (mesh_shape.h: per axis a power-of-two step and an origin on it, lower planes rounded down and
// upper planes up, so every quantised box contains its float box): 24 bytes of grid, 48 of
// planes, 32 of references and 32 of category bits, 136 bytes in three cache lines.
//
// Rays of length 0.1 L from random points, closest hit emulated on the leaves' boxes (each leaf
// entered clips the ray at its entry distance), run through:
//   production   DynamicTree::Raycast at the active instruction set (the float form's kernel);
//   float        the loop below on the float nodes, AVX2;
//   quantised    the same loop on the quantised nodes, AVX2, the planes decoded per node;
//   in grid      the same, the ray carried into each node's grid instead;
// the last three differ only in how a node's planes are loaded and tested. Each rate is the median
// of five runs, alternating. The decoded quantised copy must find the same closest hit for every
// ray as the float loop and the production kernel (its boxes contain the float ones, so it may
// enter more nodes, never fewer): the program checks it and exits non-zero otherwise. The in-grid
// walk rounds its distances differently; the rays on which its hit differs are counted.
//
// Usage: collide-bench-quantised [N L Q]   (defaults: both 10000 120 200000 and 100000 250
// 200000)
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/reference_scene.h"
#include "bench/stats.h"
#include "bvh/dynamic_tree.h"
#include "bvh/simd_level.h"
#include "bvh/wide_tree.h"
#include "geom/aabb.h"
#include "geom/bounds.h"
#include "geom/vec3.h"

namespace collide {
namespace {

using Clock = std::chrono::steady_clock;

// A node with its child boxes on an 8-bit grid: plane = origin + q * scale, exact in float.
struct alignas(64) QuantisedNode {
  float origin[3];
  float scale[3];
  uint8_t q[6][WideTree::kWidth];  // q[2a]: lower planes of axis a, q[2a+1]: upper planes
  int32_t child[WideTree::kWidth];
  uint32_t category[WideTree::kWidth];
};
static_assert(sizeof(QuantisedNode) == 192, "three cache lines");

// Quantises one axis of a node: the grid's step (a power of two) and origin (a multiple of it),
// then each used child's planes, lower rounded down and upper up, checked to contain the box.
void QuantiseAxis(const WideTree::Node& n, int axis, QuantisedNode* out) {
  const float* mins[3] = {n.min_x, n.min_y, n.min_z};
  const float* maxs[3] = {n.max_x, n.max_y, n.max_z};
  double lo = INFINITY;
  double hi = -INFINITY;
  for (int i = 0; i < WideTree::kWidth; ++i) {
    if (n.category[i] == 0) continue;
    lo = std::min(lo, static_cast<double>(mins[axis][i]));
    hi = std::max(hi, static_cast<double>(maxs[axis][i]));
  }
  if (!(lo <= hi)) lo = hi = 0.0;
  // The smallest power of two with 255 steps spanning [origin, hi] once origin is rounded down
  // to it (one step more than the span for the rounding).
  int exponent = std::ilogb(std::max((hi - lo) / 254.0, 0x1p-100));
  double scale = std::ldexp(1.0, exponent);
  double origin = std::floor(lo / scale) * scale;
  while (origin + 255.0 * scale < hi) {
    scale *= 2.0;
    origin = std::floor(lo / scale) * scale;
  }
  out->origin[axis] = static_cast<float>(origin);
  out->scale[axis] = static_cast<float>(scale);
  for (int i = 0; i < WideTree::kWidth; ++i) {
    if (n.category[i] == 0) {
      out->q[2 * axis][i] = 255;
      out->q[2 * axis + 1][i] = 0;
      continue;
    }
    const double qlo = std::floor((mins[axis][i] - origin) / scale);
    const double qhi = std::ceil((maxs[axis][i] - origin) / scale);
    out->q[2 * axis][i] = static_cast<uint8_t>(std::clamp(qlo, 0.0, 255.0));
    out->q[2 * axis + 1][i] = static_cast<uint8_t>(std::clamp(qhi, 0.0, 255.0));
    const float plane_lo = out->origin[axis] + out->q[2 * axis][i] * out->scale[axis];
    const float plane_hi = out->origin[axis] + out->q[2 * axis + 1][i] * out->scale[axis];
    if (!(plane_lo <= mins[axis][i] && maxs[axis][i] <= plane_hi)) {
      std::fprintf(stderr, "quantised planes do not contain a child box\n");
      std::exit(1);
    }
  }
}

std::vector<QuantisedNode> Quantise(const WideTree& tree) {
  std::vector<QuantisedNode> out(tree.NodeCount());
  for (int32_t i = 0; i < tree.NodeCount(); ++i) {
    const WideTree::Node& n = tree.node(i);
    for (int axis = 0; axis < 3; ++axis) QuantiseAxis(n, axis, &out[i]);
    for (int k = 0; k < WideTree::kWidth; ++k) {
      out[i].child[k] = n.child[k];
      out[i].category[k] = n.category[k];
    }
  }
  return out;
}

struct SlabRay {
  __m256 org_x, org_y, org_z, inv_x, inv_y, inv_z;
};

// One axis of the slab test on float planes.
[[gnu::target("avx2,fma"), gnu::always_inline]] inline void Axis(__m256 lo_plane, __m256 hi_plane,
                                                                 __m256 org, __m256 inv, __m256* t0,
                                                                 __m256* t1) {
  const __m256 lo = _mm256_mul_ps(_mm256_sub_ps(lo_plane, org), inv);
  const __m256 hi = _mm256_mul_ps(_mm256_sub_ps(hi_plane, org), inv);
  *t0 = _mm256_max_ps(_mm256_min_ps(hi, lo), *t0);
  *t1 = _mm256_min_ps(_mm256_max_ps(lo, hi), *t1);
}

[[gnu::target("avx2,fma"), gnu::always_inline]] inline unsigned Finish(__m256 t0, __m256 t1,
                                                                       const uint32_t* category,
                                                                       float* t_enter) {
  _mm256_store_ps(t_enter, t0);
  const __m256i cat = _mm256_load_si256(reinterpret_cast<const __m256i*>(category));
  const __m256 masked_out = _mm256_castsi256_ps(_mm256_cmpeq_epi32(cat, _mm256_setzero_si256()));
  return static_cast<unsigned>(
      _mm256_movemask_ps(_mm256_andnot_ps(masked_out, _mm256_cmp_ps(t0, t1, _CMP_LE_OS))));
}

[[gnu::target("avx2,fma"), gnu::always_inline]] inline unsigned Test(const WideTree::Node& n,
                                                                     const SlabRay& r, float t_max,
                                                                     float* t_enter) {
  __m256 t0 = _mm256_setzero_ps();
  __m256 t1 = _mm256_set1_ps(t_max);
  Axis(_mm256_load_ps(n.min_x), _mm256_load_ps(n.max_x), r.org_x, r.inv_x, &t0, &t1);
  Axis(_mm256_load_ps(n.min_y), _mm256_load_ps(n.max_y), r.org_y, r.inv_y, &t0, &t1);
  Axis(_mm256_load_ps(n.min_z), _mm256_load_ps(n.max_z), r.org_z, r.inv_z, &t0, &t1);
  return Finish(t0, t1, n.category, t_enter);
}

// The slab test on a quantised node. kInGrid false decodes the planes (origin + q * scale,
// exact) and tests them as float planes; kInGrid true carries the ray into the node's grid
// instead: per axis t = q * (scale / dir) + (origin - ray origin) / dir, one FMA per side after a
// per-node set-up (as wide BVHs with compressed nodes are usually walked). That one is not exact:
// its distances round differently from the float form's.
template <bool kInGrid>
[[gnu::target("avx2,fma"), gnu::always_inline]] inline unsigned TestQuantised(
    const QuantisedNode& n, const SlabRay& r, float t_max, float* t_enter) {
  __m256 t0 = _mm256_setzero_ps();
  __m256 t1 = _mm256_set1_ps(t_max);
  for (int a = 0; a < 3; ++a) {
    const __m256 org = a == 0 ? r.org_x : a == 1 ? r.org_y : r.org_z;
    const __m256 inv = a == 0 ? r.inv_x : a == 1 ? r.inv_y : r.inv_z;
    const __m256 q_lo = _mm256_cvtepi32_ps(
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(n.q[2 * a]))));
    const __m256 q_hi = _mm256_cvtepi32_ps(
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(n.q[2 * a + 1]))));
    if constexpr (kInGrid) {
      const __m256 step = _mm256_mul_ps(_mm256_set1_ps(n.scale[a]), inv);
      const __m256 base = _mm256_mul_ps(_mm256_sub_ps(_mm256_set1_ps(n.origin[a]), org), inv);
      const __m256 lo = _mm256_fmadd_ps(q_lo, step, base);
      const __m256 hi = _mm256_fmadd_ps(q_hi, step, base);
      t0 = _mm256_max_ps(_mm256_min_ps(hi, lo), t0);
      t1 = _mm256_min_ps(_mm256_max_ps(lo, hi), t1);
    } else {
      const __m256 scale = _mm256_set1_ps(n.scale[a]);
      const __m256 origin = _mm256_set1_ps(n.origin[a]);
      Axis(_mm256_fmadd_ps(q_lo, scale, origin), _mm256_fmadd_ps(q_hi, scale, origin), org, inv,
           &t0, &t1);
    }
  }
  return Finish(t0, t1, n.category, t_enter);
}

[[gnu::target("avx2,fma"), gnu::always_inline]] inline unsigned Test(const QuantisedNode& n,
                                                                     const SlabRay& r, float t_max,
                                                                     float* t_enter) {
  return TestQuantised<false>(n, r, t_max, t_enter);
}

// The quantised node walked with the ray in its grid (TestQuantised<true>).
struct GridNode : QuantisedNode {};

[[gnu::target("avx2,fma"), gnu::always_inline]] inline unsigned Test(const GridNode& n,
                                                                     const SlabRay& r, float t_max,
                                                                     float* t_enter) {
  return TestQuantised<true>(n, r, t_max, t_enter);
}

struct Entry {
  int32_t ref;
  float t;
};

// Ordered closest-hit traversal (the production kernel's loop): the nearest child entered next,
// the others on the stack farthest deepest, leaves clipping the ray at their box's entry.
template <typename Node>
[[gnu::target("avx2,fma")]] float Closest(const Node* nodes, int32_t root,
                                          const std::vector<Aabb>& leaf_box, const Vec3& origin,
                                          const Vec3& dir, float length, int64_t* visits) {
  const Vec3 inv{1.0f / dir.x, 1.0f / dir.y, 1.0f / dir.z};
  const SlabRay r{_mm256_set1_ps(origin.x), _mm256_set1_ps(origin.y), _mm256_set1_ps(origin.z),
                  _mm256_set1_ps(inv.x),    _mm256_set1_ps(inv.y),    _mm256_set1_ps(inv.z)};
  float t_max = length;
  float best = INFINITY;
  // Seven entries a level at most: 1,024 hold a tree 146 levels deep.
  constexpr int kStack = 1024;
  Entry stack[kStack];
  int size = 0;
  Entry entry{root, 0.0f};
  for (;;) {
    if (entry.ref < 0) {
      float t0;
      float t1;
      if (RayAabbInterval(leaf_box[~entry.ref], origin, inv, t_max, &t0, &t1)) {
        t_max = t0;
        best = t0;
      }
    } else {
      const Node& n = nodes[entry.ref];
      if (visits != nullptr) ++*visits;
      alignas(32) float t_enter[WideTree::kWidth];
      unsigned hits = Test(n, r, t_max, t_enter);
      if (hits != 0) {
        int order[WideTree::kWidth];
        int count = 0;
        while (hits != 0) {
          const int i = std::countr_zero(hits);
          hits &= hits - 1;
          int j = count++;
          while (j > 0 && t_enter[order[j - 1]] < t_enter[i]) {
            order[j] = order[j - 1];
            --j;
          }
          order[j] = i;
        }
        if (size + count > kStack) {
          std::fprintf(stderr, "traversal stack overflow\n");
          std::exit(1);
        }
        for (int k = 0; k + 1 < count; ++k) stack[size++] = {n.child[order[k]], t_enter[order[k]]};
        entry = Entry{n.child[order[count - 1]], t_enter[order[count - 1]]};
        continue;
      }
    }
    do {
      if (size == 0) return best;
      entry = stack[--size];
    } while (entry.t > t_max);
  }
}

double RaysPerSecond(const bench::ReferenceScene& s, const auto& cast,
                     std::vector<float>* answers) {
  const auto start = Clock::now();
  for (size_t i = 0; i < s.rays.size(); ++i) {
    (*answers)[i] = cast(s.rays[i].origin, s.rays[i].direction);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return static_cast<double>(s.rays.size()) / seconds;
}

int Run(int n, float world, int q) {
  const bench::ReferenceScene s = bench::MakeReferenceScene(n, world, q, /*rounds=*/0);
  const float ray_length = 0.1f * world;
  DynamicTree tree;
  std::vector<Aabb> leaf_box;
  for (int i = 0; i < n; ++i) {
    const int32_t proxy =
        tree.CreateProxy(Bounds(s.shapes[i], s.poses[i]), static_cast<uint32_t>(i), 1u);
    if (proxy >= static_cast<int32_t>(leaf_box.size())) leaf_box.resize(proxy + 1);
  }
  tree.Rebuild();
  tree.Optimize();
  // Each leaf's box as the float form holds it: the leaf test of all three runs.
  const WideTree& wide = tree.wide_form();
  for (int32_t i = 0; i < wide.NodeCount(); ++i) {
    for (int k = 0; k < WideTree::kWidth; ++k) {
      const int32_t child = wide.node(i).child[k];
      if (wide.node(i).category[k] != 0 && child < 0) leaf_box[~child] = wide.node(i).Box(k);
    }
  }
  const std::vector<QuantisedNode> quantised = Quantise(wide);
  const std::vector<GridNode> grid(quantised.begin(), quantised.end());

  // The closest hit of a ray through one node array, the same loop for each.
  auto closest_through = [&](const auto* nodes, int64_t* visits = nullptr) {
    return [&, nodes, visits](const Vec3& o, const Vec3& d) {
      return Closest(nodes, wide.root(), leaf_box, o, d, ray_length, visits);
    };
  };
  std::vector<float> production(q), flat(q), quant(q), in_grid(q);
  std::vector<double> rate_production, rate_float, rate_quantised, rate_grid;
  for (int run = 0; run < 5; ++run) {
    rate_production.push_back(RaysPerSecond(
        s,
        [&](const Vec3& o, const Vec3& d) {
          float best = INFINITY;
          const Vec3 inv{1.0f / d.x, 1.0f / d.y, 1.0f / d.z};
          tree.Raycast(o, d, ray_length, ~0u, [&](uint32_t, int32_t proxy, float max_d) {
            float t0;
            float t1;
            if (!RayAabbInterval(leaf_box[proxy], o, inv, max_d, &t0, &t1)) return max_d;
            best = t0;
            return t0;
          });
          return best;
        },
        &production));
    rate_float.push_back(RaysPerSecond(s, closest_through(&wide.node(0)), &flat));
    rate_quantised.push_back(RaysPerSecond(s, closest_through(quantised.data()), &quant));
    rate_grid.push_back(RaysPerSecond(s, closest_through(grid.data()), &in_grid));
  }
  int64_t grid_differs = 0;
  for (int i = 0; i < q; ++i) grid_differs += in_grid[i] != flat[i];
  // Nodes tested per ray, counted in a pass of its own (not timed).
  int64_t float_visits = 0;
  int64_t quantised_visits = 0;
  const auto count_float = closest_through(&wide.node(0), &float_visits);
  const auto count_quantised = closest_through(quantised.data(), &quantised_visits);
  for (const Ray& ray : s.rays) {
    count_float(ray.origin, ray.direction);
    count_quantised(ray.origin, ray.direction);
  }
  int64_t hits = 0;
  for (int i = 0; i < q; ++i) {
    if (flat[i] != quant[i] || flat[i] != production[i]) {
      std::fprintf(stderr, "ray %d: closest hit %g (float) %g (quantised) %g (production)\n", i,
                   flat[i], quant[i], production[i]);
      return 1;
    }
    hits += std::isfinite(flat[i]);
  }
  const double p = bench::Median(rate_production);
  const double f = bench::Median(rate_float);
  const double qz = bench::Median(rate_quantised);
  const double g = bench::Median(rate_grid);
  std::printf(
      "%d bodies, %d rays (%.1f%% hit), %d nodes: %.2f MB float, %.2f MB quantised\n"
      "  production (%s) %.3fM rays/s | float (AVX2 loop) %.3fM | quantised (AVX2 loop) %.3fM"
      " | quantised / float %.3f\n"
      "  nodes tested per ray: float %.2f, quantised %.2f\n"
      "  quantised, ray in the node's grid (AVX2 loop) %.3fM | / float %.3f | closest hit differs"
      " on %lld rays\n",
      n, q, 100.0 * hits / q, wide.NodeCount(), wide.NodeCount() * 256.0 / 1e6,
      wide.NodeCount() * 192.0 / 1e6, std::string(SimdLevelName(ActiveSimdLevel())).c_str(),
      p / 1e6, f / 1e6, qz / 1e6, qz / f, static_cast<double>(float_visits) / q,
      static_cast<double>(quantised_visits) / q, g / 1e6, g / f,
      static_cast<long long>(grid_differs));
  return 0;
}

}  // namespace
}  // namespace collide

int main(int argc, char** argv) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    std::fprintf(stderr, "collide-bench-quantised needs AVX2 and FMA\n");
    return 2;
  }
  if (argc == 4) {
    const int n = std::atoi(argv[1]);
    const float side = static_cast<float>(std::atof(argv[2]));
    const int q = std::atoi(argv[3]);
    if (n < 1 || q < 1 || !(side > 0.0f && side < 1e6f)) {
      std::fprintf(stderr, "collide-bench-quantised: N and Q must be at least 1, L in (0, 1e6)\n");
      return 2;
    }
    return collide::Run(n, side, q);
  }
  if (argc != 1) {
    std::fprintf(stderr, "usage: collide-bench-quantised [N L Q]\n");
    return 2;
  }
  int rc = collide::Run(10000, 120.0f, 200000);
  if (rc == 0) rc = collide::Run(100000, 250.0f, 200000);
  return rc;
}
