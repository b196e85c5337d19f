#include "store/asset_files.h"

#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/field_error.h"
#include "base/status_macros.h"
#include "collide/v1/storage.pb.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "store/record_file.h"
#include "store/record_format.h"
#include "store/store_files.h"

namespace collide {
namespace {

namespace pb = ::collide::storage::v1;
using google::protobuf::io::CodedOutputStream;
using google::protobuf::io::StringOutputStream;

constexpr absl::string_view kAssetPrefix = "asset-";
constexpr absl::string_view kAssetSuffix = ".asset";

// The wire tags of AssetFile's fields (field number << 3 | wire type: 0 varint, 2 length
// delimited, 5 32-bit).
constexpr uint32_t Tag(int field, int wire_type) {
  return static_cast<uint32_t>(field << 3 | wire_type);
}

// A packed repeated field of 32-bit values: its bytes as they are in memory (little-endian).
void WritePacked(CodedOutputStream* out, int field, const void* data, size_t bytes) {
  if (bytes == 0) return;
  out->WriteTag(Tag(field, 2));
  out->WriteVarint64(bytes);
  out->WriteRaw(data, static_cast<int>(bytes));
}

void WriteFloat(CodedOutputStream* out, int field, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  out->WriteTag(Tag(field, 5));
  out->WriteLittleEndian32(bits);
}

// The widest limits: what any server accepts.
constexpr AssetLimits kWidestLimits{
    .max_mesh_triangles = kMaxMeshTriangles,
    .max_heightfield_samples = kMaxHeightfieldSide * kMaxHeightfieldSide};

}  // namespace

std::string AssetFileName(absl::string_view sha256) {
  return absl::StrCat(kAssetPrefix, sha256, kAssetSuffix);
}

bool IsSha256Hex(absl::string_view sha256) {
  if (sha256.size() != 64) return false;
  for (char c : sha256) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool ParseAssetFileName(absl::string_view name, std::string* sha256) {
  if (!absl::ConsumePrefix(&name, kAssetPrefix) || !absl::ConsumeSuffix(&name, kAssetSuffix)) {
    return false;
  }
  if (!IsSha256Hex(name)) return false;
  *sha256 = std::string(name);
  return true;
}

std::string EncodeAssetFile(const AssetSource& source) {
  // Written field by field from the content's arrays, without a message in between (a mesh's
  // arrays are tens of megabytes): the bytes are those protobuf would serialize.
  std::string payload;
  payload.reserve(static_cast<size_t>(source.size.SourceBytes()) + 64);
  {
    StringOutputStream stream(&payload);
    CodedOutputStream out(&stream);
    const AssetSize& size = source.size;
    out.WriteTag(Tag(pb::AssetFile::kKindFieldNumber, 0));
    out.WriteVarint32(static_cast<uint32_t>(size.kind));
    if (size.kind == AssetKind::kMesh) {
      WritePacked(&out, pb::AssetFile::kVerticesFieldNumber, source.vertices.data(),
                  source.vertices.size() * sizeof(Vec3));
      WritePacked(&out, pb::AssetFile::kIndicesFieldNumber, source.indices.data(),
                  source.indices.size() * sizeof(uint32_t));
    } else {
      out.WriteTag(Tag(pb::AssetFile::kRowsFieldNumber, 0));
      out.WriteVarint64(size.rows);
      out.WriteTag(Tag(pb::AssetFile::kColumnsFieldNumber, 0));
      out.WriteVarint64(size.columns);
      WriteFloat(&out, pb::AssetFile::kSpacingXFieldNumber, size.spacing_x);
      WriteFloat(&out, pb::AssetFile::kSpacingZFieldNumber, size.spacing_z);
      if (size.has_holes) {
        out.WriteTag(Tag(pb::AssetFile::kHasHolesFieldNumber, 0));
        out.WriteVarint32(1);
      }
      WritePacked(&out, pb::AssetFile::kHeightsFieldNumber, source.heights.data(),
                  source.heights.size() * sizeof(float));
      WritePacked(&out, pb::AssetFile::kHolesFieldNumber, source.holes.data(), source.holes.size());
    }
  }
  return payload;
}

absl::StatusOr<uint64_t> WriteAssetFile(FileSystem* fs, const std::string& dir,
                                        const Asset& asset) {
  return WriteRecordFile(fs, dir, AssetFileName(asset.sha256()), 0,
                         EncodeAssetFile(asset.source()));
}

absl::StatusOr<AssetSource> ReadAssetFile(FileSystem* fs, const std::string& dir,
                                          absl::string_view sha256) {
  const std::string path = JoinPath(dir, AssetFileName(sha256));
  COLLIDE_ASSIGN_OR_RETURN(std::string data, fs->ReadFile(path));
  auto lost = [&](absl::string_view what) {
    return absl::DataLossError(absl::StrCat(path, ": ", what));
  };
  COLLIDE_ASSIGN_OR_RETURN(RecordView record, ReadSingleRecord(data, path));
  pb::AssetFile file;
  if (!file.ParseFromArray(record.payload.data(), static_cast<int>(record.payload.size()))) {
    return lost("the asset does not parse");
  }
  data = std::string();  // the parsed copy is enough from here on
  AssetSource source;
  AssetSize& size = source.size;
  if (file.kind() != static_cast<uint32_t>(AssetKind::kMesh) &&
      file.kind() != static_cast<uint32_t>(AssetKind::kHeightfield)) {
    return lost(absl::StrCat("unknown asset kind ", file.kind()));
  }
  size.kind = static_cast<AssetKind>(file.kind());
  if (size.kind == AssetKind::kMesh) {
    if (file.vertices_size() % 3 != 0) return lost("the vertices are not 3 floats each");
    size.vertex_count = static_cast<uint64_t>(file.vertices_size() / 3);
    size.index_count = static_cast<uint64_t>(file.indices_size());
    source.vertices.resize(static_cast<size_t>(size.vertex_count));
    std::memcpy(source.vertices.data(), file.vertices().data(),
                source.vertices.size() * sizeof(Vec3));
    source.indices.assign(file.indices().begin(), file.indices().end());
  } else {
    size.rows = file.rows();
    size.columns = file.columns();
    size.spacing_x = file.spacing_x();
    size.spacing_z = file.spacing_z();
    size.has_holes = file.has_holes();
    source.heights.assign(file.heights().begin(), file.heights().end());
    source.holes.assign(file.holes().begin(), file.holes().end());
  }
  if (absl::Status status = ValidateAssetSource(source, kWidestLimits); !status.ok()) {
    return lost(absl::StrCat("the asset is not valid: ", status.message()));
  }
  if (const std::string hash = AssetSha256(source); hash != sha256) {
    return lost(absl::StrCat("the content's sha256 is ", hash, ", not the name's"));
  }
  return source;
}

}  // namespace collide
