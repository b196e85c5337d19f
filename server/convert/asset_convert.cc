#include "server/convert/asset_convert.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "base/status_macros.h"
#include "server/convert/geometry_convert.h"
#include "store/crc32c.h"

namespace collide {
namespace {

static_assert(sizeof(Vec3) == 3 * sizeof(float), "vertices are read as an array of floats");

absl::Status Misplaced(uint64_t index, absl::string_view what) {
  return InvalidElementError("messages", index, "", what);
}

absl::Status TooLong(absl::string_view list, uint64_t announced, absl::string_view unit) {
  return InvalidFieldError(
      list, absl::StrCat("more than the header's ", announced, " ", unit, " (the size it says)"));
}

absl::Status NotOfKind(absl::string_view list, AssetKind kind) {
  return InvalidFieldError(list, absl::StrCat("a ", AssetKindName(kind), " carries none"));
}

// The trailer's count against what arrived.
absl::Status CheckCount(absl::string_view field, uint64_t said, uint64_t received) {
  if (said == received) return absl::OkStatus();
  return absl::DataLossError(
      absl::StrCat("trailer.", field, ": says ", said, ", ", received, " were received"));
}

}  // namespace

AssetLimits AssetLimitsOf(const ServiceLimits& limits) {
  return AssetLimits{.max_mesh_triangles = limits.max_mesh_triangles,
                     .max_heightfield_samples = limits.max_heightfield_samples};
}

absl::StatusOr<AssetSize> AssetSizeFromProto(const v1::AssetHeader& header) {
  AssetSize size;
  switch (header.kind_case()) {
    case v1::AssetHeader::kMesh:
      size.kind = AssetKind::kMesh;
      size.vertex_count = header.mesh().vertex_count();
      size.index_count = header.mesh().index_count();
      return size;
    case v1::AssetHeader::kHeightfield: {
      const v1::HeightfieldAssetSize& h = header.heightfield();
      size.kind = AssetKind::kHeightfield;
      size.rows = h.rows();
      size.columns = h.columns();
      size.spacing_x = h.spacing_x();
      size.spacing_z = h.spacing_z();
      size.has_holes = h.has_holes();
      return size;
    }
    case v1::AssetHeader::KIND_NOT_SET:
      break;
  }
  return InvalidFieldError("", "must hold a mesh or a heightfield size");
}

void AssetSizeToProto(const AssetSize& size, v1::AssetHeader* out) {
  if (size.kind == AssetKind::kMesh) {
    out->mutable_mesh()->set_vertex_count(size.vertex_count);
    out->mutable_mesh()->set_index_count(size.index_count);
    return;
  }
  v1::HeightfieldAssetSize* h = out->mutable_heightfield();
  h->set_rows(size.rows);
  h->set_columns(size.columns);
  h->set_spacing_x(size.spacing_x);
  h->set_spacing_z(size.spacing_z);
  h->set_has_holes(size.has_holes);
}

void AssetInfoToProto(const std::string& name, const Asset& asset, uint64_t body_count,
                      v1::AssetInfo* out) {
  out->set_name(name);
  const AssetSize& size = asset.size();
  out->set_kind(size.kind == AssetKind::kMesh ? v1::ASSET_KIND_MESH : v1::ASSET_KIND_HEIGHTFIELD);
  v1::AssetHeader header;
  AssetSizeToProto(size, &header);
  if (header.has_mesh()) {
    *out->mutable_mesh() = header.mesh();
  } else {
    *out->mutable_heightfield() = header.heightfield();
  }
  out->set_triangle_count(asset.triangle_count());
  out->set_sha256(asset.sha256());
  const Aabb& bounds = asset.geometry().local_bounds();
  ToProtoVec3(bounds.min, out->mutable_bounds()->mutable_min());
  ToProtoVec3(bounds.max, out->mutable_bounds()->mutable_max());
  out->set_source_bytes(asset.source_bytes());
  out->set_memory_bytes(asset.memory_bytes());
  out->set_body_count(body_count);
  out->set_max_height_error(asset.max_height_error());
}

// ---------------------------------------------------------------------------------------------
// AssetAssembler.

AssetAssembler::AssetAssembler(const AssetSize& size) {
  source_.size = size;
  if (size.kind == AssetKind::kMesh) {
    source_.vertices.resize(static_cast<size_t>(size.vertex_count));
    source_.indices.reserve(static_cast<size_t>(size.index_count));
  } else {
    source_.heights.reserve(static_cast<size_t>(size.rows * size.columns));
    source_.holes.reserve(static_cast<size_t>(size.HoleBytes()));
  }
}

absl::Status AssetAssembler::Add(const v1::AssetChunk& chunk) {
  const AssetSize& size = source_.size;
  const uint64_t vertices = static_cast<uint64_t>(chunk.vertices_size());
  const uint64_t indices = static_cast<uint64_t>(chunk.indices_size());
  const uint64_t heights = static_cast<uint64_t>(chunk.heights_size());
  const uint64_t holes = chunk.holes().size();
  if (vertices + indices + heights + holes == 0) {
    return InvalidFieldError("", "a chunk must carry data");
  }
  if (size.kind == AssetKind::kMesh) {
    if (heights > 0) return NotOfKind("heights", size.kind);
    if (holes > 0) return NotOfKind("holes", size.kind);
    if (vertices > 3 * size.vertex_count - vertex_floats_) {
      return TooLong("vertices", 3 * size.vertex_count, "floats");
    }
    if (indices > size.index_count - source_.indices.size()) {
      return TooLong("indices", size.index_count, "indices");
    }
  } else {
    if (vertices > 0) return NotOfKind("vertices", size.kind);
    if (indices > 0) return NotOfKind("indices", size.kind);
    if (heights > size.rows * size.columns - source_.heights.size()) {
      return TooLong("heights", size.rows * size.columns, "heights");
    }
    if (holes > size.HoleBytes() - source_.holes.size()) {
      return TooLong("holes", size.HoleBytes(), "hole bytes");
    }
  }
  // The trailer's CRC: this chunk's vertices, indices, heights, hole bytes, as they are in
  // memory (little-endian 32-bit values).
  crc_ = Crc32cExtend(crc_, chunk.vertices().data(), vertices * sizeof(float));
  crc_ = Crc32cExtend(crc_, chunk.indices().data(), indices * sizeof(uint32_t));
  crc_ = Crc32cExtend(crc_, chunk.heights().data(), heights * sizeof(float));
  crc_ = Crc32cExtend(crc_, chunk.holes().data(), holes);
  if (vertices > 0) {
    std::memcpy(reinterpret_cast<float*>(source_.vertices.data()) + vertex_floats_,
                chunk.vertices().data(), vertices * sizeof(float));
    vertex_floats_ += vertices;
  }
  source_.indices.insert(source_.indices.end(), chunk.indices().begin(), chunk.indices().end());
  source_.heights.insert(source_.heights.end(), chunk.heights().begin(), chunk.heights().end());
  source_.holes.insert(source_.holes.end(), chunk.holes().begin(), chunk.holes().end());
  ++chunks_;
  return absl::OkStatus();
}

bool AssetAssembler::complete() const {
  const AssetSize& size = source_.size;
  if (size.kind == AssetKind::kMesh) {
    return vertex_floats_ == 3 * size.vertex_count && source_.indices.size() == size.index_count;
  }
  return source_.heights.size() == size.rows * size.columns &&
         source_.holes.size() == size.HoleBytes();
}

std::string AssetAssembler::Received() const {
  const AssetSize& size = source_.size;
  if (size.kind == AssetKind::kMesh) {
    return absl::StrCat(vertex_floats_, " of ", 3 * size.vertex_count, " vertex floats and ",
                        source_.indices.size(), " of ", size.index_count, " indices received");
  }
  return absl::StrCat(source_.heights.size(), " of ", size.rows * size.columns, " heights and ",
                      source_.holes.size(), " of ", size.HoleBytes(), " hole bytes received");
}

AssetSource AssetAssembler::Take() && { return std::move(source_); }

bool NextAssetChunk(const Asset& asset, size_t max_bytes, AssetChunkCursor* cursor,
                    v1::AssetChunk* out) {
  out->Clear();
  const AssetSource& s = asset.source();
  // 32-bit values per chunk, a whole number of vertices.
  const size_t step = std::max<size_t>(max_bytes / 12, 1) * 3;
  const bool mesh = asset.kind() == AssetKind::kMesh;
  while (cursor->list < 2) {
    const size_t size = mesh ? (cursor->list == 0 ? 3 * s.vertices.size() : s.indices.size())
                             : (cursor->list == 0 ? s.heights.size() : s.holes.size());
    if (cursor->offset >= size) {
      ++cursor->list;
      cursor->offset = 0;
      continue;
    }
    const size_t begin = cursor->offset;
    const size_t end = std::min(size, begin + (mesh || cursor->list == 0 ? step : max_bytes));
    if (mesh && cursor->list == 0) {
      const float* floats = reinterpret_cast<const float*>(s.vertices.data());
      out->mutable_vertices()->Add(floats + begin, floats + end);
    } else if (mesh) {
      out->mutable_indices()->Add(s.indices.data() + begin, s.indices.data() + end);
    } else if (cursor->list == 0) {
      out->mutable_heights()->Add(s.heights.data() + begin, s.heights.data() + end);
    } else {
      out->set_holes(reinterpret_cast<const char*>(s.holes.data()) + begin, end - begin);
    }
    cursor->offset = end;
    return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// AssetUploader.

AssetUploader::AssetUploader(const ServiceLimits& limits) : limits_(limits) {}

absl::Status AssetUploader::Add(const v1::UploadAssetRequest& message) {
  const uint64_t index = messages_++;
  if (index > 0 && !message.scene().empty()) {
    return InvalidElementError("messages", index, "scene",
                               "only the first message names the scene");
  }
  if (has_trailer_) return Misplaced(index, "a message after the trailer");
  switch (message.part_case()) {
    case v1::UploadAssetRequest::kHeader: {
      if (has_header_) return Misplaced(index, "a second header");
      has_header_ = true;
      scene_ = message.scene();
      const v1::AssetHeader& header = message.header();
      name_ = header.name();
      expected_sha256_ = header.sha256();
      COLLIDE_RETURN_IF_ERROR(UnderField(ValidateAssetName(name_), "header"));
      absl::StatusOr<AssetSize> size = AssetSizeFromProto(header);
      if (!size.ok()) return UnderField(size.status(), "header");
      COLLIDE_RETURN_IF_ERROR(
          UnderField(ValidateAssetSize(*size, AssetLimitsOf(limits_)), "header"));
      if (!expected_sha256_.empty() &&
          (expected_sha256_.size() != 64 ||
           expected_sha256_.find_first_not_of("0123456789abcdef") != std::string::npos)) {
        return absl::InvalidArgumentError(
            "header.sha256: must be empty or 64 lowercase hexadecimal digits");
      }
      size_ = *size;
      return absl::OkStatus();
    }
    case v1::UploadAssetRequest::kChunk: {
      if (!has_header_) return Misplaced(index, "the first message must hold the header");
      // Allocated at the first chunk: by then the store found room for the announced size.
      if (assembler_ == nullptr) assembler_ = std::make_unique<AssetAssembler>(size_);
      absl::Status status = assembler_->Add(message.chunk());
      if (!status.ok()) {
        if (GetFieldError(status)->field.empty()) return Misplaced(index, "an empty chunk");
        return UnderField(status, FieldPath("chunks", assembler_->chunk_count(), ""));
      }
      return absl::OkStatus();
    }
    case v1::UploadAssetRequest::kTrailer: {
      if (!has_header_) return Misplaced(index, "the first message must hold the header");
      has_trailer_ = true;
      if (assembler_ == nullptr) assembler_ = std::make_unique<AssetAssembler>(size_);
      const v1::AssetTrailer& trailer = message.trailer();
      const AssetAssembler& a = *assembler_;
      COLLIDE_RETURN_IF_ERROR(
          CheckCount("vertex_count", trailer.vertex_count(), a.vertex_floats() / 3));
      COLLIDE_RETURN_IF_ERROR(CheckCount("index_count", trailer.index_count(), a.index_count()));
      COLLIDE_RETURN_IF_ERROR(CheckCount("sample_count", trailer.sample_count(), a.sample_count()));
      COLLIDE_RETURN_IF_ERROR(CheckCount("hole_bytes", trailer.hole_bytes(), a.hole_bytes()));
      COLLIDE_RETURN_IF_ERROR(CheckCount("chunk_count", trailer.chunk_count(), a.chunk_count()));
      if (!a.complete()) {
        return absl::DataLossError(
            absl::StrCat("trailer: the data is not what the header announced: ", a.Received()));
      }
      if (trailer.crc32c() != a.crc32c()) {
        return absl::DataLossError(absl::StrCat("trailer.crc32c: says ", trailer.crc32c(),
                                                ", the chunks received give ", a.crc32c()));
      }
      return absl::OkStatus();
    }
    case v1::UploadAssetRequest::PART_NOT_SET:
      break;
  }
  return InvalidElementError("messages", index, "", "holds no header, chunk or trailer");
}

absl::StatusOr<AssetUploader::Upload> AssetUploader::Finish() && {
  if (!has_trailer_) {
    return absl::DataLossError(absl::StrCat("stream: ended after ", messages_,
                                            " messages, before the trailer; nothing uploaded"));
  }
  AssetSource source = std::move(*assembler_).Take();
  COLLIDE_RETURN_IF_ERROR(ValidateAssetSource(source, AssetLimitsOf(limits_)));
  return Upload{.scene = std::move(scene_),
                .name = std::move(name_),
                .source = std::move(source),
                .expected_sha256 = std::move(expected_sha256_)};
}

}  // namespace collide
