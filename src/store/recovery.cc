#include "store/recovery.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "scene/scene_name.h"
#include "store/asset_files.h"
#include "store/log_codec.h"
#include "store/record_format.h"
#include "store/snapshot_file.h"
#include "store/store_files.h"

namespace collide {
namespace {

struct SnapshotName {
  uint64_t sequence = 0;
  std::string name;
};

// The state of replay: scenes by name, in an ordered map so that the result is deterministic.
using SceneMap = std::map<std::string, RecoveredScene, std::less<>>;

// Reads and builds asset contents, each once.
class AssetLoader {
 public:
  AssetLoader(FileSystem* fs, const std::string& dir, RecoveredState* out)
      : fs_(fs), dir_(dir), out_(out) {}

  // The content `ref` names, as `ref` describes it.
  absl::StatusOr<std::shared_ptr<const Asset>> Load(const StoredAssetRef& ref) {
    auto it = out_->assets.find(ref.sha256);
    std::shared_ptr<const Asset> asset;
    if (it != out_->assets.end()) {
      asset = it->second;
    } else {
      absl::StatusOr<AssetSource> source = ReadAssetFile(fs_, dir_, ref.sha256);
      if (absl::IsNotFound(source.status())) {
        return absl::DataLossError(absl::StrCat("asset \"", ref.name, "\": its file ",
                                                JoinPath(dir_, AssetFileName(ref.sha256)),
                                                " is missing"));
      }
      COLLIDE_RETURN_IF_ERROR(source.status());
      asset = Asset::Build(*std::move(source), ref.sha256);
      out_->assets.emplace(ref.sha256, asset);
      ++out_->report.assets_loaded;
    }
    if (asset->kind() != ref.kind || asset->source_bytes() != ref.source_bytes) {
      return absl::DataLossError(absl::StrCat("asset \"", ref.name, "\": its file holds a ",
                                              AssetKindName(asset->kind()), " of ",
                                              asset->source_bytes(), " bytes, not what names it"));
    }
    return asset;
  }

  // The scene state's assets from `refs`.
  absl::Status LoadAll(const std::vector<StoredAssetRef>& refs, SceneState* state) {
    state->assets.reserve(refs.size());
    for (const StoredAssetRef& ref : refs) {
      COLLIDE_ASSIGN_OR_RETURN(std::shared_ptr<const Asset> asset, Load(ref));
      state->assets.push_back(NamedAsset{ref.name, std::move(asset)});
    }
    return absl::OkStatus();
  }

 private:
  FileSystem* fs_;
  const std::string& dir_;
  RecoveredState* out_;
};

// The limits an asset is re-added with during replay: none (it was accepted once).
constexpr SceneAssetLimits kReplayAssetLimits{.max_assets = kMaxAssetSlots,
                                              .max_bytes = ~uint64_t{0}};

absl::Status Corruption(const std::string& path, uint64_t offset, absl::string_view what) {
  return absl::DataLossError(absl::StrCat(path, " at offset ", offset, ": ", what,
                                          "; refusing to start (the data directory needs "
                                          "repair or a restore from backup)"));
}

// Applies one log record to the scenes. The rules (see DESIGN in database.h): a scene's records
// at or below its snapshot's sequence are already in the snapshot; records of a scene that does
// not exist belong to an incarnation that was deleted later (its create record was dropped with
// old segments); a delete only removes an incarnation created before it.
// Under RecoveryMode::kSkip, an update that no longer applies is replaced by an empty batch (the
// scene's version still moves past it) and `*skipped` gets the reason.
absl::Status Replay(const DecodedRecord& record, uint64_t sequence, uint64_t record_bytes,
                    RecoveryMode mode, AssetLoader* assets, SceneMap* scenes,
                    std::vector<std::string>* stale, RecoveryReport* report, std::string* skipped) {
  auto it = scenes->find(record.scene);
  const bool exists = it != scenes->end();
  switch (record.type) {
    case DecodedRecord::Type::kCreateScene: {
      if (exists) {
        if (sequence <= it->second.snapshot_sequence) {
          ++report->records_skipped;
          return absl::OkStatus();
        }
        return absl::DataLossError(
            absl::StrCat("creates scene \"", record.scene, "\", which exists"));
      }
      if (absl::Status status = ValidateSceneName(record.scene); !status.ok()) {
        return absl::DataLossError(status.message());
      }
      RecoveredScene created;
      created.scene = std::make_unique<Scene>(record.scene, record.options, sequence);
      created.create_sequence = sequence;
      created.log_bytes = record_bytes;
      created.replicated = record.replicated;
      scenes->emplace(record.scene, std::move(created));
      ++report->records_replayed;
      return absl::OkStatus();
    }
    case DecodedRecord::Type::kImportScene: {
      if (exists) {
        if (sequence <= it->second.snapshot_sequence) {
          ++report->records_skipped;  // the snapshot holds the import (or later)
          return absl::OkStatus();
        }
        if (it->second.create_sequence >= sequence) {
          return absl::DataLossError(
              absl::StrCat("imports scene \"", record.scene, "\", created later"));
        }
        // The import replaced the incarnation before it.
        if (!it->second.snapshot_file.empty()) stale->push_back(it->second.snapshot_file);
        scenes->erase(it);
      }
      if (absl::Status status = ValidateSceneName(record.scene); !status.ok()) {
        return absl::DataLossError(status.message());
      }
      if (record.state.bodies.size() > record.options.max_bodies) {
        return absl::DataLossError(absl::StrCat("import of scene \"", record.scene,
                                                "\" holds more bodies than its max_bodies"));
      }
      SceneState state = record.state;
      state.log_position = sequence;
      COLLIDE_RETURN_IF_ERROR(assets->LoadAll(record.assets, &state));
      absl::StatusOr<std::unique_ptr<Scene>> scene =
          Scene::Restore(record.scene, record.options, state);
      if (!scene.ok()) {
        return absl::DataLossError(
            absl::StrCat("import of scene \"", record.scene, "\": ", scene.status().message()));
      }
      RecoveredScene created;
      created.scene = *std::move(scene);
      created.create_sequence = sequence;
      created.log_bytes = record_bytes;
      created.replicated = record.replicated;
      scenes->emplace(record.scene, std::move(created));
      ++report->records_replayed;
      return absl::OkStatus();
    }
    case DecodedRecord::Type::kDeleteScene: {
      if (!exists || it->second.create_sequence >= sequence) {
        ++report->records_skipped;
        return absl::OkStatus();
      }
      if (!it->second.snapshot_file.empty()) stale->push_back(it->second.snapshot_file);
      scenes->erase(it);
      ++report->records_replayed;
      return absl::OkStatus();
    }
    case DecodedRecord::Type::kMoveScene: {
      if (!exists || sequence <= it->second.snapshot_sequence) {
        ++report->records_skipped;
        return absl::OkStatus();
      }
      auto at_sequence = [sequence]() -> absl::StatusOr<uint64_t> { return sequence; };
      // A log written before re-targets were refused may move a marked scene elsewhere: replayed
      // as it was applied then (the mark cleared, then set).
      if (const std::string current = it->second.scene->moved_to();
          !current.empty() && !record.destination.empty() && current != record.destination) {
        it->second.scene->SetMovedTo("", at_sequence).IgnoreError();
      }
      absl::Status status = it->second.scene->SetMovedTo(record.destination, at_sequence);
      if (!status.ok()) {
        return absl::DataLossError(
            absl::StrCat("move mark of scene \"", record.scene, "\": ", status.message()));
      }
      it->second.log_bytes += record_bytes;
      ++report->records_replayed;
      return absl::OkStatus();
    }
    case DecodedRecord::Type::kAddAsset:
    case DecodedRecord::Type::kDeleteAsset: {
      if (!exists || sequence <= it->second.snapshot_sequence) {
        ++report->records_skipped;
        return absl::OkStatus();
      }
      auto at_sequence = [sequence]() -> absl::StatusOr<uint64_t> { return sequence; };
      absl::Status status;
      if (record.type == DecodedRecord::Type::kAddAsset) {
        const StoredAssetRef& ref = record.assets.front();
        absl::StatusOr<std::shared_ptr<const Asset>> asset = assets->Load(ref);
        status = asset.status();
        if (status.ok()) {
          status = it->second.scene
                       ->AddAsset(ref.name, *std::move(asset), kReplayAssetLimits, at_sequence)
                       .status();
        }
      } else {
        status = it->second.scene->DeleteAsset(record.asset_name, at_sequence).status();
      }
      if (!status.ok()) {
        return absl::DataLossError(
            absl::StrCat("asset record of scene \"", record.scene, "\": ", status.message()));
      }
      it->second.log_bytes += record_bytes;
      ++report->records_replayed;
      return absl::OkStatus();
    }
    case DecodedRecord::Type::kUpdate: {
      if (!exists || sequence <= it->second.snapshot_sequence) {
        ++report->records_skipped;
        return absl::OkStatus();
      }
      RecoveredScene& scene = it->second;
      auto at_sequence = [sequence](uint64_t) -> absl::StatusOr<uint64_t> { return sequence; };
      absl::StatusOr<ApplyResult> result =
          scene.scene->Apply(record.batch, record.client, at_sequence);
      if (!result.ok() && mode == RecoveryMode::kSkip) {
        *skipped = std::string(result.status().message());
        result = scene.scene->Apply(UpdateBatch{}, ClientTag{}, at_sequence);
      }
      if (!result.ok()) {
        return absl::DataLossError(absl::StrCat("update of scene \"", record.scene,
                                                "\" no longer applies: ", result.status().message(),
                                                " (recovery mode skip would drop it)"));
      }
      if (result->duplicate || result->version != record.version) {
        return absl::DataLossError(absl::StrCat(
            "update of scene \"", record.scene, "\" produced version ", result->version,
            result->duplicate ? " (as a duplicate)" : "", ", the log says ", record.version));
      }
      scene.log_bytes += record_bytes;
      if (record.replicated.has_value()) scene.replicated = record.replicated;
      ++report->records_replayed;
      return absl::OkStatus();
    }
  }
  return absl::DataLossError("unknown record type");
}

}  // namespace

absl::StatusOr<RecoveredState> RecoverDirectory(FileSystem* fs, const std::string& dir,
                                                RecoveryMode mode) {
  RecoveredState out;
  COLLIDE_ASSIGN_OR_RETURN(std::vector<std::string> names, fs->ListDir(dir));
  std::sort(names.begin(), names.end());

  // Sort the directory's files: segments, snapshots by scene, leftovers of interrupted writes.
  std::vector<SegmentInfo> segments;
  std::map<std::string, std::vector<SnapshotName>, std::less<>> snapshots;
  AssetLoader assets(fs, dir, &out);
  for (const std::string& name : names) {
    uint64_t sequence = 0;
    std::string scene;
    std::string sha256;
    if (absl::EndsWith(name, kTempSuffix)) {
      COLLIDE_RETURN_IF_ERROR(fs->Delete(JoinPath(dir, name)));
      ++out.report.temp_files_deleted;
    } else if (ParseAssetFileName(name, &sha256)) {
      out.asset_files.push_back(sha256);
    } else if (ParseSegmentFileName(name, &sequence)) {
      segments.push_back(SegmentInfo{.first_sequence = sequence, .name = name, .bytes = 0});
    } else if (ParseSnapshotFileName(name, &scene, &sequence)) {
      snapshots[scene].push_back(SnapshotName{.sequence = sequence, .name = name});
    }
  }
  std::sort(segments.begin(), segments.end(), [](const SegmentInfo& a, const SegmentInfo& b) {
    return a.first_sequence < b.first_sequence;
  });

  // Each scene's newest snapshot; older ones are superseded.
  SceneMap scenes;
  uint64_t max_covered = 0;
  for (auto& [scene_name, files] : snapshots) {
    std::sort(files.begin(), files.end(),
              [](const SnapshotName& a, const SnapshotName& b) { return a.sequence > b.sequence; });
    for (size_t i = 1; i < files.size(); ++i) out.stale_files.push_back(files[i].name);
    const SnapshotName& newest = files.front();
    if (absl::Status status = ValidateSceneName(scene_name); !status.ok()) {
      return absl::DataLossError(
          absl::StrCat(JoinPath(dir, newest.name), ": not the snapshot of a valid scene name"));
    }
    COLLIDE_ASSIGN_OR_RETURN(DecodedSnapshot snapshot,
                             ReadSnapshotFile(fs, dir, newest.name, scene_name, newest.sequence));
    for (const StoredAssetRef& ref : snapshot.assets) out.named_contents.insert(ref.sha256);
    if (absl::Status status = assets.LoadAll(snapshot.assets, &snapshot.state); !status.ok()) {
      return absl::DataLossError(absl::StrCat(JoinPath(dir, newest.name), ": ", status.message()));
    }
    absl::StatusOr<std::unique_ptr<Scene>> scene =
        Scene::Restore(scene_name, snapshot.options, snapshot.state);
    if (!scene.ok()) {
      return absl::DataLossError(
          absl::StrCat(JoinPath(dir, newest.name), ": ", scene.status().message()));
    }
    COLLIDE_ASSIGN_OR_RETURN(uint64_t bytes, fs->FileSize(JoinPath(dir, newest.name)));
    RecoveredScene recovered;
    recovered.scene = *std::move(scene);
    recovered.create_sequence = snapshot.create_sequence;
    recovered.snapshot_sequence = newest.sequence;
    recovered.snapshot_file = newest.name;
    recovered.snapshot_bytes = bytes;
    recovered.replicated = snapshot.replicated;
    scenes.emplace(scene_name, std::move(recovered));
    max_covered = std::max(max_covered, newest.sequence);
    ++out.report.snapshots_loaded;
  }
  if (!snapshots.empty() && segments.empty()) {
    return absl::DataLossError(
        absl::StrCat(dir, ": snapshots exist but no log segment; refusing to start"));
  }

  // Every log segment in order. Only the last may end in a torn write: closed segments were
  // fsynced completely before the next one was started.
  uint64_t last_sequence = 0;  // of the last intact record read
  for (size_t i = 0; i < segments.size(); ++i) {
    SegmentInfo& segment = segments[i];
    const bool is_last = i + 1 == segments.size();
    const std::string path = JoinPath(dir, segment.name);
    if (i > 0 && segment.first_sequence != last_sequence + 1) {
      return Corruption(path, 0,
                        absl::StrCat("segment starts at sequence ", segment.first_sequence,
                                     " but the previous one ends at ", last_sequence));
    }
    COLLIDE_ASSIGN_OR_RETURN(std::string data, fs->ReadFile(path));
    SegmentScan scan = ScanSegment(data, segment.first_sequence);
    if (scan.end == SegmentEnd::kCorrupt || (scan.end == SegmentEnd::kTornTail && !is_last)) {
      return Corruption(path, scan.bad_offset, scan.problem);
    }
    if (scan.records.empty() && !is_last) {
      return Corruption(path, 0, "a closed segment holds no records");
    }
    for (const RecordView& record : scan.records) {
      absl::StatusOr<DecodedRecord> decoded = DecodeLogRecord(record.payload);
      absl::Status status = decoded.status();
      std::string skipped;
      if (status.ok()) {
        // A record on disk keeps the files it names, replayed or not.
        for (const StoredAssetRef& ref : decoded->assets) out.named_contents.insert(ref.sha256);
        status = Replay(*decoded, record.sequence, kRecordHeaderBytes + record.payload.size(), mode,
                        &assets, &scenes, &out.stale_files, &out.report, &skipped);
      }
      if (status.ok() && !skipped.empty()) {
        out.report.skipped.push_back(SkippedRecord{.file = path,
                                                   .offset = record.offset,
                                                   .sequence = record.sequence,
                                                   .scene = decoded->scene,
                                                   .reason = std::move(skipped)});
      }
      if (!status.ok()) {
        return Corruption(path, record.offset,
                          absl::StrCat("record ", record.sequence, ": ", status.message()));
      }
      last_sequence = record.sequence;
    }
    if (scan.end == SegmentEnd::kTornTail) {
      COLLIDE_RETURN_IF_ERROR(fs->Truncate(path, scan.valid_bytes));
      out.report.torn_tail = TornTail{.file = path,
                                      .offset = scan.bad_offset,
                                      .bytes_cut = data.size() - scan.valid_bytes,
                                      .problem = scan.problem};
    }
    segment.bytes = scan.valid_bytes;
    if (scan.records.empty()) last_sequence = segment.first_sequence - 1;
    ++out.report.segments_read;
  }

  // Snapshots are written only after the log is fsynced through what they cover, and the newest
  // segment is never deleted: so the log must reach every snapshot. (Whether segments are
  // missing before the first one cannot be told: a scene whose snapshot is current needs no
  // segment at all.)
  if (!segments.empty() && max_covered > last_sequence) {
    return absl::DataLossError(absl::StrCat(dir, ": a snapshot covers the log through sequence ",
                                            max_covered, " but the log ends at ", last_sequence,
                                            "; refusing to start"));
  }

  out.next_sequence = last_sequence + 1;
  out.report.next_sequence = out.next_sequence;
  out.segments = std::move(segments);
  out.scenes.reserve(scenes.size());
  for (auto& [name, scene] : scenes) out.scenes.push_back(std::move(scene));
  return out;
}

}  // namespace collide
