#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "store/file_system.h"
#include "store/log_codec.h"

namespace collide {

/// A snapshot file just written.
struct WrittenSnapshot {
  /// Its name inside the data directory (SnapshotFileName).
  std::string name;
  /// Its size in bytes.
  uint64_t bytes = 0;
};

/// Writes the serialized SceneSnapshot `payload` of `scene`, covering the log through
/// `covered_sequence`, atomically: into a temporary file, fsync, rename over the final name,
/// fsync of the directory. Once this returns OK the snapshot survives a crash; if it fails or the
/// process dies midway, at most a temporary file remains (deleted at the next start).
absl::StatusOr<WrittenSnapshot> WriteSnapshotFile(FileSystem* fs, const std::string& dir,
                                                  absl::string_view scene,
                                                  uint64_t covered_sequence,
                                                  absl::string_view payload);

/// Reads and decodes the snapshot file `name` in `dir`, which must be named after `scene` and
/// `covered_sequence` and say so inside. DATA_LOSS naming the file otherwise.
absl::StatusOr<DecodedSnapshot> ReadSnapshotFile(FileSystem* fs, const std::string& dir,
                                                 const std::string& name, absl::string_view scene,
                                                 uint64_t covered_sequence);

}  // namespace collide
