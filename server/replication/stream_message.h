#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace collide {

// What each message of a replicated scene's stream says about itself, in its header
// `Collide-Message` (one line of `name=value` fields):
//   record     a part of one record (store/log_codec.h), on the log subject:
//              kind=record incarnation=<hex> epoch=E prev=P first=F part=I/N
//   takeover   an owner took the scene over (no payload), on the log subject:
//              kind=takeover incarnation=<hex> epoch=E prev=P
//   part       a part of a snapshot, on the part subject:
//              kind=part incarnation=<hex> epoch=E part=I/N
//   snapshot   a complete snapshot's manifest (no payload), on the snapshot subject:
//              kind=snapshot incarnation=<hex> epoch=E first=F parts=N bytes=B crc32c=C
//                            covers_epoch=CE covers=CS
// prev is the stream sequence of the log subject's previous message (0 for the first), so a
// follower sees at once when it missed one; first is the sequence of a record's first part (the
// record's ReplicationPosition::sequence), or of a snapshot's first part; covers is the
// position (epoch and sequence) of the last record a snapshot holds.

/// The header that holds the fields.
inline constexpr char kMessageHeader[] = "Collide-Message";

enum class MessageKind : uint8_t { kRecord, kTakeover, kSnapshotPart, kSnapshot };

struct MessageHeader {
  MessageKind kind = MessageKind::kRecord;
  uint64_t incarnation = 0;
  uint64_t epoch = 0;
  /// kRecord, kTakeover.
  uint64_t prev = 0;
  /// kRecord, kSnapshot.
  uint64_t first = 0;
  /// kRecord, kSnapshotPart: this part (1-based) of `parts`. kSnapshot: `parts` only.
  uint32_t part = 1;
  uint32_t parts = 1;
  /// kSnapshot.
  uint64_t bytes = 0;
  uint32_t crc32c = 0;
  uint64_t covers_epoch = 0;
  uint64_t covers = 0;

  friend bool operator==(const MessageHeader&, const MessageHeader&) = default;
};

/// The most parts a record or snapshot may have (with parts of 256 KiB: 4 GiB).
inline constexpr uint32_t kMaxParts = 1u << 14;

std::string EncodeMessageHeader(const MessageHeader& header);
/// INVALID_ARGUMENT naming the field for anything that is not a header EncodeMessageHeader could
/// have written (unknown kind or field, a field missing for the kind or repeated, a part outside
/// 1..parts, parts outside 1..kMaxParts, more than 512 bytes).
absl::StatusOr<MessageHeader> ParseMessageHeader(absl::string_view text);

/// `payload` cut into parts of at most `max_part` bytes (at least one part, empty for an empty
/// payload). `max_part` must be > 0.
std::vector<absl::string_view> SplitParts(absl::string_view payload, size_t max_part);

/// Puts the parts of one record (or snapshot) back together, in order.
class PartAssembler {
 public:
  /// The most bytes one assembled record may hold.
  explicit PartAssembler(size_t max_bytes) : max_bytes_(max_bytes) {}

  /// Adds part `part` of `parts` of the record whose first part is at `first`. Returns true when
  /// the record is whole (then take it with Take). Errors: a part out of order (not the one
  /// expected, or of another record before the current one is whole), more than max_bytes.
  absl::StatusOr<bool> Add(uint64_t first, uint32_t part, uint32_t parts, absl::string_view data);
  /// The whole record; the assembler is empty again.
  std::string Take();
  /// Forgets a record in progress.
  void Reset();
  /// A record is in progress.
  bool busy() const { return next_part_ > 1; }

 private:
  const size_t max_bytes_;
  uint64_t first_ = 0;
  uint32_t next_part_ = 1;
  uint32_t parts_ = 0;
  std::string data_;
};

}  // namespace collide
