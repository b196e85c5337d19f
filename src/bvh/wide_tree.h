#pragma once

#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "bvh/internal/traversal_stack.h"
#include "geom/aabb.h"
#include "geom/vec3.h"

namespace collide {

/// One path of an interleaved batch cast (DynamicTree::CastBatch): a ray, or a box of
/// `half_extent` swept along it.
struct BatchCast {
  /// Start of the path.
  Vec3 origin{};
  /// Unit direction.
  Vec3 unit_dir{};
  /// How far along `unit_dir` to look (>= 0); the callback may shorten it.
  float max_distance = 0.0f;
  /// Half extents of the swept box (zero for a ray).
  Vec3 half_extent{};
  /// Category bits the path may hit (subtrees without them are skipped).
  uint32_t mask = ~0u;
};

/// A read-only 4-wide bounding volume hierarchy for queries (Jolt's QuadTree layout): each
/// node holds the boxes of its up to four children as structure-of-arrays, so one SSE sequence
/// tests a ray or a box against all four, and the tree is half as deep as a binary one.
///
/// It is not built on its own: `DynamicTree::Optimize` collapses the binary tree into it. Child
/// references use the dynamic tree's convention: >= 0 is a node of this tree, < 0 a leaf
/// (proxy id ~reference); an unused slot has category 0, so no mask ever selects it.
class WideTree {
 public:
  /// The number of children per node.
  static constexpr int kWidth = 4;

  /// One node: 96 bytes of child boxes, 16 of references, 16 of category unions.
  struct alignas(64) Node {
    float min_x[kWidth];
    float min_y[kWidth];
    float min_z[kWidth];
    float max_x[kWidth];
    float max_y[kWidth];
    float max_z[kWidth];
    int32_t child[kWidth];
    uint32_t category[kWidth];

    /// Sets slot `i` to `child` with box `box` and category union `category`.
    void Set(int i, int32_t child_ref, const Aabb& box, uint32_t category_bits) {
      min_x[i] = box.min.x;
      min_y[i] = box.min.y;
      min_z[i] = box.min.z;
      max_x[i] = box.max.x;
      max_y[i] = box.max.y;
      max_z[i] = box.max.z;
      child[i] = child_ref;
      category[i] = category_bits;
    }
    /// Marks slot `i` unused (category 0, a zero box at the origin).
    void SetEmpty(int i) { Set(i, std::numeric_limits<int32_t>::min(), Aabb{}, 0); }
  };
  static_assert(sizeof(Node) == 128, "two cache lines per node");

  /// Removes every node.
  void Clear() {
    nodes_.clear();
    root_ = -1;
  }
  /// Appends a node (slots unset) and returns its index.
  int32_t AddNode() {
    nodes_.emplace_back();
    return static_cast<int32_t>(nodes_.size()) - 1;
  }
  /// Node `i`, for building.
  Node& node(int32_t i) { return nodes_[i]; }
  /// Node `i`, for inspection.
  const Node& node(int32_t i) const { return nodes_[i]; }
  /// Sets the root node index (the tree must have at least one node).
  void SetRoot(int32_t root) { root_ = root; }
  /// The root node index, -1 when there is none.
  int32_t root() const { return root_; }
  /// True when the tree has a root node.
  bool HasRoot() const { return root_ >= 0; }
  /// The number of nodes.
  int32_t NodeCount() const { return static_cast<int32_t>(nodes_.size()); }
  /// Reserves room for `count` nodes.
  void Reserve(size_t count) { nodes_.reserve(count); }
  /// Gives back the capacity beyond the nodes when it is more than an eighth of them.
  void TrimCapacity() {
    if (nodes_.capacity() - nodes_.size() > nodes_.size() / 8 + 16) nodes_.shrink_to_fit();
  }
  /// Bytes held.
  size_t MemoryBytes() const { return nodes_.capacity() * sizeof(Node); }

  /// See DynamicTree::QueryAabb; `leaf_user` maps proxy ids to user data.
  template <size_t kInlineStack, typename F>
  void QueryAabb(const Aabb& box, uint32_t mask, const uint32_t* leaf_user, F&& f) const;

  /// See DynamicTree::Raycast / SweptCast (`kSwept` false ignores `half_extent`).
  template <bool kSwept, size_t kInlineStack, typename F>
  void Cast(const Vec3& origin, const Vec3& unit_dir, float max_distance, const Vec3& half_extent,
            uint32_t mask, const uint32_t* leaf_user, F&& f) const;

  /// See DynamicTree::CastBatch.
  template <typename F, typename Prefetch>
  void CastBatch(const BatchCast* casts, size_t count, const uint32_t* leaf_user, F&& f,
                 Prefetch&& prefetch_leaf) const;

 private:
  struct CastEntry {
    int32_t ref;
    float t;
  };

  std::vector<Node> nodes_;
  int32_t root_ = -1;
};

// ---------------------------------------------------------------------------------------------

template <size_t kInlineStack, typename F>
void WideTree::QueryAabb(const Aabb& box, uint32_t mask, const uint32_t* leaf_user, F&& f) const {
  if (root_ < 0) return;
  TraversalStack<int32_t, kInlineStack> stack;
  stack.Push(root_);
#if defined(__SSE2__)
  const __m128 q_min_x = _mm_set1_ps(box.min.x);
  const __m128 q_min_y = _mm_set1_ps(box.min.y);
  const __m128 q_min_z = _mm_set1_ps(box.min.z);
  const __m128 q_max_x = _mm_set1_ps(box.max.x);
  const __m128 q_max_y = _mm_set1_ps(box.max.y);
  const __m128 q_max_z = _mm_set1_ps(box.max.z);
  const __m128i q_mask = _mm_set1_epi32(static_cast<int32_t>(mask));
#endif
  while (!stack.Empty()) {
    const Node& n = nodes_[stack.Pop()];
#if defined(__SSE2__)
    __m128 overlap = _mm_and_ps(_mm_cmple_ps(_mm_load_ps(n.min_x), q_max_x),
                                _mm_cmple_ps(q_min_x, _mm_load_ps(n.max_x)));
    overlap = _mm_and_ps(overlap, _mm_cmple_ps(_mm_load_ps(n.min_y), q_max_y));
    overlap = _mm_and_ps(overlap, _mm_cmple_ps(q_min_y, _mm_load_ps(n.max_y)));
    overlap = _mm_and_ps(overlap, _mm_cmple_ps(_mm_load_ps(n.min_z), q_max_z));
    overlap = _mm_and_ps(overlap, _mm_cmple_ps(q_min_z, _mm_load_ps(n.max_z)));
    __m128i cat =
        _mm_and_si128(_mm_load_si128(reinterpret_cast<const __m128i*>(n.category)), q_mask);
    __m128 masked_out = _mm_castsi128_ps(_mm_cmpeq_epi32(cat, _mm_setzero_si128()));
    unsigned hits = static_cast<unsigned>(_mm_movemask_ps(_mm_andnot_ps(masked_out, overlap)));
#else
    unsigned hits = 0;
    for (int i = 0; i < kWidth; ++i) {
      bool hit = (n.category[i] & mask) != 0 && n.min_x[i] <= box.max.x &&
                 box.min.x <= n.max_x[i] && n.min_y[i] <= box.max.y && box.min.y <= n.max_y[i] &&
                 n.min_z[i] <= box.max.z && box.min.z <= n.max_z[i];
      hits |= static_cast<unsigned>(hit) << i;
    }
#endif
    while (hits != 0) {
      int i = std::countr_zero(hits);
      hits &= hits - 1;
      int32_t child = n.child[i];
      if (child < 0) {
        if (!f(leaf_user[~child], ~child)) return;
      } else {
        stack.Push(child);
      }
    }
  }
}

template <bool kSwept, size_t kInlineStack, typename F>
void WideTree::Cast(const Vec3& origin, const Vec3& unit_dir, float max_distance,
                    const Vec3& half_extent, uint32_t mask, const uint32_t* leaf_user,
                    F&& f) const {
  if (root_ < 0 || !(max_distance >= 0.0f)) return;
  const Vec3 inv{1.0f / unit_dir.x, 1.0f / unit_dir.y, 1.0f / unit_dir.z};
  // Growth by the half extent folded into two origins, as in DynamicTree.
  const Vec3 lo_origin = kSwept ? origin + half_extent : origin;
  const Vec3 hi_origin = kSwept ? origin - half_extent : origin;
  float t_max = max_distance;
#if defined(__SSE2__)
  const __m128 lo_x = _mm_set1_ps(lo_origin.x);
  const __m128 lo_y = _mm_set1_ps(lo_origin.y);
  const __m128 lo_z = _mm_set1_ps(lo_origin.z);
  const __m128 hi_x = _mm_set1_ps(hi_origin.x);
  const __m128 hi_y = _mm_set1_ps(hi_origin.y);
  const __m128 hi_z = _mm_set1_ps(hi_origin.z);
  const __m128 inv_x = _mm_set1_ps(inv.x);
  const __m128 inv_y = _mm_set1_ps(inv.y);
  const __m128 inv_z = _mm_set1_ps(inv.z);
  const __m128i q_mask = _mm_set1_epi32(static_cast<int32_t>(mask));
#endif

  TraversalStack<CastEntry, kInlineStack> stack;
  stack.Push({root_, 0.0f});
  while (!stack.Empty()) {
    const CastEntry entry = stack.Pop();
    if (entry.t > t_max) continue;
    if (entry.ref < 0) {
      float result = f(leaf_user[~entry.ref], ~entry.ref, t_max);
      if (result < 0.0f) return;
      if (result < t_max) t_max = result;
      continue;
    }
    const Node& n = nodes_[entry.ref];
    alignas(16) float t_enter[kWidth];
#if defined(__SSE2__)
    // Slab test of four boxes. Operand order matters for NaN (0 * inf when the origin lies on
    // a slab plane of a zero direction component): minps/maxps return their second operand
    // when either is NaN, which ignores the NaN exactly as RayAabbInterval does.
    __m128 t0 = _mm_setzero_ps();
    __m128 t1 = _mm_set1_ps(t_max);
    __m128 lo = _mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.min_x), lo_x), inv_x);
    __m128 hi = _mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.max_x), hi_x), inv_x);
    t0 = _mm_max_ps(_mm_min_ps(hi, lo), t0);
    t1 = _mm_min_ps(_mm_max_ps(lo, hi), t1);
    lo = _mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.min_y), lo_y), inv_y);
    hi = _mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.max_y), hi_y), inv_y);
    t0 = _mm_max_ps(_mm_min_ps(hi, lo), t0);
    t1 = _mm_min_ps(_mm_max_ps(lo, hi), t1);
    lo = _mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.min_z), lo_z), inv_z);
    hi = _mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.max_z), hi_z), inv_z);
    t0 = _mm_max_ps(_mm_min_ps(hi, lo), t0);
    t1 = _mm_min_ps(_mm_max_ps(lo, hi), t1);
    __m128i cat =
        _mm_and_si128(_mm_load_si128(reinterpret_cast<const __m128i*>(n.category)), q_mask);
    __m128 masked_out = _mm_castsi128_ps(_mm_cmpeq_epi32(cat, _mm_setzero_si128()));
    unsigned hits =
        static_cast<unsigned>(_mm_movemask_ps(_mm_andnot_ps(masked_out, _mm_cmple_ps(t0, t1))));
    _mm_store_ps(t_enter, t0);
#else
    unsigned hits = 0;
    for (int i = 0; i < kWidth; ++i) {
      float t0 = 0.0f;
      float t1 = t_max;
      const float mins[3] = {n.min_x[i], n.min_y[i], n.min_z[i]};
      const float maxs[3] = {n.max_x[i], n.max_y[i], n.max_z[i]};
      for (int a = 0; a < 3; ++a) {
        float lo = (mins[a] - lo_origin[a]) * inv[a];
        float hi = (maxs[a] - hi_origin[a]) * inv[a];
        float near = hi < lo ? hi : lo;
        float far = hi < lo ? lo : hi;
        t0 = t0 < near ? near : t0;
        t1 = far < t1 ? far : t1;
      }
      t_enter[i] = t0;
      hits |= static_cast<unsigned>((n.category[i] & mask) != 0 && t0 <= t1) << i;
    }
#endif
    if (hits == 0) continue;
    // Push the hit children farthest first, so the nearest is popped next.
    int order[kWidth];
    int count = 0;
    while (hits != 0) {
      int i = std::countr_zero(hits);
      hits &= hits - 1;
      // Insertion into descending order of entry distance.
      int j = count++;
      while (j > 0 && t_enter[order[j - 1]] < t_enter[i]) {
        order[j] = order[j - 1];
        --j;
      }
      order[j] = i;
    }
    for (int k = 0; k < count; ++k) stack.Push({n.child[order[k]], t_enter[order[k]]});
  }
}

template <typename F, typename Prefetch>
void WideTree::CastBatch(const BatchCast* casts, size_t count, const uint32_t* leaf_user, F&& f,
                         Prefetch&& prefetch_leaf) const {
  if (root_ < 0) return;
  // Several traversals run in lock step, one step each in turn: a step ends by prefetching the
  // node (or the leaf's body) its lane visits next, and the other lanes' steps run while that
  // memory arrives. A single traversal mostly waits on cache misses; kLanes of them overlap
  // those waits. Each lane visits exactly the entries Cast would, in the same order, so the
  // results are identical.
  constexpr int kLanes = 8;
  struct Lane {
    size_t cast = 0;
    Vec3 lo_origin{};
    Vec3 hi_origin{};
    Vec3 inv{};
    float t_max = 0.0f;
    uint32_t mask = 0;
    CastEntry current{};
    bool active = false;
  };
  Lane lanes[kLanes];
  TraversalStack<CastEntry, 64> stacks[kLanes];
  size_t next_cast = 0;
  int active = 0;

  auto prefetch_entry = [&](const CastEntry& e) {
    if (e.ref >= 0) {
      const char* line = reinterpret_cast<const char*>(&nodes_[e.ref]);
      __builtin_prefetch(line);
      __builtin_prefetch(line + 64);
    } else {
      prefetch_leaf(leaf_user[~e.ref]);
    }
  };
  // Starts the next cast with a valid path in `lane`; false when none is left.
  auto start = [&](int l) {
    while (next_cast < count) {
      const BatchCast& c = casts[next_cast++];
      if (!(c.max_distance >= 0.0f)) continue;
      Lane& lane = lanes[l];
      lane.cast = next_cast - 1;
      lane.lo_origin = c.origin + c.half_extent;
      lane.hi_origin = c.origin - c.half_extent;
      lane.inv = Vec3{1.0f / c.unit_dir.x, 1.0f / c.unit_dir.y, 1.0f / c.unit_dir.z};
      lane.t_max = c.max_distance;
      lane.mask = c.mask;
      lane.current = CastEntry{root_, 0.0f};
      lane.active = true;
      stacks[l].Clear();
      return true;
    }
    lanes[l].active = false;
    return false;
  };
  for (int l = 0; l < kLanes; ++l) active += start(l);

  while (active > 0) {
    for (int l = 0; l < kLanes; ++l) {
      Lane& lane = lanes[l];
      if (!lane.active) continue;
      TraversalStack<CastEntry, 64>& stack = stacks[l];
      const CastEntry entry = lane.current;
      bool stop = false;
      if (entry.t <= lane.t_max) {
        if (entry.ref < 0) {
          const float result = f(lane.cast, leaf_user[~entry.ref], ~entry.ref, lane.t_max);
          if (result < 0.0f) {
            stop = true;
          } else if (result < lane.t_max) {
            lane.t_max = result;
          }
        } else {
          const Node& n = nodes_[entry.ref];
          alignas(16) float t_enter[kWidth];
          unsigned hits = 0;
#if defined(__SSE2__)
          // The slab test of Cast, with the lane's path (NaN handling as there).
          __m128 t0 = _mm_setzero_ps();
          __m128 t1 = _mm_set1_ps(lane.t_max);
          __m128 lo = _mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.min_x), _mm_set1_ps(lane.lo_origin.x)),
                                 _mm_set1_ps(lane.inv.x));
          __m128 hi = _mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.max_x), _mm_set1_ps(lane.hi_origin.x)),
                                 _mm_set1_ps(lane.inv.x));
          t0 = _mm_max_ps(_mm_min_ps(hi, lo), t0);
          t1 = _mm_min_ps(_mm_max_ps(lo, hi), t1);
          lo = _mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.min_y), _mm_set1_ps(lane.lo_origin.y)),
                          _mm_set1_ps(lane.inv.y));
          hi = _mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.max_y), _mm_set1_ps(lane.hi_origin.y)),
                          _mm_set1_ps(lane.inv.y));
          t0 = _mm_max_ps(_mm_min_ps(hi, lo), t0);
          t1 = _mm_min_ps(_mm_max_ps(lo, hi), t1);
          lo = _mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.min_z), _mm_set1_ps(lane.lo_origin.z)),
                          _mm_set1_ps(lane.inv.z));
          hi = _mm_mul_ps(_mm_sub_ps(_mm_load_ps(n.max_z), _mm_set1_ps(lane.hi_origin.z)),
                          _mm_set1_ps(lane.inv.z));
          t0 = _mm_max_ps(_mm_min_ps(hi, lo), t0);
          t1 = _mm_min_ps(_mm_max_ps(lo, hi), t1);
          __m128i cat = _mm_and_si128(_mm_load_si128(reinterpret_cast<const __m128i*>(n.category)),
                                      _mm_set1_epi32(static_cast<int32_t>(lane.mask)));
          __m128 masked_out = _mm_castsi128_ps(_mm_cmpeq_epi32(cat, _mm_setzero_si128()));
          hits = static_cast<unsigned>(
              _mm_movemask_ps(_mm_andnot_ps(masked_out, _mm_cmple_ps(t0, t1))));
          _mm_store_ps(t_enter, t0);
#else
          for (int i = 0; i < kWidth; ++i) {
            float t0 = 0.0f;
            float t1 = lane.t_max;
            const float mins[3] = {n.min_x[i], n.min_y[i], n.min_z[i]};
            const float maxs[3] = {n.max_x[i], n.max_y[i], n.max_z[i]};
            for (int a = 0; a < 3; ++a) {
              float lo = (mins[a] - lane.lo_origin[a]) * lane.inv[a];
              float hi = (maxs[a] - lane.hi_origin[a]) * lane.inv[a];
              float near = hi < lo ? hi : lo;
              float far = hi < lo ? lo : hi;
              t0 = t0 < near ? near : t0;
              t1 = far < t1 ? far : t1;
            }
            t_enter[i] = t0;
            hits |= static_cast<unsigned>((n.category[i] & lane.mask) != 0 && t0 <= t1) << i;
          }
#endif
          // Farthest first, so the nearest is popped next (as in Cast).
          int order[kWidth];
          int hit_count = 0;
          while (hits != 0) {
            int i = std::countr_zero(hits);
            hits &= hits - 1;
            int j = hit_count++;
            while (j > 0 && t_enter[order[j - 1]] < t_enter[i]) {
              order[j] = order[j - 1];
              --j;
            }
            order[j] = i;
          }
          for (int k = 0; k < hit_count; ++k) stack.Push({n.child[order[k]], t_enter[order[k]]});
        }
      }
      // The lane's next entry: prefetched now, visited on its next turn.
      bool found = false;
      while (!stop && !stack.Empty()) {
        const CastEntry e = stack.Pop();
        if (e.t > lane.t_max) continue;
        lane.current = e;
        prefetch_entry(e);
        found = true;
        break;
      }
      if (!found && !start(l)) --active;
    }
  }
}

}  // namespace collide
