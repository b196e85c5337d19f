#include "store/record_format.h"

#include <cassert>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "store/crc32c.h"

namespace collide {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the on-disk format is little-endian");

uint32_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// The record checksum from the payload's checksum and the header fields.
uint32_t RecordChecksum(uint32_t payload_checksum, uint32_t length, uint64_t sequence) {
  char tail[12];
  std::memcpy(tail, &length, 4);
  std::memcpy(tail + 4, &sequence, 8);
  return Crc32cExtend(payload_checksum, tail, sizeof(tail));
}

enum class Check { kOk, kTruncated, kBadLength, kBadChecksum };

// Checks the record whose header starts at `offset`.
Check CheckRecord(absl::string_view data, size_t offset, RecordView* record) {
  const size_t left = data.size() - offset;
  if (left < kRecordHeaderBytes) return Check::kTruncated;
  const char* p = data.data() + offset;
  const uint32_t length = Load32(p);
  if (length == 0 || length > kMaxRecordPayload) return Check::kBadLength;
  if (length > left - kRecordHeaderBytes) return Check::kTruncated;
  const uint32_t stored = Load32(p + 4);
  const uint64_t sequence = Load64(p + 8);
  absl::string_view payload(p + kRecordHeaderBytes, length);
  if (RecordChecksum(PayloadChecksum(payload), length, sequence) != stored) {
    return Check::kBadChecksum;
  }
  *record = RecordView{.sequence = sequence, .offset = offset, .payload = payload};
  return Check::kOk;
}

// True when an intact record with a sequence number above `after` starts anywhere in
// (from, end). Cheap tests on the header reject almost every offset before a checksum is
// computed.
bool IntactRecordAfter(absl::string_view data, size_t from, uint64_t after) {
  for (size_t offset = from + 1; offset + kRecordHeaderBytes < data.size(); ++offset) {
    const char* p = data.data() + offset;
    const uint32_t length = Load32(p);
    if (length == 0 || length > data.size() - offset - kRecordHeaderBytes) continue;
    const uint64_t sequence = Load64(p + 8);
    // A later record of this log has a sequence number a little above `after`; a segment holds
    // far fewer than 2^32 records.
    if (sequence <= after || sequence - after > (uint64_t{1} << 32)) continue;
    RecordView record;
    if (CheckRecord(data, offset, &record) == Check::kOk) return true;
  }
  return false;
}

}  // namespace

uint32_t PayloadChecksum(absl::string_view payload) { return Crc32c(payload); }

void AppendRecord(uint64_t sequence, absl::string_view payload, uint32_t payload_checksum,
                  std::string* out) {
  assert(!payload.empty() && payload.size() <= kMaxRecordPayload);
  const uint32_t length = static_cast<uint32_t>(payload.size());
  const uint32_t checksum = RecordChecksum(payload_checksum, length, sequence);
  char header[kRecordHeaderBytes];
  std::memcpy(header, &length, 4);
  std::memcpy(header + 4, &checksum, 4);
  std::memcpy(header + 8, &sequence, 8);
  out->append(header, sizeof(header));
  out->append(payload.data(), payload.size());
}

void AppendRecord(uint64_t sequence, absl::string_view payload, std::string* out) {
  AppendRecord(sequence, payload, PayloadChecksum(payload), out);
}

SegmentScan ScanSegment(absl::string_view data, uint64_t first_sequence) {
  SegmentScan scan;
  size_t offset = 0;
  uint64_t expected = first_sequence;
  while (offset < data.size()) {
    RecordView record;
    const Check check = CheckRecord(data, offset, &record);
    if (check == Check::kOk && record.sequence == expected) {
      scan.records.push_back(record);
      offset += kRecordHeaderBytes + record.payload.size();
      ++expected;
      continue;
    }
    scan.bad_offset = offset;
    if (check == Check::kOk) {
      // An intact record out of order is never the product of a torn write.
      scan.end = SegmentEnd::kCorrupt;
      scan.problem = absl::StrCat("record has sequence ", record.sequence, ", expected ", expected);
      break;
    }
    switch (check) {
      case Check::kTruncated:
        scan.problem = "record runs past the end of the file";
        break;
      case Check::kBadLength:
        scan.problem = "record length is zero or too large";
        break;
      default:
        scan.problem = "record checksum mismatch";
        break;
    }
    scan.end = IntactRecordAfter(data, offset, expected - 1) ? SegmentEnd::kCorrupt
                                                             : SegmentEnd::kTornTail;
    break;
  }
  scan.valid_bytes = offset;
  return scan;
}

absl::StatusOr<RecordView> ReadSingleRecord(absl::string_view data, absl::string_view path) {
  RecordView record;
  const Check check = data.empty() ? Check::kTruncated : CheckRecord(data, 0, &record);
  if (check != Check::kOk) {
    return absl::DataLossError(absl::StrCat(
        path,
        " at offset 0: ", check == Check::kBadChecksum ? "checksum mismatch" : "damaged record"));
  }
  if (kRecordHeaderBytes + record.payload.size() != data.size()) {
    return absl::DataLossError(
        absl::StrCat(path, ": ", data.size() - kRecordHeaderBytes - record.payload.size(),
                     " unexpected bytes after the record"));
  }
  return record;
}

}  // namespace collide
