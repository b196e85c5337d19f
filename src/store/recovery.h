#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "scene/scene.h"
#include "store/commit_log.h"
#include "store/file_system.h"
#include "store/replication_hook.h"

namespace collide {

/// The damaged end of the last log segment, cut off at start-up.
struct TornTail {
  /// The segment's path.
  std::string file;
  /// Where the damage started; the file now ends here.
  uint64_t offset = 0;
  /// How many bytes were cut.
  uint64_t bytes_cut = 0;
  /// What was wrong at `offset`.
  std::string problem;
};

/// What recovery does with a log record that is intact (its checksum holds) but no longer applies
/// to its scene: a batch the current validation refuses (logged by an older server, say).
enum class RecoveryMode : uint8_t {
  /// Refuse to start, naming the segment, offset and sequence of the record (the default).
  kStrict,
  /// Drop the record: its scene's version still advances past it (as an empty batch), so every
  /// later record applies as logged. Each dropped record is reported.
  kSkip,
};

/// A record that RecoveryMode::kSkip dropped.
struct SkippedRecord {
  /// The segment's path, the record's offset in it and its log sequence.
  std::string file;
  uint64_t offset = 0;
  uint64_t sequence = 0;
  /// The record's scene, and why it no longer applies.
  std::string scene;
  std::string reason;
};

/// What start-up found and did (the service logs it).
struct RecoveryReport {
  /// Snapshot files loaded and log segments read.
  int snapshots_loaded = 0;
  int segments_read = 0;
  /// Log records applied on top of the snapshots.
  uint64_t records_replayed = 0;
  /// Log records already covered by a snapshot or belonging to deleted scenes.
  uint64_t records_skipped = 0;
  /// Records that no longer applied and were dropped (RecoveryMode::kSkip only).
  std::vector<SkippedRecord> skipped;
  /// Set when the log ended in a torn write.
  std::optional<TornTail> torn_tail;
  /// Temporary files deleted; superseded snapshot files are deleted once the log is open.
  int temp_files_deleted = 0;
  /// The sequence number the next log record gets.
  uint64_t next_sequence = 1;
  /// Scenes remembered as moved away (the `moved-scenes` file, Database::MovedAway), and what
  /// was wrong with that file when it could not be read (the list then starts empty).
  size_t moved_scenes = 0;
  std::string moved_scenes_problem;
  /// Asset contents read from their files and built (each once, however many scenes hold it).
  int assets_loaded = 0;
  /// Asset files no record or snapshot names any more, deleted once the log is open.
  int asset_files_deleted = 0;
};

/// One scene as recovery rebuilt it.
struct RecoveredScene {
  /// The scene at the end of the log.
  std::unique_ptr<Scene> scene;
  /// The log sequence of the record that created this incarnation.
  uint64_t create_sequence = 0;
  /// The newest snapshot (0 and empty when there is none).
  uint64_t snapshot_sequence = 0;
  std::string snapshot_file;
  uint64_t snapshot_bytes = 0;
  /// Bytes of this scene's log records after its snapshot.
  uint64_t log_bytes = 0;
  /// A replicated scene: the replication position of its last record (or of its snapshot when
  /// no record follows it).
  std::optional<ReplicationPosition> replicated;
};

/// Everything recovery rebuilt from a data directory.
struct RecoveredState {
  std::vector<RecoveredScene> scenes;
  /// The log segments, oldest first; the last one ends right before next_sequence (or is empty
  /// and named after it), as CommitLog::Open requires.
  std::vector<SegmentInfo> segments;
  uint64_t next_sequence = 1;
  /// Snapshot files no longer needed (superseded, or of deleted scenes): delete them once the
  /// log is durable.
  std::vector<std::string> stale_files;
  RecoveryReport report;
  /// The asset contents read (by sha256): every one some scene holds now, and those only a
  /// record of the log or a snapshot still names.
  absl::flat_hash_map<std::string, std::shared_ptr<const Asset>> assets;
  /// The sha256 of every content a log record or a loaded snapshot names (the files to keep
  /// while those are on disk).
  absl::flat_hash_set<std::string> named_contents;
  /// The sha256 of every asset file in the directory.
  std::vector<std::string> asset_files;
};

/// Rebuilds the scenes of the data directory `dir` (which must exist): loads each scene's newest
/// snapshot, then replays the log segments in order, applying each scene's records after its
/// snapshot. The assets a snapshot or a replayed record names are read from their files
/// (asset_files.h) and built once per content; a missing or damaged asset file is DATA_LOSS. A torn
/// tail of the last segment is truncated (reported in `report.torn_tail`). Refuses with DATA_LOSS
/// naming the file and offset when data that was once complete is damaged: a damaged record
/// followed by intact ones, damage in a closed segment, a gap in the sequence numbers, a snapshot
/// that does not decode, or (under RecoveryMode::kStrict) a record that no longer applies. Work is
/// bounded by the data read: no record makes it hang or grow without bound (every record is
/// validated as a new batch would be before it is applied).
absl::StatusOr<RecoveredState> RecoverDirectory(FileSystem* fs, const std::string& dir,
                                                RecoveryMode mode = RecoveryMode::kStrict);

}  // namespace collide
