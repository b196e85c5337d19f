// MeshShape::Build: binned SAH straight into 8-wide nodes, one thread.
//
// Every range of triangles is binned once, when it is made: its centres go into 32 bins per axis
// (with the bins' boxes and counts), and a sweep over the bins finds the split of least SAH cost
// (left area * left count + right area * right count). A node starts as its own range and
// repeatedly splits the child of largest area that should not be a leaf, partitioning by the
// split its binning found, until it has 8 children or none wants splitting; each child is then a
// leaf or a node of its own. A range of at most one SAH block (sah_block triangles, at most
// max_leaf_triangles) is a leaf when its vertices fit one; a larger range of at most
// max_leaf_triangles is a leaf when its cost (one test per triangle, in whole blocks) is at most
// the split's (a node visit plus the children's tests, in proportion to their areas).

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "mesh/mesh_shape.h"

namespace collide {
namespace {

constexpr int kBins = 32;
// Ranges of at most this many triangles are split by a full SAH sweep over their sorted centres
// (every split position, exactly) rather than by bins.
constexpr uint32_t kExactBelow = 8;
// Ranges of more triangles than this choose their split from a sample, every 4th triangle (every
// 8th above 64 times as many): with hundreds of triangles in the sample its bins give the split
// of the whole within a bin's width, and the levels above cost a fraction of their binning.
constexpr uint32_t kSampleAbove = 1024;
// Below this binary depth a range is split by SAH; deeper, at the median centre of its widest
// axis (which halves it), so that no path exceeds kForcedMedianDepth + log2(kMaxMeshTriangles)
// binary levels (<= MeshShape::kMaxDepth).
constexpr int kForcedMedianDepth = MeshShape::kMaxDepth - 28;
constexpr float kInf = std::numeric_limits<float>::infinity();

// A box as 4 floats per corner (the 4th unused), so SSE handles a corner in one register.
struct alignas(16) Box4 {
  float lo[4] = {kInf, kInf, kInf, kInf};
  float hi[4] = {-kInf, -kInf, -kInf, -kInf};
};

// A bin's box, uninitialised until set (the bins are set up per range, only as many as used).
struct alignas(16) Bin {
  float lo[4];
  float hi[4];
};

// A triangle's box and original index, as the builder moves it around.
struct alignas(16) PrimRef {
  float lo[3];
  uint32_t id;
  float hi[3];
  uint32_t pad;
};
static_assert(sizeof(PrimRef) == 32);

inline void Grow(Box4* b, const float* lo, const float* hi) {
#if defined(__SSE2__)
  _mm_store_ps(b->lo, _mm_min_ps(_mm_load_ps(b->lo), _mm_load_ps(lo)));
  _mm_store_ps(b->hi, _mm_max_ps(_mm_load_ps(b->hi), _mm_load_ps(hi)));
#else
  for (int i = 0; i < 3; ++i) {
    b->lo[i] = std::min(b->lo[i], lo[i]);
    b->hi[i] = std::max(b->hi[i], hi[i]);
  }
#endif
}

inline void GrowBox(Box4* b, const Box4& o) { Grow(b, o.lo, o.hi); }

inline float HalfArea(const Box4& b) {
  const float dx = b.hi[0] - b.lo[0], dy = b.hi[1] - b.lo[1], dz = b.hi[2] - b.lo[2];
  // An empty box (+inf / -inf) has no area.
  if (!(dx >= 0.0f)) return 0.0f;
  return dx * dy + dy * dz + dz * dx;
}

// The centre of a primitive, doubled (lo + hi), which orders them as the centre does.
inline void Centre2(const PrimRef& p, float* c) {
  c[0] = p.lo[0] + p.hi[0];
  c[1] = p.lo[1] + p.hi[1];
  c[2] = p.lo[2] + p.hi[2];
}

// A range of primitives, its boxes and the best split its binning found.
struct Range {
  uint32_t begin = 0;
  uint32_t end = 0;
  Box4 bounds;
  // The box of the doubled centres.
  Box4 centres;
  int depth = 0;
  // The split: the axis, and the last bin on the left (-1: halve by position instead); a small
  // range (kExactBelow triangles or fewer) is split at `position` of its order along the axis.
  int axis = -1;
  int bin = -1;
  uint32_t position = 0;
  int bins = 0;
  // Binned from a sample (kSampleAbove): the children's boxes are not known from the bins and
  // are grown during the partition.
  bool sampled = false;
  // SAH cost of splitting and of a leaf, in triangle tests.
  float split_cost = 0.0f;
  float leaf_cost = 0.0f;
  // The children's boxes when split by bins (exact: unions of the bins' boxes).
  Box4 left_bounds;
  Box4 right_bounds;

  // A range small enough for a leaf: whether its triangles use at most kMaxLeafVertices
  // vertices (a leaf's block holds them), and which, in order of first use.
  bool fits = false;
  uint8_t leaf_vertex_count = 0;
  uint32_t leaf_vertices[MeshShape::kMaxLeafVertices];
  // Each triangle's corners as local vertex numbers (3 per triangle, in range order).
  uint8_t leaf_corners[3 * MeshShape::kMaxLeafTriangles];

  uint32_t count() const { return end - begin; }
};

// Adds `n` primitives to their bins on each axis (nb bins over the doubled centres' range from
// `cmin`, `scale` bins per unit), alternating between two sets of bins.
void BinPrims(const PrimRef* prims, uint32_t n, uint32_t stride, const float* cmin,
              const float* scale, int nb, int sets, Bin (&bins)[2][3][kBins],
              uint32_t (&counts)[2][3][kBins]) {
#if defined(__SSE2__)
  const __m128 lo_c = _mm_load_ps(cmin);
  const __m128 k = _mm_load_ps(scale);
  const __m128 top = _mm_set1_ps(static_cast<float>(nb - 1));
  for (uint32_t i = 0, step = 0; i < n; i += stride, ++step) {
    const PrimRef& p = prims[i];
    const __m128 lo = _mm_load_ps(p.lo);
    const __m128 hi = _mm_load_ps(p.hi);
    // Bin per axis, clamped to [0, nb - 1] as a float before the truncation.
    const __m128 f = _mm_min_ps(
        _mm_max_ps(_mm_mul_ps(_mm_sub_ps(_mm_add_ps(lo, hi), lo_c), k), _mm_setzero_ps()), top);
    alignas(16) int32_t b[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(b), _mm_cvttps_epi32(f));
    const int set = static_cast<int>(step & 1) & (sets - 1);
    for (int a = 0; a < 3; ++a) {
      Bin& bin = bins[set][a][b[a]];
      _mm_store_ps(bin.lo, _mm_min_ps(_mm_load_ps(bin.lo), lo));
      _mm_store_ps(bin.hi, _mm_max_ps(_mm_load_ps(bin.hi), hi));
      ++counts[set][a][b[a]];
    }
  }
#else
  for (uint32_t i = 0, step = 0; i < n; i += stride, ++step) {
    const PrimRef& p = prims[i];
    float c[3];
    Centre2(p, c);
    const int set = static_cast<int>(step & 1) & (sets - 1);
    for (int a = 0; a < 3; ++a) {
      int b = static_cast<int>((c[a] - cmin[a]) * scale[a]);
      b = std::min(std::max(b, 0), nb - 1);
      Bin& bin = bins[set][a][b];
      for (int k = 0; k < 3; ++k) {
        bin.lo[k] = std::min(bin.lo[k], p.lo[k]);
        bin.hi[k] = std::max(bin.hi[k], p.hi[k]);
      }
      ++counts[set][a][b];
    }
  }
#endif
}

// The grid of one axis of a node whose children span [lo, hi]: a power-of-two step and an
// origin, a multiple of it, with lo and hi within 255 steps of the origin and every grid plane
// an exact float (|origin| / step + 255 < 2^24: integers times a power of two).
void Quantize(float lo, float hi, float* origin, float* scale) {
  int e;
  // The least step with (hi - lo) / step <= 254 (one step of slack for the rounding down of
  // the origin).
  std::frexp((static_cast<double>(hi) - lo) / 254.0, &e);
  // (A flat axis gets a step of 2^-60, not a denormal: its planes stay ordinary floats.)
  double step = std::ldexp(1.0, std::max(e, -60));
  while (true) {
    const double o = std::floor(lo / step) * step;
    if (std::fabs(o) / step + 256.0 < 16777216.0 && (static_cast<double>(hi) - o) / step <= 255.0) {
      *origin = static_cast<float>(o);
      *scale = static_cast<float>(step);
      return;
    }
    step *= 2.0;
  }
}

}  // namespace

class MeshBuilder {
 public:
  MeshBuilder(const TriangleMeshView& mesh, const MeshBuildOptions& options, MeshShape* out)
      : mesh_(mesh), options_(options), out_(out) {
    max_leaf_ = static_cast<uint32_t>(std::clamp(options.max_leaf_triangles, 1, 8));
    // A power of two (1, 2, 4 or 8): the rounding is a mask.
    block_ = std::bit_floor(static_cast<uint32_t>(std::clamp(options.sah_block, 1, 8)));
  }

  void Run();

 private:
  // Finds the range's split (FindSplit) and whether it may be a leaf (SettleLeaf).
  void Binning(Range* r);
  void FindSplit(Range* r);
  // The full SAH sweep of a small range.
  void ExactSweep(Range* r, float area, float halve_cost);
  // Decides whether a range SAH would keep whole can be a leaf (its vertices fit).
  void SettleLeaf(Range* r);
  // A count of triangles in the SAH's units: rounded up to whole groups of `block_` (the
  // kernels test a leaf's triangles that many at a time, so a leaf of 1 costs as much as one of
  // block_).
  uint32_t Blocks(uint32_t n) const { return (n + block_ - 1) & ~(block_ - 1); }
  // Splits `r` by its split into `left` and `right` (binned and ready).
  void Split(const Range& r, Range* left, Range* right);
  bool IsLeaf(const Range& r) const {
    return r.count() == 1 || (r.fits && r.leaf_cost <= r.split_cost);
  }
  // The distinct vertices of the range's triangles, in order of first use, and each corner's
  // number among them; false when there are more than kMaxLeafVertices.
  bool LeafVertices(const Range& r, uint32_t* vertices, uint32_t* count, uint8_t* corners) const;
  // Writes the leaf block of `r` and returns its reference.
  uint32_t MakeLeaf(const Range& r);
  // Builds the subtree of `r` (not a leaf) and returns its node's index.
  uint32_t BuildNode(const Range& r, int node_depth);

  const TriangleMeshView& mesh_;
  MeshBuildOptions options_;
  MeshShape* out_;
  uint32_t max_leaf_ = 4;
  uint32_t block_ = 4;
  std::vector<PrimRef> prims_;
  int max_depth_ = 0;
};

void MeshBuilder::Binning(Range* r) {
  // A range of one SAH block or fewer whose vertices fit is a leaf, unswept: splitting it would
  // pay for one more node visit to save at most a block's test, and sweeping every such range
  // cost about a tenth of the build.
  if (r->count() <= std::min(max_leaf_, block_) && r->count() > 1 &&
      r->depth < kForcedMedianDepth) {
    uint32_t count = 0;
    r->fits = LeafVertices(*r, r->leaf_vertices, &count, r->leaf_corners);
    r->leaf_vertex_count = static_cast<uint8_t>(count);
    if (r->fits) {
      r->leaf_cost = static_cast<float>(Blocks(r->count()));
      r->split_cost = kInf;
      r->axis = -1;
      return;
    }
  }
  FindSplit(r);
  SettleLeaf(r);
}

void MeshBuilder::FindSplit(Range* r) {
  const uint32_t n = r->count();
  r->leaf_cost = static_cast<float>(Blocks(n));
  r->fits = false;
  r->axis = -1;
  r->bin = -1;
  r->split_cost = kInf;
  if (n <= 1) return;
  const float area = HalfArea(r->bounds);
  // Halving by position (too deep, or every centre coincides) is worth no more than the leaf:
  // a range that may be a leaf stays one, a larger one is halved.
  const float halve_cost = options_.traversal_cost + r->leaf_cost;
  if (r->depth >= kForcedMedianDepth) {
    r->split_cost = halve_cost;
    return;
  }
  if (n <= kExactBelow) {
    ExactSweep(r, area, halve_cost);
    return;
  }
  // Fewer bins for smaller ranges (setting the bins up and sweeping them costs as much as
  // binning a few dozen triangles), and a second set of bins only where it pays.
  const int nb = n >= 64 ? kBins : (n >= 24 ? 16 : 8);
  const int sets = n >= 48 ? 2 : 1;
  r->bins = nb;
  alignas(16) float scale[4] = {0, 0, 0, 0};
  bool usable[3];
  for (int a = 0; a < 3; ++a) {
    const float extent = r->centres.hi[a] - r->centres.lo[a];
    usable[a] = extent > 0.0f;
    // Maps the centre range onto [0, nb) (the top end rounds below nb, and is clamped).
    scale[a] = usable[a] ? (static_cast<float>(nb) * 0.99999f) / extent : 0.0f;
  }
  // Two sets of bins, for even and odd triangles: consecutive triangles (neighbours in the
  // input) often fall in the same bin, and alternating breaks the chain of dependent updates.
  Bin bins[2][3][kBins];
  uint32_t counts[2][3][kBins];
  for (int set = 0; set < sets; ++set) {
    for (int a = 0; a < 3; ++a) {
      for (int b = 0; b < nb; ++b) {
        for (int k = 0; k < 4; ++k) {
          bins[set][a][b].lo[k] = kInf;
          bins[set][a][b].hi[k] = -kInf;
        }
        counts[set][a][b] = 0;
      }
    }
  }
  const PrimRef* prims = prims_.data();
  r->sampled = n > kSampleAbove;
  const uint32_t stride = n > 64 * kSampleAbove ? 8 : (r->sampled ? 4 : 1);
  BinPrims(prims + r->begin, n, stride, r->centres.lo, scale, nb, sets, bins, counts);
  // Sweep: right-to-left accumulated areas and counts, then left-to-right costs.
  float best = kInf;
  for (int a = 0; a < 3; ++a) {
    if (!usable[a]) continue;
    if (sets == 2) {
      for (int b = 0; b < nb; ++b) {
        Grow(reinterpret_cast<Box4*>(&bins[0][a][b]), bins[1][a][b].lo, bins[1][a][b].hi);
        counts[0][a][b] += counts[1][a][b];
      }
    }
    // (Empty bins change nothing: they are skipped, and an area is computed only after a bin
    // that added triangles.)
    float right_area[kBins];
    uint32_t right_count[kBins];
    Box4 acc;
    uint32_t cnt = 0;
    float acc_area = 0.0f;
    for (int b = nb - 1; b >= 1; --b) {
      if (counts[0][a][b] != 0) {
        Grow(&acc, bins[0][a][b].lo, bins[0][a][b].hi);
        cnt += counts[0][a][b];
        acc_area = HalfArea(acc);
      }
      right_area[b] = acc_area;
      right_count[b] = cnt;
    }
    Box4 left;
    uint32_t left_count = 0;
    float left_area = 0.0f;
    for (int b = 0; b < nb - 1; ++b) {
      if (counts[0][a][b] == 0) continue;  // the same split as the bin before
      Grow(&left, bins[0][a][b].lo, bins[0][a][b].hi);
      left_count += counts[0][a][b];
      left_area = HalfArea(left);
      if (right_count[b + 1] == 0) break;
      const float cost = left_area * static_cast<float>(Blocks(left_count)) +
                         right_area[b + 1] * static_cast<float>(Blocks(right_count[b + 1]));
      if (cost < best) {
        best = cost;
        r->axis = a;
        r->bin = b;
      }
    }
  }
  if (r->axis < 0) {
    // Every centre coincides: no split is better than another.
    r->split_cost = halve_cost;
    return;
  }
  r->split_cost = options_.traversal_cost + (area > 0.0f ? best / area : 0.0f);
  // The children's boxes, from the bins.
  Box4 left, right;
  for (int b = 0; b < nb; ++b) {
    Grow(b <= r->bin ? &left : &right, bins[0][r->axis][b].lo, bins[0][r->axis][b].hi);
  }
  r->left_bounds = left;
  r->right_bounds = right;
}

void MeshBuilder::SettleLeaf(Range* r) {
  // Only a range SAH would keep as a leaf needs its vertices counted (a leaf holds at most
  // kMaxLeafVertices).
  if (r->count() > max_leaf_ || !(r->count() == 1 || r->leaf_cost <= r->split_cost)) return;
  uint32_t count = 0;
  r->fits = LeafVertices(*r, r->leaf_vertices, &count, r->leaf_corners);
  r->leaf_vertex_count = static_cast<uint8_t>(count);
}

void MeshBuilder::ExactSweep(Range* r, float area, float halve_cost) {
  const uint32_t n = r->count();
  PrimRef* prims = prims_.data() + r->begin;
  float best = kInf;
  for (int a = 0; a < 3; ++a) {
    if (!(r->centres.hi[a] > r->centres.lo[a])) continue;
    // The range's order along the axis, by centre (insertion sort: a handful of triangles).
    uint32_t order[kExactBelow];
    float key[kExactBelow];
    for (uint32_t k = 0; k < n; ++k) {
      const float c = prims[k].lo[a] + prims[k].hi[a];
      uint32_t m = k;
      while (m > 0 && key[m - 1] > c) {
        key[m] = key[m - 1];
        order[m] = order[m - 1];
        --m;
      }
      key[m] = c;
      order[m] = k;
    }
    float right_area[kExactBelow];
    Box4 acc;
    for (uint32_t k = n - 1; k >= 1; --k) {
      Grow(&acc, prims[order[k]].lo, prims[order[k]].hi);
      right_area[k] = HalfArea(acc);
    }
    Box4 left;
    for (uint32_t k = 1; k < n; ++k) {
      Grow(&left, prims[order[k - 1]].lo, prims[order[k - 1]].hi);
      const float cost = HalfArea(left) * static_cast<float>(Blocks(k)) +
                         right_area[k] * static_cast<float>(Blocks(n - k));
      if (cost < best) {
        best = cost;
        r->axis = a;
        r->position = k;
      }
    }
  }
  if (r->axis < 0) {
    r->split_cost = halve_cost;
    return;
  }
  r->bin = -2;  // split at `position` of the order along `axis`
  r->split_cost = options_.traversal_cost + (area > 0.0f ? best / area : 0.0f);
}

void MeshBuilder::Split(const Range& r, Range* left, Range* right) {
  PrimRef* prims = prims_.data();
  uint32_t mid;
  left->centres = Box4{};
  right->centres = Box4{};
  if (r.axis >= 0 && r.bin >= 0) {
    const int a = r.axis;
    const float extent = r.centres.hi[a] - r.centres.lo[a];
    const float scale = (static_cast<float>(r.bins) * 0.99999f) / extent;
    const float cmin = r.centres.lo[a];
    // Hoare partition by bin (the same arithmetic as the binning, so every primitive goes where
    // it was counted), the two sides' centre boxes grown as each element's side is settled (in
    // registers: through memory every update would wait for the last one's store).
    uint32_t i = r.begin, j = r.end;
    auto on_left = [&](const PrimRef& p) {
      int b = static_cast<int>((p.lo[a] + p.hi[a] - cmin) * scale);
      b = std::min(std::max(b, 0), r.bins - 1);
      return b <= r.bin;
    };
#if defined(__SSE2__)
    __m128 l_lo = _mm_set1_ps(kInf), l_hi = _mm_set1_ps(-kInf);
    __m128 r_lo = l_lo, r_hi = l_hi;
    // The sides' own boxes too when the bins came from a sample.
    __m128 lb_lo = l_lo, lb_hi = l_hi, rb_lo = l_lo, rb_hi = l_hi;
    const bool boxes = r.sampled;
    auto to_left = [&](const PrimRef& p) {
      const __m128 lo = _mm_load_ps(p.lo), hi = _mm_load_ps(p.hi);
      const __m128 c = _mm_add_ps(lo, hi);
      l_lo = _mm_min_ps(l_lo, c);
      l_hi = _mm_max_ps(l_hi, c);
      if (boxes) {
        lb_lo = _mm_min_ps(lb_lo, lo);
        lb_hi = _mm_max_ps(lb_hi, hi);
      }
    };
    auto to_right = [&](const PrimRef& p) {
      const __m128 lo = _mm_load_ps(p.lo), hi = _mm_load_ps(p.hi);
      const __m128 c = _mm_add_ps(lo, hi);
      r_lo = _mm_min_ps(r_lo, c);
      r_hi = _mm_max_ps(r_hi, c);
      if (boxes) {
        rb_lo = _mm_min_ps(rb_lo, lo);
        rb_hi = _mm_max_ps(rb_hi, hi);
      }
    };
#else
    auto to_left = [&](const PrimRef& p) {
      alignas(16) float c[4] = {0, 0, 0, 0};
      Centre2(p, c);
      Grow(&left->centres, c, c);
    };
    auto to_right = [&](const PrimRef& p) {
      alignas(16) float c[4] = {0, 0, 0, 0};
      Centre2(p, c);
      Grow(&right->centres, c, c);
    };
#endif
    while (true) {
      while (i < j && on_left(prims[i])) to_left(prims[i++]);
      while (i < j && !on_left(prims[j - 1])) to_right(prims[--j]);
      if (i >= j) break;
      std::swap(prims[i], prims[j - 1]);
      to_left(prims[i++]);
      to_right(prims[--j]);
    }
#if defined(__SSE2__)
    // (The fourth lanes hold the sum of the id and padding bits: unused.)
    _mm_store_ps(left->centres.lo, l_lo);
    _mm_store_ps(left->centres.hi, l_hi);
    _mm_store_ps(right->centres.lo, r_lo);
    _mm_store_ps(right->centres.hi, r_hi);
    if (boxes) {
      _mm_store_ps(left->bounds.lo, lb_lo);
      _mm_store_ps(left->bounds.hi, lb_hi);
      _mm_store_ps(right->bounds.lo, rb_lo);
      _mm_store_ps(right->bounds.hi, rb_hi);
    }
#endif
    mid = i;
#if defined(__SSE2__)
    if (!r.sampled) {
      left->bounds = r.left_bounds;
      right->bounds = r.right_bounds;
    }
#else
    if (r.sampled) {
      left->bounds = Box4{};
      right->bounds = Box4{};
      for (uint32_t k = r.begin; k < r.end; ++k) {
        Grow(k < mid ? &left->bounds : &right->bounds, prims[k].lo, prims[k].hi);
      }
    } else {
      left->bounds = r.left_bounds;
      right->bounds = r.right_bounds;
    }
#endif
  } else {
    // By position along an axis: the exact sweep's split, or the median centre of the widest
    // axis (halving).
    int a = r.axis;
    if (a < 0) {
      a = 0;
      for (int k = 1; k < 3; ++k) {
        if (r.centres.hi[k] - r.centres.lo[k] > r.centres.hi[a] - r.centres.lo[a]) a = k;
      }
    }
    mid = r.axis >= 0 ? r.begin + r.position : r.begin + r.count() / 2;
    std::nth_element(
        prims + r.begin, prims + mid, prims + r.end,
        [a](const PrimRef& x, const PrimRef& y) { return x.lo[a] + x.hi[a] < y.lo[a] + y.hi[a]; });
    left->bounds = Box4{};
    right->bounds = Box4{};
    for (uint32_t k = r.begin; k < r.end; ++k) {
      alignas(16) float c[4] = {0, 0, 0, 0};
      Centre2(prims[k], c);
      Grow(k < mid ? &left->centres : &right->centres, c, c);
      Grow(k < mid ? &left->bounds : &right->bounds, prims[k].lo, prims[k].hi);
    }
  }
  assert(mid > r.begin && mid < r.end);
  left->begin = r.begin;
  left->end = mid;
  right->begin = mid;
  right->end = r.end;
  left->depth = right->depth = r.depth + 1;
  Binning(left);
  Binning(right);
}

bool MeshBuilder::LeafVertices(const Range& r, uint32_t* vertices, uint32_t* count,
                               uint8_t* corners) const {
  uint32_t n = 0;
  const uint32_t* idx = mesh_.indices.data();
  for (uint32_t p = r.begin; p < r.end; ++p) {
    const uint32_t* t = idx + 3 * static_cast<size_t>(prims_[p].id);
    for (int k = 0; k < 3; ++k) {
      uint32_t v = 0;
      while (v < n && vertices[v] != t[k]) ++v;
      if (v == n) {
        if (n == MeshShape::kMaxLeafVertices) return false;
        vertices[n++] = t[k];
      }
      corners[3 * (p - r.begin) + static_cast<uint32_t>(k)] = static_cast<uint8_t>(v);
    }
  }
  *count = n;
  return true;
}

uint32_t MeshBuilder::MakeLeaf(const Range& r) {
  assert(r.fits);
  const uint32_t* vertices = r.leaf_vertices;
  const uint32_t nv = r.leaf_vertex_count;
  const uint32_t n = r.count();
  auto& out = out_->leaves_;
  const size_t at = out.size();
  assert(at % 4 == 0);
  out.resize(at + MeshLeaf::Words(n, nv), 0);
  uint32_t* block = out.data() + at;
  const Vec3* v = mesh_.vertices.data();
  const uint32_t* idx = mesh_.indices.data();
  float* coords = reinterpret_cast<float*>(block + 1);
  for (uint32_t k = 0; k < nv; ++k) {
    coords[k] = v[vertices[k]].x;
    coords[nv + k] = v[vertices[k]].y;
    coords[2 * nv + k] = v[vertices[k]].z;
  }
  uint8_t* corners = reinterpret_cast<uint8_t*>(block + 1 + 3 * nv);
  uint32_t* ids = block + 1 + 3 * nv + 6;
  uint32_t degenerate = 0;
  for (uint32_t lane = 0; lane < MeshShape::kMaxLeafTriangles; ++lane) {
    const uint32_t from = lane < n ? lane : 0;
    const uint32_t id = prims_[r.begin + from].id;
    const uint32_t* t = idx + 3 * static_cast<size_t>(id);
    for (int c = 0; c < 3; ++c) corners[8 * c + lane] = r.leaf_corners[3 * from + c];
    if (lane < n) {
      ids[lane] = id;
      if (IsDegenerate(v[t[0]], v[t[1]], v[t[2]])) degenerate |= 1u << lane;
    }
  }
  block[0] = n | (nv << 8) | (degenerate << 16);
  out_->degenerate_count_ += static_cast<uint32_t>(std::popcount(degenerate));
  ++out_->leaf_count_;
  return MeshShape::kLeafBit | static_cast<uint32_t>(at / 4);
}

uint32_t MeshBuilder::BuildNode(const Range& r, int node_depth) {
  max_depth_ = std::max(max_depth_, node_depth);
  Range children[MeshShape::kWidth];
  int count = 1;
  children[0] = r;
  while (count < MeshShape::kWidth) {
    // The child of largest area that should not be a leaf (of equal areas, the one with the
    // most triangles, which keeps ranges of identical triangles balanced).
    int pick = -1;
    float pick_area = -1.0f;
    for (int k = 0; k < count; ++k) {
      if (IsLeaf(children[k])) continue;
      const float area = HalfArea(children[k].bounds);
      if (area > pick_area || (area == pick_area && children[k].count() > children[pick].count())) {
        pick_area = area;
        pick = k;
      }
    }
    if (pick < 0) break;
    Range left, right;
    Split(children[pick], &left, &right);
    children[pick] = left;
    children[count++] = right;
  }
  const uint32_t index = static_cast<uint32_t>(out_->nodes_.size());
  out_->nodes_.emplace_back();
  uint32_t refs[MeshShape::kWidth];
  for (int k = 0; k < count; ++k) {
    refs[k] = IsLeaf(children[k]) ? MakeLeaf(children[k]) : BuildNode(children[k], node_depth + 1);
  }
  MeshShape::Node& node = out_->nodes_[index];
  Box4 all;
  for (int k = 0; k < count; ++k) GrowBox(&all, children[k].bounds);
  for (int a = 0; a < 3; ++a) {
    Quantize(all.lo[a], all.hi[a], &node.origin[a], &node.scale[a]);
    const double origin = node.origin[a], scale = node.scale[a];
    for (int k = 0; k < MeshShape::kWidth; ++k) {
      if (k >= count) {
        node.q[2 * a][k] = 255;
        node.q[2 * a + 1][k] = 0;
        continue;
      }
      // Down for the lower plane, up for the upper one (exact in double: every grid plane is
      // an exact float, and the quotients are small integers plus a fraction).
      const double lo = std::floor((children[k].bounds.lo[a] - origin) / scale);
      const double hi = std::ceil((children[k].bounds.hi[a] - origin) / scale);
      node.q[2 * a][k] = static_cast<uint8_t>(std::clamp(lo, 0.0, 255.0));
      node.q[2 * a + 1][k] = static_cast<uint8_t>(std::clamp(hi, 0.0, 255.0));
      assert(node.Plane(k, a, false) <= children[k].bounds.lo[a]);
      assert(node.Plane(k, a, true) >= children[k].bounds.hi[a]);
    }
  }
  for (int k = 0; k < MeshShape::kWidth; ++k) {
    node.child[k] = k < count ? refs[k] : MeshShape::kEmptyChild;
  }
  node.used = (1u << count) - 1u;
  node.unused = 0;
  return index;
}

void MeshBuilder::Run() {
  const uint32_t n = static_cast<uint32_t>(mesh_.indices.size() / 3);
  if (n == 0) return;
  prims_.resize(n);
  Range root;
  root.begin = 0;
  root.end = n;
  const Vec3* v = mesh_.vertices.data();
  const uint32_t* idx = mesh_.indices.data();
  for (uint32_t t = 0; t < n; ++t) {
    const Vec3& a = v[idx[3 * t]];
    const Vec3& b = v[idx[3 * t + 1]];
    const Vec3& c = v[idx[3 * t + 2]];
    PrimRef& p = prims_[t];
    p.lo[0] = std::min(a.x, std::min(b.x, c.x));
    p.lo[1] = std::min(a.y, std::min(b.y, c.y));
    p.lo[2] = std::min(a.z, std::min(b.z, c.z));
    p.hi[0] = std::max(a.x, std::max(b.x, c.x));
    p.hi[1] = std::max(a.y, std::max(b.y, c.y));
    p.hi[2] = std::max(a.z, std::max(b.z, c.z));
    p.id = t;
    p.pad = 0;
    Grow(&root.bounds, p.lo, p.hi);
    alignas(16) float cc[4] = {0, 0, 0, 0};
    Centre2(p, cc);
    Grow(&root.centres, cc, cc);
  }
  Binning(&root);
  out_->triangle_count_ = n;
  // Room for 7 words of leaf per triangle and a node per 16 (the city of collide-bench-mesh
  // takes 6.4 and one per 22): a vector that grows is copied once more before the final trim.
  out_->leaves_.reserve(static_cast<size_t>(n) * 7 + 64);
  if (IsLeaf(root)) {
    out_->root_ = MakeLeaf(root);
    max_depth_ = 0;
  } else {
    out_->nodes_.reserve(n / 16 + 16);
    out_->root_ = BuildNode(root, 1);
  }
  out_->depth_ = max_depth_;
  out_->bounds_ = Aabb{{root.bounds.lo[0], root.bounds.lo[1], root.bounds.lo[2]},
                       {root.bounds.hi[0], root.bounds.hi[1], root.bounds.hi[2]}};

  // Padding: a 16-float load at a leaf's last coordinates stays inside.
  out_->leaves_.resize(out_->leaves_.size() + 16, 0);
  out_->leaves_.shrink_to_fit();
  out_->nodes_.shrink_to_fit();
}

MeshShape MeshShape::Build(const TriangleMeshView& mesh, const MeshBuildOptions& options) {
  assert(!ValidateTriangleMesh(mesh).has_value() && "validate the mesh first");
  MeshShape out;
  MeshBuilder(mesh, options, &out).Run();
  return out;
}

size_t MeshShape::MemoryBytes() const {
  return sizeof(MeshShape) + nodes_.capacity() * sizeof(Node) +
         leaves_.capacity() * sizeof(uint32_t);
}

}  // namespace collide
