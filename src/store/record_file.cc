#include "store/record_file.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "store/record_format.h"
#include "store/store_files.h"

namespace collide {

absl::StatusOr<uint64_t> WriteRecordFile(FileSystem* fs, const std::string& dir,
                                         absl::string_view name, uint64_t sequence,
                                         absl::string_view payload) {
  const std::string path = JoinPath(dir, name);
  const std::string temp = absl::StrCat(path, kTempSuffix);
  std::string framed;
  framed.reserve(kRecordHeaderBytes + payload.size());
  AppendRecord(sequence, payload, &framed);
  COLLIDE_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, fs->Create(temp));
  COLLIDE_RETURN_IF_ERROR(file->Append(framed));
  COLLIDE_RETURN_IF_ERROR(file->Sync());
  COLLIDE_RETURN_IF_ERROR(file->Close());
  COLLIDE_RETURN_IF_ERROR(fs->Rename(temp, path));
  COLLIDE_RETURN_IF_ERROR(fs->SyncDir(dir));
  return framed.size();
}

}  // namespace collide
