#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace collide {

/// The value of a replicated scene's key in the KV bucket COLLIDE_OWNERS: who may write the scene.
/// The owner takes the key with a compare-and-set (KV create, or update at the revision it read)
/// and keeps it alive by writing it again every third of its lease; a server that follows the
/// scene and sees no new revision for a whole lease takes it over with a compare-and-set at the
/// revision it saw, one epoch higher. Text, one `name=value` per field, separated by spaces
/// (readable with `nats kv get COLLIDE_OWNERS <key>`):
///   address=10.0.0.4:50051 backend=shard_2 server=5f0c... epoch=7 incarnation=9a3e...
///   lease_ms=2000 log=1234
/// plus `released=1` (and `successor=ADDRESS`) when the owner stepped down.
struct OwnerRecord {
  /// The owner's gRPC address, as clients reach it (--advertise_address).
  std::string address;
  /// Its backend in the router's map (--router_backend); may be empty.
  std::string backend;
  /// The owner process's instance: random at each start.
  std::string server;
  /// One more at each change of owner; every record the owner writes carries it.
  uint64_t epoch = 0;
  /// The scene log's incarnation (ReplicationPosition::incarnation).
  uint64_t incarnation = 0;
  /// How long the owner holds the scene without writing the key again, in milliseconds.
  uint32_t lease_ms = 0;
  /// The stream sequence of the last log message the owner knew stored when it wrote the key
  /// (followers compare it with theirs: their lag); 0 when unknown.
  uint64_t log = 0;
  /// The owner stepped down (a graceful stop or a handover): a follower may take it at once.
  bool released = false;
  /// With `released`: only the server at this address may take it during one lease.
  std::string successor;

  friend bool operator==(const OwnerRecord&, const OwnerRecord&) = default;
};

/// The longest owner record, in bytes.
inline constexpr size_t kMaxOwnerRecordBytes = 1024;

std::string EncodeOwnerRecord(const OwnerRecord& record);
/// The record `text` holds; INVALID_ARGUMENT naming the field for anything else (an unknown
/// field, a repeated one, a number out of range, an address with spaces or control characters,
/// no address, epoch or incarnation, more than kMaxOwnerRecordBytes).
absl::StatusOr<OwnerRecord> ParseOwnerRecord(absl::string_view text);

}  // namespace collide
