#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/rw_mutex.h"
#include "base/worker_pool.h"
#include "history/pose_history.h"
#include "query/collision_world.h"
#include "scene/apply_timings.h"
#include "scene/asset.h"
#include "scene/body_ids.h"
#include "scene/scene_observer.h"
#include "scene/scene_options.h"
#include "scene/update_batch.h"
#include "scene/version_signal.h"

namespace collide {

/// Who sent a batch: a batch whose (client_id, sequence) is not above the highest sequence
/// already applied for that client in the scene is a duplicate (acknowledged again, never
/// applied twice). client_id 0 opts out of deduplication. Sequences must grow per client and
/// scene; gaps are allowed.
struct ClientTag {
  /// The sender's id; 0 opts out of deduplication.
  uint64_t client_id = 0;
  /// The batch's position in the sender's stream for this scene.
  uint64_t sequence = 0;
};

/// How many clients' marks a scene keeps (the most recently active ones). Marks are trimmed back
/// to this many, dropping those whose latest batch is oldest, once twice as many exist, so a
/// scene holds at most 2 x kMaxClientMarks marks (about 1.5 MB) whatever client ids writers
/// invent. A writer idle while kMaxClientMarks others wrote after it loses its mark: one of its
/// old batches sent again would then be applied again.
inline constexpr size_t kMaxClientMarks = 16384;

/// The high-water mark of one client in one scene: its latest applied sequence and the version
/// that batch produced.
struct ClientMark {
  /// The client (never 0).
  uint64_t client_id = 0;
  /// Its highest applied sequence.
  uint64_t sequence = 0;
  /// The scene version that batch produced.
  uint64_t version = 0;
  friend bool operator==(const ClientMark&, const ClientMark&) = default;
};

/// The outcome of a batch the scene accepted.
struct ApplyResult {
  /// The version that holds the batch: the one it produced, or, for a duplicate, the version
  /// produced by the client's latest applied batch (which is at least the duplicate's own).
  uint64_t version = 0;
  /// The batch had been applied before (see ClientTag); nothing changed.
  bool duplicate = false;
};

/// Everything the scene knows about one body.
struct BodyState {
  /// The client-chosen id.
  uint64_t id = 0;
  /// Shape in the body's frame (length units).
  Shape shape{};
  /// World pose (unit rotation).
  Pose pose{};
  /// The categories the body belongs to.
  uint32_t category = 1;
  /// The query categories that may hit the body.
  uint32_t mask = ~0u;
  /// Static or dynamic (which tree it lives in).
  BodyKind kind = BodyKind::kDynamic;
  /// Opaque client data.
  uint64_t user_data = 0;
  /// A body that places one of the scene's assets: its name (empty: the body is `shape`), the
  /// kind the body names and the instance's uniform scale.
  std::string asset{};
  AssetKind asset_kind = AssetKind::kMesh;
  float scale = 1.0f;
};

/// The body an upsert `op` stores; `asset_name` names the asset it places (op.asset != 0), as
/// the op's list of names holds it. Not validated (ValidateBody).
BodyState StoredBodyOf(const UpdateOp& op, std::string asset_name);

/// One asset of a scene: its name and the shared built asset.
struct NamedAsset {
  std::string name;
  std::shared_ptr<const Asset> asset;
};

/// One asset of a scene as ListAssets shows it.
struct SceneAssetInfo {
  std::string name;
  std::shared_ptr<const Asset> asset;
  /// Live bodies that place it.
  uint64_t body_count = 0;
};

/// The bounds of a scene's asset table (the server's flags).
struct SceneAssetLimits {
  /// Assets in the table (at most kMaxAssetSlots).
  uint32_t max_assets = 1024;
  /// Their content bytes as uploaded (Asset::source_bytes), together.
  uint64_t max_bytes = uint64_t{256} << 20;
};

/// A scene's whole state at one version, as snapshots store it.
struct SceneState {
  /// The version this state is.
  uint64_t version = 0;
  /// The scene's current tick (UpdateBatch::tick) at that version.
  uint64_t tick = 0;
  /// The caller's position (the store's log sequence number) of the last applied change.
  uint64_t log_position = 0;
  /// Every body, sorted by id.
  std::vector<BodyState> bodies;
  /// Every client mark, sorted by client id.
  std::vector<ClientMark> clients;
  /// Where the scene is moving (Scene::SetMovedTo); empty when it is not.
  std::string moved_to;
  /// Every asset, sorted by name (the bodies name them).
  std::vector<NamedAsset> assets;
};

/// Counters of a scene at one version.
struct SceneStats {
  /// The current version.
  uint64_t version = 0;
  /// Live bodies, and how many of them are static.
  int32_t body_count = 0;
  int32_t static_body_count = 0;
  /// The larger of the two trees' heights (0 for an empty or one-leaf tree).
  int tree_height = 0;
  /// Bytes held by bodies, trees and the scene's tables (capacity, not just size).
  size_t memory_bytes = 0;
  /// The current tick, and the oldest tick queries may name (equal when no history is kept, and
  /// after a restart until new ticks arrive).
  uint64_t tick = 0;
  uint64_t oldest_tick = 0;
  /// Bytes of `memory_bytes` held by the tick history.
  size_t history_bytes = 0;
  /// The asset table: assets, their triangles, their content bytes as uploaded, and the memory
  /// they hold (counted in `memory_bytes`; an asset another scene shares is counted in each).
  uint32_t asset_count = 0;
  uint64_t asset_triangles = 0;
  uint64_t asset_bytes = 0;
  size_t asset_memory_bytes = 0;
};

/// The bytes a scene holds, by part (capacities, not sizes); SceneStats::memory_bytes is their
/// sum.
struct SceneMemory {
  /// The body table (shape, pose, id, filter, leaf per body) and its free slots.
  size_t bodies = 0;
  /// Both trees (static and dynamic), by part.
  TreeMemory trees;
  /// The map from body id to the body's slot.
  size_t id_map = 0;
  /// Per body slot, what the world does not keep (the client's user data).
  size_t extra = 0;
  /// The clients' dedup marks (client id to latest sequence and version).
  size_t client_marks = 0;
  /// The tick history and its segment index.
  size_t history = 0;
  /// The writer's scratch kept between batches (resolved handles, change records).
  size_t write_scratch = 0;
  /// The scene object, its name and whatever else it holds by value.
  size_t fixed = 0;
  /// The assets the scene holds (content and built form; those deleted but still placed by
  /// bodies of retained past ticks too) and its asset table.
  size_t assets = 0;

  size_t Total() const {
    return bodies + trees.Total() + id_map + extra + client_marks + history + write_scratch +
           fixed + assets;
  }
};

/// How long a bounded read may hold the reader lock before letting writers in.
struct ReadBudget {
  /// Items handed to the callable per call (>= 1).
  size_t chunk_size = 64;
  /// After a chunk ends past this hold time, the lock is released and taken again before the
  /// next chunk, so a waiting writer goes first.
  std::chrono::microseconds max_hold{500};
};

/// The versions a bounded read saw.
struct ReadSpan {
  /// The version the first chunk saw.
  uint64_t first_version = 0;
  /// The version the last chunk saw (equal to first_version unless writers got in between).
  uint64_t last_version = 0;
};

/// A named collision scene: bodies with client-chosen 64-bit ids, their collision world (one tree
/// per kind), a version that grows by one per applied update batch, and per-client high-water
/// marks for deduplication.
///
/// Concurrency: any number of readers (Read, ReadBounded, Stats, ...) run in parallel; writers
/// (Apply, MarkDeleted) are serialised among themselves on a writer mutex, validate without
/// blocking readers, and take the reader/writer lock exclusively only while they change the
/// world. A reader therefore sees one whole version, never half a batch.
///
/// Body table: `handles_` maps id -> BodyHandle (body_ids.h), a dense slot index into the world's
/// body array (poses, shapes, filters) and into `extra_` (per-body data the query layer does not
/// need).
///
/// Ticks and history: batches may name a tick (UpdateBatch::tick, never decreasing). `history_`
/// (history/pose_history.h) keeps, for the last options().history_ticks ticks, an undo record per
/// slot changed in each tick, with a generation per slot so that a recycled slot never inherits
/// the past of the body that held it before; it is written under the writer lock in ApplyLocked
/// and read under the reader lock (ReadWithHistory), like everything else. It is not durable:
/// a restored scene retains only its current tick.
class Scene {
 public:
  /// An empty scene at version 0. `log_position` is the caller's position of the scene's
  /// creation (see SceneState::log_position). `name` and `options` must be valid
  /// (ValidateSceneName, ValidateSceneOptions).
  Scene(std::string name, const SceneOptions& options, uint64_t log_position = 0);
  Scene(const Scene&) = delete;
  Scene& operator=(const Scene&) = delete;

  /// A scene holding `state` (from a snapshot or an import): bodies are bulk-built into the
  /// trees, their values stored as they are (no rotation is renormalised). `options` and every
  /// body must be valid: the caller checked them where they became core data
  /// (ValidateSceneOptions, ValidateBody: the log's decoder, the import stream). The state's
  /// structure is checked here: INVALID_ARGUMENT with a FieldError for duplicate body ids
  /// (`bodies[i].id`) or client ids (`clients[i].client_id`), a tick over 2^63 - 1 (`tick`),
  /// duplicate or invalid asset names (`assets[i].name`), more than kMaxAssetSlots assets, a
  /// body placing an asset the state does not hold or one of the other kind
  /// (`bodies[i].shape.mesh.asset`).
  static absl::StatusOr<std::unique_ptr<Scene>> Restore(std::string name,
                                                        const SceneOptions& options,
                                                        const SceneState& state);

  /// The scene's name (the id clients use).
  const std::string& name() const { return name_; }
  /// The settings the scene was created with.
  const SceneOptions& options() const { return options_; }

  /// Runs after a batch is validated and before anything is applied, under the scene's writer
  /// serialisation, with the version the batch will produce. Returns the caller's position for
  /// the batch (recorded as SceneState::log_position); an error rejects the batch and nothing
  /// is applied. The store appends the batch to its log here, so log order equals apply order.
  using CommitFn = absl::FunctionRef<absl::StatusOr<uint64_t>(uint64_t new_version)>;

  /// Validates `batch` against the current state (ValidateBatch) and applies it all-or-nothing:
  /// the version grows by one. A duplicate (see ClientTag) returns at once with `duplicate` set
  /// and is not validated. Errors: NOT_FOUND (unknown body, or `scene: scene "x" was deleted`),
  /// INVALID_ARGUMENT, RESOURCE_EXHAUSTED, each with a field path; nothing is applied then.
  absl::StatusOr<ApplyResult> Apply(const UpdateBatch& batch, const ClientTag& client = {});
  /// As above; `commit` runs between validation and application (see CommitFn). With a `pool`
  /// of two or more threads, the end of the batch runs on two of them at once: the history
  /// indexes the bodies the batch touched while the world refits its trees (the one reads the
  /// bodies, the other writes only the trees). The result is the same either way. With
  /// `timings`, each phase's duration is written there (ApplyTimings), refused batches included.
  absl::StatusOr<ApplyResult> Apply(const UpdateBatch& batch, const ClientTag& client,
                                    CommitFn commit, WorkerPool* pool = nullptr,
                                    ApplyTimings* timings = nullptr);

  /// A scene marked as moving (SetMovedTo) refuses every batch, duplicates included, with
  /// FAILED_PRECONDITION `scene: scene "x" moved to <destination>` (MovedError).
  /// Checks `batch` against the current state without applying it. Operations are checked in
  /// order, each seeing the earlier ones' effect:
  /// - values (ValidateOpValues): INVALID_ARGUMENT `ops[i].upsert.pose.rotation: ...`;
  /// - an upsert that places an asset the scene does not hold: NOT_FOUND
  ///   `ops[i].upsert.shape.mesh.asset: no asset "x" in scene "arena"`, or one of the other kind:
  ///   INVALID_ARGUMENT;
  /// - a set pose, set filter or remove of a body that does not exist at that point:
  ///   NOT_FOUND `ops[i].set_pose.id: no body 17 in scene "arena"` (`ops[i].remove: ...`);
  /// - a second upsert of one id: INVALID_ARGUMENT `ops[i].upsert.id: ... (first by ops[j])`;
  /// - more bodies than options().max_bodies after the batch: RESOURCE_EXHAUSTED naming the
  ///   last op that created a body.
  /// Each of these carries a FieldError (base/field_error.h) in the core batch's words.
  absl::Status ValidateBatch(const UpdateBatch& batch) const;

  /// Marks the scene deleted under the writer serialisation, after `commit` succeeds (the store
  /// logs the deletion there); later Apply calls fail with NOT_FOUND. Readers holding the scene
  /// may go on reading its last version. FAILED_PRECONDITION if already deleted.
  absl::Status MarkDeleted(absl::FunctionRef<absl::Status()> commit);
  /// As MarkDeleted, for a scene that an import replaces: refused with the MovedError
  /// (FAILED_PRECONDITION `scene: scene "x" moved to <destination>`, `commit` not run) while the
  /// scene is marked as moving, so that writes never resume at a source whose move is about to
  /// delete it. The mark is read under the writer serialisation that SetMovedTo takes too.
  absl::Status MarkReplaced(absl::FunctionRef<absl::Status()> commit);

  /// Marks the scene as moving to `destination` (ValidateMoveDestination), or clears the mark
  /// when it is empty, under the writer serialisation and after `commit` succeeds (the store
  /// logs the mark there and returns its position, recorded as the scene's log position): a
  /// batch in progress finishes first, and every later Apply fails with FAILED_PRECONDITION
  /// (MovedError). Queries and observers go on; the version does not change. NOT_FOUND when the
  /// scene was deleted. A scene marked as moving is not re-targeted: another non-empty
  /// `destination` is FAILED_PRECONDITION (AlreadyMovingError, `commit` not run); the same one
  /// again is accepted (and committed again), a clear always is.
  absl::Status SetMovedTo(absl::string_view destination,
                          absl::FunctionRef<absl::StatusOr<uint64_t>()> commit);
  /// Where the scene is moving; empty when it is not.
  std::string moved_to() const;

  /// Adds `asset` to the scene's asset table as `name` (ValidateAssetName), under the writer
  /// serialisation and after `commit` succeeds (the store logs the asset there and returns its
  /// position, recorded as the scene's log position); bodies may place it from the next batch
  /// on. The version does not change. Returns true, or false when the scene already holds
  /// `name` with the same content (nothing is done: a retried upload). Errors: ALREADY_EXISTS
  /// `name: ...` when `name` holds other content; RESOURCE_EXHAUSTED `name: ...` past
  /// `limits` (or kMaxAssetSlots slots, deleted assets that retained ticks still place
  /// included); NOT_FOUND when the scene was deleted; FAILED_PRECONDITION when it moved.
  absl::StatusOr<bool> AddAsset(std::string name, std::shared_ptr<const Asset> asset,
                                const SceneAssetLimits& limits,
                                absl::FunctionRef<absl::StatusOr<uint64_t>()> commit);
  /// AddAsset's checks alone, for a content of hash `sha256` and `source_bytes` bytes, before it
  /// is built: true when AddAsset would add it now, false when the scene holds `name` with it
  /// already, or AddAsset's error.
  absl::StatusOr<bool> CheckAddAsset(absl::string_view name, absl::string_view sha256,
                                     uint64_t source_bytes, const SceneAssetLimits& limits) const;
  /// Removes asset `name` from the table, after `commit` (as AddAsset). Queries at retained past
  /// ticks keep seeing the bodies that placed it: its memory is freed once no retained tick can
  /// name it. Errors: NOT_FOUND `name: no asset "x" in scene "y"`; FAILED_PRECONDITION `name:
  /// asset "x" is used by body 17 (and 3 more)` while bodies place it; NOT_FOUND when the scene
  /// was deleted; FAILED_PRECONDITION when it moved.
  /// Returns the deleted asset.
  absl::StatusOr<std::shared_ptr<const Asset>> DeleteAsset(
      absl::string_view name, absl::FunctionRef<absl::StatusOr<uint64_t>()> commit);
  /// Every asset, sorted by name.
  std::vector<SceneAssetInfo> ListAssets() const;
  /// The asset `name`, if the scene holds it.
  std::optional<SceneAssetInfo> GetAsset(absl::string_view name) const;
  /// Registers `observer` (not owned; it must outlive its registration) for every batch applied
  /// from now on: first runs `start(const SceneView& scene)` on the current state under the
  /// writer serialisation, so no batch falls between that state and the first OnApplied. NOT_FOUND
  /// when the scene was deleted. While observers are registered, each batch also records its
  /// bodies' before and after states (O(ops)).
  absl::Status AddObserver(SceneObserver* observer,
                           absl::FunctionRef<void(const SceneView& scene)> start) const;
  /// Unregisters `observer`; after it returns no callback of it runs or is running. A no-op for
  /// an observer not registered (e.g. after the scene was deleted).
  void RemoveObserver(SceneObserver* observer) const;

  /// Runs `f(const CollisionWorld& world, uint64_t version)` under the reader lock and returns
  /// its result: every query `f` runs sees the one version passed in. `f` must not call back
  /// into this scene's writer methods (deadlock). Keep `f` short (one query batch); for long
  /// batches use ReadBounded.
  template <typename F>
  decltype(auto) Read(F&& f) const {
    ReaderLock lock(&mu_);
    return std::forward<F>(f)(static_cast<const CollisionWorld&>(world_), version_);
  }

  /// As Read, with the scene's tick history: runs `f(const CollisionWorld& world, const
  /// PoseHistory& history, uint64_t version)` under the reader lock (past-tick queries: check
  /// the ticks they name with CheckQueryTick under the same call).
  template <typename F>
  decltype(auto) ReadWithHistory(F&& f) const {
    ReaderLock lock(&mu_);
    return std::forward<F>(f)(static_cast<const CollisionWorld&>(world_),
                              static_cast<const PoseHistory&>(history_), version_);
  }

  /// Runs `f(const CollisionWorld& world, uint64_t version, size_t begin, size_t end)` over
  /// consecutive chunks [begin, end) of [0, count) of at most budget.chunk_size items, under the
  /// reader lock. Once the lock has been held for budget.max_hold, it is released and retaken
  /// between two chunks, so that waiting writers go first: each chunk sees one whole version,
  /// but later chunks may see later versions (each call says which). Returns the first and last
  /// versions seen.
  template <typename F>
  ReadSpan ReadBounded(size_t count, const ReadBudget& budget, F&& f) const;

  /// The current version (0 for a new scene).
  uint64_t version() const;
  /// Signalled after each applied batch, once `version()` returns the new version: for those who
  /// wait for a version without holding a thread (the service's VersionWait).
  VersionSignal& version_signal() const { return version_signal_; }
  /// The current tick (UpdateBatch::tick; 0 for a new scene).
  uint64_t tick() const;
  /// The caller's position of the last applied change (SceneState::log_position). Waits for a
  /// writer in progress, so that a batch already committed by its CommitFn is counted.
  uint64_t log_position() const;
  /// Sets the caller's position of the last applied change: for a scene built by Restore before
  /// its position was known (the store's import, which logs the state it restored).
  void SetLogPosition(uint64_t log_position);
  /// True once MarkDeleted succeeded.
  bool deleted() const;
  /// Counters at the current version.
  SceneStats Stats() const;
  /// The bytes the scene holds, by part (Stats().memory_bytes is their total).
  SceneMemory Memory() const;
  /// The body with `id`, if it exists at the current version.
  std::optional<BodyState> GetBody(uint64_t id) const;
  /// The high-water mark of `client_id` (the latest sequence applied for it), if it has one.
  std::optional<ClientMark> GetClientMark(uint64_t client_id) const;
  /// A copy of the whole state at the current version (O(bodies), under the reader lock).
  SceneState CaptureState() const;
  /// Drops the tick history (keeping the current tick), as after a restart: only the current
  /// tick and later ones can be queried from then on.
  void ForgetHistory();
  /// Checks the body table against the world and the trees (tests; O(bodies)).
  bool Validate() const;

 private:
  struct BodyExtra {
    uint64_t user_data = 0;
  };
  // An asset of the table.
  struct TableAsset {
    std::shared_ptr<const Asset> asset;
    AssetSlot slot = kNoAsset;
  };
  // Per world asset slot: the name of the asset in it (empty once deleted) and the live bodies
  // placing it.
  struct SlotUse {
    std::string name;
    uint64_t bodies = 0;
  };
  // A deleted asset's slot, kept while a retained tick up to `tick` may have a body placing it.
  struct RetiredSlot {
    AssetSlot slot = kNoAsset;
    uint64_t tick = 0;
    std::shared_ptr<const Asset> asset;
  };

  // Puts `asset` in the world and the table (under both locks, or before the scene is shared).
  void InsertAssetLocked(const std::string& name, std::shared_ptr<const Asset> asset)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts a body placing `slot` in or out.
  void UseSlotLocked(AssetSlot slot, int64_t delta) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Frees the retired slots no retained tick can name any more.
  void ReleaseRetiredLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The errors a writer of the asset table gets first: deleted, moved.
  absl::Status CheckWritableLocked() const ABSL_SHARED_LOCKS_REQUIRED(write_mu_);
  // CheckAddAsset under the writer serialisation.
  absl::StatusOr<bool> CheckAddAssetLocked(absl::string_view name, absl::string_view sha256,
                                           uint64_t source_bytes,
                                           const SceneAssetLimits& limits) const
      ABSL_SHARED_LOCKS_REQUIRED(write_mu_);

  absl::Status ValidateLocked(const UpdateBatch& batch, std::vector<BodyHandle>* resolved) const
      ABSL_SHARED_LOCKS_REQUIRED(write_mu_);
  void ApplyLocked(const UpdateBatch& batch, const std::vector<BodyHandle>& resolved,
                   WorkerPool* pool) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, write_mu_);
  // The end of every batch: the history's index of the touched bodies and the world's refit,
  // at once on `pool` when it has a second thread.
  void FinishBatchLocked(WorkerPool* pool) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, write_mu_);
  BodyHandle AddBody(const UpdateOp& op, AssetSlot slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The slot of the asset an upsert of `batch` places (kNoAsset for a shape).
  AssetSlot SlotOf(const UpdateBatch& batch, const UpdateOp& op) const
      ABSL_SHARED_LOCKS_REQUIRED(write_mu_);
  BodyState StateOf(BodyHandle handle) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  SceneMemory MemoryLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  size_t WriteScratchBytes() const ABSL_SHARED_LOCKS_REQUIRED(write_mu_);
  // With observers: the touched bodies' states before the batch, then after it, then the
  // callbacks (a batch handed as moves is read after it only).
  void CaptureBefore(const UpdateBatch& batch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // change_order_ for `batch`.
  void OrderChanges(const UpdateBatch& batch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // MarkDeleted under the writer serialisation the caller holds.
  absl::Status MarkDeletedLocked(absl::FunctionRef<absl::Status()> commit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  void NotifyApplied(const UpdateBatch& batch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // The current state as observers see it; `f` runs with it (under write_mu_).
  void WithView(absl::FunctionRef<void(const SceneView&)> f) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  const std::string name_;
  const SceneOptions options_;

  // Serialises writers: held from validation to the end of application. Fields written by
  // writers are changed only while holding both this and `mu_` exclusively, so a writer may read
  // them under `write_mu_` alone.
  mutable RwMutex write_mu_;
  // The reader/writer lock queries take.
  mutable RwMutex mu_;

  CollisionWorld world_ ABSL_GUARDED_BY(mu_);
  // Id -> handle over world_'s body table (declared after world_, so constructed after it).
  BodyIds handles_ ABSL_GUARDED_BY(mu_);
  std::vector<BodyExtra> extra_ ABSL_GUARDED_BY(mu_);
  // The per-tick history of the world (pose_history.h), written beside it in ApplyLocked.
  PoseHistory history_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, ClientMark> clients_ ABSL_GUARDED_BY(mu_);
  // Keeps the kMaxClientMarks most recent marks once 2 x kMaxClientMarks exist (deterministic:
  // a replay of the same batches trims the same marks).
  void TrimClientMarksLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The asset table by name, the use of each world slot, and the retired slots.
  absl::flat_hash_map<std::string, TableAsset> assets_ ABSL_GUARDED_BY(mu_);
  std::vector<SlotUse> slot_use_ ABSL_GUARDED_BY(mu_);
  std::vector<RetiredSlot> retired_ ABSL_GUARDED_BY(mu_);
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t log_position_ ABSL_GUARDED_BY(mu_) = 0;
  bool deleted_ ABSL_GUARDED_BY(mu_) = false;
  std::string moved_to_ ABSL_GUARDED_BY(mu_);
  // Scratch for Apply: the handle of each op of a non-structural batch, found by validation.
  std::vector<BodyHandle> resolved_ ABSL_GUARDED_BY(write_mu_);
  // Registered observers, and the scratch of the change records handed to them.
  // (Registering an observer changes no state of the scene: const methods may.)
  mutable std::vector<SceneObserver*> observers_ ABSL_GUARDED_BY(write_mu_);
  std::vector<BodyChange> changes_ ABSL_GUARDED_BY(write_mu_);
  std::vector<BodyMove> moves_ ABSL_GUARDED_BY(write_mu_);
  // (body id, op index) of the batch's ops sorted, each change's handle before the batch, and
  // whether the batch was structural (then handles are looked up again after it).
  std::vector<std::pair<uint64_t, size_t>> change_order_ ABSL_GUARDED_BY(write_mu_);
  std::vector<BodyHandle> change_handles_ ABSL_GUARDED_BY(write_mu_);
  // Waiters for a version are not state of the scene: const methods may register them.
  mutable VersionSignal version_signal_;
  bool change_structural_ ABSL_GUARDED_BY(write_mu_) = false;
  // The batch goes to the observers as moves_ (every one takes moves), not as changes_.
  bool change_moves_ ABSL_GUARDED_BY(write_mu_) = false;
  // WriteScratchBytes() after the last applied batch, for Memory().
  size_t write_scratch_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

template <typename F>
ReadSpan Scene::ReadBounded(size_t count, const ReadBudget& budget, F&& f) const {
  using Clock = std::chrono::steady_clock;
  const size_t chunk = budget.chunk_size > 0 ? budget.chunk_size : 1;
  ReadSpan span;
  size_t begin = 0;
  bool first = true;
  while (first || begin < count) {
    ReaderLock lock(&mu_);
    const Clock::time_point held_since = Clock::now();
    if (first) span.first_version = version_;
    first = false;
    span.last_version = version_;
    do {
      size_t end = count - begin < chunk ? count : begin + chunk;
      if (begin < end) f(static_cast<const CollisionWorld&>(world_), version_, begin, end);
      begin = end;
    } while (begin < count && Clock::now() - held_since < budget.max_hold);
  }
  return span;
}

}  // namespace collide
