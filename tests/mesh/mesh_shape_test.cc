// The built form of a mesh (src/mesh/mesh_shape.h): every triangle in exactly one leaf with its
// original corners, every box containing what is below it, the depth bound, the degenerate
// flags, and the memory per triangle, over every test mesh kind and hard inputs (one triangle,
// thousands of identical triangles, a flat mesh, every leaf size).

#include "mesh/mesh_shape.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "geom/oracle.h"
#include "mesh/mesh_test_util.h"

namespace collide {
namespace {

using mesh_test::TestMesh;

// Walks the tree: counts every original index seen in a leaf, checks each leaf's triangles
// against the input's, and returns the exact box of the subtree's vertices, which the (rounded)
// box its parent keeps for it must contain.
Aabb Walk(const TestMesh& tm, const MeshShape& m, uint32_t ref, int depth, std::vector<int>* seen,
          int* max_depth, uint32_t* degenerate) {
  Aabb exact{};
  bool have = false;
  auto grow = [&](const Aabb& b) {
    exact = have ? Union(exact, b) : b;
    have = true;
  };
  if ((ref & MeshShape::kLeafBit) != 0) {
    const MeshLeaf leaf = m.Leaf(ref);
    EXPECT_GE(leaf.count(), 1u);
    EXPECT_LE(leaf.count(), MeshShape::kMaxLeafTriangles);
    EXPECT_LE(leaf.vertex_count(), MeshShape::kMaxLeafVertices);
    for (uint32_t k = 0; k < leaf.count(); ++k) {
      const uint32_t id = leaf.id(k);
      EXPECT_LT(id, seen->size());
      if (id >= seen->size()) continue;
      ++(*seen)[id];
      // The corners are the original ones in the original order.
      const Triangle got = leaf.triangle(k);
      const Triangle want = tm.triangle(id);
      EXPECT_EQ(got.a, want.a) << tm.name << " triangle " << id;
      EXPECT_EQ(got.b, want.b);
      EXPECT_EQ(got.c, want.c);
      const bool flagged = ((leaf.degenerate_mask() >> k) & 1u) != 0;
      EXPECT_EQ(flagged, IsDegenerate(want.a, want.b, want.c));
      *degenerate += flagged;
      for (const Vec3& v : {got.a, got.b, got.c}) grow(Aabb{v, v});
    }
    for (uint32_t k = leaf.count(); k < 8; ++k) {
      // Unused lanes repeat lane 0.
      for (int c = 0; c < 3; ++c) EXPECT_EQ(leaf.corners(c)[k], leaf.corners(c)[0]);
    }
    return exact;
  }
  *max_depth = std::max(*max_depth, depth);
  const MeshShape::Node& n = m.nodes()[ref];
  for (int k = 0; k < MeshShape::kWidth; ++k) {
    if (n.child[k] == MeshShape::kEmptyChild) continue;
    // Every grid plane is an exact float: an origin that is a multiple of a power-of-two step.
    for (int a = 0; a < 3; ++a) {
      EXPECT_EQ(std::exp2(std::round(std::log2(n.scale[a]))), n.scale[a]);
      EXPECT_EQ(std::fmod(static_cast<double>(n.origin[a]), n.scale[a]), 0.0);
      for (bool upper : {false, true}) {
        EXPECT_EQ(static_cast<double>(n.Plane(k, a, upper)),
                  static_cast<double>(n.origin[a]) +
                      n.q[2 * a + (upper ? 1 : 0)][k] * static_cast<double>(n.scale[a]));
      }
    }
    const Aabb below = Walk(tm, m, n.child[k], depth + 1, seen, max_depth, degenerate);
    EXPECT_TRUE(Contains(n.ChildBox(k), below)) << tm.name << " depth " << depth;
    grow(below);
  }
  return exact;
}

void CheckBuilt(const TestMesh& tm, const MeshShape& m) {
  ASSERT_EQ(m.triangle_count(), tm.triangle_count()) << tm.name;
  std::vector<int> seen(m.triangle_count(), 0);
  int max_depth = 0;
  uint32_t degenerate = 0;
  if (m.root() != MeshShape::kEmptyChild) {
    const Aabb all = Walk(tm, m, m.root(), 1, &seen, &max_depth, &degenerate);
    EXPECT_EQ(all, m.local_bounds()) << tm.name;
  }
  EXPECT_EQ(max_depth, m.depth()) << tm.name;
  EXPECT_LE(m.depth(), MeshShape::kMaxDepth);
  for (uint32_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << tm.name << " id " << i;
  EXPECT_EQ(degenerate, m.degenerate_count());
}

TEST(MeshShapeBuild, EveryKindKeepsEveryTriangleOnceInsideItsBoxes) {
  std::mt19937 rng = oracle::CaseRng(0x3E5B0001, 0);
  for (const TestMesh& tm : mesh_test::AllKinds(rng)) {
    for (int leaf : {1, 2, 4, 8}) {
      MeshBuildOptions options;
      options.max_leaf_triangles = leaf;
      const MeshShape m = MeshShape::Build(tm.view(), options);
      CheckBuilt(tm, m);
    }
  }
}

TEST(MeshShapeBuild, OneTriangleIsALeafRoot) {
  TestMesh tm;
  tm.AddTriangle({0, 0, 0}, {1, 0, 0}, {0, 1, 0});
  const MeshShape m = MeshShape::Build(tm.view());
  EXPECT_NE(m.root() & MeshShape::kLeafBit, 0u);
  EXPECT_EQ(m.node_count(), 0u);
  CheckBuilt(tm, m);
}

TEST(MeshShapeBuild, LeavesOfTrianglesSharingNoVertexHoldAtMost16Vertices) {
  // Eight separate triangles in one small spot: a leaf of 8 would need 24 vertices.
  TestMesh tm;
  for (int i = 0; i < 8; ++i) {
    const float z = 1e-3f * static_cast<float>(i);
    tm.AddTriangle({0, 0, z}, {1, 0, z}, {0, 1, z});
  }
  const MeshShape m = MeshShape::Build(tm.view());
  CheckBuilt(tm, m);
  EXPECT_GE(m.leaf_count(), 2u);
}

TEST(MeshShapeBuild, ARangeOfOneSahBlockIsALeafWhenItsVerticesFit) {
  // Two pairs of triangles 1,000 m apart (12 vertices, no more than a leaf holds): one
  // block of the default sah_block (8) and one leaf, though SAH alone would split the pairs.
  TestMesh tm;
  for (const float x : {0.0f, 1000.0f}) {
    tm.AddTriangle({x, 0, 0}, {x + 1, 0, 0}, {x, 1, 0});
    tm.AddTriangle({x + 1, 0, 0}, {x + 1, 1, 0}, {x, 1, 0});
  }
  const MeshShape leaf = MeshShape::Build(tm.view());
  CheckBuilt(tm, leaf);
  EXPECT_NE(leaf.root() & MeshShape::kLeafBit, 0u);
  EXPECT_EQ(leaf.node_count(), 0u);
  EXPECT_EQ(leaf.leaf_count(), 1u);
  // With blocks of one triangle the same four are split by SAH: a node over the two pairs.
  MeshBuildOptions options;
  options.sah_block = 1;
  const MeshShape split = MeshShape::Build(tm.view(), options);
  CheckBuilt(tm, split);
  EXPECT_EQ(split.root() & MeshShape::kLeafBit, 0u);
  EXPECT_GE(split.leaf_count(), 2u);
}

TEST(MeshShapeBuild, ThousandsOfIdenticalTrianglesStayWithinTheDepthBound) {
  TestMesh tm;
  tm.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  for (int i = 0; i < 20000; ++i) tm.indices.insert(tm.indices.end(), {0, 1, 2});
  const MeshShape m = MeshShape::Build(tm.view());
  CheckBuilt(tm, m);
  // Halving a range of identical triangles: log8(20000 / 4) + 1.
  EXPECT_LE(m.depth(), 8);
}

TEST(MeshShapeBuild, DegenerateTrianglesAreFlagged) {
  TestMesh tm;
  tm.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {9, 9, 9}, {2, 0, 0}};
  tm.indices = {0, 1, 2, 0, 1, 4, 2, 2, 2};
  const MeshShape m = MeshShape::Build(tm.view());
  CheckBuilt(tm, m);
  EXPECT_EQ(m.degenerate_count(), 2u);
}

TEST(MeshShapeBuild, ACityOfBoxesTakesAtMost40BytesPerTriangle) {
  std::mt19937 rng = oracle::CaseRng(0x3E5B0001, 1);
  const TestMesh tm = mesh_test::City(rng, 40);
  const MeshShape m = MeshShape::Build(tm.view());
  CheckBuilt(tm, m);
  const double per = static_cast<double>(m.MemoryBytes()) / m.triangle_count();
  std::printf("city of %u triangles: %.1f bytes per triangle, %zu nodes, %u leaves, depth %d\n",
              m.triangle_count(), per, m.node_count(), m.leaf_count(), m.depth());
  EXPECT_LE(per, 40.0);
}

}  // namespace
}  // namespace collide
