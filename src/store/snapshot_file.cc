#include "store/snapshot_file.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "store/record_format.h"
#include "store/store_files.h"

namespace collide {

absl::StatusOr<WrittenSnapshot> WriteSnapshotFile(FileSystem* fs, const std::string& dir,
                                                  absl::string_view scene,
                                                  uint64_t covered_sequence,
                                                  absl::string_view payload) {
  WrittenSnapshot written;
  written.name = SnapshotFileName(scene, covered_sequence);
  const std::string path = JoinPath(dir, written.name);
  const std::string temp = absl::StrCat(path, kTempSuffix);
  std::string framed;
  framed.reserve(kRecordHeaderBytes + payload.size());
  AppendRecord(covered_sequence, payload, &framed);
  COLLIDE_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, fs->Create(temp));
  COLLIDE_RETURN_IF_ERROR(file->Append(framed));
  COLLIDE_RETURN_IF_ERROR(file->Sync());
  COLLIDE_RETURN_IF_ERROR(file->Close());
  COLLIDE_RETURN_IF_ERROR(fs->Rename(temp, path));
  COLLIDE_RETURN_IF_ERROR(fs->SyncDir(dir));
  written.bytes = framed.size();
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
