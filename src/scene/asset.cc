#include "scene/asset.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "base/sha256.h"
#include "mesh/mesh_shape.h"

namespace collide {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the content hash reads floats and integers as little-endian bytes");

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// a x b, or 2^64 - 1 when it overflows.
uint64_t SaturatingProduct(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? std::numeric_limits<uint64_t>::max() : out;
}

uint64_t SaturatingSum(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? std::numeric_limits<uint64_t>::max() : out;
}

absl::Status Exhausted(absl::string_view field, absl::string_view reason) {
  return FieldErrorStatus(absl::StatusCode::kResourceExhausted,
                          FieldError{.field = std::string(field), .reason = std::string(reason)});
}

absl::Status ValidateMeshSize(const AssetSize& size, const AssetLimits& limits) {
  if (size.vertex_count == 0) {
    return InvalidFieldError("mesh.vertex_count", "must be at least 1");
  }
  if (size.vertex_count > kMaxMeshVertices) {
    return InvalidFieldError("mesh.vertex_count", absl::StrCat("must be at most ", kMaxMeshVertices,
                                                               ", got ", size.vertex_count));
  }
  if (size.index_count == 0 || size.index_count % 3 != 0) {
    return InvalidFieldError(
        "mesh.index_count",
        absl::StrCat("must be a positive multiple of 3 (3 per triangle), got ", size.index_count));
  }
  const uint64_t triangles = size.index_count / 3;
  const uint64_t limit = std::min(limits.max_mesh_triangles, kMaxMeshTriangles);
  if (triangles > limit) {
    return Exhausted("mesh.index_count", absl::StrCat(triangles, " triangles, over the limit of ",
                                                      limit, " (--max_mesh_triangles)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateHeightfieldSize(const AssetSize& size, const AssetLimits& limits) {
  for (const auto& [field, count] :
       {std::pair<const char*, uint64_t>{"heightfield.rows", size.rows},
        std::pair<const char*, uint64_t>{"heightfield.columns", size.columns}}) {
    if (count < 2) {
      return InvalidFieldError(field, absl::StrCat("must be at least 2 (a heightfield needs a "
                                                   "cell), got ",
                                                   count));
    }
    if (count > kMaxHeightfieldSide) {
      return InvalidFieldError(
          field, absl::StrCat("must be at most ", kMaxHeightfieldSide, ", got ", count));
    }
  }
  const uint64_t samples = size.rows * size.columns;  // both <= 2^15
  if (samples > limits.max_heightfield_samples) {
    return Exhausted(
        "heightfield.rows",
        absl::StrCat(size.rows, " x ", size.columns, " = ", samples, " samples, over the limit of ",
                     limits.max_heightfield_samples, " (--max_heightfield_samples)"));
  }
  // The mesh layer's own checks of the spacings (finite, > 0, the grid within +-1e9).
  const HeightfieldDesc desc{.rows = size.rows,
                             .columns = size.columns,
                             .spacing_x = size.spacing_x,
                             .spacing_z = size.spacing_z};
  if (std::optional<HeightfieldError> e = ValidateHeightfield(desc);
      e.has_value() &&
      (e->field == HeightfieldField::kSpacingX || e->field == HeightfieldField::kSpacingZ)) {
    return InvalidFieldError(
        absl::StrCat("heightfield.", std::string(HeightfieldFieldName(e->field))),
        std::string(HeightfieldProblemReason(e->problem)));
  }
  return absl::OkStatus();
}

// The mesh layer's error about a content that passed ValidateAssetSize, in the lists' words.
absl::Status MeshErrorStatus(const MeshError& e) {
  std::string reason(MeshProblemReason(e.problem));
  if (e.list == MeshList::kVertices && e.problem != MeshProblem::kTooManyVertices) {
    return InvalidElementError("vertices", e.index, "", reason);
  }
  if (e.list == MeshList::kIndices && e.problem != MeshProblem::kIndexCountNotTriangles) {
    return InvalidElementError("indices", e.index, "", reason);
  }
  // Sizes were checked before; kept for completeness.
  return InvalidFieldError(e.list == MeshList::kVertices ? "mesh.vertex_count" : "mesh.index_count",
                           reason);
}

template <typename T>
void HashValues(const std::vector<T>& values, Sha256* hash) {
  hash->Update(values.data(), values.size() * sizeof(T));
}

void HashU64(uint64_t v, Sha256* hash) { hash->Update(&v, sizeof v); }

// The hole bits as one byte per cell (the mesh layer's form).
std::vector<uint8_t> UnpackHoles(const AssetSource& source) {
  if (!source.size.has_holes) return {};
  const uint64_t cells = (source.size.rows - 1) * (source.size.columns - 1);
  std::vector<uint8_t> out(static_cast<size_t>(cells));
  for (uint64_t c = 0; c < cells; ++c) out[c] = (source.holes[c >> 3] >> (c & 7)) & 1u;
  return out;
}

HeightfieldDesc DescOf(const AssetSource& source, const std::vector<uint8_t>& holes) {
  return HeightfieldDesc{.rows = source.size.rows,
                         .columns = source.size.columns,
                         .spacing_x = source.size.spacing_x,
                         .spacing_z = source.size.spacing_z,
                         .heights = source.heights,
                         .holes = holes};
}

}  // namespace

uint64_t AssetSize::TriangleCount() const {
  if (kind == AssetKind::kMesh) return index_count / 3;
  if (rows < 2 || columns < 2) return 0;
  return SaturatingProduct(2, SaturatingProduct(rows - 1, columns - 1));
}

uint64_t AssetSize::HoleBytes() const {
  if (kind != AssetKind::kHeightfield || !has_holes || rows < 2 || columns < 2) return 0;
  const uint64_t cells = SaturatingProduct(rows - 1, columns - 1);
  return cells / 8 + (cells % 8 != 0 ? 1 : 0);
}

uint64_t AssetSize::SourceBytes() const {
  if (kind == AssetKind::kMesh) {
    return SaturatingSum(SaturatingProduct(vertex_count, 12), SaturatingProduct(index_count, 4));
  }
  return SaturatingSum(SaturatingProduct(SaturatingProduct(rows, columns), 4), HoleBytes());
}

absl::Status ValidateAssetName(absl::string_view name) {
  if (name.empty() || name.size() > kMaxAssetNameLength) {
    return InvalidFieldError("name", absl::StrCat("a name has 1 to ", kMaxAssetNameLength,
                                                  " characters, got ", name.size()));
  }
  if (!IsAlnum(name[0])) return InvalidFieldError("name", "a name starts with a letter or a digit");
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!IsAlnum(c) && c != '_' && c != '-' && c != '.') {
      return InvalidFieldError(
          "name", absl::StrCat("character ", i, " of the name is not one of [A-Za-z0-9_.-]"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateAssetSize(const AssetSize& size, const AssetLimits& limits) {
  switch (size.kind) {
    case AssetKind::kMesh:
      return ValidateMeshSize(size, limits);
    case AssetKind::kHeightfield:
      return ValidateHeightfieldSize(size, limits);
  }
  return InvalidFieldError("", absl::StrCat("unknown asset kind ", static_cast<int>(size.kind)));
}

absl::Status ValidateAssetSource(const AssetSource& source, const AssetLimits& limits) {
  const AssetSize& size = source.size;
  if (absl::Status status = ValidateAssetSize(size, limits); !status.ok()) return status;
  auto count_error = [](absl::string_view list, uint64_t expected, uint64_t got) {
    return InvalidFieldError(list, absl::StrCat("holds ", got, ", the size says ", expected));
  };
  if (size.kind == AssetKind::kMesh) {
    if (!source.heights.empty()) return count_error("heights", 0, source.heights.size());
    if (!source.holes.empty()) return count_error("holes", 0, source.holes.size());
    if (source.vertices.size() != size.vertex_count) {
      return count_error("vertices", size.vertex_count, source.vertices.size());
    }
    if (source.indices.size() != size.index_count) {
      return count_error("indices", size.index_count, source.indices.size());
    }
    const MeshLimits mesh_limits{.max_triangles = limits.max_mesh_triangles};
    if (std::optional<MeshError> e = ValidateTriangleMesh(
            TriangleMeshView{.vertices = source.vertices, .indices = source.indices}, mesh_limits);
        e.has_value()) {
      return MeshErrorStatus(*e);
    }
    return absl::OkStatus();
  }
  if (!source.vertices.empty()) return count_error("vertices", 0, source.vertices.size());
  if (!source.indices.empty()) return count_error("indices", 0, source.indices.size());
  const uint64_t samples = size.rows * size.columns;
  if (source.heights.size() != samples)
    return count_error("heights", samples, source.heights.size());
  if (source.holes.size() != size.HoleBytes()) {
    return count_error("holes", size.HoleBytes(), source.holes.size());
  }
  const uint64_t cells = (size.rows - 1) * (size.columns - 1);
  if (size.has_holes && cells % 8 != 0 && (source.holes.back() >> (cells % 8)) != 0) {
    return InvalidFieldError("holes",
                             absl::StrCat("bits past the last cell (", cells, " cells) must be 0"));
  }
  const HeightfieldLimits hf_limits{.max_side = kMaxHeightfieldSide,
                                    .max_samples = limits.max_heightfield_samples};
  if (std::optional<HeightfieldError> e =
          ValidateHeightfield(DescOf(source, /*holes=*/{}), hf_limits);
      e.has_value()) {
    if (e->field == HeightfieldField::kHeights) {
      return InvalidElementError("heights", e->index, "",
                                 std::string(HeightfieldProblemReason(e->problem)));
    }
    return InvalidFieldError(
        absl::StrCat("heightfield.", std::string(HeightfieldFieldName(e->field))),
        std::string(HeightfieldProblemReason(e->problem)));
  }
  return absl::OkStatus();
}

std::string AssetSha256(const AssetSource& source) {
  Sha256 hash;
  const AssetSize& size = source.size;
  if (size.kind == AssetKind::kMesh) {
    hash.Update("collide-mesh-v1\n");
    HashU64(source.vertices.size(), &hash);
    HashU64(source.indices.size(), &hash);
    HashValues(source.vertices, &hash);
    HashValues(source.indices, &hash);
  } else {
    hash.Update("collide-hfield1\n");
    HashU64(size.rows, &hash);
    HashU64(size.columns, &hash);
    hash.Update(&size.spacing_x, sizeof(float));
    hash.Update(&size.spacing_z, sizeof(float));
    const uint8_t holes = size.has_holes ? 1 : 0;
    hash.Update(&holes, 1);
    HashValues(source.heights, &hash);
    HashValues(source.holes, &hash);
  }
  return DigestHex(hash.Finish());
}

std::shared_ptr<const Asset> Asset::Build(AssetSource source, std::string sha256) {
  std::shared_ptr<Asset> asset(new Asset());
  if (sha256.empty()) sha256 = AssetSha256(source);
  asset->sha256_ = std::move(sha256);
  asset->source_ = std::move(source);
  const AssetSource& s = asset->source_;
  if (s.size.kind == AssetKind::kMesh) {
    asset->geometry_.emplace(
        MeshShape::Build(TriangleMeshView{.vertices = s.vertices, .indices = s.indices}));
  } else {
    const std::vector<uint8_t> holes = UnpackHoles(s);
    asset->geometry_.emplace(HeightfieldShape::Build(DescOf(s, holes)));
  }
  asset->memory_bytes_ =
      sizeof(Asset) + asset->sha256_.capacity() + s.vertices.capacity() * sizeof(Vec3) +
      s.indices.capacity() * sizeof(uint32_t) + s.heights.capacity() * sizeof(float) +
      s.holes.capacity() + asset->geometry_->MemoryBytes();
  return asset;
}

float Asset::max_height_error() const {
  return kind() == AssetKind::kHeightfield ? geometry_->heightfield().max_quantization_error()
                                           : 0.0f;
}

}  // namespace collide
