#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "geom/vec3.h"

namespace collide {

// The input of a mesh asset, as a client gives it, and its one validation: an indexed triangle
// mesh (float32 vertices, uint32 indices, three per triangle) is checked here once, where it
// becomes core data, and MeshShape::Build (mesh_shape.h) assumes a mesh that passed.
//
// What is accepted. Every vertex finite and within +-kMaxMeshCoordinate on each axis; every
// index below the vertex count (2^32 - 1 is reserved and refused even then); at least one
// triangle; at most `max_triangles` triangles and `max_vertices` vertices. Vertices no triangle
// uses are allowed (and dropped by the build). Triangles of zero area (repeated or collinear
// vertices) and slivers are kept: they are real content of real meshes, and refusing them
// would refuse most exported levels. A zero-area triangle is the segment or point it is: balls,
// boxes and capsules touch it, rays never hit it (geom/triangle.h), so no hit ever carries the
// undefined normal of a triangle without area. A sliver has a well-defined plane and normal
// (computed in double precision) and is hit like any triangle.

/// The largest magnitude accepted for a vertex coordinate (length units): the bound of every
/// coordinate in a scene (scene/update_batch.h, kMaxCoordinate), so that bounds stay finite in
/// float32.
inline constexpr float kMaxMeshCoordinate = 1e9f;

/// The most triangles any mesh may have: 2^27 (the tree's leaf references hold 28 bits of
/// triangle position). A server's own limit (MeshLimits) is lower.
inline constexpr uint32_t kMaxMeshTriangles = 1u << 27;

/// The most vertices any mesh may have: 2^28 (an index keeps its top bit free for the build's
/// flags).
inline constexpr uint32_t kMaxMeshVertices = 1u << 28;

/// A mesh's bounds, chosen by whoever accepts meshes (a server's flags).
struct MeshLimits {
  /// Triangles per mesh, <= kMaxMeshTriangles.
  uint32_t max_triangles = kMaxMeshTriangles;
  /// Vertices per mesh, <= kMaxMeshVertices.
  uint32_t max_vertices = kMaxMeshVertices;
};

/// An indexed triangle mesh, not owned: triangle i is (vertices[indices[3i]],
/// vertices[indices[3i + 1]], vertices[indices[3i + 2]]), counter-clockwise seen from its front.
struct TriangleMeshView {
  std::span<const Vec3> vertices;
  std::span<const uint32_t> indices;
};

/// The list a MeshError is about.
enum class MeshList : uint8_t {
  /// The mesh as a whole (its size).
  kMesh = 0,
  kVertices = 1,
  kIndices = 2,
};

/// Why a mesh is refused.
enum class MeshProblem : uint8_t {
  /// No vertex or no index.
  kEmpty = 0,
  /// The index count is not a multiple of 3 (index: the count).
  kIndexCountNotTriangles,
  /// More triangles than the limit (index: the triangle count).
  kTooManyTriangles,
  /// More vertices than the limit (index: the vertex count).
  kTooManyVertices,
  /// A vertex coordinate is NaN or infinite (index: the vertex).
  kNotFinite,
  /// A vertex coordinate is beyond +-kMaxMeshCoordinate (index: the vertex).
  kTooLarge,
  /// An index is 2^32 - 1 (index: its position in the index list).
  kReservedIndex,
  /// An index is not below the vertex count (index: its position in the index list).
  kIndexOutOfRange,
};

/// Which list, which element, why: the first problem found, in the order of MeshProblem's
/// checks (sizes, then vertices in order, then indices in order).
struct MeshError {
  MeshList list = MeshList::kMesh;
  /// The element's position in its list (or the count, for the size problems).
  uint64_t index = 0;
  MeshProblem problem = MeshProblem::kEmpty;

  bool operator==(const MeshError&) const = default;
};

/// Checks `mesh` against the rules above and `limits`; nothing when it is acceptable.
std::optional<MeshError> ValidateTriangleMesh(const TriangleMeshView& mesh,
                                              const MeshLimits& limits = {});

/// The list's name in messages: "mesh", "vertices", "indices".
std::string_view MeshListName(MeshList list);

/// The reason's wording in messages ("must be finite", ...), without the path.
std::string_view MeshProblemReason(MeshProblem problem);

}  // namespace collide
