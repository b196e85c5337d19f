#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace collide {

/// The framing of every record on disk (log segments and snapshot files), little-endian:
///
///   offset 0   u32  payload length in bytes (1 .. kMaxRecordPayload)
///   offset 4   u32  CRC-32C of (payload, then the 4 length bytes, then the 8 sequence bytes)
///   offset 8   u64  sequence number
///   offset 16  payload (a serialized collide.storage.v1 message)
///
/// The checksum covers the payload first so that its bulk can be computed before the sequence
/// number is known (outside the log's lock); it covers length and sequence too, so a damaged
/// header is caught like a damaged payload.
inline constexpr size_t kRecordHeaderBytes = 16;
/// The largest payload a record may carry (1 GiB): bounds what a damaged length can claim.
inline constexpr uint32_t kMaxRecordPayload = 1u << 30;

/// The checksum of `payload` alone (the part of the record checksum that does not depend on the
/// header); pass it to AppendRecord.
uint32_t PayloadChecksum(absl::string_view payload);

/// Appends the framed record (`sequence`, `payload`) to `out`. `payload_checksum` must be
/// PayloadChecksum(payload); `payload` must be 1 .. kMaxRecordPayload bytes.
void AppendRecord(uint64_t sequence, absl::string_view payload, uint32_t payload_checksum,
                  std::string* out);
/// As above, computing the payload checksum.
void AppendRecord(uint64_t sequence, absl::string_view payload, std::string* out);

/// One intact record inside a buffer.
struct RecordView {
  uint64_t sequence = 0;
  /// Where the record's header starts in the buffer.
  uint64_t offset = 0;
  absl::string_view payload;
};

/// How a scanned segment ends.
enum class SegmentEnd {
  /// Every byte belongs to an intact record.
  kClean,
  /// The records after `bad_offset` are damaged but no intact record follows them: what a crash
  /// in the middle of writing leaves (cut it off).
  kTornTail,
  /// A damaged record at `bad_offset` is followed by an intact one (or an intact record has the
  /// wrong sequence number): corruption of data that was once complete. Refuse to go on.
  kCorrupt,
};

/// The result of scanning one segment.
struct SegmentScan {
  /// The intact records before the first damage, in order.
  std::vector<RecordView> records;
  /// Bytes from the start to the end of the last intact record.
  uint64_t valid_bytes = 0;
  SegmentEnd end = SegmentEnd::kClean;
  /// kTornTail / kCorrupt: where the first damaged record starts, and what is wrong with it.
  uint64_t bad_offset = 0;
  std::string problem;
};

/// Splits `data` (a whole segment) into records. Sequence numbers must run consecutively from
/// `first_sequence`. Classifies damage as described in SegmentEnd: damage is kCorrupt when an
/// intact record with a later sequence number can be found anywhere after it (the search tries
/// every byte offset, so a damaged length field cannot hide the records behind it).
SegmentScan ScanSegment(absl::string_view data, uint64_t first_sequence);

/// The single record a snapshot file holds: DATA_LOSS (naming `path`) unless `data` is exactly
/// one intact record.
absl::StatusOr<RecordView> ReadSingleRecord(absl::string_view data, absl::string_view path);

}  // namespace collide
