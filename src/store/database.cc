#include "store/database.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <limits>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "base/status_macros.h"
#include "scene/move_destination.h"
#include "store/asset_files.h"
#include "store/log_codec.h"
#include "store/record_format.h"
#include "store/replication_hook.h"
#include "store/snapshot_file.h"
#include "store/store_files.h"

namespace collide {
namespace {

// The most bytes a scene keeps of its last update record (the message and its bytes) for the
// next one: a tick loop's whole-world batch of 10,000 moves takes about 0.8 MB.
constexpr size_t kKeptRecordBytes = 2 << 20;

absl::Status ValidateOptions(const DatabaseOptions& options) {
  if (options.durability != DurabilityPolicy::kNone &&
      options.durability != DurabilityPolicy::kPeriodic &&
      options.durability != DurabilityPolicy::kAlways &&
      options.durability != DurabilityPolicy::kReplicated) {
    return absl::InvalidArgumentError("durability: must be none, periodic, always or replicated");
  }
  if (options.durability == DurabilityPolicy::kReplicated && options.replication == nullptr) {
    return absl::InvalidArgumentError("durability: replicated needs a replication hook");
  }
  if (options.sync_interval.count() < 0) {
    return absl::InvalidArgumentError("sync_interval: must be >= 0");
  }
  if (options.segment_bytes == 0) return absl::InvalidArgumentError("segment_bytes: must be > 0");
  if (!std::isfinite(options.snapshot_log_ratio) || options.snapshot_log_ratio < 0) {
    return absl::InvalidArgumentError("snapshot_log_ratio: must be finite and >= 0");
  }
  if (options.maintenance_interval.count() <= 0) {
    return absl::InvalidArgumentError("maintenance_interval: must be > 0");
  }
  if (options.max_scenes == 0) return absl::InvalidArgumentError("max_scenes: must be > 0");
  if (options.scene_assets.max_assets > kMaxAssetSlots) {
    return absl::InvalidArgumentError(
        absl::StrCat("scene_assets.max_assets: must be at most ", kMaxAssetSlots));
  }
  return absl::OkStatus();
}

absl::Status WrongSha256(absl::string_view field, absl::string_view said,
                         absl::string_view content) {
  return FieldStatus(absl::StatusCode::kDataLoss, field,
                     absl::StrCat("says ", said, ", the content received gives ", content));
}

absl::Status ServerAssetsFull(uint64_t held, uint64_t adding, uint64_t limit,
                              absl::string_view field = "name") {
  return FieldStatus(
      absl::StatusCode::kResourceExhausted, field,
      absl::StrCat("the server would hold ", held + adding, " bytes of assets, over its limit of ",
                   limit, " (--max_asset_bytes)"));
}

absl::Status ServerAssetCountFull(uint64_t held, uint64_t adding, uint64_t limit,
                                  absl::string_view field = "name") {
  return FieldStatus(absl::StatusCode::kResourceExhausted, field,
                     absl::StrCat("the server would hold ", held + adding,
                                  " asset contents, over its limit of ", limit, " (--max_assets)"));
}

absl::Status Closed() { return absl::FailedPreconditionError("the database is closed"); }

absl::Status NoScene(absl::string_view name) {
  return FieldStatus(absl::StatusCode::kNotFound, "scene", absl::StrCat("no scene \"", name, "\""));
}

// A replicated scene on a server without replication (no hook).
absl::Status NoReplication(absl::string_view name) {
  return FieldStatus(absl::StatusCode::kFailedPrecondition, "scene",
                     absl::StrCat("scene \"", name,
                                  "\" is replicated, and this server has no replication "
                                  "(--nats_url): it is neither written nor read here"));
}

// A replicated scene whose local copy is not checked against its replicated log yet.
absl::Status NotReadable(absl::string_view name) {
  return FieldStatus(absl::StatusCode::kUnavailable, "scene",
                     absl::StrCat("scene \"", name,
                                  "\" is a replica being brought up to date from its "
                                  "replicated log; try again shortly"));
}

bool IsReplicated(DurabilityPolicy policy) { return policy == DurabilityPolicy::kReplicated; }

// Assets are not replicated yet: a follower replaying an asset record would need the asset's
// content, which the replicated log does not carry.
absl::Status ReplicatedWithoutAssets(absl::string_view scene) {
  return FieldStatus(absl::StatusCode::kFailedPrecondition, "scene",
                     absl::StrCat("scene \"", scene,
                                  "\" is replicated: replicated scenes cannot hold assets (level "
                                  "geometry) yet"));
}

// What a writer is told once `log_error` stopped the log: RESOURCE_EXHAUSTED for a full disk or
// a file size limit, UNAVAILABLE for any other I/O error; that writes are refused until a
// restart and that queries go on, naming no server path.
absl::Status RefusedWrite(const absl::Status& log_error) {
  // absl maps ENOSPC and EDQUOT to RESOURCE_EXHAUSTED and EFBIG to OUT_OF_RANGE.
  const bool no_space = log_error.code() == absl::StatusCode::kResourceExhausted ||
                        log_error.code() == absl::StatusCode::kOutOfRange;
  if (no_space) {
    return absl::ResourceExhaustedError(
        "data_dir: the server's disk is full (or its file size limit was reached): writes are "
        "refused until it restarts with space; queries are still served");
  }
  return absl::UnavailableError(
      "data_dir: the server's log could not be written (I/O error): writes are refused until it "
      "restarts; queries are still served");
}

}  // namespace

Database::Database(std::string dir, DatabaseOptions options, FileSystem* fs)
    : dir_(std::move(dir)), options_(std::move(options)), fs_(fs) {}

absl::StatusOr<std::unique_ptr<Database>> Database::Open(const std::string& dir,
                                                         DatabaseOptions options) {
  const auto started = std::chrono::steady_clock::now();
  COLLIDE_RETURN_IF_ERROR(ValidateOptions(options));
  FileSystem* fs = options.file_system != nullptr ? options.file_system : PosixFileSystem();
  COLLIDE_RETURN_IF_ERROR(fs->CreateDir(dir));
  COLLIDE_ASSIGN_OR_RETURN(std::unique_ptr<DirectoryLock> lock, fs->LockDir(dir));
  COLLIDE_ASSIGN_OR_RETURN(RecoveredState state, RecoverDirectory(fs, dir, options.recovery));

  std::unique_ptr<Database> db(new Database(dir, std::move(options), fs));
  db->lock_ = std::move(lock);
  const CommitLogOptions log_options{.segment_bytes = db->options_.segment_bytes,
                                     .sync_interval = db->options_.sync_interval,
                                     .max_backlog_bytes = db->options_.max_backlog_bytes,
                                     .histograms = &db->histograms_};
  Database* raw = db.get();
  COLLIDE_ASSIGN_OR_RETURN(
      db->log_,
      CommitLog::Open(fs, dir, log_options, std::move(state.segments), state.next_sequence,
                      [raw](const absl::Status& status) { raw->OnFatal(status); }));

  // The log is durable now (Open fsynced its last segment), so the snapshot files it made stale
  // can go.
  for (const std::string& name : state.stale_files) {
    absl::Status status = fs->Delete(JoinPath(dir, name));
    if (!status.ok() && !absl::IsNotFound(status)) return status;
  }
  // Asset files: those no record or snapshot names are left over from an upload that crashed
  // before its record (or from contents dropped long ago): deleted now. Those only records still
  // name go once the log no longer reaches them (their last drop is at most its end).
  int unnamed_files = 0;
  {
    MutexLock lock(&db->contents_mu_);
    for (const std::string& sha256 : state.asset_files) {
      if (!state.named_contents.contains(sha256)) {
        absl::Status status = fs->Delete(JoinPath(dir, AssetFileName(sha256)));
        if (!status.ok() && !absl::IsNotFound(status)) return status;
        ++unnamed_files;
        continue;
      }
      Content& content = db->contents_[sha256];
      content.on_disk = true;
      content.dropped_at = state.next_sequence - 1;
    }
  }
  if (!state.stale_files.empty() || unnamed_files > 0) COLLIDE_RETURN_IF_ERROR(fs->SyncDir(dir));

  for (RecoveredScene& recovered : state.scenes) {
    auto entry = std::make_shared<Entry>();
    entry->scene = std::shared_ptr<Scene>(std::move(recovered.scene));
    // The tick history is not durable: whether a scene came from a snapshot or from replaying
    // its log, after a restart it answers only its current tick and later ones.
    entry->scene->ForgetHistory();
    entry->policy = db->Resolve(entry->scene->options().durability);
    entry->create_sequence = recovered.create_sequence;
    entry->log_bytes = recovered.log_bytes;
    entry->snapshot_sequence = recovered.snapshot_sequence;
    entry->snapshot_bytes = recovered.snapshot_bytes;
    entry->snapshot_file = recovered.snapshot_file;
    entry->snapshot_threshold = db->ThresholdFor(recovered.snapshot_bytes);
    if (IsReplicated(entry->policy)) {
      // Checked against the replicated log (and maybe rebuilt) before anyone reads it: a server
      // that crashed while it owned the scene may hold records the replicated log never stored.
      entry->readable = false;
      MutexLock positions(&entry->positions_mu);
      entry->base_position = recovered.replicated;
    }
    WriterLock lock(&db->scenes_mu_);
    const std::string& name = entry->scene->name();
    if (!db->entries_.try_emplace(name, entry).second) {
      return FieldStatus(absl::StatusCode::kAlreadyExists, "scene",
                         absl::StrCat("scene \"", name, "\" already exists"));
    }
    MutexLock contents(&db->contents_mu_);
    for (const SceneAssetInfo& info : entry->scene->ListAssets()) db->HoldContent(*info.asset);
  }
  db->recovery_report_ = std::move(state.report);
  db->recovery_report_.asset_files_deleted = unnamed_files;
  // Scenes moved away; a name that exists here again (a crash between a creation and the
  // file's rewrite) is this server's scene.
  db->moved_away_ = std::make_unique<MovedScenes>(fs, dir);
  for (const auto& [name, entry] : db->entries_) {
    COLLIDE_RETURN_IF_ERROR(db->moved_away_->Forget(name));
  }
  db->recovery_report_.moved_scenes = db->moved_away_->size();
  db->recovery_report_.moved_scenes_problem = db->moved_away_->problem();
  db->maintenance_ = std::thread(&Database::RunMaintenance, db.get());
  db->asset_thread_ = std::thread(&Database::RunAssetThread, db.get());
  if (!db->recovery_report_.skipped.empty()) COLLIDE_RETURN_IF_ERROR(db->Checkpoint());
  db->recovery_duration_ = std::chrono::steady_clock::now() - started;
  return db;
}

Database::~Database() { Close().IgnoreError(); }

void Database::OnFatal(const absl::Status& status) {
  if (options_.on_fatal_error) {
    options_.on_fatal_error(status);
    return;
  }
  // The one place the store writes to stderr: the process stops, and the reason must survive.
  std::fprintf(stderr, "collide store: fatal log error, stopping: %s\n", status.ToString().c_str());
  std::fflush(stderr);
  std::abort();
}

DurabilityPolicy Database::Resolve(DurabilityPolicy policy) const {
  return policy == DurabilityPolicy::kDefault ? options_.durability : policy;
}

uint64_t Database::ThresholdFor(uint64_t snapshot_bytes) const {
  const double scaled = options_.snapshot_log_ratio * static_cast<double>(snapshot_bytes);
  const uint64_t by_ratio =
      scaled >= 1.8e19 ? std::numeric_limits<uint64_t>::max() : static_cast<uint64_t>(scaled);
  return std::max(options_.snapshot_min_log_bytes, by_ratio);
}

std::shared_ptr<Database::Entry> Database::FindEntry(absl::string_view name) const {
  ReaderLock lock(&scenes_mu_);
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : it->second;
}

absl::Status Database::ForWriter(absl::Status status) const {
  if (status.ok()) return status;
  const absl::Status log_error = log_->status();
  if (log_error.ok() || status != log_error) return status;
  return RefusedWrite(status);
}

void Database::CreateScene(absl::string_view name, const SceneOptions& options, DoneCallback done) {
  if (closed_) return done(Closed());
  auto entry = std::make_shared<Entry>();
  std::optional<ReplicatedTicket> ticket;
  absl::Status status = [&]() -> absl::Status {
    COLLIDE_RETURN_IF_ERROR(ValidateSceneName(name));
    COLLIDE_RETURN_IF_ERROR(ValidateSceneOptions(options, options_.max_bodies_per_scene));
    entry->policy = Resolve(options.durability);
    if (IsReplicated(entry->policy) && options_.replication == nullptr) return NoReplication(name);
    WriterLock lock(&scenes_mu_);
    if (entries_.contains(name)) {
      return FieldStatus(absl::StatusCode::kAlreadyExists, "scene",
                         absl::StrCat("scene \"", name, "\" already exists"));
    }
    if (entries_.size() >= options_.max_scenes) {
      return FieldStatus(
          absl::StatusCode::kResourceExhausted, "scene",
          absl::StrCat("the server holds its limit of ", options_.max_scenes, " scenes"));
    }
    std::string payload = EncodeCreateSceneRecord(name, options);
    std::optional<ReplicationPosition> position;
    if (IsReplicated(entry->policy)) {
      COLLIDE_ASSIGN_OR_RETURN(position,
                               options_.replication->Reserve(name, ReplicatedRecordKind::kCreate));
      AppendReplicationPosition(*position, /*snapshot=*/false, &payload);
    }
    COLLIDE_ASSIGN_OR_RETURN(entry->create_sequence, log_->Append(payload));
    if (position.has_value()) {
      NotePosition(entry.get(), entry->create_sequence, *position);
      ticket = ReplicatedTicket{
          .scene = std::string(name),
          .ticket = options_.replication->Publish(name, *position, std::move(payload))};
    }
    entry->scene = std::make_shared<Scene>(std::string(name), options, entry->create_sequence);
    entry->snapshot_threshold = ThresholdFor(0);
    entries_.emplace(std::string(name), entry);
    return absl::OkStatus();
  }();
  if (!status.ok()) return done(ForWriter(std::move(status)));
  ForgetMovedAway(name);
  AcknowledgeStatus(entry->policy, entry->create_sequence, std::move(done), std::move(ticket));
}

absl::Status Database::CreateScene(absl::string_view name, const SceneOptions& options) {
  std::promise<absl::Status> promise;
  std::future<absl::Status> future = promise.get_future();
  CreateScene(name, options,
              [&promise](absl::Status status) { promise.set_value(std::move(status)); });
  return future.get();
}

absl::StatusOr<std::unique_ptr<Scene>> Database::BuildImported(absl::string_view name,
                                                               const SceneOptions& options,
                                                               const SceneState& state) const {
  COLLIDE_RETURN_IF_ERROR(ValidateSceneName(name));
  COLLIDE_RETURN_IF_ERROR(ValidateSceneOptions(options, options_.max_bodies_per_scene));
  if (state.bodies.size() > options.max_bodies) {
    return FieldStatus(
        absl::StatusCode::kResourceExhausted, "bodies",
        absl::StrCat(state.bodies.size(), " bodies, more than the scene's max_bodies ",
                     options.max_bodies));
  }
  return Scene::Restore(std::string(name), options, state);
}

absl::Status Database::CheckImportTarget(absl::string_view name, bool replace) const {
  const bool exists = entries_.contains(name);
  if (exists && !replace) {
    return FieldStatus(absl::StatusCode::kAlreadyExists, "scene",
                       absl::StrCat("scene \"", name, "\" already exists"));
  }
  if (!exists && entries_.size() >= options_.max_scenes) {
    return FieldStatus(
        absl::StatusCode::kResourceExhausted, "scene",
        absl::StrCat("the server holds its limit of ", options_.max_scenes, " scenes"));
  }
  return absl::OkStatus();
}

absl::Status Database::CheckImportAssets(const std::vector<NamedSource>& assets) const {
  const SceneAssetLimits& limits = options_.scene_assets;
  uint64_t bytes = 0;
  for (const NamedSource& named : assets) bytes += named.source.size.SourceBytes();
  if (assets.size() > std::min<uint32_t>(limits.max_assets, kMaxAssetSlots)) {
    return FieldStatus(absl::StatusCode::kResourceExhausted, "assets",
                       absl::StrCat(assets.size(), " assets, over the limit of ", limits.max_assets,
                                    " (--max_assets_per_scene)"));
  }
  if (bytes > limits.max_bytes) {
    return FieldStatus(absl::StatusCode::kResourceExhausted, "assets",
                       absl::StrCat(bytes, " bytes of assets, over the limit of ", limits.max_bytes,
                                    " (--max_asset_bytes_per_scene)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Scene>> Database::CheckImport(
    absl::string_view name, const SceneOptions& options, const SceneState& state, bool replace,
    const std::vector<NamedSource>& assets) const {
  if (closed_) return Closed();
  COLLIDE_RETURN_IF_ERROR(CheckImportAssets(assets));
  // The assets are built as an import builds them (hashed and checked against their headers),
  // so that the scene's bodies can place them; nothing is written or held.
  const SceneState* checked = &state;
  SceneState with_assets;
  if (!assets.empty()) {
    with_assets = state;
    with_assets.assets.clear();
    uint64_t adding = 0;
    std::set<std::string> new_contents;
    for (size_t i = 0; i < assets.size(); ++i) {
      const NamedSource& named = assets[i];
      std::string sha256 = AssetSha256(named.source);
      if (!named.expected_sha256.empty() && named.expected_sha256 != sha256) {
        return WrongSha256(FieldPath("assets", i, "sha256"), named.expected_sha256, sha256);
      }
      {
        MutexLock contents(&contents_mu_);
        auto found = contents_.find(sha256);
        if (found == contents_.end() || found->second.tables == 0) {
          adding += named.source.size.SourceBytes();
          new_contents.insert(sha256);
        }
      }
      with_assets.assets.push_back(
          NamedAsset{named.name, Asset::Build(named.source, std::move(sha256))});
    }
    MutexLock contents(&contents_mu_);
    const uint64_t held = HeldBytesLocked();
    if (adding > 0 && held + adding > options_.max_asset_bytes) {
      return ServerAssetsFull(held, adding, options_.max_asset_bytes, "assets");
    }
    const uint64_t held_count = HeldCountLocked();
    if (held_count + new_contents.size() > options_.max_assets) {
      return ServerAssetCountFull(held_count, new_contents.size(), options_.max_assets, "assets");
    }
    checked = &with_assets;
  }
  COLLIDE_ASSIGN_OR_RETURN(std::unique_ptr<Scene> scene, BuildImported(name, options, *checked));
  ReaderLock lock(&scenes_mu_);
  COLLIDE_RETURN_IF_ERROR(CheckImportTarget(name, replace));
  if (auto it = entries_.find(name); it != entries_.end()) {
    // As MarkReplaced refuses it.
    if (std::string destination = it->second->scene->moved_to(); !destination.empty()) {
      return MovedError(name, destination);
    }
  }
  return scene;
}

void Database::ImportScene(absl::string_view name, const SceneOptions& options,
                           const SceneState& state, bool replace, DoneCallback done) {
  if (state.assets.empty())
    return ImportRecord(name, options, state, replace, /*position=*/nullptr, std::move(done));
  // Built assets: their contents still need their files (the asset thread writes them).
  std::vector<NamedSource> assets;
  assets.reserve(state.assets.size());
  for (const NamedAsset& named : state.assets) {
    assets.push_back(NamedSource{named.name, named.asset->source()});
  }
  SceneState copy = state;
  ImportScene(name, options, std::move(copy), std::move(assets), replace, std::move(done));
}

void Database::ImportScene(absl::string_view name, const SceneOptions& options, SceneState state,
                           std::vector<NamedSource> assets, bool replace, DoneCallback done) {
  state.assets.clear();
  if (closed_) return done(Closed());
  if (assets.empty())
    return ImportRecord(name, options, state, replace, /*position=*/nullptr, std::move(done));
  if (absl::Status status = CheckImportAssets(assets); !status.ok()) return done(std::move(status));
  RunOnAssetThread([this, name = std::string(name), options, state = std::move(state),
                    assets = std::move(assets), replace, done = std::move(done)]() mutable {
    if (closed_) return done(Closed());
    std::vector<std::string> pinned;
    absl::Status status;
    for (size_t i = 0; i < assets.size(); ++i) {
      NamedSource& named = assets[i];
      std::string sha256 = AssetSha256(named.source);
      if (!named.expected_sha256.empty() && named.expected_sha256 != sha256) {
        status = WrongSha256(FieldPath("assets", i, "sha256"), named.expected_sha256, sha256);
        break;
      }
      absl::StatusOr<std::shared_ptr<const Asset>> asset =
          PrepareContent(std::move(named.source), sha256);
      if (!asset.ok()) {
        status = asset.status();
        break;
      }
      pinned.push_back(std::move(sha256));
      state.assets.push_back(NamedAsset{std::move(named.name), *std::move(asset)});
    }
    // The record (if any) is appended before ImportRecord returns: the files may lose their pins.
    if (status.ok())
      ImportRecord(name, options, state, replace, /*position=*/nullptr, std::move(done));
    for (const std::string& sha256 : pinned) Unpin(sha256);
    if (!status.ok()) done(std::move(status));
  });
}

void Database::ImportRecord(absl::string_view name, const SceneOptions& options,
                            const SceneState& state, bool replace,
                            const ReplicationPosition* position, DoneCallback done) {
  if (closed_) return done(Closed());
  const DurabilityPolicy policy = Resolve(options.durability);
  // A follower's restore (`position`) is a replicated scene's own record, written without the
  // hook; an owner's import of a replicated scene goes to the hook like any record.
  const bool follower = position != nullptr;
  const bool replicated = IsReplicated(policy);
  if (follower && !replicated) {
    return done(absl::InvalidArgumentError("options.durability: a restore needs replicated"));
  }
  if (replicated && !follower && options_.replication == nullptr) {
    return done(NoReplication(name));
  }
  if (replicated && !state.assets.empty()) {
    return done(FieldStatus(absl::StatusCode::kFailedPrecondition, "options.durability",
                            "replicated scenes cannot hold assets (level geometry) yet"));
  }
  // Built and encoded before the index is locked: both are O(bodies).
  absl::StatusOr<std::unique_ptr<Scene>> restored = BuildImported(name, options, state);
  if (!restored.ok()) return done(std::move(restored).status());
  std::shared_ptr<Scene> scene = *std::move(restored);
  std::string payload = EncodeImportSceneRecord(name, options, state);
  if (follower) AppendReplicationPosition(*position, /*snapshot=*/false, &payload);
  auto entry = std::make_shared<Entry>();
  entry->policy = policy;
  std::shared_ptr<Entry> replaced;
  std::optional<ReplicatedTicket> ticket;
  absl::Status status = [&]() -> absl::Status {
    WriterLock lock(&scenes_mu_);
    COLLIDE_RETURN_IF_ERROR(CheckImportTarget(name, replace));
    auto it = entries_.find(name);
    if (it != entries_.end() && !follower && IsReplicated(it->second->policy) != replicated) {
      // A replicated scene's log (and its followers) would go on, or start, half way.
      return FieldStatus(
          absl::StatusCode::kFailedPrecondition, "options.durability",
          absl::StrCat("scene \"", name, "\" is ", replicated ? "not " : "",
                       "replicated: it is replaced only by a scene of the same kind (delete it "
                       "first)"));
    }
    // The record's append, under the old scene's writer serialisation when there is one (the one
    // record deletes it and creates the new one).
    auto append = [&]() -> absl::Status {
      if (!state.assets.empty()) {
        // The contents the new scene brings that the server does not hold yet must fit (a
        // scene with assets is never replicated: refused above).
        MutexLock contents(&contents_mu_);
        uint64_t adding = 0;
        std::set<std::string> new_contents;
        for (const NamedAsset& named : state.assets) {
          auto found = contents_.find(named.asset->sha256());
          if (found == contents_.end() || found->second.tables == 0) {
            adding += named.asset->source_bytes();
            new_contents.insert(named.asset->sha256());
          }
        }
        const uint64_t held = HeldBytesLocked();
        if (adding > 0 && held + adding > options_.max_asset_bytes) {
          return ServerAssetsFull(held, adding, options_.max_asset_bytes, "assets");
        }
        const uint64_t held_count = HeldCountLocked();
        if (held_count + new_contents.size() > options_.max_assets) {
          return ServerAssetCountFull(held_count, new_contents.size(), options_.max_assets,
                                      "assets");
        }
        COLLIDE_ASSIGN_OR_RETURN(entry->create_sequence, log_->Append(payload));
        for (const NamedAsset& named : state.assets) HoldContent(*named.asset);
        return absl::OkStatus();
      }
      std::optional<ReplicationPosition> reserved;
      if (replicated && !follower) {
        COLLIDE_ASSIGN_OR_RETURN(
            reserved, options_.replication->Reserve(name, ReplicatedRecordKind::kImport));
        AppendReplicationPosition(*reserved, /*snapshot=*/false, &payload);
      }
      COLLIDE_ASSIGN_OR_RETURN(entry->create_sequence, log_->Append(payload));
      if (reserved.has_value()) {
        NotePosition(entry.get(), entry->create_sequence, *reserved);
        ticket = ReplicatedTicket{
            .scene = std::string(name),
            .ticket = options_.replication->Publish(name, *reserved, std::string(payload))};
      } else if (follower) {
        NotePosition(entry.get(), entry->create_sequence, *position);
      }
      return absl::OkStatus();
    };
    if (it != entries_.end()) {
      // The old scene's writers finish first; the one record deletes it and creates the new one.
      // A scene marked as moving is not replaced (MarkReplaced): its move would delete it.
      replaced = it->second;
      // A follower follows its owner's records as they come.
      COLLIDE_RETURN_IF_ERROR(follower ? replaced->scene->MarkDeleted(append)
                                       : replaced->scene->MarkReplaced(append));
      entries_.erase(it);
      MutexLock state_lock(&state_mu_);
      zombies_.push_back(
          Zombie{.scene = std::string(name), .delete_sequence = entry->create_sequence});
    } else {
      COLLIDE_RETURN_IF_ERROR(append());
    }
    scene->SetLogPosition(entry->create_sequence);
    entry->scene = std::move(scene);
    entry->snapshot_threshold = ThresholdFor(0);
    entry->log_bytes = kRecordHeaderBytes + payload.size();
    entries_.emplace(std::string(name), entry);
    return absl::OkStatus();
  }();
  if (!status.ok()) return done(ForWriter(std::move(status)));
  if (replaced != nullptr) {
    for (const SceneAssetInfo& info : replaced->scene->ListAssets()) {
      DropContent(info.asset->sha256(), entry->create_sequence);
    }
  }
  ForgetMovedAway(name);
  // A large import is snapshotted soon, so that its record's segment can go.
  if (entry->log_bytes >= entry->snapshot_threshold && !entry->snapshot_wanted.exchange(true)) {
    Wake();
  }
  if (ticket.has_value()) {
    AcknowledgeStatus(DurabilityPolicy::kReplicated, entry->create_sequence, std::move(done),
                      std::move(ticket));
  } else {
    AcknowledgeStatus(follower ? DurabilityPolicy::kPeriodic : DurabilityPolicy::kAlways,
                      entry->create_sequence, std::move(done));
  }
}

absl::Status Database::ImportScene(absl::string_view name, const SceneOptions& options,
                                   const SceneState& state, bool replace) {
  std::promise<absl::Status> promise;
  std::future<absl::Status> future = promise.get_future();
  ImportScene(name, options, state, replace,
              [&promise](absl::Status status) { promise.set_value(std::move(status)); });
  return future.get();
}

void Database::DeleteScene(absl::string_view name, DoneCallback done) {
  if (closed_) return done(Closed());
  std::shared_ptr<Entry> entry;
  uint64_t sequence = 0;
  std::string moved_to;
  std::optional<ReplicatedTicket> ticket;
  absl::Status status = [&]() -> absl::Status {
    WriterLock lock(&scenes_mu_);
    auto it = entries_.find(name);
    if (it == entries_.end()) return NoScene(name);
    entry = it->second;
    if (IsReplicated(entry->policy) && options_.replication == nullptr) return NoReplication(name);
    // The scene's writers finish first; later ones get NOT_FOUND (or, after a move, where it
    // went).
    COLLIDE_RETURN_IF_ERROR(entry->scene->MarkDeleted([&]() -> absl::Status {
      std::string payload = EncodeDeleteSceneRecord(name);
      std::optional<ReplicationPosition> position;
      if (IsReplicated(entry->policy)) {
        COLLIDE_ASSIGN_OR_RETURN(
            position, options_.replication->Reserve(name, ReplicatedRecordKind::kDelete));
        AppendReplicationPosition(*position, /*snapshot=*/false, &payload);
      }
      COLLIDE_ASSIGN_OR_RETURN(sequence, log_->Append(payload));
      if (position.has_value()) {
        ticket = ReplicatedTicket{
            .scene = std::string(name),
            .ticket = options_.replication->Publish(name, *position, std::move(payload))};
      }
      return absl::OkStatus();
    }));
    entries_.erase(it);
    moved_to = entry->scene->moved_to();
    MutexLock state(&state_mu_);
    zombies_.push_back(Zombie{.scene = std::string(name), .delete_sequence = sequence});
    return absl::OkStatus();
  }();
  if (!status.ok()) return done(ForWriter(std::move(status)));
  // The deleted scene's table no longer holds its contents (its files stay while the log
  // reaches the deletion).
  for (const SceneAssetInfo& info : entry->scene->ListAssets()) {
    DropContent(info.asset->sha256(), sequence);
  }
  // Written before the deletion is acknowledged: a mover that saw the deletion knows the
  // destination is remembered here. A write error does not undo the deletion (the scene is
  // whole at its destination); the destination is then remembered until a restart, and the
  // error shows in stats().moved_scenes_error.
  if (!moved_to.empty()) NoteStoreError(moved_away_->Add(name, moved_to));
  AcknowledgeStatus(entry->policy, sequence, std::move(done), std::move(ticket));
  Wake();
}

absl::Status Database::DeleteScene(absl::string_view name) {
  std::promise<absl::Status> promise;
  std::future<absl::Status> future = promise.get_future();
  DeleteScene(name, [&promise](absl::Status status) { promise.set_value(std::move(status)); });
  return future.get();
}

void Database::Apply(absl::string_view scene, const ClientTag& client, const UpdateBatch& batch,
                     ApplyCallback done, bool timed) {
  if (closed_) return done(Closed());
  std::shared_ptr<Entry> entry = FindEntry(scene);
  if (entry == nullptr) return done(NoSceneForWriter(scene));
  const bool replicated = IsReplicated(entry->policy);
  if (replicated && options_.replication == nullptr) return done(NoReplication(scene));
  uint64_t sequence = 0;
  uint64_t record_bytes = 0;
  std::optional<ReplicatedTicket> ticket;
  std::optional<ApplyTimings> timings;
  if (timed) timings.emplace();
  // The record is encoded and appended under the scene's writer serialisation, so the log holds
  // the scene's batches in the order they are applied (and so does the replicated log).
  absl::StatusOr<ApplyResult> result = entry->scene->Apply(
      batch, client,
      [&](uint64_t new_version) -> absl::StatusOr<uint64_t> {
        // Under the scene's writer lock: the scene's encoder is this writer's alone.
        UpdateRecordEncoder& encoder = entry->record_encoder;
        const absl::string_view encoded = encoder.Encode(scene, client, new_version, batch);
        if (!replicated) {
          record_bytes = kRecordHeaderBytes + encoded.size();
          absl::StatusOr<uint64_t> appended = log_->Append(encoded);  // copies the payload
          encoder.ReleaseIfLarger(kKeptRecordBytes);
          COLLIDE_ASSIGN_OR_RETURN(sequence, std::move(appended));
          return sequence;
        }
        // A replicated scene's record carries its place in the replicated log, and is handed
        // to the hook.
        std::string payload(encoded);
        encoder.ReleaseIfLarger(kKeptRecordBytes);
        COLLIDE_ASSIGN_OR_RETURN(
            const ReplicationPosition position,
            options_.replication->Reserve(scene, ReplicatedRecordKind::kUpdate));
        AppendReplicationPosition(position, /*snapshot=*/false, &payload);
        record_bytes = kRecordHeaderBytes + payload.size();
        COLLIDE_ASSIGN_OR_RETURN(sequence, log_->Append(payload));
        NotePosition(entry.get(), sequence, position);
        ticket = ReplicatedTicket{
            .scene = std::string(scene),
            .ticket = options_.replication->Publish(scene, position, std::move(payload))};
        return sequence;
      },
      options_.apply_pool, timings.has_value() ? &*timings : nullptr);
  if (!result.ok()) return done(ForWriter(std::move(result).status()));
  if (result->duplicate) {
    // The original is somewhere at or before the log's end: acknowledge once that is as durable
    // as the policy asks (replicated: once every record published so far is stored).
    sequence = log_->last_sequence();
    if (replicated) ticket = ReplicatedTicket{.scene = std::string(scene)};
  } else {
    const uint64_t bytes = entry->log_bytes.fetch_add(record_bytes) + record_bytes;
    if (bytes >= entry->snapshot_threshold.load(std::memory_order_relaxed) &&
        !entry->snapshot_wanted.exchange(true)) {
      Wake();
    }
  }
  Acknowledge(entry->policy, sequence,
              ApplyAck{.version = result->version,
                       .durable = false,
                       .duplicate = result->duplicate,
                       .timings = timings},
              std::move(done), std::move(ticket));
}

void Database::SetSceneMoving(absl::string_view name, absl::string_view destination,
                              DoneCallback done) {
  if (closed_) return done(Closed());
  if (!destination.empty()) {
    if (absl::Status status = ValidateMoveDestination(destination); !status.ok()) {
      return done(std::move(status));
    }
  }
  std::shared_ptr<Entry> entry = FindEntry(name);
  if (entry == nullptr) return done(NoScene(name));
  if (IsReplicated(entry->policy)) {
    // Every server of the cluster already follows it: its owner changes instead (a handover or
    // a failover), and its log goes on.
    return done(FieldStatus(absl::StatusCode::kFailedPrecondition, "scene",
                            absl::StrCat("scene \"", name,
                                         "\" is replicated: it does not move, its owner changes "
                                         "(collide scene handover)")));
  }
  uint64_t sequence = 0;
  uint64_t record_bytes = 0;
  absl::Status status = entry->scene->SetMovedTo(destination, [&]() -> absl::StatusOr<uint64_t> {
    const std::string payload = EncodeMoveSceneRecord(name, destination);
    record_bytes = kRecordHeaderBytes + payload.size();
    COLLIDE_ASSIGN_OR_RETURN(sequence, log_->Append(payload));
    return sequence;
  });
  if (!status.ok()) return done(ForWriter(std::move(status)));
  const uint64_t bytes = entry->log_bytes.fetch_add(record_bytes) + record_bytes;
  if (bytes >= entry->snapshot_threshold.load(std::memory_order_relaxed) &&
      !entry->snapshot_wanted.exchange(true)) {
    Wake();
  }
  // The mark must be durable before the caller relies on it (before it exports the scene).
  AcknowledgeStatus(DurabilityPolicy::kAlways, sequence, std::move(done));
}

absl::Status Database::SetSceneMoving(absl::string_view name, absl::string_view destination) {
  std::promise<absl::Status> promise;
  std::future<absl::Status> future = promise.get_future();
  SetSceneMoving(name, destination,
                 [&promise](absl::Status status) { promise.set_value(std::move(status)); });
  return future.get();
}

std::string Database::MovedAway(absl::string_view name) const { return moved_away_->Find(name); }

void Database::ForgetMovedAway(absl::string_view name) {
  NoteStoreError(moved_away_->Forget(name));
}

void Database::NoteStoreError(const absl::Status& status) {
  if (status.ok()) return;
  MutexLock lock(&state_mu_);
  moved_scenes_error_ = status;
}

absl::Status Database::NoSceneForWriter(absl::string_view name) const {
  const std::string moved_to = MovedAway(name);
  return moved_to.empty() ? NoScene(name) : MovedError(name, moved_to);
}

absl::StatusOr<ApplyAck> Database::ApplyAndWait(absl::string_view scene, const ClientTag& client,
                                                const UpdateBatch& batch) {
  std::promise<absl::StatusOr<ApplyAck>> promise;
  std::future<absl::StatusOr<ApplyAck>> future = promise.get_future();
  Apply(scene, client, batch,
        [&promise](absl::StatusOr<ApplyAck> ack) { promise.set_value(std::move(ack)); });
  return future.get();
}

void Database::Acknowledge(DurabilityPolicy policy, uint64_t sequence, ApplyAck ack,
                           ApplyCallback done, std::optional<ReplicatedTicket> replicated) {
  if (log_->appended_bytes() > options_.max_log_bytes) {
    bool deferred = false;
    {
      MutexLock lock(&state_mu_);
      if (!acks_final_) {
        deferred_acks_.push_back([this, policy, sequence, ack, done = std::move(done),
                                  replicated = std::move(replicated)]() mutable {
          AcknowledgeNow(policy, sequence, ack, std::move(done), std::move(replicated));
        });
        deferred = true;
      }
    }
    if (deferred) {
      Wake();
      return;
    }
  }
  AcknowledgeNow(policy, sequence, ack, std::move(done), std::move(replicated));
}

void Database::ReleaseDeferredAcks(bool final) {
  std::vector<absl::AnyInvocable<void()>> due;
  {
    MutexLock lock(&state_mu_);
    due.swap(deferred_acks_);
    if (final) acks_final_ = true;
  }
  for (auto& ack : due) ack();
}

void Database::AcknowledgeNow(DurabilityPolicy policy, uint64_t sequence, ApplyAck ack,
                              ApplyCallback done, std::optional<ReplicatedTicket> replicated) {
  CommitLog::Await await = CommitLog::Await::kWritten;
  if (policy == DurabilityPolicy::kReplicated && replicated.has_value() &&
      options_.replication != nullptr) {
    // Stored by the replicated log's quorum, then written to the OS here (the local log is the
    // fast path of a restart).
    options_.replication->WhenReplicated(
        replicated->scene, replicated->ticket,
        [this, sequence, ack, done = std::move(done)](absl::Status status) mutable {
          if (!status.ok()) return done(std::move(status));
          log_->WhenDone(sequence, CommitLog::Await::kWritten,
                         [this, ack, done = std::move(done)](absl::Status written, bool) mutable {
                           if (!written.ok()) return done(ForWriter(written));
                           ack.durable = true;
                           done(ack);
                         });
        });
    return;
  }
  switch (policy) {
    case DurabilityPolicy::kNone:
      if (!log_->backlogged()) {
        ack.durable = sequence <= log_->synced_sequence();
        return done(ack);
      }
      break;  // backpressure: wait for the write
    case DurabilityPolicy::kPeriodic:
      break;
    case DurabilityPolicy::kAlways:
    case DurabilityPolicy::kDefault:     // resolved before; kept safe
    case DurabilityPolicy::kReplicated:  // always with a ticket; kept safe
      await = CommitLog::Await::kSynced;
      break;
  }
  log_->WhenDone(sequence, await,
                 [this, ack, done = std::move(done)](absl::Status status, bool synced) mutable {
                   if (!status.ok()) return done(ForWriter(std::move(status)));
                   ack.durable = synced;
                   done(ack);
                 });
}

void Database::AcknowledgeStatus(DurabilityPolicy policy, uint64_t sequence, DoneCallback done,
                                 std::optional<ReplicatedTicket> replicated) {
  Acknowledge(
      policy, sequence, ApplyAck{},
      [done = std::move(done)](absl::StatusOr<ApplyAck> ack) mutable {
        done(std::move(ack).status());
      },
      std::move(replicated));
}

absl::StatusOr<std::shared_ptr<const Scene>> Database::GetScene(absl::string_view name) const {
  std::shared_ptr<Entry> entry = FindEntry(name);
  if (entry == nullptr) return NoScene(name);
  if (!entry->readable.load(std::memory_order_acquire)) return NotReadable(name);
  return std::shared_ptr<const Scene>(entry->scene);
}

std::vector<std::string> Database::SceneNames() const {
  std::vector<std::string> names;
  {
    ReaderLock lock(&scenes_mu_);
    names.reserve(entries_.size());
    for (const auto& [name, entry] : entries_) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

size_t Database::scene_count() const {
  ReaderLock lock(&scenes_mu_);
  return entries_.size();
}

uint64_t Database::SceneLogBytes(absl::string_view name) const {
  const std::shared_ptr<Entry> entry = FindEntry(name);
  return entry == nullptr ? 0 : entry->log_bytes.load(std::memory_order_relaxed);
}

absl::Status Database::write_status() const { return log_->status(); }

absl::Status Database::Flush() {
  if (closed_) return Closed();
  return log_->SyncAll();
}

absl::Status Database::Checkpoint() {
  if (closed_) return Closed();
  MutexLock lock(&maintenance_mu_);
  return Maintain(/*snapshot_all=*/true);
}

absl::Status Database::Close() {
  if (closed_.exchange(true)) return log_ != nullptr ? log_->status() : absl::OkStatus();
  {
    MutexLock lock(&wake_mu_);
    stopping_ = true;
  }
  wake_cv_.NotifyAll();
  if (maintenance_.joinable()) maintenance_.join();
  {
    MutexLock lock(&asset_queue_mu_);
    asset_thread_stopping_ = true;
  }
  asset_queue_cv_.NotifyAll();
  // The tasks queued still run (each sees the database closed and reports it).
  if (asset_thread_.joinable()) asset_thread_.join();
  absl::Status status = log_ != nullptr ? log_->Close() : absl::OkStatus();
  // Everything is written and fsynced now: the held-back acknowledgements can go.
  if (log_ != nullptr) ReleaseDeferredAcks(/*final=*/true);
  lock_.reset();  // another process (or Open) may use the directory now
  return status;
}

StoreStats Database::stats() const {
  StoreStats stats;
  const std::vector<SegmentInfo> segments = log_->Segments();
  stats.segments = static_cast<int>(segments.size());
  for (const SegmentInfo& segment : segments) stats.log_bytes += segment.bytes;
  {
    ReaderLock lock(&scenes_mu_);
    for (const auto& [name, entry] : entries_) stats.snapshot_bytes += entry->snapshot_bytes;
  }
  stats.last_sequence = log_->last_sequence();
  stats.synced_sequence = log_->synced_sequence();
  const CommitLog::SyncLag lag = log_->sync_lag();
  stats.last_sync_lag = lag.last;
  stats.max_sync_lag = lag.max;
  stats.snapshots_written = snapshots_written_;
  stats.segments_deleted = segments_deleted_;
  stats.snapshot_bytes_written = snapshot_bytes_written_;
  stats.recovery_duration = recovery_duration_;
  MutexLock lock(&state_mu_);
  stats.maintenance_error = maintenance_error_;
  stats.moved_scenes_error = moved_scenes_error_;
  return stats;
}

std::vector<SceneFigures> Database::SceneFiguresByName() const {
  std::vector<SceneFigures> figures;
  {
    ReaderLock lock(&scenes_mu_);
    figures.reserve(entries_.size());
    for (const auto& [name, entry] : entries_) {
      figures.push_back(SceneFigures{.scene = entry->scene,
                                     .log_bytes = entry->log_bytes.load(),
                                     .snapshot_bytes = entry->snapshot_bytes.load()});
    }
  }
  std::sort(figures.begin(), figures.end(), [](const SceneFigures& a, const SceneFigures& b) {
    return a.scene->name() < b.scene->name();
  });
  return figures;
}

// ---------------------------------------------------------------------------------------------
// Replicated scenes.

void Database::NotePosition(Entry* entry, uint64_t sequence, const ReplicationPosition& position) {
  MutexLock lock(&entry->positions_mu);
  entry->positions.emplace_back(sequence, position);
}

std::optional<ReplicationPosition> Database::PositionAt(Entry* entry, uint64_t sequence) {
  MutexLock lock(&entry->positions_mu);
  std::optional<ReplicationPosition> found = entry->base_position;
  for (const auto& [at, position] : entry->positions) {
    if (at > sequence) break;
    found = position;
  }
  return found;
}

std::optional<ReplicationPosition> Database::LastPosition(Entry* entry) {
  MutexLock lock(&entry->positions_mu);
  if (!entry->positions.empty()) return entry->positions.back().second;
  return entry->base_position;
}

void Database::TrimPositions(Entry* entry, uint64_t sequence) {
  MutexLock lock(&entry->positions_mu);
  while (!entry->positions.empty() && entry->positions.front().first <= sequence) {
    entry->base_position = entry->positions.front().second;
    entry->positions.pop_front();
  }
}

namespace {

absl::Status Diverged(absl::string_view scene, absl::string_view what) {
  return absl::DataLossError(
      absl::StrCat("replicated scene \"", scene, "\": ", what, "; the copy here must be rebuilt"));
}

}  // namespace

absl::Status Database::ApplyReplicated(absl::string_view scene, absl::string_view payload) {
  if (closed_) return Closed();
  absl::StatusOr<DecodedRecord> record = DecodeLogRecord(payload);
  if (!record.ok()) return Diverged(scene, record.status().message());
  if (record->scene != scene) {
    return Diverged(scene, absl::StrCat("a record of scene \"", record->scene, "\" in its log"));
  }
  if (!record->replicated.has_value()) return Diverged(scene, "a record without its position");
  if (record->type == DecodedRecord::Type::kCreateScene) {
    return ApplyReplicatedCreate(payload, *record);
  }
  if (record->type == DecodedRecord::Type::kDeleteScene) {
    return ApplyReplicatedDelete(payload, *record);
  }
  std::shared_ptr<Entry> entry = FindEntry(scene);
  if (entry != nullptr && !IsReplicated(entry->policy)) {
    return Diverged(scene, "the scene here is not replicated");
  }
  const ReplicationPosition& position = *record->replicated;
  if (entry != nullptr) {
    const std::optional<ReplicationPosition> last = LastPosition(entry.get());
    if (last.has_value() && last->incarnation == position.incarnation &&
        position.sequence <= last->sequence) {
      return absl::OkStatus();  // applied before (a redelivery)
    }
    if (last.has_value() && last->incarnation != position.incarnation &&
        record->type != DecodedRecord::Type::kImportScene) {
      return Diverged(scene, "a record of another incarnation of the scene");
    }
  }
  switch (record->type) {
    case DecodedRecord::Type::kUpdate:
      if (entry == nullptr) return Diverged(scene, "an update of a scene that is not here");
      return ApplyReplicatedUpdate(entry, payload, *record);
    case DecodedRecord::Type::kImportScene:
      return RestoreReplicated(scene, record->options, record->state, position);
    default:
      return Diverged(scene, "a record of a kind replicated scenes do not have");
  }
}

absl::Status Database::ApplyReplicatedUpdate(const std::shared_ptr<Entry>& entry,
                                             absl::string_view payload,
                                             const DecodedRecord& record) {
  const absl::string_view scene = record.scene;
  uint64_t sequence = 0;
  absl::StatusOr<ApplyResult> result = entry->scene->Apply(
      record.batch, record.client,
      [&](uint64_t new_version) -> absl::StatusOr<uint64_t> {
        if (new_version != record.version) {
          return Diverged(scene, absl::StrCat("its owner's batch made version ", record.version,
                                              ", here it makes ", new_version));
        }
        COLLIDE_ASSIGN_OR_RETURN(sequence, log_->Append(payload));
        NotePosition(entry.get(), sequence, *record.replicated);
        return sequence;
      },
      options_.apply_pool);
  if (!result.ok()) {
    if (absl::IsNotFound(result.status()) && entry->scene->deleted()) return result.status();
    const absl::Status status = ForWriter(result.status());
    if (status.code() == absl::StatusCode::kDataLoss) return status;
    if (!log_->status().ok()) return status;  // the local log stopped: writes are refused here
    return Diverged(
        scene, absl::StrCat("its owner's batch does not apply here: ", result.status().message()));
  }
  if (result->duplicate) return Diverged(scene, "its owner's batch is a duplicate here");
  const uint64_t record_bytes = kRecordHeaderBytes + payload.size();
  const uint64_t bytes = entry->log_bytes.fetch_add(record_bytes) + record_bytes;
  if (bytes >= entry->snapshot_threshold.load(std::memory_order_relaxed) &&
      !entry->snapshot_wanted.exchange(true)) {
    Wake();
  }
  return absl::OkStatus();
}

absl::Status Database::ApplyReplicatedCreate(absl::string_view payload,
                                             const DecodedRecord& record) {
  const std::string& name = record.scene;
  const ReplicationPosition& position = *record.replicated;
  if (std::shared_ptr<Entry> existing = FindEntry(name); existing != nullptr) {
    const std::optional<ReplicationPosition> last = LastPosition(existing.get());
    if (IsReplicated(existing->policy) && last.has_value() &&
        last->incarnation == position.incarnation) {
      return absl::OkStatus();  // created before (a redelivery)
    }
    // An older incarnation (its deletion was missed here), or a local scene of that name.
    if (!IsReplicated(existing->policy)) {
      return Diverged(name, "a scene of that name that is not replicated is here");
    }
    absl::Status dropped = DropReplicated(name);
    if (!dropped.ok() && !absl::IsNotFound(dropped)) return dropped;
  }
  if (absl::Status status = ValidateSceneName(name); !status.ok()) {
    return Diverged(name, status.message());
  }
  auto entry = std::make_shared<Entry>();
  entry->policy = Resolve(record.options.durability);
  if (!IsReplicated(entry->policy)) return Diverged(name, "its create record is not replicated");
  {
    WriterLock lock(&scenes_mu_);
    if (entries_.contains(name)) return Diverged(name, "created here meanwhile");
    if (entries_.size() >= options_.max_scenes) {
      return FieldStatus(
          absl::StatusCode::kResourceExhausted, "scene",
          absl::StrCat("the server holds its limit of ", options_.max_scenes, " scenes"));
    }
    absl::StatusOr<uint64_t> sequence = log_->Append(payload);
    if (!sequence.ok()) return ForWriter(sequence.status());
    entry->create_sequence = *sequence;
    NotePosition(entry.get(), entry->create_sequence, position);
    entry->scene = std::make_shared<Scene>(name, record.options, entry->create_sequence);
    entry->snapshot_threshold = ThresholdFor(0);
    entries_.emplace(name, entry);
  }
  ForgetMovedAway(name);
  return absl::OkStatus();
}

absl::Status Database::ApplyReplicatedDelete(absl::string_view payload,
                                             const DecodedRecord& record) {
  const std::string& name = record.scene;
  std::shared_ptr<Entry> entry = FindEntry(name);
  if (entry == nullptr) return absl::OkStatus();
  const std::optional<ReplicationPosition> last = LastPosition(entry.get());
  if (!IsReplicated(entry->policy) ||
      (last.has_value() && last->incarnation != record.replicated->incarnation)) {
    return absl::OkStatus();  // the deletion of another incarnation
  }
  uint64_t sequence = 0;
  const absl::Status status = [&]() -> absl::Status {
    WriterLock lock(&scenes_mu_);
    auto it = entries_.find(name);
    if (it == entries_.end() || it->second != entry) return absl::OkStatus();
    COLLIDE_RETURN_IF_ERROR(entry->scene->MarkDeleted([&]() -> absl::Status {
      COLLIDE_ASSIGN_OR_RETURN(sequence, log_->Append(payload));
      return absl::OkStatus();
    }));
    entries_.erase(it);
    MutexLock state(&state_mu_);
    zombies_.push_back(Zombie{.scene = name, .delete_sequence = sequence});
    return absl::OkStatus();
  }();
  if (!status.ok()) return ForWriter(status);
  Wake();
  return absl::OkStatus();
}

absl::Status Database::RestoreReplicated(absl::string_view name, const SceneOptions& options,
                                         const SceneState& state,
                                         const ReplicationPosition& position) {
  std::promise<absl::Status> promise;
  std::future<absl::Status> future = promise.get_future();
  ImportRecord(name, options, state, /*replace=*/true, &position,
               [&promise](absl::Status status) { promise.set_value(std::move(status)); });
  return future.get();
}

absl::Status Database::DropReplicated(absl::string_view name) {
  if (closed_) return Closed();
  uint64_t sequence = 0;
  const absl::Status status = [&]() -> absl::Status {
    WriterLock lock(&scenes_mu_);
    auto it = entries_.find(name);
    if (it == entries_.end()) return NoScene(name);
    std::shared_ptr<Entry> entry = it->second;
    if (!IsReplicated(entry->policy)) {
      return FieldStatus(absl::StatusCode::kFailedPrecondition, "scene",
                         absl::StrCat("scene \"", name, "\" is not replicated"));
    }
    COLLIDE_RETURN_IF_ERROR(entry->scene->MarkDeleted([&]() -> absl::Status {
      COLLIDE_ASSIGN_OR_RETURN(sequence, log_->Append(EncodeDeleteSceneRecord(name)));
      return absl::OkStatus();
    }));
    entries_.erase(it);
    MutexLock state(&state_mu_);
    zombies_.push_back(Zombie{.scene = std::string(name), .delete_sequence = sequence});
    return absl::OkStatus();
  }();
  if (!status.ok()) return ForWriter(status);
  Wake();
  return absl::OkStatus();
}

void Database::SetReadable(absl::string_view name, bool readable) {
  std::shared_ptr<Entry> entry = FindEntry(name);
  if (entry == nullptr || !IsReplicated(entry->policy)) return;
  entry->readable.store(readable, std::memory_order_release);
}

std::optional<ReplicationPosition> Database::ReplicatedPosition(absl::string_view name) const {
  std::shared_ptr<Entry> entry = FindEntry(name);
  if (entry == nullptr || !IsReplicated(entry->policy)) return std::nullopt;
  return LastPosition(entry.get());
}

std::vector<ReplicatedSceneFigures> Database::ReplicatedScenes() const {
  std::vector<std::shared_ptr<Entry>> entries;
  {
    ReaderLock lock(&scenes_mu_);
    for (const auto& [name, entry] : entries_) {
      if (IsReplicated(entry->policy)) entries.push_back(entry);
    }
  }
  std::vector<ReplicatedSceneFigures> out;
  out.reserve(entries.size());
  for (const auto& entry : entries) {
    out.push_back(ReplicatedSceneFigures{.name = entry->scene->name(),
                                         .options = entry->scene->options(),
                                         .position = LastPosition(entry.get()),
                                         .readable = entry->readable.load()});
  }
  std::sort(out.begin(), out.end(),
            [](const ReplicatedSceneFigures& a, const ReplicatedSceneFigures& b) {
              return a.name < b.name;
            });
  return out;
}

void Database::Wake() {
  {
    MutexLock lock(&wake_mu_);
    wake_ = true;
  }
  wake_cv_.NotifyOne();
}

void Database::RunMaintenance() {
  while (true) {
    {
      std::unique_lock<Mutex> lock(wake_mu_);
      wake_cv_.WaitFor(lock, options_.maintenance_interval,
                       [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return wake_ || stopping_; });
      if (stopping_) return;
      wake_ = false;
    }
    // After a fatal log error nothing may be relied on; the process is stopping.
    if (!log_->status().ok()) return;
    absl::Status status;
    {
      MutexLock lock(&maintenance_mu_);
      status = Maintain(/*snapshot_all=*/false);
    }
    // A failed pass (say, a full disk while writing a snapshot) is retried on the next one; the
    // log itself is unaffected.
    {
      MutexLock lock(&state_mu_);
      maintenance_error_ = status;
    }
    // Acknowledgements held back while the log was over max_log_bytes go out after each pass
    // (those still over it wait for the next one).
    ReleaseDeferredAcks(/*final=*/false);
  }
}

absl::Status Database::RemoveZombieFiles() {
  std::vector<Zombie> due;
  const uint64_t synced = log_->synced_sequence();
  {
    MutexLock lock(&state_mu_);
    for (const Zombie& zombie : zombies_) {
      if (zombie.delete_sequence <= synced) due.push_back(zombie);
    }
  }
  if (due.empty()) return absl::OkStatus();
  COLLIDE_ASSIGN_OR_RETURN(std::vector<std::string> names, fs_->ListDir(dir_));
  for (const std::string& name : names) {
    std::string scene;
    uint64_t sequence = 0;
    if (!ParseSnapshotFileName(name, &scene, &sequence)) continue;
    for (const Zombie& zombie : due) {
      // Files of a later incarnation of the same name are newer than the delete record.
      if (scene == zombie.scene && sequence < zombie.delete_sequence) {
        absl::Status status = fs_->Delete(JoinPath(dir_, name));
        if (!status.ok() && !absl::IsNotFound(status)) return status;
      }
    }
  }
  COLLIDE_RETURN_IF_ERROR(fs_->SyncDir(dir_));
  MutexLock lock(&state_mu_);
  zombies_.erase(std::remove_if(zombies_.begin(), zombies_.end(),
                                [&](const Zombie& z) { return z.delete_sequence <= synced; }),
                 zombies_.end());
  return absl::OkStatus();
}

absl::Status Database::Snapshot(Entry* entry) {
  const auto start = std::chrono::steady_clock::now();
  entry->snapshot_wanted = false;
  const uint64_t counted = entry->log_bytes.load();
  const SceneState state = entry->scene->CaptureState();
  // A deleted scene's files are the zombie pass's business.
  if (entry->scene->deleted()) return absl::OkStatus();
  if (entry->snapshot_sequence != 0 && state.log_position <= entry->snapshot_sequence) {
    entry->log_bytes.fetch_sub(counted);
    return absl::OkStatus();  // nothing new since the last snapshot
  }
  // A snapshot must never be ahead of the durable log: recovery continues the log after it.
  COLLIDE_RETURN_IF_ERROR(log_->WaitSynced(state.log_position));
  std::string payload =
      EncodeSnapshot(entry->scene->name(), entry->scene->options(), entry->create_sequence, state);
  // A replicated scene's snapshot says where in the replicated log it stands.
  std::optional<ReplicationPosition> covers;
  if (IsReplicated(entry->policy)) {
    covers = PositionAt(entry, state.log_position);
    if (covers.has_value()) AppendReplicationPosition(*covers, /*snapshot=*/true, &payload);
  }
  COLLIDE_ASSIGN_OR_RETURN(
      WrittenSnapshot written,
      WriteSnapshotFile(fs_, dir_, entry->scene->name(), state.log_position, payload));
  const std::string old = std::move(entry->snapshot_file);
  entry->snapshot_file = written.name;
  entry->snapshot_sequence = state.log_position;
  entry->snapshot_bytes = written.bytes;
  entry->snapshot_threshold = ThresholdFor(written.bytes);
  entry->log_bytes.fetch_sub(counted);
  ++snapshots_written_;
  snapshot_bytes_written_ += written.bytes;
  histograms_.snapshot_ns.Observe(static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count()));
  if (covers.has_value()) {
    TrimPositions(entry, state.log_position);
    // Only a checked copy: an unchecked one may hold records the replicated log never stored.
    if (options_.replication != nullptr && entry->readable.load(std::memory_order_acquire)) {
      options_.replication->OnSnapshot(entry->scene->name(), *covers, payload);
    }
  }
  if (options_.on_snapshot) {
    options_.on_snapshot(
        SnapshotEvent{.scene = entry->scene->name(),
                      .bytes = written.bytes,
                      .duration = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::steady_clock::now() - start)});
  }
  if (!old.empty() && old != written.name) {
    // The new snapshot is durable; losing this deletion in a crash only leaves a stale file that
    // the next start deletes.
    absl::Status status = fs_->Delete(JoinPath(dir_, old));
    if (!status.ok() && !absl::IsNotFound(status)) return status;
  }
  return absl::OkStatus();
}

absl::Status Database::Maintain(bool snapshot_all) {
  absl::Status first_error;
  auto note = [&first_error](const absl::Status& status) {
    if (first_error.ok()) first_error = status;
  };
  note(RemoveZombieFiles());

  // A consistent picture of what needs the log: read under the scene index's lock, so that no
  // scene is half created or deleted (those hold it exclusively through their log append), and
  // the log's end first, so that anything appended later is kept.
  uint64_t limit;
  std::vector<std::shared_ptr<Entry>> entries;
  std::vector<Zombie> zombies;
  {
    ReaderLock lock(&scenes_mu_);
    limit = log_->last_sequence() + 1;
    for (const auto& [name, entry] : entries_) entries.push_back(entry);
    MutexLock state(&state_mu_);
    zombies = zombies_;
  }
  // Where each scene's needs start: after its snapshot if it changed since, at its creation if
  // it has no snapshot, nowhere if its snapshot is current.
  auto needed_from = [&](const Entry& entry) -> uint64_t {
    if (entry.snapshot_sequence == 0) return entry.create_sequence;
    if (entry.scene->log_position() > entry.snapshot_sequence) return entry.snapshot_sequence + 1;
    return std::numeric_limits<uint64_t>::max();
  };

  std::vector<Entry*> due;
  for (const auto& entry : entries) {
    if (snapshot_all || entry->snapshot_wanted || entry->log_bytes >= entry->snapshot_threshold) {
      due.push_back(entry.get());
    }
  }
  if (!snapshot_all && log_->appended_bytes() > options_.max_log_bytes) {
    // The log is long: snapshot the scene that holds its oldest part.
    Entry* oldest = nullptr;
    uint64_t oldest_from = std::numeric_limits<uint64_t>::max();
    for (const auto& entry : entries) {
      const uint64_t from = needed_from(*entry);
      if (from < oldest_from) {
        oldest_from = from;
        oldest = entry.get();
      }
    }
    if (oldest != nullptr && std::find(due.begin(), due.end(), oldest) == due.end()) {
      due.push_back(oldest);
    }
  }
  for (Entry* entry : due) note(Snapshot(entry));

  uint64_t keep_from = limit;
  for (const auto& entry : entries) keep_from = std::min(keep_from, needed_from(*entry));
  for (const Zombie& zombie : zombies) keep_from = std::min(keep_from, zombie.delete_sequence);
  absl::StatusOr<int> deleted = log_->DeleteSegmentsBefore(keep_from);
  if (deleted.ok()) {
    segments_deleted_ += static_cast<uint64_t>(*deleted);
  } else {
    note(deleted.status());
  }
  note(RemoveUnusedAssetFiles());
  return first_error;
}

// ---------------------------------------------------------------------------------------------
// Assets.

void Database::RunOnAssetThread(absl::AnyInvocable<void()> task) {
  {
    MutexLock lock(&asset_queue_mu_);
    asset_queue_.push_back(std::move(task));
  }
  asset_queue_cv_.NotifyOne();
}

void Database::RunAssetThread() {
  while (true) {
    absl::AnyInvocable<void()> task;
    {
      std::unique_lock<Mutex> lock(asset_queue_mu_);
      asset_queue_cv_.Wait(lock, [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return !asset_queue_.empty() || asset_thread_stopping_;
      });
      if (asset_queue_.empty()) return;  // stopping, and nothing left to run
      task = std::move(asset_queue_.front());
      asset_queue_.pop_front();
    }
    task();
  }
}

absl::StatusOr<std::shared_ptr<const Asset>> Database::PrepareContent(AssetSource source,
                                                                      const std::string& sha256) {
  std::shared_ptr<const Asset> asset;
  {
    MutexLock lock(&contents_mu_);
    Content& content = contents_[sha256];
    ++content.pins;
    asset = content.built.lock();
  }
  if (asset == nullptr) {
    asset = Asset::Build(std::move(source), sha256);
    MutexLock lock(&contents_mu_);
    Content& content = contents_[sha256];
    content.built = asset;
    content.source_bytes = asset->source_bytes();
    content.triangles = asset->triangle_count();
  }
  // The file: written unless it is on disk. The maintenance pass that deletes unused files holds
  // asset_files_mu_ too, so a file is never deleted between this check and the record.
  MutexLock files(&asset_files_mu_);
  bool on_disk = false;
  {
    MutexLock lock(&contents_mu_);
    on_disk = contents_[sha256].on_disk;
  }
  if (!on_disk) {
    absl::StatusOr<uint64_t> written = WriteAssetFile(fs_, dir_, *asset);
    if (!written.ok()) {
      Unpin(sha256);
      return written.status();
    }
    MutexLock lock(&contents_mu_);
    contents_[sha256].on_disk = true;
  }
  return asset;
}

void Database::Unpin(const std::string& sha256) {
  MutexLock lock(&contents_mu_);
  auto it = contents_.find(sha256);
  if (it == contents_.end()) return;
  Content& content = it->second;
  --content.pins;
  if (content.tables > 0 || content.pins > 0) return;
  if (!content.on_disk) {
    contents_.erase(it);
  } else if (content.dropped_at == 0) {
    // Written for a record that was never appended: no record names it (the log's end bounds
    // any that might).
    content.dropped_at = std::max<uint64_t>(log_->last_sequence(), 1);
  }
}

void Database::HoldContent(const Asset& asset) {
  Content& content = contents_[asset.sha256()];
  ++content.tables;
  content.dropped_at = 0;
  content.source_bytes = asset.source_bytes();
  content.triangles = asset.triangle_count();
  if (content.built.expired()) content.built = asset.shared_from_this();
}

void Database::DropContent(const std::string& sha256, uint64_t sequence) {
  MutexLock lock(&contents_mu_);
  auto it = contents_.find(sha256);
  if (it == contents_.end() || it->second.tables == 0) return;
  if (--it->second.tables == 0) it->second.dropped_at = sequence;
}

uint64_t Database::HeldCountLocked() const {
  uint64_t count = 0;
  for (const auto& [sha256, content] : contents_) {
    if (content.tables > 0) ++count;
  }
  return count;
}

uint64_t Database::HeldBytesLocked() const {
  uint64_t bytes = 0;
  for (const auto& [sha256, content] : contents_) {
    if (content.tables > 0) bytes += content.source_bytes;
  }
  return bytes;
}

StoredAssets Database::stored_assets() const {
  StoredAssets out;
  MutexLock lock(&contents_mu_);
  for (const auto& [sha256, content] : contents_) {
    if (content.on_disk) ++out.files;
    if (content.tables == 0) continue;
    ++out.contents;
    out.triangles += content.triangles;
    out.source_bytes += content.source_bytes;
    if (std::shared_ptr<const Asset> built = content.built.lock()) {
      out.memory_bytes += built->memory_bytes();
    }
  }
  return out;
}

absl::Status Database::CheckAssetRoom(absl::string_view scene, absl::string_view name,
                                      const AssetSize& size) const {
  if (closed_) return Closed();
  std::shared_ptr<Entry> entry = FindEntry(scene);
  if (entry == nullptr) return NoSceneForWriter(scene);
  if (entry->scene->deleted()) return NoScene(scene);
  if (const std::string moved_to = entry->scene->moved_to(); !moved_to.empty()) {
    return MovedError(scene, moved_to);
  }
  if (IsReplicated(entry->policy)) return ReplicatedWithoutAssets(scene);
  // A name the scene holds: its content decides (the same is a retry, other is ALREADY_EXISTS).
  if (entry->scene->GetAsset(name).has_value()) return absl::OkStatus();
  const SceneStats stats = entry->scene->Stats();
  const SceneAssetLimits& limits = options_.scene_assets;
  const uint32_t max_assets = std::min<uint32_t>(limits.max_assets, kMaxAssetSlots);
  if (stats.asset_count >= max_assets) {
    return FieldStatus(absl::StatusCode::kResourceExhausted, "name",
                       absl::StrCat("scene \"", scene, "\" holds its limit of ", max_assets,
                                    " assets (--max_assets_per_scene)"));
  }
  const uint64_t bytes = size.SourceBytes();
  if (bytes > limits.max_bytes || stats.asset_bytes > limits.max_bytes - bytes) {
    return FieldStatus(absl::StatusCode::kResourceExhausted, "name",
                       absl::StrCat("scene \"", scene, "\" would hold ",
                                    stats.asset_bytes + std::min(bytes, limits.max_bytes),
                                    "+ bytes of assets, over its limit of ", limits.max_bytes,
                                    " (--max_asset_bytes_per_scene)"));
  }
  MutexLock lock(&contents_mu_);
  const uint64_t held = HeldBytesLocked();
  if (bytes > options_.max_asset_bytes || held > options_.max_asset_bytes - bytes) {
    return ServerAssetsFull(held, std::min(bytes, options_.max_asset_bytes),
                            options_.max_asset_bytes);
  }
  return absl::OkStatus();
}

void Database::AddAsset(absl::string_view scene, std::string name, AssetSource source,
                        std::string expected_sha256, AssetCallback done) {
  if (closed_) return done(Closed());
  RunOnAssetThread([this, scene = std::string(scene), name = std::move(name),
                    source = std::move(source), expected_sha256 = std::move(expected_sha256),
                    done = std::move(done)]() mutable {
    if (closed_) return done(Closed());
    std::shared_ptr<Entry> entry = FindEntry(scene);
    if (entry == nullptr) return done(NoSceneForWriter(scene));
    if (IsReplicated(entry->policy)) return done(ReplicatedWithoutAssets(scene));
    std::string sha256 = AssetSha256(source);
    if (!expected_sha256.empty() && expected_sha256 != sha256) {
      return done(WrongSha256("sha256", expected_sha256, sha256));
    }
    // The scene's checks first: nothing is built or written for an upload it would refuse.
    absl::StatusOr<bool> adds =
        entry->scene->CheckAddAsset(name, sha256, source.size.SourceBytes(), options_.scene_assets);
    if (!adds.ok()) return done(ForWriter(std::move(adds).status()));
    if (!*adds) {
      std::optional<SceneAssetInfo> held = entry->scene->GetAsset(name);
      if (held.has_value()) return done(AddedAsset{.asset = held->asset, .already_present = true});
    }
    absl::StatusOr<std::shared_ptr<const Asset>> asset = PrepareContent(std::move(source), sha256);
    if (!asset.ok()) return done(std::move(asset).status());
    uint64_t sequence = 0;
    uint64_t record_bytes = 0;
    absl::StatusOr<bool> added = entry->scene->AddAsset(
        name, *asset, options_.scene_assets, [&]() -> absl::StatusOr<uint64_t> {
          MutexLock lock(&contents_mu_);
          const Content& content = contents_[sha256];
          const uint64_t held = HeldBytesLocked();
          if (content.tables == 0 && held + content.source_bytes > options_.max_asset_bytes) {
            return ServerAssetsFull(held, content.source_bytes, options_.max_asset_bytes);
          }
          if (const uint64_t held_count = HeldCountLocked();
              content.tables == 0 && held_count + 1 > options_.max_assets) {
            return ServerAssetCountFull(held_count, 1, options_.max_assets);
          }
          const std::string payload = EncodeAddAssetRecord(scene, name, **asset);
          record_bytes = kRecordHeaderBytes + payload.size();
          COLLIDE_ASSIGN_OR_RETURN(sequence, log_->Append(payload));
          HoldContent(**asset);
          return sequence;
        });
    Unpin(sha256);
    if (!added.ok()) return done(ForWriter(std::move(added).status()));
    if (!*added) {
      // Another upload of this name and content got in first.
      std::optional<SceneAssetInfo> held = entry->scene->GetAsset(name);
      return done(
          AddedAsset{.asset = held.has_value() ? held->asset : *asset, .already_present = true});
    }
    const uint64_t bytes = entry->log_bytes.fetch_add(record_bytes) + record_bytes;
    if (bytes >= entry->snapshot_threshold.load(std::memory_order_relaxed) &&
        !entry->snapshot_wanted.exchange(true)) {
      Wake();
    }
    AcknowledgeStatus(DurabilityPolicy::kAlways, sequence,
                      [asset = *asset, done = std::move(done)](absl::Status status) mutable {
                        if (!status.ok()) return done(std::move(status));
                        done(AddedAsset{.asset = std::move(asset), .already_present = false});
                      });
  });
}

absl::StatusOr<AddedAsset> Database::AddAsset(absl::string_view scene, std::string name,
                                              AssetSource source, std::string expected_sha256) {
  std::promise<absl::StatusOr<AddedAsset>> promise;
  std::future<absl::StatusOr<AddedAsset>> future = promise.get_future();
  AddAsset(scene, std::move(name), std::move(source), std::move(expected_sha256),
           [&promise](absl::StatusOr<AddedAsset> added) { promise.set_value(std::move(added)); });
  return future.get();
}

void Database::DeleteAsset(absl::string_view scene, absl::string_view name, DoneCallback done) {
  if (closed_) return done(Closed());
  std::shared_ptr<Entry> entry = FindEntry(scene);
  if (entry == nullptr) return done(NoSceneForWriter(scene));
  uint64_t sequence = 0;
  uint64_t record_bytes = 0;
  absl::StatusOr<std::shared_ptr<const Asset>> deleted =
      entry->scene->DeleteAsset(name, [&]() -> absl::StatusOr<uint64_t> {
        const std::string payload = EncodeDeleteAssetRecord(scene, name);
        record_bytes = kRecordHeaderBytes + payload.size();
        COLLIDE_ASSIGN_OR_RETURN(sequence, log_->Append(payload));
        return sequence;
      });
  if (!deleted.ok()) return done(ForWriter(std::move(deleted).status()));
  DropContent((*deleted)->sha256(), sequence);
  const uint64_t bytes = entry->log_bytes.fetch_add(record_bytes) + record_bytes;
  if (bytes >= entry->snapshot_threshold.load(std::memory_order_relaxed) &&
      !entry->snapshot_wanted.exchange(true)) {
    Wake();
  }
  AcknowledgeStatus(DurabilityPolicy::kAlways, sequence, std::move(done));
}

absl::Status Database::DeleteAsset(absl::string_view scene, absl::string_view name) {
  std::promise<absl::Status> promise;
  std::future<absl::Status> future = promise.get_future();
  DeleteAsset(scene, name,
              [&promise](absl::Status status) { promise.set_value(std::move(status)); });
  return future.get();
}

absl::Status Database::RemoveUnusedAssetFiles() {
  const std::vector<SegmentInfo> segments = log_->Segments();
  uint64_t first_kept = log_->last_sequence() + 1;
  for (const SegmentInfo& segment : segments) {
    first_kept = std::min(first_kept, segment.first_sequence);
  }
  MutexLock files(&asset_files_mu_);
  std::vector<std::string> due;
  {
    MutexLock lock(&contents_mu_);
    for (auto& [sha256, content] : contents_) {
      // No table holds it, nothing in progress needs it, and the log no longer reaches the
      // record that dropped it (nor, so, any record or snapshot that named it).
      if (content.on_disk && content.tables == 0 && content.pins == 0 && content.dropped_at != 0 &&
          content.dropped_at < first_kept) {
        content.on_disk = false;
        due.push_back(sha256);
      }
    }
  }
  if (due.empty()) return absl::OkStatus();
  absl::Status first_error;
  for (const std::string& sha256 : due) {
    absl::Status status = fs_->Delete(JoinPath(dir_, AssetFileName(sha256)));
    if (!status.ok() && !absl::IsNotFound(status) && first_error.ok()) first_error = status;
  }
  if (absl::Status status = fs_->SyncDir(dir_); !status.ok() && first_error.ok()) {
    first_error = status;
  }
  MutexLock lock(&contents_mu_);
  for (const std::string& sha256 : due) {
    auto it = contents_.find(sha256);
    if (it != contents_.end() && !it->second.on_disk && it->second.tables == 0 &&
        it->second.pins == 0) {
      contents_.erase(it);
    }
  }
  return first_error;
}

}  // namespace collide
