#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/cpp/client.h"
#include "client/cpp/client_options.h"

namespace collide::client {

/// How MoveScene moves a scene.
struct MoveOptions {
  /// Replace a scene of the same name at the destination (else the move is refused before
  /// anything changes).
  bool replace = false;
  /// Bodies per export chunk (0: the server's default, 4,096).
  uint32_t max_bodies_per_chunk = 0;
  /// After the import, export the scene back from the destination and compare its version,
  /// body count and CRC-32C with the source's export (costs one more export, within the pause).
  bool verify = true;
  /// Deadlines of the calls (the export and import streams, the unary calls).
  CallOptions call;
};

/// One step of a move, as the transcript shows it.
struct MoveStep {
  /// "check", "mark", "transfer", "verify", "delete", or on failure "rollback".
  std::string name;
  /// How long it took.
  absl::Duration duration;
  /// What it found or did, in words.
  std::string detail;
};

/// What a move did.
struct MoveReport {
  std::string scene;
  /// The destination as the source's mark names it.
  std::string destination;
  /// The exported (and imported) version, tick, bodies and chunks, and the export's CRC-32C.
  uint64_t version = 0;
  uint64_t tick = 0;
  uint64_t bodies = 0;
  uint64_t chunks = 0;
  uint32_t crc32c = 0;
  /// The steps in order.
  std::vector<MoveStep> steps;
  /// How long the scene accepted no writes anywhere: from the mark's request at the source to
  /// the verified import at the destination (the source's delete comes after).
  absl::Duration pause;
  /// The whole move, checks to delete.
  absl::Duration total;
  /// Bodies moved per second of the transfer (export streamed into import).
  double bodies_per_second = 0;
};

/// Moves scene `scene` from `source` to `destination` (clients of the two servers), naming the
/// destination `destination_address` in the source's mark (what writers are told):
///   1. check: the scene exists at the source and is not moving elsewhere; the destination holds
///      no scene of that name (unless options.replace): ALREADY_EXISTS, nothing changed;
///   2. mark: SetSceneMoving at the source (durable; from then writes there get
///      FAILED_PRECONDITION naming the destination, queries go on);
///   3. transfer: ExportScene at the source streamed into ImportScene at the destination (one
///      version V with the deduplication marks: writers' resends stay exactly-once), through a
///      bounded queue (a few chunks in memory);
///   4. verify: the destination's version and body count equal the export's, and (options.verify)
///      its own export's CRC-32C equals the source's;
///   5. delete: DeleteScene at the source (its writers are then told where the scene went, across
///      the source's restarts, until a scene of that name is created there again).
/// Any failure in steps 3 and 4 rolls back: the destination's copy is deleted (if the import
/// created it) and the mark cleared, so the source stays authoritative and writable; the error
/// says which step failed. A failure of the delete (5) leaves both copies, identical, and the
/// source marked (read-only): retry `DeleteScene` at the source. Returns the report.
absl::StatusOr<MoveReport> MoveScene(Client& source, Client& destination, std::string_view scene,
                                     std::string_view destination_address,
                                     const MoveOptions& options = {});

/// The report as lines of text (one per step, then the pause and the rate).
std::string MoveTranscript(const MoveReport& report);

}  // namespace collide::client
