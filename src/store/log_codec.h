#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "collide/v1/storage.pb.h"
#include "scene/scene.h"
#include "scene/scene_options.h"
#include "scene/update_batch.h"
#include "store/replication_hook.h"

namespace collide {

/// Conversions between the core types and the collide.storage.v1 messages of
/// proto/collide/v1/storage.proto. Decoders treat their input as untrusted: inconsistent columns,
/// unknown enums and short columns are DATA_LOSS (values are range-checked later, by the scene).

/// Ops in column form (see OpColumns in storage.proto); `asset_names` are the batch's
/// (UpdateBatch::asset_names) that the ops' asset placements index.
void EncodeOps(const std::vector<UpdateOp>& ops, const std::vector<std::string>& asset_names,
               storage::v1::OpColumns* out);
/// Ops that place no asset in column form.
void EncodeOps(const std::vector<UpdateOp>& ops, storage::v1::OpColumns* out);
/// The ops of `in`, appended to `ops`, the names of the assets they place appended to
/// `asset_names` (each op's UpdateOp::asset indexes it).
absl::Status DecodeOps(const storage::v1::OpColumns& in, std::vector<UpdateOp>* ops,
                       std::vector<std::string>* asset_names);
/// The same for ops that place no asset (DATA_LOSS when one does).
absl::Status DecodeOps(const storage::v1::OpColumns& in, std::vector<UpdateOp>* ops);

/// Bodies in column form, as upserts.
void EncodeBodies(const std::vector<BodyState>& bodies, storage::v1::OpColumns* out);
/// The bodies of `in` (which must hold upserts only), appended to `bodies`.
absl::Status DecodeBodies(const storage::v1::OpColumns& in, std::vector<BodyState>* bodies);

void EncodeSceneOptions(const SceneOptions& options, storage::v1::SceneOptions* out);
absl::StatusOr<SceneOptions> DecodeSceneOptions(const storage::v1::SceneOptions& in);

/// The serialized LogRecord of an update batch.
std::string EncodeUpdateRecord(absl::string_view scene, const ClientTag& client, uint64_t version,
                               const UpdateBatch& batch);

/// EncodeUpdateRecord with storage kept from record to record: the message (its columns keep
/// their capacity) and the record's bytes. A writer that sends batches of the same size every
/// tick (10,000 moves: about 360 KB of record and as much of columns) then allocates nothing
/// per batch. Not thread-safe: one per writer (a scene's, used under its writer lock).
class UpdateRecordEncoder {
 public:
  /// The bytes EncodeUpdateRecord returns for the same arguments, valid until the next call
  /// or ReleaseIfLarger.
  absl::string_view Encode(absl::string_view scene, const ClientTag& client, uint64_t version,
                           const UpdateBatch& batch);
  /// Bytes kept (capacities) between records.
  size_t KeptBytes() const;
  /// Frees the kept storage when it takes more than `max_bytes` (a burst's large batch is not
  /// held for the writer's life).
  void ReleaseIfLarger(size_t max_bytes);

 private:
  storage::v1::LogRecord record_;
  std::string bytes_;
};
/// The serialized LogRecord of a scene creation.
std::string EncodeCreateSceneRecord(absl::string_view scene, const SceneOptions& options);
/// The serialized LogRecord of a scene deletion.
std::string EncodeDeleteSceneRecord(absl::string_view scene);
/// The serialized LogRecord of a scene import: the scene created holding `state` (whose
/// log_position is ignored: the record's own sequence is the scene's creation and position).
std::string EncodeImportSceneRecord(absl::string_view scene, const SceneOptions& options,
                                    const SceneState& state);

/// The serialized LogRecord of a scene's move mark: set to `destination`, or cleared when it is
/// empty.
std::string EncodeMoveSceneRecord(absl::string_view scene, absl::string_view destination);

/// An asset as records and snapshots name it: its name in the scene and its content's file.
struct StoredAssetRef {
  std::string name;
  /// AssetSha256 of the content (the file's name).
  std::string sha256;
  AssetKind kind = AssetKind::kMesh;
  /// AssetSize::SourceBytes of the content.
  uint64_t source_bytes = 0;
};

/// The serialized LogRecord of asset `name` (content `asset`) added to `scene`.
std::string EncodeAddAssetRecord(absl::string_view scene, absl::string_view name,
                                 const Asset& asset);
/// The serialized LogRecord of asset `name` deleted from `scene`.
std::string EncodeDeleteAssetRecord(absl::string_view scene, absl::string_view name);

/// A decoded log record.
struct DecodedRecord {
  enum class Type {
    kCreateScene,
    kDeleteScene,
    kUpdate,
    kImportScene,
    kMoveScene,
    kAddAsset,
    kDeleteAsset
  };
  Type type = Type::kUpdate;
  std::string scene;
  /// kCreateScene, kImportScene.
  SceneOptions options;
  /// kImportScene: the scene's whole state (log_position 0) but its assets, which `assets`
  /// names (state.assets empty: the caller reads their files).
  SceneState state;
  /// kImportScene: the scene's assets; kAddAsset: the one asset added.
  std::vector<StoredAssetRef> assets;
  /// kDeleteAsset: the asset's name.
  std::string asset_name;
  /// kMoveScene: the destination (empty: the mark is cleared).
  std::string destination;
  /// kUpdate.
  ClientTag client;
  uint64_t version = 0;
  UpdateBatch batch;
  /// A replicated scene's record: its position in the replicated log (LogRecord.replicated).
  std::optional<ReplicationPosition> replicated;
};
/// Decodes a LogRecord payload; DATA_LOSS when it does not parse or is inconsistent.
absl::StatusOr<DecodedRecord> DecodeLogRecord(absl::string_view payload);

/// A scene snapshot and what it says about its scene's place in the log.
struct DecodedSnapshot {
  std::string scene;
  SceneOptions options;
  /// The sequence of the record that created this incarnation of the scene.
  uint64_t create_sequence = 0;
  /// state.log_position is the last sequence the snapshot covers. state.assets is empty: the
  /// scene's assets are named in `assets` (the caller reads their files).
  SceneState state;
  std::vector<StoredAssetRef> assets;
  /// A replicated scene: the position of the last replicated record the snapshot holds.
  std::optional<ReplicationPosition> replicated;
};
/// The serialized SceneSnapshot of `state` (covering the log through state.log_position).
std::string EncodeSnapshot(absl::string_view scene, const SceneOptions& options,
                           uint64_t create_sequence, const SceneState& state);
/// Decodes a SceneSnapshot payload; DATA_LOSS when it does not parse or is inconsistent.
absl::StatusOr<DecodedSnapshot> DecodeSnapshot(absl::string_view payload);

}  // namespace collide
