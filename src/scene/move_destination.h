#pragma once

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace collide {

/// The longest destination a moving scene may name, in bytes.
inline constexpr size_t kMaxMoveDestinationLength = 256;

/// OK when `destination` can name where a scene moves (an address such as "10.0.0.4:50051" or
/// "dns:///shard-3:50051"): 1 to kMaxMoveDestinationLength printable ASCII characters, no
/// spaces. It is quoted in error messages and sent as gRPC metadata, so nothing else is allowed.
/// INVALID_ARGUMENT with the field path `destination` otherwise.
absl::Status ValidateMoveDestination(absl::string_view destination);

/// The message of a write refused because its scene moved: `scene "arena" moved to
/// 10.0.0.4:50051`, with the field path `scene`. FAILED_PRECONDITION, carrying the destination
/// as the payload kMovedToPayload (read it with MovedToOf).
absl::Status MovedError(absl::string_view scene, absl::string_view destination);

/// The answer to marking scene `scene` as moving to another destination while it is marked as
/// moving to `destination`: FAILED_PRECONDITION `destination: scene "arena" is already moving to
/// 10.0.0.4:50051 (clear the mark first)`, carrying `destination` as a MovedError does.
absl::Status AlreadyMovingError(absl::string_view scene, absl::string_view destination);

/// The absl::Status payload URL that carries the destination of a MovedError.
inline constexpr char kMovedToPayload[] = "collide.dev/moved-to";

/// The destination a MovedError carries; empty for any other status.
std::string MovedToOf(const absl::Status& status);

}  // namespace collide
