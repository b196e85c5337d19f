#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "store/file_system.h"

namespace collide {

/// Writes `payload` as the one framed record (record_format.h, sequence `sequence`) of file
/// `name` in `dir`, durably and whole or not at all: written to `name`.tmp (deleted at start-up
/// if a crash leaves it), fsynced, renamed over `name`, then the directory fsynced. Returns the
/// bytes written. Snapshots, asset contents and the moved-scenes file are written so.
absl::StatusOr<uint64_t> WriteRecordFile(FileSystem* fs, const std::string& dir,
                                         absl::string_view name, uint64_t sequence,
                                         absl::string_view payload);

}  // namespace collide
