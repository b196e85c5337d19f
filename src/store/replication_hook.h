#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace collide {

/// Where a record of a replicated scene (DurabilityPolicy::kReplicated) sits in the scene's
/// replicated log: the log's incarnation (chosen when the scene is created, so that a scene
/// created again under the same name is told apart), the owner's epoch that wrote it (one more
/// at each change of owner) and the log sequence of its first message. Kept in the record itself
/// (storage.proto, LogRecord.replicated) and in snapshots, so a restarted server knows where its
/// local copy stands in the replicated log.
struct ReplicationPosition {
  uint64_t incarnation = 0;
  uint64_t epoch = 0;
  uint64_t sequence = 0;
  friend bool operator==(const ReplicationPosition&, const ReplicationPosition&) = default;
};

/// Which record a replicated scene's owner is about to write.
enum class ReplicatedRecordKind : uint8_t { kCreate, kUpdate, kImport, kDelete };

/// The store's one contact with replication (server/replication/ implements it; the store never
/// sees NATS). The Database calls it for every record of a scene whose durability is
/// kReplicated, under that scene's writer serialisation, in log order:
///   1. Reserve: may this server write the scene now? The position the record will have.
///   2. (the record is encoded with that position and appended to the local log)
///   3. Publish: the record goes to the replicated log, in this order.
/// and acknowledges the write only once WhenReplicated reports the record stored there.
/// Implementations must not block in Reserve or Publish (they run on the writer's thread, under
/// the scene's writer lock), and must be thread-safe.
class ReplicationHook {
 public:
  /// WhenReplicated's ticket for "every record of the scene published so far" (a duplicate
  /// batch's acknowledgement, which waits for the batch it repeats).
  static constexpr uint64_t kEverything = std::numeric_limits<uint64_t>::max();

  virtual ~ReplicationHook() = default;

  /// May this server write a `kind` record of `scene` now; if so, the position the record will
  /// have. Refusals are the writer's to read: FAILED_PRECONDITION with a MovedError payload
  /// (scene/move_destination.h) naming the owner when another server owns the scene, UNAVAILABLE
  /// while the replicated log cannot be written. Has no effect: the next Reserve of the scene
  /// answers the same until Publish is called.
  virtual absl::StatusOr<ReplicationPosition> Reserve(absl::string_view scene,
                                                      ReplicatedRecordKind kind) = 0;
  /// Queues `payload` (the record, encoded with `position`) for the replicated log, right after
  /// the scene's previous record. Returns the ticket WhenReplicated takes. Never fails: a record
  /// the replicated log refuses fails its waiters.
  virtual uint64_t Publish(absl::string_view scene, const ReplicationPosition& position,
                           std::string payload) = 0;
  /// Calls `done` once the record with `ticket` (and every earlier one of the scene) is stored
  /// in the replicated log: OK; or with the error that means it will not be (the scene changed
  /// owner, the log refused it). At once (on this thread) when that is known already; else on
  /// any thread. A `ticket` of kEverything waits for every record published so far (OK at once
  /// on a server that follows the scene and holds it in its verified state).
  virtual void WhenReplicated(absl::string_view scene, uint64_t ticket,
                              absl::AnyInvocable<void(absl::Status)> done) = 0;
  /// After the maintenance thread wrote a local snapshot of replicated scene `scene`: `payload`
  /// is the snapshot (storage.proto SceneSnapshot) and `covers` the position of the last record
  /// it holds. The owner copies it to the replicated log and cuts the log before it. Must be
  /// quick (queue the work).
  virtual void OnSnapshot(absl::string_view scene, const ReplicationPosition& covers,
                          std::string payload) = 0;
};

/// `payload` (a serialized storage LogRecord, or a SceneSnapshot when `snapshot`) with
/// `position` added: its field `replicated` (appended: protobuf merges the two).
void AppendReplicationPosition(const ReplicationPosition& position, bool snapshot,
                               std::string* payload);

}  // namespace collide
