#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace collide {

/// The names of the files in a data directory:
///   segment-<first sequence, 20 digits>.log     a log segment
///   snap-<covered sequence, 20 digits>-<scene>.snap   a scene snapshot
///   <either>.tmp                                  a file being written (deleted at start-up)
///   LOCK                                          the directory lock
/// Fixed-width decimal sequences make names sort in sequence order.

/// The file name of the segment whose first record has `first_sequence`.
std::string SegmentFileName(uint64_t first_sequence);
/// True when `name` is a segment file name; sets `*first_sequence`.
bool ParseSegmentFileName(absl::string_view name, uint64_t* first_sequence);

/// The file name of a snapshot of `scene` covering the log through `covered_sequence`.
std::string SnapshotFileName(absl::string_view scene, uint64_t covered_sequence);
/// True when `name` is a snapshot file name; sets `*scene` and `*covered_sequence`.
bool ParseSnapshotFileName(absl::string_view name, std::string* scene, uint64_t* covered_sequence);

/// The suffix of files being written.
inline constexpr absl::string_view kTempSuffix = ".tmp";

}  // namespace collide
