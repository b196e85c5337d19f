#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/mutex.h"
#include "base/rw_mutex.h"
#include "base/worker_pool.h"
#include "scene/apply_timings.h"
#include "scene/asset.h"
#include "scene/scene.h"
#include "scene/scene_name.h"
#include "scene/scene_options.h"
#include "scene/update_batch.h"
#include "store/commit_log.h"
#include "store/file_system.h"
#include "store/log_codec.h"
#include "store/moved_scenes.h"
#include "store/recovery.h"
#include "store/replication_hook.h"
#include "store/store_histograms.h"

namespace collide {

struct DecodedRecord;  // store/log_codec.h

// DESIGN
//
// On disk, a data directory holds log segments, one snapshot per scene, and a LOCK file
// (store_files.h). Every change is a log record, in the order it was applied: scene creations
// and deletions (with their options) and update batches (with the client's deduplication tag
// and the version produced) share one log, so a scene's records always follow its creation and
// precede its deletion.
//
// Writing: Apply validates the batch under the scene's writer serialisation, encodes it, appends
// it to the log in memory (sequence number assigned), applies it to the scene and then hands
// the acknowledgement to the log's waiters according to the durability policy. Readers may see
// a version before it is durable; a client is told only when its policy allows.
//
// Snapshots: a background maintenance thread snapshots a scene when its log records since its
// last snapshot exceed max(snapshot_min_log_bytes, snapshot_log_ratio x its last snapshot's
// size) (so snapshot cost is amortised over the log it frees), and snapshots the scene that pins
// the oldest segment when the log exceeds max_log_bytes (so an idle scene cannot hold the log).
// A snapshot records the log sequence it covers (the last record applied to the scene); it is
// written only after the log is fsynced through that sequence, then atomically (temp file,
// fsync, rename, fsync of the directory), then the scene's older snapshot is deleted.
//
// Retention: each live scene needs the log from (its snapshot's sequence + 1), or from its
// create record if it has no snapshot; a deleted scene whose snapshot file still exists needs
// its delete record. Segments whose records all precede the smallest need are deleted (never
// the newest). Disk use is therefore bounded by about: the snapshots (twice each while one is
// rewritten) + the log since the oldest needed sequence, which the triggers above keep under
// max(snapshot_min_log_bytes, ratio x snapshot) per scene + one segment.
//
// Recovery (recovery.h): newest snapshot per scene, then replay of every segment in order,
// skipping each scene's records at or below its snapshot's sequence.
//
// Assets (level geometry). An asset's content is written once, as its own file named after its
// SHA-256 (asset_files.h: temporary file, fsync, rename, fsync of the directory), before the
// log record that adds it to a scene (AddAssetRecord, or an import record) is appended; records
// and snapshots name contents by hash and never carry them, so a snapshot never rewrites a
// mesh. Scenes (and incarnations) that hold the same content share one file and one built
// asset. A file is deleted once no scene holds its content and the log no longer has a segment
// at or before the record that dropped the last holder (a deletion of the asset or of its
// scene): from then on no record and no snapshot on disk names it (a snapshot that did is older
// than that record, and the log would still be kept from it). A crash at any point leaves the
// whole asset or none: a file without its record is deleted at the next start; a record is
// never on disk before its file. Uploads and imports with assets hash, build and write on the
// store's asset thread, never on the caller's.
// Replicated scenes (DurabilityPolicy::kReplicated, replication_hook.h): the server that owns
// such a scene writes it as any other, and each of its records also goes to the replicated log
// (the hook) with its position there, kept in the record and in snapshots; the write is
// acknowledged once the replicated log stored it. A server that follows the scene applies the
// records its owner wrote (ApplyReplicated, RestoreReplicated), logging them locally too, so a
// restart starts from the local copy. A replicated scene recovered from disk is not readable
// until the replication layer checked it against the replicated log (SetReadable).

/// A snapshot the maintenance thread (or Checkpoint) wrote.
struct SnapshotEvent {
  /// The scene's name.
  std::string scene;
  /// The snapshot file's size.
  uint64_t bytes = 0;
  /// From the scene's capture to the file's rename.
  std::chrono::microseconds duration{0};
};

/// Settings of a database; fixed at Open.
struct DatabaseOptions {
  /// The durability of scenes created with DurabilityPolicy::kDefault (must not itself be
  /// kDefault).
  DurabilityPolicy durability = DurabilityPolicy::kAlways;
  /// While written log bytes are not fsynced, an fsync happens at least this often, whatever the
  /// policy (the `periodic` window; 0 disables periodic fsyncs).
  std::chrono::milliseconds sync_interval{100};
  /// Size at which a log segment is closed and a new one started, in bytes.
  uint64_t segment_bytes = 4 << 20;
  /// A scene is snapshotted once its log records since its last snapshot reach
  /// max(snapshot_min_log_bytes, snapshot_log_ratio x the size of its last snapshot).
  uint64_t snapshot_min_log_bytes = 4 << 20;
  double snapshot_log_ratio = 2.0;
  /// When the log holds more than this many bytes, the scene pinning its oldest segment is
  /// snapshotted; and while it does, acknowledgements wait for the next maintenance pass (which
  /// snapshots and deletes segments), so a writer that waits for its acknowledgements cannot
  /// outrun the maintenance thread and the log stays near this size whatever the scheduling.
  uint64_t max_log_bytes = 64 << 20;
  /// Under `none`, acknowledgements wait for the write (instead of being immediate) while more
  /// than this many log bytes wait to be written: backpressure when the disk does not keep up.
  uint64_t max_backlog_bytes = 64 << 20;
  /// The most scenes that may exist at once.
  size_t max_scenes = 1024;
  /// The most bodies a scene created or imported here may be configured to hold
  /// (SceneOptions::max_bodies; at most kMaxBodiesLimit).
  uint32_t max_bodies_per_scene = kMaxBodiesLimit;
  /// How often the maintenance thread looks for snapshots and segments to delete (it is also
  /// woken when a scene passes its snapshot threshold).
  std::chrono::milliseconds maintenance_interval{100};
  /// What start-up does with a log record that no longer applies (recovery.h). Under kSkip,
  /// when records were dropped, Open snapshots every scene before it returns, so that the
  /// dropped records are never read again.
  RecoveryMode recovery = RecoveryMode::kStrict;
  /// The file system; nullptr means PosixFileSystem(). Must outlive the database.
  FileSystem* file_system = nullptr;
  /// Threads that help Apply finish a batch (Scene::Apply's `pool`: the history's index and the
  /// trees' refit at once); nullptr: the applying thread alone. Must outlive the database.
  WorkerPool* apply_pool = nullptr;
  /// Called once, from the log's thread, when a log write or fsync fails; nothing is
  /// acknowledged after it. nullptr means: print the error to stderr and abort the process.
  FatalErrorHandler on_fatal_error;
  /// Called after each snapshot is written, on the thread that wrote it (quick; must not call
  /// the database). nullptr: nothing is called.
  std::function<void(const SnapshotEvent&)> on_snapshot;
  /// The bounds of each scene's asset table.
  SceneAssetLimits scene_assets;
  /// The most bytes of asset content (as uploaded; a content several scenes hold counted once)
  /// all scenes may hold together.
  uint64_t max_asset_bytes = uint64_t{1} << 30;
  /// The most distinct asset contents all scenes may hold together (a content several scenes
  /// hold counted once).
  uint64_t max_assets = 16384;
  /// Where the records of replicated scenes go (replication_hook.h); must outlive the database.
  /// nullptr: replicated scenes cannot be created, and those on disk are not readable nor
  /// writable.
  ReplicationHook* replication = nullptr;
};

/// A replicated scene as the store holds it (Database::ReplicatedScenes).
struct ReplicatedSceneFigures {
  std::string name;
  SceneOptions options;
  /// The position of the last replicated record applied here (none: a scene recovered from a
  /// log written before it had positions, which the replication layer rebuilds).
  std::optional<ReplicationPosition> position;
  /// Queries may read it (see Database::SetReadable).
  bool readable = false;
};

/// An acknowledgement of an applied batch.
struct ApplyAck {
  /// The scene version that holds the batch (see ApplyResult::version).
  uint64_t version = 0;
  /// The batch's log record is fsynced (always true under `always`).
  bool durable = false;
  /// The batch had been applied before (see ClientTag); it was not applied again.
  bool duplicate = false;
  /// Where the scene's Apply spent its time, when the caller asked (Apply's `timed`).
  std::optional<ApplyTimings> timings;
};

/// Receives the outcome of Apply exactly once: an acknowledgement, or the error that rejected
/// the batch (validation, unknown scene, closed database, fatal log error).
using ApplyCallback = absl::AnyInvocable<void(absl::StatusOr<ApplyAck>)>;
/// Receives the outcome of a scene creation or deletion exactly once.
using DoneCallback = absl::AnyInvocable<void(absl::Status)>;

/// An asset AddAsset added (or found).
struct AddedAsset {
  /// The scene's asset under the name.
  std::shared_ptr<const Asset> asset;
  /// The scene already held the name with this content: nothing was done.
  bool already_present = false;
};
/// Receives the outcome of AddAsset exactly once.
using AssetCallback = absl::AnyInvocable<void(absl::StatusOr<AddedAsset>)>;

/// An asset of an import: its name and content (which passed ValidateAssetSource), and the
/// sha256 the sender gave for it (empty: none).
struct NamedSource {
  std::string name{};
  AssetSource source{};
  std::string expected_sha256{};
};

/// The asset contents all scenes hold, each once.
struct StoredAssets {
  uint32_t contents = 0;
  uint64_t triangles = 0;
  /// Their bytes as uploaded (what max_asset_bytes bounds).
  uint64_t source_bytes = 0;
  /// Their memory (content and built form).
  uint64_t memory_bytes = 0;
  /// Asset files on disk (those no scene holds any more but the log still names included).
  uint32_t files = 0;
};

/// Counters of the store.
struct StoreStats {
  /// Log segments on disk and their bytes.
  int segments = 0;
  uint64_t log_bytes = 0;
  /// Bytes of the live scenes' newest snapshots.
  uint64_t snapshot_bytes = 0;
  /// The last appended and the last fsynced log sequence.
  uint64_t last_sequence = 0;
  uint64_t synced_sequence = 0;
  /// How long written records waited for their fsync: at the latest fsync, and at most since
  /// Open (CommitLog::sync_lag). Under `periodic` this is the real window a machine crash can
  /// lose, the sync interval plus the disk's write and fsync time.
  std::chrono::microseconds last_sync_lag{0};
  std::chrono::microseconds max_sync_lag{0};
  /// Since Open: snapshots written, segments deleted.
  uint64_t snapshots_written = 0;
  uint64_t segments_deleted = 0;
  /// Bytes of snapshots written since Open.
  uint64_t snapshot_bytes_written = 0;
  /// How long Open took (recovery: snapshots loaded, the log replayed, the log reopened).
  std::chrono::nanoseconds recovery_duration{0};
  /// The last error of the maintenance thread (snapshot or segment deletion; retried), if any.
  absl::Status maintenance_error;
  /// The last failed write of the `moved-scenes` file (Database::MovedAway), if any.
  absl::Status moved_scenes_error;
};

/// One live scene as the store sees it (Database::SceneFigures).
struct SceneFigures {
  /// The scene (for its own Stats()).
  std::shared_ptr<const Scene> scene;
  /// Bytes of the scene's log records since its newest snapshot.
  uint64_t log_bytes = 0;
  /// Bytes of its newest snapshot (0 when none).
  uint64_t snapshot_bytes = 0;
};

/// The durable scene store the service calls: scenes with their update log, snapshots and
/// recovery. Thread-safe. Callbacks run on the calling thread (before the call returns), on the
/// log's committer thread, or (while the log is over max_log_bytes) on the maintenance thread; they
/// must be quick and must not call the blocking methods (ApplyAndWait, CreateScene/DeleteScene
/// without callback, Flush, Close). Callbacks of different batches may run in a different order
/// than the batches were applied.
class Database {
 public:
  /// Opens (creating if needed) the data directory `dir` and recovers its scenes. Errors:
  /// INVALID_ARGUMENT (options), FAILED_PRECONDITION (directory in use), DATA_LOSS (corruption,
  /// naming file and offset), or the file system's error.
  static absl::StatusOr<std::unique_ptr<Database>> Open(const std::string& dir,
                                                        DatabaseOptions options = {});
  /// Close()s the database.
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  /// Creates an empty scene; `done` runs once the creation is acknowledged under the scene's
  /// policy. Errors: INVALID_ARGUMENT (the name, see ValidateSceneName, or the options),
  /// ALREADY_EXISTS, RESOURCE_EXHAUSTED (max_scenes), a refused write (see Apply).
  void CreateScene(absl::string_view name, const SceneOptions& options, DoneCallback done);
  /// Blocking form of the above.
  absl::Status CreateScene(absl::string_view name, const SceneOptions& options);
  /// Deletes a scene; `done` runs once the deletion is acknowledged. NOT_FOUND if absent.
  void DeleteScene(absl::string_view name, DoneCallback done);
  /// Blocking form of the above.
  absl::Status DeleteScene(absl::string_view name);

  /// Creates scene `name` holding `state` (an import; its log_position is ignored): the whole
  /// state is one log record, so after a crash the scene is either absent or complete. With
  /// `replace`, a scene of that name is replaced by the same record (its readers keep the old
  /// version, its writers get NOT_FOUND); without, ALREADY_EXISTS. A scene marked as moving is
  /// never replaced: FAILED_PRECONDITION naming its destination (MovedError, as its writes get).
  /// `done` runs once the record is fsynced, whatever the scene's durability. Every body must
  /// have passed ValidateBody (scene/validate.h: the importer checks each as it arrives).
  /// Errors: INVALID_ARGUMENT (the name, options against max_bodies_per_scene, duplicate ids or
  /// client marks as Scene::Restore checks them, with their field paths), ALREADY_EXISTS,
  /// FAILED_PRECONDITION (moving),
  /// RESOURCE_EXHAUSTED (max_scenes, or bodies over the options' max_bodies), a refused write
  /// (see Apply). The scene is built (O(bodies)) before the index is locked.
  void ImportScene(absl::string_view name, const SceneOptions& options, const SceneState& state,
                   bool replace, DoneCallback done);
  /// Blocking form of the above.
  absl::Status ImportScene(absl::string_view name, const SceneOptions& options,
                           const SceneState& state, bool replace);
  /// An import with assets: `state` (whose assets are ignored) takes `assets`, each built (or a
  /// content the server holds reused) and written to its file on the asset thread before the
  /// import's record is appended. Bodies place them by name (Scene::Restore's errors name
  /// `bodies[i].shape.mesh.asset`). Beyond ImportScene's errors: RESOURCE_EXHAUSTED past the
  /// scene's asset limits (`assets`) or max_asset_bytes.
  void ImportScene(absl::string_view name, const SceneOptions& options, SceneState state,
                   std::vector<NamedSource> assets, bool replace, DoneCallback done);

  /// Quick checks of an upload before its data arrives (for UploadAsset's header): the scene
  /// exists and is writable, and an asset of `size` named `name` would fit its table and the
  /// server (each limit as AddAsset reports it; a name the scene holds passes: the content
  /// decides). NOT_FOUND, FAILED_PRECONDITION, RESOURCE_EXHAUSTED.
  absl::Status CheckAssetRoom(absl::string_view scene, absl::string_view name,
                              const AssetSize& size) const;
  /// Adds asset `name` (content `source`, which passed ValidateAssetSource) to `scene`: on the
  /// asset thread the content is hashed, built (or the built asset of a content the server holds
  /// reused) and written to its file unless it is there, then its record is appended under the
  /// scene's writer serialisation (Scene::AddAsset); `done` runs once the record is fsynced,
  /// whatever the scene's durability. A name the scene holds with the same content answers at
  /// once with already_present (nothing written). `expected_sha256`, when not empty, must be
  /// the content's (DATA_LOSS `sha256: ...` otherwise). Errors: Scene::AddAsset's
  /// (ALREADY_EXISTS, RESOURCE_EXHAUSTED `name: ...`), RESOURCE_EXHAUSTED past
  /// max_asset_bytes, NOT_FOUND, a refused write (see Apply), the file system's error writing
  /// the file.
  void AddAsset(absl::string_view scene, std::string name, AssetSource source,
                std::string expected_sha256, AssetCallback done);
  /// Blocking form of the above.
  absl::StatusOr<AddedAsset> AddAsset(absl::string_view scene, std::string name, AssetSource source,
                                      std::string expected_sha256 = {});
  /// Deletes asset `name` of `scene` (Scene::DeleteAsset: refused while bodies place it): one
  /// log record; `done` runs once it is fsynced. NOT_FOUND, FAILED_PRECONDITION, a refused
  /// write.
  void DeleteAsset(absl::string_view scene, absl::string_view name, DoneCallback done);
  /// Blocking form of the above.
  absl::Status DeleteAsset(absl::string_view scene, absl::string_view name);
  /// The contents all scenes hold (each once) and the asset files.
  StoredAssets stored_assets() const;
  /// The checks of ImportScene without its effect: the scene it would create (built, with
  /// `assets` built too, not indexed, logged or held), or the error ImportScene would return
  /// before logging (the name, the options, the state, the assets' limits and hashes,
  /// ALREADY_EXISTS unless `replace`, FAILED_PRECONDITION for a scene marked as moving,
  /// RESOURCE_EXHAUSTED). A later ImportScene may still fail if the index changes meanwhile.
  absl::StatusOr<std::unique_ptr<Scene>> CheckImport(
      absl::string_view name, const SceneOptions& options, const SceneState& state, bool replace,
      const std::vector<NamedSource>& assets = {}) const;

  /// Marks scene `name` as moving to `destination` (ValidateMoveDestination), or clears the
  /// mark when `destination` is empty: one log record (replayed by recovery, kept by snapshots),
  /// appended under the scene's writer serialisation, so a batch in progress is applied first
  /// and every later write is refused with FAILED_PRECONDITION naming the destination
  /// (Scene::SetMovedTo). Queries and watches go on. `done` runs once the record is fsynced,
  /// whatever the scene's durability. A marked scene is not re-targeted: another destination is
  /// FAILED_PRECONDITION `destination: ... is already moving to ...` (AlreadyMovingError; the
  /// same destination again is accepted). Errors: INVALID_ARGUMENT (`destination: ...`),
  /// NOT_FOUND, FAILED_PRECONDITION, a refused write (see Apply).
  void SetSceneMoving(absl::string_view name, absl::string_view destination, DoneCallback done);
  /// Blocking form of the above.
  absl::Status SetSceneMoving(absl::string_view name, absl::string_view destination);
  /// Where scene `name` went if it was deleted while marked as moving (one of the last
  /// kMaxMovedScenes such deletions, and no scene of that name was created since); empty
  /// otherwise. Durable: kept in the data directory's `moved-scenes` file (MovedScenes) before
  /// the deletion is acknowledged, so it holds across restarts.
  std::string MovedAway(absl::string_view name) const;

  /// Applies `batch` to `scene` all-or-nothing and logs it. `done` receives the version once the
  /// scene's durability policy allows acknowledging (`none`: at once; `periodic`: once written
  /// to the OS; `always`: once fsynced), or the error. A batch whose (client id, sequence) was
  /// already applied is acknowledged again (duplicate = true), never applied twice, across
  /// restarts. Never blocks on I/O. Errors are the client's to read: NOT_FOUND `scene: no scene
  /// "x"`, the scene's (Scene::Apply, with their OpError payload), and, once the log stopped
  /// (write_status), RESOURCE_EXHAUSTED for a full disk or a file size limit or UNAVAILABLE for
  /// another I/O error, with a message that says writes are refused and names no server path.
  /// `timed`: the acknowledgement carries the scene's phase timings (ApplyAck::timings).
  void Apply(absl::string_view scene, const ClientTag& client, const UpdateBatch& batch,
             ApplyCallback done, bool timed = false);
  /// Blocking form of Apply (tests, tools).
  absl::StatusOr<ApplyAck> ApplyAndWait(absl::string_view scene, const ClientTag& client,
                                        const UpdateBatch& batch);

  /// The scene named `name`, for queries (Scene::Read); writes must go through Apply.
  /// NOT_FOUND if absent.
  absl::StatusOr<std::shared_ptr<const Scene>> GetScene(absl::string_view name) const;
  /// Every scene's name, sorted.
  std::vector<std::string> SceneNames() const;
  /// How many scenes exist.
  size_t scene_count() const;
  /// Bytes of the log records of scene `name` since its last snapshot (what a restart replays
  /// for it); 0 for an unknown scene.
  uint64_t SceneLogBytes(absl::string_view name) const;

  /// OK while the log accepts writes; once a log write or fsync failed, that error as the log
  /// saw it (every later write is refused; reads go on).
  absl::Status write_status() const;

  /// Replicated scenes (replication_hook.h), for the replication layer. Applies `payload`, a
  /// record of replicated scene `scene` as its owner wrote it (it carries its position), to the
  /// local copy of a server that follows the scene, without the hook: creates, updates, replaces
  /// (an import) or deletes the scene, and logs the same record locally. A record at or before
  /// the position already applied is ignored (a redelivery). Errors: DATA_LOSS when the record
  /// does not decode, names another scene, has no position, belongs to another incarnation,
  /// or does not apply as its owner applied it (another version): the caller rebuilds the
  /// scene (RestoreReplicated); a refused write (see Apply).
  absl::Status ApplyReplicated(absl::string_view scene, absl::string_view payload);
  /// Replaces (or creates) the local copy of replicated scene `name` with `state` at `position`
  /// (a follower rebuilt it from the replicated log): one import record, written to the OS
  /// before this returns; readable from then on. Errors as ImportScene.
  absl::Status RestoreReplicated(absl::string_view name, const SceneOptions& options,
                                 const SceneState& state, const ReplicationPosition& position);
  /// Deletes the local copy of replicated scene `name` without the hook (its owner deleted it, or
  /// it is stale). NOT_FOUND if absent.
  absl::Status DropReplicated(absl::string_view name);
  /// Whether queries may read replicated scene `name` (GetScene answers UNAVAILABLE
  /// `scene: ...` while not): false for one recovered from disk until the replication layer
  /// checked it against the replicated log, and while it is rebuilt. No-op for other scenes.
  void SetReadable(absl::string_view name, bool readable);
  /// The position of the last replicated record applied to `name`, if it is a replicated scene
  /// that has one.
  std::optional<ReplicationPosition> ReplicatedPosition(absl::string_view name) const;
  /// Every replicated scene, sorted by name.
  std::vector<ReplicatedSceneFigures> ReplicatedScenes() const;

  /// Blocks until everything applied before the call is fsynced.
  absl::Status Flush();
  /// Writes a snapshot of every scene now and deletes the log segments that frees (tools,
  /// tests, a graceful shutdown that wants a fast next start). Blocking.
  absl::Status Checkpoint();
  /// Stops background work, fsyncs and closes the log, and releases the data directory. Later
  /// calls fail with FAILED_PRECONDITION. Returns the fatal log error if there was one.
  /// Idempotent.
  absl::Status Close();

  /// What start-up found (torn tail, counts).
  const RecoveryReport& recovery_report() const { return recovery_report_; }
  /// Counters of the log and snapshots.
  StoreStats stats() const;
  /// Distributions of fsyncs, group commits and snapshots since Open (lock-free to read).
  const StoreHistograms& histograms() const { return histograms_; }
  /// Every live scene with its log figures, sorted by name.
  std::vector<SceneFigures> SceneFiguresByName() const;

 private:
  // The store's view of one live scene.
  struct Entry {
    std::shared_ptr<Scene> scene;
    DurabilityPolicy policy = DurabilityPolicy::kAlways;  // resolved, never kDefault
    uint64_t create_sequence = 0;
    // Bytes of log records since the last snapshot, and the count at which to snapshot.
    std::atomic<uint64_t> log_bytes{0};
    std::atomic<uint64_t> snapshot_threshold{0};
    std::atomic<bool> snapshot_wanted{false};
    // The newest snapshot: written by maintenance passes only (under maintenance_mu_), read by
    // stats() too.
    std::atomic<uint64_t> snapshot_sequence{0};
    std::atomic<uint64_t> snapshot_bytes{0};
    std::string snapshot_file;  // maintenance passes only
    // Replicated scenes only: queries may read it (SetReadable), and the replication position
    // of each record since the last snapshot, by log sequence (appended under the scene's writer
    // serialisation, in log order), after `base` (the snapshot's, or the last one trimmed).
    std::atomic<bool> readable{true};
    Mutex positions_mu;
    std::deque<std::pair<uint64_t, ReplicationPosition>> positions ABSL_GUARDED_BY(positions_mu);
    std::optional<ReplicationPosition> base_position ABSL_GUARDED_BY(positions_mu);
    // The scene's update records are encoded here, kept from batch to batch up to
    // kKeptRecordBytes: used by Apply under the scene's writer lock only.
    UpdateRecordEncoder record_encoder;
  };
  // A deleted scene whose snapshot files may still exist: its delete record must stay in the
  // log until they are gone, or recovery would bring the scene back.
  struct Zombie {
    std::string scene;
    uint64_t delete_sequence = 0;
  };

  Database(std::string dir, DatabaseOptions options, FileSystem* fs);

  // A scene name is created again (CreateScene, ImportScene): it no longer points elsewhere.
  void ForgetMovedAway(absl::string_view name);
  // Keeps a failed write of the moved-scenes file for stats().moved_scenes_error.
  void NoteStoreError(const absl::Status& status);
  // NOT_FOUND `scene: no scene "x"`, or FAILED_PRECONDITION naming where it went when it was
  // deleted after a move (writers only).
  absl::Status NoSceneForWriter(absl::string_view name) const;

  std::shared_ptr<Entry> FindEntry(absl::string_view name) const;
  // An import's scene built from `state` (O(bodies)): the name, the options, the body count,
  // Scene::Restore.
  absl::StatusOr<std::unique_ptr<Scene>> BuildImported(absl::string_view name,
                                                       const SceneOptions& options,
                                                       const SceneState& state) const;
  // An import's target against the index: ALREADY_EXISTS unless `replace`, RESOURCE_EXHAUSTED
  // for a new scene past max_scenes.
  absl::Status CheckImportTarget(absl::string_view name, bool replace) const
      ABSL_SHARED_LOCKS_REQUIRED(scenes_mu_);
  // An import's assets against the scene's asset limits (count and bytes): RESOURCE_EXHAUSTED
  // `assets`.
  absl::Status CheckImportAssets(const std::vector<NamedSource>& assets) const;
  // `status` as a writer gets it: the log's own error, when that is what refused the write,
  // becomes the client-facing one (see Apply); anything else is returned as it is.
  // By value, so that a task on the asset thread hands its error over (moved) instead of keeping
  // a copy until it returns.
  absl::Status ForWriter(absl::Status status) const;
  // Replicated scenes: records a record's position; the position of the record at log sequence
  // `sequence` (the newest at or before it); the last position; forgets positions before
  // `sequence` (the newest of them becomes the base).
  static void NotePosition(Entry* entry, uint64_t sequence, const ReplicationPosition& position);
  static std::optional<ReplicationPosition> PositionAt(Entry* entry, uint64_t sequence);
  static std::optional<ReplicationPosition> LastPosition(Entry* entry);
  static void TrimPositions(Entry* entry, uint64_t sequence);
  // The import record of `name` holding `state`, as ImportScene writes it; with `position` (a
  // follower's restore), without the hook and readable at once.
  void ImportRecord(absl::string_view name, const SceneOptions& options, const SceneState& state,
                    bool replace, const ReplicationPosition* position, DoneCallback done);
  // Applies an update, create, import or delete record of a replicated scene's owner here.
  absl::Status ApplyReplicatedUpdate(const std::shared_ptr<Entry>& entry, absl::string_view payload,
                                     const DecodedRecord& record);
  absl::Status ApplyReplicatedCreate(absl::string_view payload, const DecodedRecord& record);
  absl::Status ApplyReplicatedDelete(absl::string_view payload, const DecodedRecord& record);
  DurabilityPolicy Resolve(DurabilityPolicy policy) const;
  uint64_t ThresholdFor(uint64_t snapshot_bytes) const;
  // A replicated scene's record as its acknowledgement waits for it (the hook's ticket).
  struct ReplicatedTicket {
    std::string scene;
    uint64_t ticket = ReplicationHook::kEverything;
  };
  // Hands `done` the outcome of record `sequence` under `policy`: now (AcknowledgeNow), or,
  // while the log is over max_log_bytes, after the next maintenance pass. Under kReplicated,
  // `replicated` names the record for the hook.
  void Acknowledge(DurabilityPolicy policy, uint64_t sequence, ApplyAck ack, ApplyCallback done,
                   std::optional<ReplicatedTicket> replicated = std::nullopt);
  void AcknowledgeNow(DurabilityPolicy policy, uint64_t sequence, ApplyAck ack, ApplyCallback done,
                      std::optional<ReplicatedTicket> replicated = std::nullopt);
  // Runs the acknowledgements deferred by Acknowledge; with `final`, no more are deferred.
  void ReleaseDeferredAcks(bool final);
  void AcknowledgeStatus(DurabilityPolicy policy, uint64_t sequence, DoneCallback done,
                         std::optional<ReplicatedTicket> replicated = std::nullopt);
  void OnFatal(const absl::Status& status);

  // A content the server knows: held by scene tables, pinned by uploads and imports in
  // progress, its file on disk or not.
  struct Content {
    // The built asset while anything holds it (reused by another upload of the same content).
    std::weak_ptr<const Asset> built;
    bool on_disk = false;
    // Scene tables (of live scenes) that hold it, and uploads or imports that need its file.
    uint32_t tables = 0;
    uint32_t pins = 0;
    // With no table: the log sequence of the record that dropped the last one (the file may go
    // once the log no longer reaches it).
    uint64_t dropped_at = 0;
    uint64_t source_bytes = 0;
    uint64_t triangles = 0;
  };
  // The asset thread runs `task` after the tasks queued before it.
  void RunOnAssetThread(absl::AnyInvocable<void()> task);
  void RunAssetThread();
  // Makes `source`'s content ready for a record on the asset thread: hashed, built (or reused),
  // its file on disk; pinned until Unpin.
  absl::StatusOr<std::shared_ptr<const Asset>> PrepareContent(AssetSource source,
                                                              const std::string& sha256);
  void Unpin(const std::string& sha256);
  // A scene table took or dropped a content (the record's sequence for a drop).
  void HoldContent(const Asset& asset) ABSL_EXCLUSIVE_LOCKS_REQUIRED(contents_mu_);
  void DropContent(const std::string& sha256, uint64_t sequence);
  // The source bytes of the contents scene tables hold.
  uint64_t HeldBytesLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(contents_mu_);
  // The distinct contents some scene holds (what max_assets bounds).
  uint64_t HeldCountLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(contents_mu_);
  // Deletes the files of contents no scene holds and no kept record names.
  absl::Status RemoveUnusedAssetFiles() ABSL_EXCLUSIVE_LOCKS_REQUIRED(maintenance_mu_);

  void Wake();
  void RunMaintenance();
  // One pass, under maintenance_mu_: removes the snapshot files of deleted scenes, writes the
  // snapshots that are due (all of them with `snapshot_all`), deletes the segments no scene
  // needs.
  absl::Status Maintain(bool snapshot_all) ABSL_EXCLUSIVE_LOCKS_REQUIRED(maintenance_mu_);
  absl::Status RemoveZombieFiles() ABSL_EXCLUSIVE_LOCKS_REQUIRED(maintenance_mu_);
  absl::Status Snapshot(Entry* entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(maintenance_mu_);

  const std::string dir_;
  const DatabaseOptions options_;
  FileSystem* const fs_;
  std::unique_ptr<DirectoryLock> lock_;
  std::unique_ptr<CommitLog> log_;
  RecoveryReport recovery_report_;

  // The scene index: the server's one map of names to scenes. Lookups (every Apply, GetScene)
  // hold scenes_mu_ shared; a creation or deletion holds it exclusively from its checks through
  // its log append, so creations and deletions are serialised and logged in index order.
  mutable RwMutex scenes_mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Entry>> entries_ ABSL_GUARDED_BY(scenes_mu_);

  // Serialises maintenance passes (the thread and Checkpoint).
  Mutex maintenance_mu_;
  std::atomic<uint64_t> snapshots_written_{0};
  std::atomic<uint64_t> snapshot_bytes_written_{0};
  std::chrono::nanoseconds recovery_duration_{0};
  StoreHistograms histograms_;
  std::atomic<uint64_t> segments_deleted_{0};

  // Short holds only.
  mutable Mutex state_mu_;
  std::vector<Zombie> zombies_ ABSL_GUARDED_BY(state_mu_);
  absl::Status maintenance_error_ ABSL_GUARDED_BY(state_mu_);
  absl::Status moved_scenes_error_ ABSL_GUARDED_BY(state_mu_);
  std::vector<absl::AnyInvocable<void()>> deferred_acks_ ABSL_GUARDED_BY(state_mu_);
  bool acks_final_ ABSL_GUARDED_BY(state_mu_) = false;
  // Scenes deleted while marked as moving, with their destinations (see MovedAway).
  std::unique_ptr<MovedScenes> moved_away_;

  // Wakes the maintenance thread.
  Mutex wake_mu_;
  CondVar wake_cv_;
  bool wake_ ABSL_GUARDED_BY(wake_mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(wake_mu_) = false;
  std::thread maintenance_;

  // Serialises the asset files' writes (PrepareContent) and deletions (RemoveUnusedAssetFiles).
  Mutex asset_files_mu_;
  // Asset contents by sha256. Lock order: asset_files_mu_, the scene index, a scene's writer
  // serialisation, then this.
  mutable Mutex contents_mu_;
  absl::flat_hash_map<std::string, Content> contents_ ABSL_GUARDED_BY(contents_mu_);
  // The asset thread's queue.
  Mutex asset_queue_mu_;
  CondVar asset_queue_cv_;
  std::deque<absl::AnyInvocable<void()>> asset_queue_ ABSL_GUARDED_BY(asset_queue_mu_);
  bool asset_thread_stopping_ ABSL_GUARDED_BY(asset_queue_mu_) = false;
  std::thread asset_thread_;

  std::atomic<bool> closed_{false};
};

}  // namespace collide
