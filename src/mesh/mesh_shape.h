#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "geom/aabb.h"
#include "geom/triangle.h"
#include "geom/vec3.h"
#include "mesh/internal/large_page_allocator.h"
#include "mesh/triangle_mesh.h"

namespace collide {

/// How MeshShape::Build builds its tree.
struct MeshBuildOptions {
  /// The most triangles in one leaf, 1 to 8.
  int max_leaf_triangles = 8;
  /// SAH cost of a node visit, in units of one triangle test.
  float traversal_cost = 1.0f;
  /// The SAH counts triangles in whole groups of this many (1, 2, 4 or 8; others round down to
  /// one of these): the kernels test a leaf's triangles several at a time, so a leaf of one
  /// costs about as much as a full group.
  int sah_block = 8;
};

/// One leaf of a MeshShape's tree, read in place: up to 8 triangles and the vertices they use
/// (at most 16), stored together so that a leaf is one contiguous block.
///
/// The block, in 32-bit words: a header (bits 0-3 the triangle count, 8-12 the vertex count,
/// 16-23 the zero-area triangles as a lane mask); the vertices' x, then y, then z coordinates
/// (vertex_count floats each); the triangles' corners as local vertex numbers, 8 bytes of first
/// corners, 8 of second, 8 of third (lanes beyond the count repeat lane 0); the triangles'
/// original indices (count words). Blocks start on 16-byte boundaries.
class MeshLeaf {
 public:
  explicit MeshLeaf(const uint32_t* block) : block_(block) {}

  /// Triangles in the leaf (1 to 8).
  uint32_t count() const { return block_[0] & 0xFu; }
  /// Vertices stored (1 to 16).
  uint32_t vertex_count() const { return (block_[0] >> 8) & 0x1Fu; }
  /// Lanes of zero-area triangles (bit k: triangle k).
  uint32_t degenerate_mask() const { return (block_[0] >> 16) & 0xFFu; }
  /// The coordinates of the stored vertices along `axis` (vertex_count() floats).
  const float* coordinates(int axis) const {
    return reinterpret_cast<const float*>(block_ + 1) + axis * vertex_count();
  }
  /// The local vertex numbers of corner `corner` (0, 1, 2) of the 8 lanes.
  const uint8_t* corners(int corner) const {
    return reinterpret_cast<const uint8_t*>(block_ + 1 + 3 * vertex_count()) + 8 * corner;
  }
  /// The original index of triangle `k`.
  uint32_t id(uint32_t k) const { return block_[1 + 3 * vertex_count() + 6 + k]; }
  /// Triangle `k`'s corners.
  Triangle triangle(uint32_t k) const {
    return Triangle{Vertex(corners(0)[k]), Vertex(corners(1)[k]), Vertex(corners(2)[k])};
  }
  /// Stored vertex `v`.
  Vec3 Vertex(uint32_t v) const {
    return Vec3{coordinates(0)[v], coordinates(1)[v], coordinates(2)[v]};
  }

  /// The words a block of `count` triangles and `vertex_count` vertices takes, padded to 16
  /// bytes.
  static uint32_t Words(uint32_t count, uint32_t vertex_count) {
    return (1 + 3 * vertex_count + 6 + count + 3) & ~3u;
  }

 private:
  const uint32_t* block_;
};

/// A triangle mesh asset built for queries: its own bounding volume hierarchy in the mesh's
/// local frame, immutable once built (instances place it with a ScaledPose; queries are in
/// mesh_query.h). Built once from a validated TriangleMeshView.
///
/// The tree. 8-wide nodes (the child boxes as structure-of-arrays, one 8-lane test per node),
/// built top down by binned SAH straight into 8-wide nodes: a node's range is split in two at
/// the best of 32 bins per axis, then its largest child is split again, until it has 8 children
/// or none is worth splitting; a range of at most `max_leaf_triangles` using at most 16
/// vertices becomes a leaf when SAH says so, and always when it is one SAH block or less
/// (`sah_block`: a split would save at most one block's test); a range whose triangles' centres
/// all coincide is halved by position.
///
/// Storage. Per node, 128 bytes (child boxes quantised to 8 bits per plane, Node). Per leaf, one
/// block (MeshLeaf): its vertices (12 bytes each, a vertex shared by the leaf's triangles stored
/// once), 3 bytes of corners and 4 of original index per triangle lane. A leaf is read as one piece
/// of memory, its vertices gathered in registers. Nothing else (no per-triangle normal or box):
/// about 30 bytes per triangle on a mesh whose triangles share their vertices.
class MeshShape {
 public:
  /// The children of a node, as 8 lanes, their boxes quantised to a grid of the node's own
  /// (Ylitie, Karras and Laine, "Efficient Incoherent Ray Traversal on GPUs Through Compressed
  /// Wide BVHs", 2017): per axis a step `scale`, a power of two, and an `origin`, a multiple of
  /// it, chosen so that every plane origin + q * scale (q from 0 to 255) is an exact float; a
  /// child's lower planes are rounded down to the grid and its upper planes up, so the planes
  /// contain the child, and a slab test computes its distances from exact planes as with float
  /// boxes. 128 bytes (two cache lines) where float boxes take 224.
  static constexpr int kWidth = 8;
  struct alignas(64) Node {
    float origin[3];
    float scale[3];
    /// Bit k set when slot k holds a child.
    uint32_t used;
    uint32_t unused;
    /// Grid steps by axis and side: q[2 a] the lower planes of axis a, q[2 a + 1] the upper
    /// ones, one byte per child. An unused slot has lower 255 and upper 0 (an empty box).
    uint8_t q[6][kWidth];
    /// Child references: kEmptyChild, a leaf (kLeafBit | the block's position in 16-byte
    /// units) or an inner node's index.
    uint32_t child[kWidth];

    /// The plane of child `k` on axis `axis`, `upper` side: exact.
    float Plane(int k, int axis, bool upper) const {
      return origin[axis] + static_cast<float>(q[2 * axis + (upper ? 1 : 0)][k]) * scale[axis];
    }
    /// The (quantised) box of child `k`.
    Aabb ChildBox(int k) const {
      return Aabb{{Plane(k, 0, false), Plane(k, 1, false), Plane(k, 2, false)},
                  {Plane(k, 0, true), Plane(k, 1, true), Plane(k, 2, true)}};
    }
  };
  static_assert(sizeof(Node) == 128, "two cache lines per node");

  static constexpr uint32_t kLeafBit = 0x80000000u;
  /// An unused slot: its box is empty (min +inf, max -inf), so no test enters it.
  static constexpr uint32_t kEmptyChild = 0xFFFFFFFFu;
  /// The most triangles and vertices in a leaf.
  static constexpr uint32_t kMaxLeafTriangles = 8;
  static constexpr uint32_t kMaxLeafVertices = 16;
  /// The deepest a tree gets, in nodes from the root: the builder halves ranges by position
  /// once they are this deep less log2(kMaxMeshTriangles), so traversal stacks of
  /// 7 * kMaxDepth + 1 entries never overflow.
  static constexpr int kMaxDepth = 68;

  /// An empty mesh (no triangle; every query misses).
  MeshShape() = default;

  /// Builds the asset from `mesh`, which must have passed ValidateTriangleMesh.
  static MeshShape Build(const TriangleMeshView& mesh, const MeshBuildOptions& options = {});

  /// The number of triangles (their indices, as in the input, are 0 to triangle_count() - 1).
  uint32_t triangle_count() const { return triangle_count_; }
  /// The number of triangles of zero area (never hit by rays).
  uint32_t degenerate_count() const { return degenerate_count_; }
  /// The number of leaves.
  uint32_t leaf_count() const { return leaf_count_; }
  /// The box of every vertex used, local frame.
  const Aabb& local_bounds() const { return bounds_; }
  /// The depth of the tree in nodes (0 when empty or a single leaf).
  int depth() const { return depth_; }
  /// Bytes held: nodes and leaves (capacity, not size).
  size_t MemoryBytes() const;

  // The built form, for the query kernels and tests.

  /// The root reference (a node, a leaf, or kEmptyChild when empty).
  uint32_t root() const { return root_; }
  std::span<const Node> nodes() const { return nodes_; }
  /// The node count.
  size_t node_count() const { return nodes_.size(); }
  /// The block of the leaf `ref` (a reference with kLeafBit).
  const uint32_t* LeafBlock(uint32_t ref) const {
    return leaves_.data() + 4 * static_cast<size_t>(ref & ~kLeafBit);
  }
  /// The leaf `ref`.
  MeshLeaf Leaf(uint32_t ref) const { return MeshLeaf(LeafBlock(ref)); }

 private:
  friend class MeshBuilder;

  std::vector<Node, mesh_internal::LargePageAllocator<Node>> nodes_;
  // The leaf blocks, then 16 words of padding (a 16-float load from a leaf's last coordinates
  // stays inside).
  std::vector<uint32_t, mesh_internal::LargePageAllocator<uint32_t>> leaves_;
  uint32_t root_ = kEmptyChild;
  uint32_t triangle_count_ = 0;
  uint32_t degenerate_count_ = 0;
  uint32_t leaf_count_ = 0;
  int depth_ = 0;
  Aabb bounds_{};
};

}  // namespace collide
