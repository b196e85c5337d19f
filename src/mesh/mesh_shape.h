#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "geom/aabb.h"
#include "geom/triangle.h"
#include "geom/vec3.h"
#include "mesh/triangle_mesh.h"

namespace collide {

/// How MeshShape::Build builds its tree.
struct MeshBuildOptions {
  /// The most triangles in one leaf, 1 to 8.
  int max_leaf_triangles = 8;
  /// SAH cost of a node visit, in units of one triangle test.
  float traversal_cost = 1.0f;
  /// The SAH counts triangles in whole groups of this many (1 to 8): the kernels test a leaf's
  /// triangles several at a time, so a leaf of one costs about as much as a full group.
  int sah_block = 8;
};

/// A triangle mesh asset built for queries: its own bounding volume hierarchy in the mesh's
/// local frame, immutable once built (instances place it with a ScaledPose; queries are in
/// mesh_query.h). Built once from a validated TriangleMeshView.
///
/// The tree. 8-wide nodes (the child boxes as structure-of-arrays, one 8-lane test per node),
/// built top down by binned SAH straight into 8-wide nodes: a node's range is split in two at
/// the best of 32 bins per axis, then its largest child is split again, until it has 8 children
/// or none is worth splitting; a range of at most `max_leaf_triangles` becomes a leaf when SAH
/// says so (a range whose triangles' centres all coincide is halved by position). Leaves are
/// ranges of the triangle arrays, which are stored in leaf order.
///
/// Storage per triangle: 3 uint32 vertex indices (12 bytes) and its original index (4 bytes);
/// per vertex used, 12 bytes (renumbered in leaf order, so a leaf's vertices are near each
/// other); per node, 224 bytes. Nothing else (no per-triangle normal or box).
class MeshShape {
 public:
  /// The children of a node, as 8 lanes; also the boxes' planes by axis and side, so a ray
  /// loads the near and far planes of its direction's signs without a compare.
  static constexpr int kWidth = 8;
  struct alignas(32) Node {
    float min_x[kWidth];
    float max_x[kWidth];
    float min_y[kWidth];
    float max_y[kWidth];
    float min_z[kWidth];
    float max_z[kWidth];
    /// Child references: kEmptyChild, a leaf (kLeafBit | (count - 1) << kLeafCountShift |
    /// first triangle) or an inner node's index.
    uint32_t child[kWidth];
  };
  static_assert(sizeof(Node) == 224, "7 half lines per node");

  static constexpr uint32_t kLeafBit = 0x80000000u;
  static constexpr int kLeafCountShift = 28;
  static constexpr uint32_t kLeafFirstMask = (1u << kLeafCountShift) - 1;
  /// An unused slot: its box is empty (min +inf, max -inf), so no test enters it.
  static constexpr uint32_t kEmptyChild = 0xFFFFFFFFu;
  /// The top bit of a triangle's first vertex index marks a triangle of zero area.
  static constexpr uint32_t kDegenerateBit = 0x80000000u;
  /// The deepest a tree gets, in nodes from the root: the builder halves ranges by position
  /// once they are this deep less log2(kMaxMeshTriangles), so traversal stacks of
  /// 7 * kMaxDepth + 1 entries never overflow.
  static constexpr int kMaxDepth = 68;

  /// An empty mesh (no triangle; every query misses).
  MeshShape() = default;

  /// Builds the asset from `mesh`, which must have passed ValidateTriangleMesh.
  static MeshShape Build(const TriangleMeshView& mesh, const MeshBuildOptions& options = {});

  /// The number of triangles (their indices, as in the input, are 0 to triangle_count() - 1).
  uint32_t triangle_count() const { return static_cast<uint32_t>(triangle_ids_.size()); }
  /// The number of vertices used by some triangle.
  uint32_t vertex_count() const { return vertex_count_; }
  /// The number of triangles of zero area (never hit by rays).
  uint32_t degenerate_count() const { return degenerate_count_; }
  /// The box of every vertex, local frame.
  const Aabb& local_bounds() const { return bounds_; }
  /// The depth of the tree in nodes (0 when empty).
  int depth() const { return depth_; }
  /// Bytes held: nodes, triangles, vertices (capacity, not size).
  size_t MemoryBytes() const;

  // The built form, for the query kernels and tests.

  /// The root reference (a node, a leaf, or kEmptyChild when empty).
  uint32_t root() const { return root_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  /// The node count.
  size_t node_count() const { return nodes_.size(); }
  /// The triangle at leaf position `slot`.
  Triangle TriangleAt(uint32_t slot) const {
    const uint32_t* i = &triangle_vertices_[3 * slot];
    return Triangle{Vertex(i[0] & ~kDegenerateBit), Vertex(i[1]), Vertex(i[2])};
  }
  /// The original index of the triangle at leaf position `slot`.
  uint32_t TriangleId(uint32_t slot) const { return triangle_ids_[slot]; }
  /// True when the triangle at `slot` has zero area.
  bool IsDegenerateAt(uint32_t slot) const {
    return (triangle_vertices_[3 * slot] & kDegenerateBit) != 0;
  }
  /// Vertex `i` (renumbered).
  Vec3 Vertex(uint32_t i) const {
    return Vec3{vertices_[3 * i], vertices_[3 * i + 1], vertices_[3 * i + 2]};
  }
  /// The vertex coordinates, x y z per vertex, followed by one padding float (so a 4-float load
  /// at the last vertex stays inside).
  const float* vertex_data() const { return vertices_.data(); }
  /// The vertex indices, three per triangle in leaf order (top bit of the first: kDegenerateBit).
  const uint32_t* triangle_vertex_data() const { return triangle_vertices_.data(); }
  /// The original indices, one per triangle in leaf order.
  const uint32_t* triangle_id_data() const { return triangle_ids_.data(); }

 private:
  friend class MeshBuilder;

  std::vector<Node> nodes_;
  std::vector<uint32_t> triangle_vertices_;
  std::vector<uint32_t> triangle_ids_;
  std::vector<float> vertices_;
  uint32_t root_ = kEmptyChild;
  uint32_t vertex_count_ = 0;
  uint32_t degenerate_count_ = 0;
  int depth_ = 0;
  Aabb bounds_{};
};

}  // namespace collide
