#pragma once

// Meshes for the mesh layer's tests: random triangle soups and real-shaped levels (closed boxes
// on a grid, stairs, terrain, thin walls, coplanar and duplicated triangles, degenerate ones),
// and the brute-force answers of the double-precision oracle (tests/geom/triangle_oracle.h) over
// every triangle.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "geom/cast.h"
#include "geom/triangle.h"
#include "geom/vec3.h"
#include "mesh/triangle_mesh.h"

namespace collide::mesh_test {

/// A mesh owned by the test.
struct TestMesh {
  std::string name;
  std::vector<Vec3> vertices;
  std::vector<uint32_t> indices;

  TriangleMeshView view() const { return TriangleMeshView{vertices, indices}; }
  uint32_t triangle_count() const { return static_cast<uint32_t>(indices.size() / 3); }
  Triangle triangle(uint32_t i) const {
    return Triangle{vertices[indices[3 * i]], vertices[indices[3 * i + 1]],
                    vertices[indices[3 * i + 2]]};
  }
  /// Adds a triangle by its corners (each a new vertex).
  void AddTriangle(const Vec3& a, const Vec3& b, const Vec3& c);
  /// Adds the 12 triangles of the closed box [lo, hi], sharing its 8 corners.
  void AddBox(const Vec3& lo, const Vec3& hi);
  /// Moves every vertex by `offset`.
  void Translate(const Vec3& offset);
};

/// `count` random triangles of size ~`size` in a cube of side `extent` about the origin, with
/// slivers, repeated vertices and collinear ones mixed in.
TestMesh RandomSoup(std::mt19937& rng, int count, float size, float extent);
/// A grid of n x n closed boxes of varied heights (a city block), some with a staircase beside.
TestMesh City(std::mt19937& rng, int n);
/// A staircase of `steps` closed step boxes.
TestMesh Stairs(int steps);
/// A terrain grid of n x n cells (two triangles each, shared vertices), smooth random heights.
TestMesh Terrain(std::mt19937& rng, int n);
/// Two parallel walls 1e-3 apart, each a grid of coplanar triangles, plus every triangle of the
/// first wall duplicated.
TestMesh ThinWallsWithDuplicates(int n);
/// A closed sphere: an octahedron subdivided `levels` times (shared vertices).
TestMesh ClosedSphere(float radius, int levels);

/// Every test mesh kind, each built with `rng`, for sweeps over kinds.
std::vector<TestMesh> AllKinds(std::mt19937& rng);

}  // namespace collide::mesh_test
