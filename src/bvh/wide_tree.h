#pragma once

#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "bvh/internal/traversal_stack.h"
#include "bvh/simd_level.h"
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

/// A read-only 8-wide bounding volume hierarchy for queries: each node holds the boxes of its up
/// to eight children as structure-of-arrays, so one 8-lane AVX sequence (two 4-lane SSE ones)
/// tests a ray or a box against all eight, and the tree is a third as deep as a binary one. The
/// queries run the kernels of ActiveSimdLevel() (bvh/internal/wide_kernels.h: SSE2, AVX2 or
/// AVX-512, all in the one binary), with the same answers at every level.
///
/// It is not built on its own: `DynamicTree::Optimize` collapses the binary tree into it. Child
/// references use the dynamic tree's convention: >= 0 is a node of this tree, < 0 a leaf
/// (proxy id ~reference); an unused slot has category 0, so no mask ever selects it.
class WideTree {
 public:
  /// The number of children per node.
  static constexpr int kWidth = 8;

  /// One node: 192 bytes of child boxes, 32 of references, 32 of category unions.
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
    /// The box of slot `i`.
    Aabb Box(int i) const {
      return Aabb{{min_x[i], min_y[i], min_z[i]}, {max_x[i], max_y[i], max_z[i]}};
    }
  };
  static_assert(sizeof(Node) == 256, "four cache lines per node");

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
  std::vector<Node> nodes_;
  int32_t root_ = -1;
};

// ---------------------------------------------------------------------------------------------

}  // namespace collide

#include "bvh/internal/wide_kernels.h"

namespace collide {

// The queries: the kernels of the active level (one well-predicted branch per query).

template <size_t kInlineStack, typename F>
void WideTree::QueryAabb(const Aabb& box, uint32_t mask, const uint32_t* leaf_user, F&& f) const {
  if (root_ < 0) return;
#if COLLIDE_WIDE_DISPATCH
  switch (ActiveSimdLevel()) {
    case SimdLevel::kAvx512:
      return wide_avx512::QueryAabb<kInlineStack>(nodes_.data(), root_, box, mask, leaf_user, f);
    case SimdLevel::kAvx2:
      return wide_avx2::QueryAabb<kInlineStack>(nodes_.data(), root_, box, mask, leaf_user, f);
    case SimdLevel::kSse:
      break;
  }
#endif
  wide_sse::QueryAabb<kInlineStack>(nodes_.data(), root_, box, mask, leaf_user, f);
}

template <bool kSwept, size_t kInlineStack, typename F>
void WideTree::Cast(const Vec3& origin, const Vec3& unit_dir, float max_distance,
                    const Vec3& half_extent, uint32_t mask, const uint32_t* leaf_user,
                    F&& f) const {
  if (root_ < 0 || !(max_distance >= 0.0f)) return;
#if COLLIDE_WIDE_DISPATCH
  switch (ActiveSimdLevel()) {
    case SimdLevel::kAvx512:
      return wide_avx512::Cast<kSwept, kInlineStack>(nodes_.data(), root_, origin, unit_dir,
                                                     max_distance, half_extent, mask, leaf_user, f);
    case SimdLevel::kAvx2:
      return wide_avx2::Cast<kSwept, kInlineStack>(nodes_.data(), root_, origin, unit_dir,
                                                   max_distance, half_extent, mask, leaf_user, f);
    case SimdLevel::kSse:
      break;
  }
#endif
  wide_sse::Cast<kSwept, kInlineStack>(nodes_.data(), root_, origin, unit_dir, max_distance,
                                       half_extent, mask, leaf_user, f);
}

template <typename F, typename Prefetch>
void WideTree::CastBatch(const BatchCast* casts, size_t count, const uint32_t* leaf_user, F&& f,
                         Prefetch&& prefetch_leaf) const {
  if (root_ < 0) return;
#if COLLIDE_WIDE_DISPATCH
  switch (ActiveSimdLevel()) {
    case SimdLevel::kAvx512:
      return wide_avx512::CastBatch(nodes_.data(), root_, casts, count, leaf_user, f,
                                    prefetch_leaf);
    case SimdLevel::kAvx2:
      return wide_avx2::CastBatch(nodes_.data(), root_, casts, count, leaf_user, f, prefetch_leaf);
    case SimdLevel::kSse:
      break;
  }
#endif
  wide_sse::CastBatch(nodes_.data(), root_, casts, count, leaf_user, f, prefetch_leaf);
}

}  // namespace collide
