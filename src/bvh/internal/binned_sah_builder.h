#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "geom/aabb.h"
#include "geom/vec3.h"

namespace collide {

/// One internal node of a hierarchy made by `BinnedSahBuilder`: a binary node that stores the
/// boxes of both children. A child reference >= 0 is the index of another `BuiltNode` in the
/// output; a reference < 0 is an input item, `~reference` being its index in the input span.
struct BuiltNode {
  /// The bounds of child 0 and child 1 (the exact union of the item boxes below each).
  Aabb box[2];
  /// The children: node index (>= 0) or ~item index (< 0).
  int32_t child[2];
};

/// Top-down binary hierarchy builder driven by the surface area heuristic over binned
/// centroids (Wald 2007): at each node the item centroids are dropped into `kBinCount` bins on
/// every axis, and the split between bins with the least `area(left) * count(left) +
/// area(right) * count(right)` wins. Items whose centroids coincide are split in halves.
/// Every item ends alone in its leaf, so n items give exactly n - 1 nodes.
///
/// The object keeps its scratch buffers between builds so repeated rebuilds do not allocate.
class BinnedSahBuilder {
 public:
  /// The number of bins per axis.
  static constexpr int kBinCount = 16;

  /// Builds a hierarchy over `boxes` (finite, min <= max; at least 2 of them) into `*out`
  /// (cleared first). Nodes are written in preorder: `(*out)[0]` is the root and every node
  /// comes after its parent, with its first child's subtree right after it.
  void Build(std::span<const Aabb> boxes, std::vector<BuiltNode>* out);

  /// Bytes held by the scratch buffers.
  size_t MemoryBytes() const;

  /// Frees the scratch kept from the last Build (the next Build allocates it again): a build's
  /// scratch is about 16 bytes per item, idle between rebuilds.
  void Release();

 private:
  struct Task {
    int32_t begin;
    int32_t end;
    int32_t parent;
    int32_t slot;
  };

  // Splits items_[begin, end) in place; returns the split point and the two sides' bounds.
  int32_t Split(std::span<const Aabb> boxes, int32_t begin, int32_t end, Aabb* left, Aabb* right);

  std::vector<int32_t> items_;
  std::vector<Vec3> centroids_;  // min + max: twice the centre, the scale does not matter
  std::vector<Task> tasks_;
};

}  // namespace collide
