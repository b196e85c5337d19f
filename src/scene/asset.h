#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "geom/vec3.h"
#include "mesh/heightfield.h"
#include "mesh/triangle_mesh.h"
#include "query/asset_geometry.h"

namespace collide {

// A scene's level geometry as data: the content of an asset as a client uploads it
// (AssetSource), its one validation (ValidateAssetName, ValidateAssetSize, ValidateAssetSource:
// the mesh layer's checks, ValidateTriangleMesh and ValidateHeightfield, as FieldErrors), its
// content hash, and the built asset a scene holds (Asset: the content and its AssetGeometry,
// immutable and shared by every scene and past state that uses it).
//
// Errors name the asset's parts as the API's AssetHeader and AssetChunk do: `name`,
// `mesh.vertex_count`, `mesh.index_count`, `heightfield.rows`, `heightfield.spacing_x`, and the
// content's lists by element: `vertices[12]` (vertex 12, three floats), `indices[7]`,
// `heights[3]`, `holes`.

/// The longest asset name.
inline constexpr size_t kMaxAssetNameLength = 128;

/// The bounds of an asset's content (the server's flags). Each is at most the mesh layer's own
/// (kMaxMeshTriangles; HeightfieldLimits).
struct AssetLimits {
  /// Triangles per mesh.
  uint32_t max_mesh_triangles = 1u << 24;
  /// Samples (rows x columns) per heightfield.
  uint64_t max_heightfield_samples = uint64_t{1} << 24;
};

/// An asset's kind and size, as its header gives them before its data.
struct AssetSize {
  AssetKind kind = AssetKind::kMesh;
  /// kMesh: vertices (3 floats each) and indices (3 per triangle).
  uint64_t vertex_count = 0;
  uint64_t index_count = 0;
  /// kHeightfield: samples along z and x, the distances between them, and whether hole bits
  /// follow the heights.
  uint64_t rows = 0;
  uint64_t columns = 0;
  float spacing_x = 1.0f;
  float spacing_z = 1.0f;
  bool has_holes = false;

  /// Triangles: index_count / 3; 2 per cell of a heightfield (holes included).
  uint64_t TriangleCount() const;
  /// Hole bytes: one bit per cell, rounded up to whole bytes (0 without holes).
  uint64_t HoleBytes() const;
  /// The content's bytes as uploaded: 12 per vertex and 4 per index; 4 per sample plus the hole
  /// bytes. Saturates at 2^64 - 1.
  uint64_t SourceBytes() const;

  bool operator==(const AssetSize&) const = default;
};

/// An asset's content as a client gives it: its size and, by kind, the mesh's vertices and
/// indices or the heightfield's heights (row-major) and hole bits (bit c of byte c / 8, least
/// significant first: cell c = i x (columns - 1) + j is a hole).
struct AssetSource {
  AssetSize size;
  std::vector<Vec3> vertices;
  std::vector<uint32_t> indices;
  std::vector<float> heights;
  std::vector<uint8_t> holes;
};

/// Checks an asset name: 1 to kMaxAssetNameLength characters of [A-Za-z0-9_.-], starting with a
/// letter or a digit (INVALID_ARGUMENT about `name`).
absl::Status ValidateAssetName(absl::string_view name);

/// Checks a size against the mesh layer's rules and `limits` before any data arrives: counts
/// that cannot make an asset are INVALID_ARGUMENT, counts past a limit RESOURCE_EXHAUSTED, each
/// about its field (`mesh.index_count`, `heightfield.columns`, ...).
absl::Status ValidateAssetSize(const AssetSize& size, const AssetLimits& limits);

/// Checks a whole content: its size (ValidateAssetSize), that its lists hold what the size says
/// and nothing of the other kind, and every value (ValidateTriangleMesh, ValidateHeightfield; hole
/// bits past the last cell must be 0). The first problem, as a FieldError.
absl::Status ValidateAssetSource(const AssetSource& source, const AssetLimits& limits);

/// The SHA-256 of the content, as 64 lowercase hexadecimal digits: over the 16 bytes
/// "collide-mesh-v1\n", vertex and index counts (little-endian uint64), the vertices' floats and
/// the indices (little-endian); or over "collide-hfield1\n", rows and columns (uint64), spacing x
/// and z (float32), a byte 1 or 0 for holes, the heights (float32) and the hole bytes.
std::string AssetSha256(const AssetSource& source);

/// A built asset: the content as uploaded (for exports), its hash, and its AssetGeometry (the
/// mesh's tree or the heightfield's pyramid). Immutable; shared by the scenes that hold it and by
/// the worlds and past states that place it (AssetGeometry handles keep the whole Asset alive).
class Asset : public std::enable_shared_from_this<Asset> {
 public:
  /// Builds the asset from `source`, which must have passed ValidateAssetSource; `sha256` is
  /// AssetSha256(source) (computed here when empty). O(content): about 4M triangles/s.
  static std::shared_ptr<const Asset> Build(AssetSource source, std::string sha256 = {});

  Asset(const Asset&) = delete;
  Asset& operator=(const Asset&) = delete;

  AssetKind kind() const { return source_.size.kind; }
  const AssetSize& size() const { return source_.size; }
  const AssetSource& source() const { return source_; }
  /// AssetSha256 of the content.
  const std::string& sha256() const { return sha256_; }
  /// The built form.
  const AssetGeometry& geometry() const { return *geometry_; }
  /// The built form as a handle that keeps this whole asset alive (for CollisionWorld::AddAsset).
  std::shared_ptr<const AssetGeometry> SharedGeometry() const {
    return std::shared_ptr<const AssetGeometry>(shared_from_this(), &*geometry_);
  }
  /// Triangles (AssetSize::TriangleCount).
  uint64_t triangle_count() const { return source_.size.TriangleCount(); }
  /// The content's bytes as uploaded (AssetSize::SourceBytes).
  uint64_t source_bytes() const { return source_.size.SourceBytes(); }
  /// Bytes of memory held: the content and the built form.
  size_t memory_bytes() const { return memory_bytes_; }
  /// Heightfields: the largest difference between a given height and its stored one.
  float max_height_error() const;

 private:
  Asset() = default;

  AssetSource source_;
  std::string sha256_;
  std::optional<AssetGeometry> geometry_;
  size_t memory_bytes_ = 0;
};

}  // namespace collide
