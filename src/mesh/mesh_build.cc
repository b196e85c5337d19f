// MeshShape::Build: binned SAH straight into 8-wide nodes, one thread.
//
// Every range of triangles is binned once, when it is made: its centres go into 32 bins per axis
// (with the bins' boxes and counts), and a sweep over the bins finds the split of least SAH cost
// (left area * left count + right area * right count). A node starts as its own range and
// repeatedly splits the child of largest area that should not be a leaf, partitioning by the
// split its binning found, until it has 8 children or none wants splitting; each child is then a
// leaf or a node of its own. A range of at most max_leaf_triangles is a leaf when its cost
// (one test per triangle) is at most the split's (a node visit plus the children's tests, in
// proportion to their areas).

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
  // The split: the axis, and the last bin on the left (-1: halve by position instead).
  int axis = -1;
  int bin = -1;
  // SAH cost of splitting and of a leaf, in triangle tests.
  float split_cost = 0.0f;
  float leaf_cost = 0.0f;
  // The children's boxes when split by bins (exact: unions of the bins' boxes).
  Box4 left_bounds;
  Box4 right_bounds;

  // A range small enough for a leaf: whether its triangles use at most kMaxLeafVertices
  // vertices (a leaf's block holds them).
  bool fits = false;

  uint32_t count() const { return end - begin; }
};

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
    block_ = static_cast<uint32_t>(std::clamp(options.sah_block, 1, 8));
  }

  void Run();

 private:
  void Binning(Range* r);
  // A count of triangles in the SAH's units: rounded up to whole groups of `block_` (the
  // kernels test a leaf's triangles that many at a time, so a leaf of 1 costs as much as one of
  // block_).
  uint32_t Blocks(uint32_t n) const { return (n + block_ - 1) / block_ * block_; }
  // Splits `r` by its split into `left` and `right` (binned and ready).
  void Split(const Range& r, Range* left, Range* right);
  bool IsLeaf(const Range& r) const {
    return r.count() == 1 || (r.fits && r.leaf_cost <= r.split_cost);
  }
  // The distinct vertices of the range's triangles, in order of first use; false when there are
  // more than kMaxLeafVertices.
  bool LeafVertices(const Range& r, uint32_t* vertices, uint32_t* count) const;
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
  const uint32_t n = r->count();
  r->leaf_cost = static_cast<float>(Blocks(n));
  if (n <= max_leaf_) {
    uint32_t vertices[3 * MeshShape::kMaxLeafTriangles];
    uint32_t count;
    r->fits = LeafVertices(*r, vertices, &count);
  }
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
  float scale[3];
  bool usable[3];
  for (int a = 0; a < 3; ++a) {
    const float extent = r->centres.hi[a] - r->centres.lo[a];
    usable[a] = extent > 0.0f;
    // Maps the centre range onto [0, kBins) (the top end rounds below kBins, and is clamped).
    scale[a] = usable[a] ? (static_cast<float>(kBins) * 0.99999f) / extent : 0.0f;
  }
  Box4 bins[3][kBins];
  uint32_t counts[3][kBins] = {};
  const PrimRef* prims = prims_.data();
  const float* cmin = r->centres.lo;
  for (uint32_t i = r->begin; i < r->end; ++i) {
    const PrimRef& p = prims[i];
    float c[3];
    Centre2(p, c);
    for (int a = 0; a < 3; ++a) {
      int b = static_cast<int>((c[a] - cmin[a]) * scale[a]);
      b = std::min(std::max(b, 0), kBins - 1);
      Grow(&bins[a][b], p.lo, p.hi);
      ++counts[a][b];
    }
  }
  // Sweep: right-to-left accumulated areas and counts, then left-to-right costs.
  float best = kInf;
  for (int a = 0; a < 3; ++a) {
    if (!usable[a]) continue;
    float right_area[kBins];
    uint32_t right_count[kBins];
    Box4 acc;
    uint32_t cnt = 0;
    for (int b = kBins - 1; b >= 1; --b) {
      GrowBox(&acc, bins[a][b]);
      cnt += counts[a][b];
      right_area[b] = HalfArea(acc);
      right_count[b] = cnt;
    }
    Box4 left;
    uint32_t left_count = 0;
    for (int b = 0; b < kBins - 1; ++b) {
      GrowBox(&left, bins[a][b]);
      left_count += counts[a][b];
      if (left_count == 0 || right_count[b + 1] == 0) continue;
      const float cost = HalfArea(left) * static_cast<float>(Blocks(left_count)) +
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
  for (int b = 0; b < kBins; ++b) GrowBox(b <= r->bin ? &left : &right, bins[r->axis][b]);
  r->left_bounds = left;
  r->right_bounds = right;
}

void MeshBuilder::Split(const Range& r, Range* left, Range* right) {
  PrimRef* prims = prims_.data();
  uint32_t mid;
  left->centres = Box4{};
  right->centres = Box4{};
  if (r.axis >= 0) {
    const int a = r.axis;
    const float extent = r.centres.hi[a] - r.centres.lo[a];
    const float scale = (static_cast<float>(kBins) * 0.99999f) / extent;
    const float cmin = r.centres.lo[a];
    // Hoare partition by bin (the same arithmetic as the binning, so every primitive goes where
    // it was counted).
    uint32_t i = r.begin, j = r.end;
    auto on_left = [&](const PrimRef& p) {
      int b = static_cast<int>((p.lo[a] + p.hi[a] - cmin) * scale);
      b = std::min(std::max(b, 0), kBins - 1);
      return b <= r.bin;
    };
    while (true) {
      while (i < j && on_left(prims[i])) ++i;
      while (i < j && !on_left(prims[j - 1])) --j;
      if (i >= j) break;
      std::swap(prims[i], prims[j - 1]);
      ++i;
      --j;
    }
    mid = i;
    left->bounds = r.left_bounds;
    right->bounds = r.right_bounds;
  } else {
    // Halve at the median centre of the widest axis.
    int a = 0;
    for (int k = 1; k < 3; ++k) {
      if (r.centres.hi[k] - r.centres.lo[k] > r.centres.hi[a] - r.centres.lo[a]) a = k;
    }
    mid = r.begin + r.count() / 2;
    std::nth_element(
        prims + r.begin, prims + mid, prims + r.end,
        [a](const PrimRef& x, const PrimRef& y) { return x.lo[a] + x.hi[a] < y.lo[a] + y.hi[a]; });
    left->bounds = Box4{};
    right->bounds = Box4{};
    for (uint32_t k = r.begin; k < r.end; ++k) {
      Grow(k < mid ? &left->bounds : &right->bounds, prims[k].lo, prims[k].hi);
    }
  }
  assert(mid > r.begin && mid < r.end);
  for (uint32_t k = r.begin; k < r.end; ++k) {
    alignas(16) float c[4] = {0, 0, 0, 0};
    Centre2(prims[k], c);
    Grow(k < mid ? &left->centres : &right->centres, c, c);
  }
  left->begin = r.begin;
  left->end = mid;
  right->begin = mid;
  right->end = r.end;
  left->depth = right->depth = r.depth + 1;
  Binning(left);
  Binning(right);
}

bool MeshBuilder::LeafVertices(const Range& r, uint32_t* vertices, uint32_t* count) const {
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
    }
  }
  *count = n;
  return true;
}

uint32_t MeshBuilder::MakeLeaf(const Range& r) {
  uint32_t vertices[3 * MeshShape::kMaxLeafTriangles];
  uint32_t nv = 0;
  const bool fits = LeafVertices(r, vertices, &nv);
  assert(fits);
  (void)fits;
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
    const uint32_t id = prims_[r.begin + (lane < n ? lane : 0)].id;
    const uint32_t* t = idx + 3 * static_cast<size_t>(id);
    for (int c = 0; c < 3; ++c) {
      uint32_t local = 0;
      while (vertices[local] != t[c]) ++local;
      corners[8 * c + lane] = static_cast<uint8_t>(local);
    }
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
  node.unused[0] = node.unused[1] = 0;
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
  // About 5 triangles and 6 vertices a leaf, 5 children a node.
  out_->leaves_.reserve(static_cast<size_t>(n) / 5 * 28 + 64);
  if (IsLeaf(root)) {
    out_->root_ = MakeLeaf(root);
    max_depth_ = 0;
  } else {
    out_->nodes_.reserve(n / 24 + 16);
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
