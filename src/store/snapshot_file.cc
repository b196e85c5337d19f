#include "store/snapshot_file.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "store/record_file.h"
#include "store/record_format.h"
#include "store/store_files.h"

namespace collide {

absl::StatusOr<WrittenSnapshot> WriteSnapshotFile(FileSystem* fs, const std::string& dir,
                                                  absl::string_view scene,
                                                  uint64_t covered_sequence,
                                                  absl::string_view payload) {
  WrittenSnapshot written;
  written.name = SnapshotFileName(scene, covered_sequence);
  COLLIDE_ASSIGN_OR_RETURN(written.bytes,
                           WriteRecordFile(fs, dir, written.name, covered_sequence, payload));
  return written;
}

absl::StatusOr<DecodedSnapshot> ReadSnapshotFile(FileSystem* fs, const std::string& dir,
                                                 const std::string& name, absl::string_view scene,
                                                 uint64_t covered_sequence) {
  const std::string path = JoinPath(dir, name);
  COLLIDE_ASSIGN_OR_RETURN(std::string data, fs->ReadFile(path));
  COLLIDE_ASSIGN_OR_RETURN(RecordView record, ReadSingleRecord(data, path));
  absl::StatusOr<DecodedSnapshot> snapshot = DecodeSnapshot(record.payload);
  if (!snapshot.ok()) {
    return absl::DataLossError(absl::StrCat(path, ": ", snapshot.status().message()));
  }
  if (snapshot->scene != scene || snapshot->state.log_position != covered_sequence ||
      record.sequence != covered_sequence) {
    return absl::DataLossError(absl::StrCat(path, ": holds scene \"", snapshot->scene,
                                            "\" through sequence ", snapshot->state.log_position,
                                            ", not what its name says"));
  }
  return snapshot;
}

}  // namespace collide
