#pragma once

#include <cstddef>
#include <cstdint>
#include <variant>

#include "geom/aabb.h"
#include "mesh/heightfield.h"
#include "mesh/mesh_shape.h"

namespace collide {

/// What an asset is.
enum class AssetKind : uint8_t {
  /// An indexed triangle mesh (mesh/mesh_shape.h).
  kMesh = 1,
  /// A regular grid of heights (mesh/heightfield.h).
  kHeightfield = 2,
};

/// The API's word for a kind ("mesh", "heightfield").
const char* AssetKindName(AssetKind kind);

/// A built asset as the query layer uses it: a mesh's tree or a heightfield's grid and pyramid,
/// in the asset's own frame. Immutable once made, shared (std::shared_ptr) by every world that
/// places it (CollisionWorld::AddAsset), its copies and their past states; bodies place it with a
/// ScaledPose (query/asset_narrow.h).
class AssetGeometry {
 public:
  explicit AssetGeometry(MeshShape mesh);
  explicit AssetGeometry(HeightfieldShape heightfield);
  AssetGeometry(const AssetGeometry&) = delete;
  AssetGeometry& operator=(const AssetGeometry&) = delete;

  AssetKind kind() const { return kind_; }
  /// The mesh (kind() == kMesh).
  const MeshShape& mesh() const { return std::get<MeshShape>(shape_); }
  /// The heightfield (kind() == kHeightfield).
  const HeightfieldShape& heightfield() const { return std::get<HeightfieldShape>(shape_); }

  /// The box of every vertex (sample), local frame.
  const Aabb& local_bounds() const { return local_bounds_; }
  /// The largest distance of a point of the asset from its local origin (length units of the
  /// asset, before an instance's scale): how far a rotation about the origin may move it.
  float bounding_radius() const { return bounding_radius_; }
  /// Triangles (a heightfield's 2 per cell, holes included).
  uint32_t triangle_count() const;
  /// Bytes held by the built form.
  size_t MemoryBytes() const;

 private:
  void Measure();

  AssetKind kind_;
  std::variant<MeshShape, HeightfieldShape> shape_;
  Aabb local_bounds_{};
  float bounding_radius_ = 0.0f;
};

}  // namespace collide
