#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace collide {

// Where a replicated scene lives in NATS JetStream (docs/SCALING.md, "Replicated scenes"):
//   stream   COLLIDE_<token>             one per scene, R replicas on the JetStream cluster
//   subjects collide.<token>.log         the scene's records and the owners' takeover marks
//            collide.<token>.part        the parts of its snapshots
//            collide.<token>.snapshot    one small message per complete snapshot (its manifest)
//   KV key   <token> of bucket COLLIDE_OWNERS: who owns the scene (owner_record.h)
// <token> is the scene name with each '.' written '=' (a subject token and a stream name hold
// no '.'; a scene name holds no '='), so every scene name maps to one token and back.

/// The KV bucket of the owners.
inline constexpr char kOwnersBucket[] = "COLLIDE_OWNERS";

/// The scene name as a subject token, stream name part and KV key.
std::string SceneToken(absl::string_view scene);
/// The scene a KV key or token names; INVALID_ARGUMENT when it is not a valid scene's token.
absl::StatusOr<std::string> SceneOfToken(absl::string_view token);

/// The names of one scene's stream, subjects and owner key.
struct StreamNames {
  std::string stream;
  /// The stream's subjects: collide.<token>.>
  std::string subjects;
  std::string log;
  std::string part;
  std::string snapshot;
  std::string owner_key;
};
StreamNames NamesOf(absl::string_view scene);

/// The scene whose stream subject `subject` is (collide.<token>.<...>); INVALID_ARGUMENT
/// otherwise.
absl::StatusOr<std::string> SceneOfSubject(absl::string_view subject);

/// The JetStream message id (Nats-Msg-Id) of the message an owner writes at stream sequence
/// `sequence` in `epoch` of incarnation `incarnation`: unique to that writer and place, so that
/// a publish expecting it as the stream's last message (Nats-Expected-Last-Msg-Id) fails once
/// anyone else wrote there.
std::string MessageId(uint64_t incarnation, uint64_t epoch, uint64_t sequence);

}  // namespace collide
