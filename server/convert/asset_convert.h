#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collide/v1/collide.pb.h"
#include "scene/asset.h"
#include "scene/scene.h"
#include "server/service_options.h"

namespace collide {

// Assets between the API's messages and the core (collide.proto, "Level geometry"): an
// AssetHeader's size, the data of AssetChunks assembled into an AssetSource (uploads and
// imports), an asset's content cut back into chunks (exports), an asset as AssetInfo. Values are
// the core's to check (scene/asset.h); this layer checks only how the messages carry them: the
// kind set, lists no longer than the header said, counts and checksums that match.

/// The core's bounds of asset contents from the server's flags.
AssetLimits AssetLimitsOf(const ServiceLimits& limits);

/// The size an AssetHeader announces, as it is. INVALID_ARGUMENT about the header's root (a
/// FieldError with no field, for the caller to place) when it holds no mesh or heightfield.
absl::StatusOr<AssetSize> AssetSizeFromProto(const v1::AssetHeader& header);
/// `size` as the header's (or an AssetInfo's) kind field.
void AssetSizeToProto(const AssetSize& size, v1::AssetHeader* out);

/// `asset` (named `name`, used by `body_count` bodies) as the API's AssetInfo.
void AssetInfoToProto(const std::string& name, const Asset& asset, uint64_t body_count,
                      v1::AssetInfo* out);

/// Assembles one asset's content from the data of its AssetChunks, in order, checking that no
/// list passes what the size announced and that the other kind's lists stay empty; keeps the
/// CRC-32C and counts AssetTrailer states. Memory: the content, reserved from the announced size
/// (which the caller checked against the limits first).
class AssetAssembler {
 public:
  /// `size` passed ValidateAssetSize.
  explicit AssetAssembler(const AssetSize& size);

  /// Appends `chunk`'s data. INVALID_ARGUMENT about the list that would pass its count
  /// (`vertices: ...`) or does not belong to the kind (a root FieldError, for the caller to
  /// place), or about an empty chunk (no field).
  absl::Status Add(const v1::AssetChunk& chunk);
  /// True when every list holds what the size announced.
  bool complete() const;
  /// What was received, as the trailer counts it, and in words for errors.
  uint64_t vertex_count() const { return vertex_floats_ / 3; }
  uint64_t vertex_floats() const { return vertex_floats_; }
  uint64_t index_count() const { return source_.indices.size(); }
  uint64_t sample_count() const { return source_.heights.size(); }
  uint64_t hole_bytes() const { return source_.holes.size(); }
  uint64_t chunk_count() const { return chunks_; }
  uint32_t crc32c() const { return crc_; }
  std::string Received() const;
  /// The content (call once, when complete).
  AssetSource Take() &&;

 private:
  AssetSource source_;
  // Floats of vertices received (a vertex may straddle two chunks).
  uint64_t vertex_floats_ = 0;
  uint64_t chunks_ = 0;
  uint32_t crc_ = 0;
};

/// Where an export is in an asset's content (NextAssetChunk).
struct AssetChunkCursor {
  /// 0: vertices or heights; 1: indices or hole bytes; 2: done.
  int list = 0;
  /// The next element of that list.
  size_t offset = 0;
};

/// The next AssetChunk of `asset`'s content from `*cursor` (vertices then indices, or heights
/// then hole bytes), of about `max_bytes` bytes: false when the content is all sent.
bool NextAssetChunk(const Asset& asset, size_t max_bytes, AssetChunkCursor* cursor,
                    v1::AssetChunk* out);

/// Checks and assembles the messages of one UploadAsset stream. Memory: the asset's content
/// (at most --max_asset_bytes_per_scene, checked against the header) plus one message.
class AssetUploader {
 public:
  explicit AssetUploader(const ServiceLimits& limits);

  /// Takes the stream's next message. The first must hold the header and name the scene
  /// (INVALID_ARGUMENT `scene`, `header.name`, `header.mesh.index_count`, ... from the core's
  /// checks, RESOURCE_EXHAUSTED past the limits of an asset's size); then chunks (INVALID_ARGUMENT
  /// `chunks[3].vertices: ...` when a list passes its count, `messages[4]: ...` for an empty or
  /// misplaced message); then the trailer (DATA_LOSS `trailer.crc32c: ...` when it does not
  /// match what arrived). Nothing after the trailer.
  absl::Status Add(const v1::UploadAssetRequest& message);
  /// Whether the header was read; the scene and asset it names.
  bool has_header() const { return has_header_; }
  const std::string& scene() const { return scene_; }
  const std::string& name() const { return name_; }
  const AssetSize& size() const { return size_; }
  /// Messages taken so far (the next one's index in `messages[i]`).
  uint64_t messages() const { return messages_; }

  /// What an upload delivers once its stream ended after the trailer.
  struct Upload {
    std::string scene;
    std::string name;
    AssetSource source;
    /// The header's sha256 (empty: none given).
    std::string expected_sha256;
  };
  /// The upload, its content checked by the core (ValidateAssetSource: `vertices[12]: must be
  /// finite`, `indices[7]: ...`, `heights[3]`, `holes`); DATA_LOSS `stream: ...` when the stream
  /// ended before its trailer.
  absl::StatusOr<Upload> Finish() &&;

 private:
  const ServiceLimits limits_;
  bool has_header_ = false;
  bool has_trailer_ = false;
  uint64_t messages_ = 0;
  std::string scene_;
  std::string name_;
  std::string expected_sha256_;
  AssetSize size_;
  std::unique_ptr<AssetAssembler> assembler_;
};

}  // namespace collide
