#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collide/v1/collide.pb.h"
#include "google/protobuf/message_lite.h"
#include "scene/scene.h"
#include "scene/scene_options.h"
#include "server/convert/asset_convert.h"
#include "server/service_options.h"
#include "store/database.h"

namespace collide {

// A scene's state as the messages of ExportScene and ImportScene (collide.proto, "Moving
// scenes"): a header, the scene's assets (an AssetHeader and AssetChunks each), body chunks, a
// trailer with the counts and a CRC-32C over every byte an import applies (the header, the
// assets' messages, the chunks, the trailer's counts).

/// The export format this server writes and the only one it imports (SceneExportHeader.format).
inline constexpr uint32_t kExportFormat = 2;

/// The default and largest ExportSceneRequest.max_bodies_per_chunk.
inline constexpr uint32_t kDefaultExportChunkBodies = 4096;
inline constexpr uint32_t kMaxExportChunkBodies = 16384;
/// A chunk is cut once its encoding reaches this many bytes.
inline constexpr size_t kExportChunkBytes = 1 << 20;
/// The most deduplication marks a header may carry (a scene holds at most 2 x kMaxClientMarks).
inline constexpr size_t kMaxExportClientMarks = 2 * kMaxClientMarks;

/// Produces the messages of one export from a copy of the scene's state, one at a time, so that
/// only the copy and one message are held.
class SceneExporter {
 public:
  /// `state` is the scene's state (Scene::CaptureState) and `options` its settings with the
  /// durability resolved; `max_bodies_per_chunk` as ExportSceneRequest's (0: the default).
  SceneExporter(std::string scene, const SceneOptions& options, SceneState state,
                uint32_t max_bodies_per_chunk);

  /// The next message (header, chunks, trailer); false once the trailer was returned.
  bool Next(v1::SceneExportMessage* message);

 private:
  const std::string scene_;
  const SceneOptions options_;
  SceneState state_;
  const uint32_t chunk_bodies_;
  enum class Stage { kHeader, kAssets, kChunks, kDone } stage_ = Stage::kHeader;
  // The asset being sent (state_.assets), whether its header went, where its content is.
  size_t next_asset_ = 0;
  bool asset_header_sent_ = false;
  AssetChunkCursor asset_cursor_;
  size_t next_body_ = 0;
  uint64_t chunks_ = 0;
  uint32_t crc_ = 0;
};

/// Extends `crc` by the encoding of `part` (a SceneExportHeader, an AssetHeader, an AssetChunk, a
/// SceneExportChunk, or a SceneExportTrailer with crc32c unset), as the trailer's checksum counts
/// it.
uint32_t ExtendExportCrc(uint32_t crc, const google::protobuf::MessageLite& part);

/// A scene assembled from an import stream, ready for Database::ImportScene.
struct ImportedScene {
  /// The scene to create (the first message's `scene`, else the header's).
  std::string scene;
  bool replace = false;
  /// Check the import and create nothing (ImportSceneRequest.check_only).
  bool check_only = false;
  SceneOptions options;
  /// log_position unset; its assets are in `assets`.
  SceneState state;
  /// The scene's assets, as their contents arrived (checked by the core).
  std::vector<NamedSource> assets;
  /// The index in state.bodies of the first body of each chunk: how the request lists them
  /// (RequestLayout::kImport).
  std::vector<uint64_t> chunk_starts;
  /// Whether the name is the header's (else the first message's `scene`).
  bool name_from_header = false;
};

/// Checks and accumulates the messages of one ImportScene stream. Memory: the state of the
/// bodies received (about 80 bytes each) and the assets' contents plus one message; the
/// messages' bytes together are bounded by limits.max_import_bytes.
class SceneImporter {
 public:
  explicit SceneImporter(const ServiceLimits& limits);

  /// Takes the stream's next message, `bytes` long on the wire. INVALID_ARGUMENT with the field
  /// path (`header.format` for another export format, `header.clients[2].client_id`,
  /// `chunks[3].bodies[17].shape` when none is set, `assets[1].name`,
  /// `assets[1].mesh.index_count`, `assets[1].vertices[12]` from the core's checks of an asset,
  /// `messages[4]: ...` for misplaced messages), RESOURCE_EXHAUSTED past max_import_bytes or an
  /// asset's size limits, DATA_LOSS for an asset whose data falls short of its header or a
  /// trailer that does not match what was received (counts, or the checksum over the header, the
  /// assets, the chunks and the counts). Each body's values are checked as it arrives
  /// (ValidateBody: `chunks[3].bodies[17].shape.sphere.radius`); the scene's name and options are
  /// the store's to check (Database::ImportScene), with paths the import stream renders through
  /// RequestLayout::kImport.
  absl::Status Add(const v1::ImportSceneRequest& message, size_t bytes);
  /// The target's name, once the header was read (for authorisation).
  const std::string& scene() const { return imported_.scene; }
  /// Whether the header was read.
  bool has_header() const { return has_header_; }
  /// How many messages Add took: the index of the stream's next message.
  uint64_t messages() const { return messages_; }
  /// The scene, once the stream ended after its trailer; DATA_LOSS `stream: ...` when it ended
  /// earlier.
  absl::StatusOr<ImportedScene> Finish() &&;

 private:
  absl::Status AddHeader(const v1::ImportSceneRequest& message);
  absl::Status AddAsset(uint64_t index, const v1::AssetHeader& asset);
  absl::Status AddAssetChunk(uint64_t index, const v1::AssetChunk& chunk);
  // Completes the asset being received (before the next asset, the chunks or the trailer).
  absl::Status EndAsset();
  absl::Status AddChunk(const v1::SceneExportChunk& chunk);
  absl::Status AddTrailer(const v1::SceneExportTrailer& trailer);

  const ServiceLimits limits_;
  ImportedScene imported_;
  bool has_header_ = false;
  bool has_trailer_ = false;
  uint64_t messages_ = 0;
  uint64_t bytes_ = 0;
  uint64_t expected_bodies_ = 0;
  uint64_t expected_assets_ = 0;
  uint64_t chunks_ = 0;
  uint32_t crc_ = 0;
  // The asset being received (null between assets), its name, size and sha256.
  std::unique_ptr<AssetAssembler> asset_;
  NamedSource asset_head_;
};

}  // namespace collide
