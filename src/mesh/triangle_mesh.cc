#include "mesh/triangle_mesh.h"

#include <algorithm>
#include <cmath>

namespace collide {

std::optional<MeshError> ValidateTriangleMesh(const TriangleMeshView& mesh,
                                              const MeshLimits& limits) {
  const uint64_t vertex_count = mesh.vertices.size();
  const uint64_t index_count = mesh.indices.size();
  if (vertex_count == 0 || index_count == 0) {
    return MeshError{MeshList::kMesh, 0, MeshProblem::kEmpty};
  }
  if (index_count % 3 != 0) {
    return MeshError{MeshList::kIndices, index_count, MeshProblem::kIndexCountNotTriangles};
  }
  const uint64_t triangle_count = index_count / 3;
  if (triangle_count > std::min(limits.max_triangles, kMaxMeshTriangles)) {
    return MeshError{MeshList::kMesh, triangle_count, MeshProblem::kTooManyTriangles};
  }
  if (vertex_count > std::min(limits.max_vertices, kMaxMeshVertices)) {
    return MeshError{MeshList::kVertices, vertex_count, MeshProblem::kTooManyVertices};
  }
  for (uint64_t i = 0; i < vertex_count; ++i) {
    const Vec3& v = mesh.vertices[i];
    if (!IsFinite(v)) return MeshError{MeshList::kVertices, i, MeshProblem::kNotFinite};
    if (std::fabs(v.x) > kMaxMeshCoordinate || std::fabs(v.y) > kMaxMeshCoordinate ||
        std::fabs(v.z) > kMaxMeshCoordinate) {
      return MeshError{MeshList::kVertices, i, MeshProblem::kTooLarge};
    }
  }
  for (uint64_t i = 0; i < index_count; ++i) {
    const uint32_t index = mesh.indices[i];
    if (index == UINT32_MAX) return MeshError{MeshList::kIndices, i, MeshProblem::kReservedIndex};
    if (index >= vertex_count) {
      return MeshError{MeshList::kIndices, i, MeshProblem::kIndexOutOfRange};
    }
  }
  return std::nullopt;
}

std::string_view MeshListName(MeshList list) {
  switch (list) {
    case MeshList::kMesh:
      return "mesh";
    case MeshList::kVertices:
      return "vertices";
    case MeshList::kIndices:
      return "indices";
  }
  return "mesh";
}

std::string_view MeshProblemReason(MeshProblem problem) {
  switch (problem) {
    case MeshProblem::kEmpty:
      return "must have at least one vertex and one triangle";
    case MeshProblem::kIndexCountNotTriangles:
      return "the index count must be a multiple of 3";
    case MeshProblem::kTooManyTriangles:
      return "too many triangles";
    case MeshProblem::kTooManyVertices:
      return "too many vertices";
    case MeshProblem::kNotFinite:
      return "must be finite";
    case MeshProblem::kTooLarge:
      return "must be within +-1e9";
    case MeshProblem::kReservedIndex:
      return "4294967295 is not a vertex index";
    case MeshProblem::kIndexOutOfRange:
      return "must be below the vertex count";
  }
  return "invalid";
}

}  // namespace collide
