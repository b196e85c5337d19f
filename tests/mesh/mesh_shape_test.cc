// The built form of a mesh (src/mesh/mesh_shape.h): every triangle in exactly one leaf with its
// original corners, every box containing what is below it, the depth bound, the degenerate
// flags, and the memory per triangle, over every test mesh kind and hard inputs (one triangle,
// thousands of identical triangles, a flat mesh, every leaf size).

#include "mesh/mesh_shape.h"

#include <gtest/gtest.h>

#include <vector>

#include "geom/oracle.h"
#include "mesh/mesh_test_util.h"

namespace collide {
namespace {

using mesh_test::TestMesh;

// Walks the tree checking containment; returns the triangles' slots seen.
void Walk(const MeshShape& m, uint32_t ref, const Aabb& box, int depth, std::vector<int>* seen,
          int* max_depth) {
  if ((ref & MeshShape::kLeafBit) != 0) {
    const uint32_t first = ref & MeshShape::kLeafFirstMask;
    const uint32_t count = ((ref >> MeshShape::kLeafCountShift) & 7u) + 1u;
    for (uint32_t s = first; s < first + count; ++s) {
      ASSERT_LT(s, seen->size());
      ++(*seen)[s];
      const Triangle t = m.TriangleAt(s);
      for (const Vec3& v : {t.a, t.b, t.c}) {
        EXPECT_TRUE(Contains(box, v)) << "slot " << s;
      }
    }
    return;
  }
  *max_depth = std::max(*max_depth, depth);
  const MeshShape::Node& n = m.nodes()[ref];
  for (int k = 0; k < MeshShape::kWidth; ++k) {
    if (n.child[k] == MeshShape::kEmptyChild) continue;
    const Aabb child{{n.min_x[k], n.min_y[k], n.min_z[k]}, {n.max_x[k], n.max_y[k], n.max_z[k]}};
    EXPECT_TRUE(Contains(box, child));
    Walk(m, n.child[k], child, depth + 1, seen, max_depth);
  }
}

void CheckBuilt(const TestMesh& tm, const MeshShape& m) {
  ASSERT_EQ(m.triangle_count(), tm.triangle_count()) << tm.name;
  std::vector<int> seen(m.triangle_count(), 0);
  int max_depth = 0;
  if (m.root() != MeshShape::kEmptyChild) {
    const Aabb all = m.local_bounds();
    Walk(m, m.root(), all, 1, &seen, &max_depth);
  }
  EXPECT_EQ(max_depth, m.depth()) << tm.name;
  EXPECT_LE(m.depth(), MeshShape::kMaxDepth);
  std::vector<int> ids(m.triangle_count(), 0);
  uint32_t degenerate = 0;
  for (uint32_t s = 0; s < m.triangle_count(); ++s) {
    EXPECT_EQ(seen[s], 1) << tm.name << " slot " << s;
    const uint32_t id = m.TriangleId(s);
    ASSERT_LT(id, ids.size());
    ++ids[id];
    // The corners, renumbered, are the original ones in the original order.
    const Triangle got = m.TriangleAt(s);
    const Triangle want = tm.triangle(id);
    EXPECT_EQ(got.a, want.a);
    EXPECT_EQ(got.b, want.b);
    EXPECT_EQ(got.c, want.c);
    EXPECT_EQ(m.IsDegenerateAt(s), IsDegenerate(want.a, want.b, want.c));
    degenerate += m.IsDegenerateAt(s);
  }
  for (uint32_t i = 0; i < ids.size(); ++i) EXPECT_EQ(ids[i], 1) << tm.name << " id " << i;
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

TEST(MeshShapeBuild, ThousandsOfIdenticalTrianglesStayWithinTheDepthBound) {
  TestMesh tm;
  tm.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  for (int i = 0; i < 20000; ++i) tm.indices.insert(tm.indices.end(), {0, 1, 2});
  const MeshShape m = MeshShape::Build(tm.view());
  CheckBuilt(tm, m);
  EXPECT_EQ(m.vertex_count(), 3u);
  // Halving a range of identical triangles: log8(20000 / 4) + 1.
  EXPECT_LE(m.depth(), 8);
}

TEST(MeshShapeBuild, DegenerateTrianglesAreFlaggedAndUnusedVerticesDropped) {
  TestMesh tm;
  tm.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {9, 9, 9}, {2, 0, 0}};
  tm.indices = {0, 1, 2, 0, 1, 4, 2, 2, 2};
  const MeshShape m = MeshShape::Build(tm.view());
  CheckBuilt(tm, m);
  EXPECT_EQ(m.degenerate_count(), 2u);
  EXPECT_EQ(m.vertex_count(), 4u);
}

TEST(MeshShapeBuild, ACityOfBoxesTakesAtMost40BytesPerTriangle) {
  std::mt19937 rng = oracle::CaseRng(0x3E5B0001, 1);
  const TestMesh tm = mesh_test::City(rng, 40);
  const MeshShape m = MeshShape::Build(tm.view());
  CheckBuilt(tm, m);
  const double per = static_cast<double>(m.MemoryBytes()) / m.triangle_count();
  std::printf("city of %u triangles: %.1f bytes per triangle, %zu nodes, depth %d\n",
              m.triangle_count(), per, m.node_count(), m.depth());
  EXPECT_LE(per, 40.0);
}

}  // namespace
}  // namespace collide
