#pragma once

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "collide/v1/collide.pb.h"
#include "grpcpp/support/status.h"

namespace collide {

// The one place where the core's absl::Status becomes what the network sees: a grpc::Status for
// a call, or an Error inside a stream's answer. Codes map one to one (both follow
// google.rpc.Code); the message (`<field path>: <reason>`) is kept as it is, up to
// kMaxStatusMessageBytes.

/// The longest message the server sends in a status or an Error. Messages quote client input
/// (a scene name, a header); a longer one is cut (at a UTF-8 character boundary) and ends with
/// "... (N more bytes)", so that no client can make a status outgrow gRPC's metadata limit,
/// which would break the connection rather than answer the call.
inline constexpr size_t kMaxStatusMessageBytes = 1024;

/// `message` as the server sends it: unchanged up to kMaxStatusMessageBytes, cut beyond.
std::string BoundedStatusMessage(absl::string_view message);

/// The trailing metadata key of a unary write refused because its scene moved
/// (FAILED_PRECONDITION carrying a MovedError payload, scene/move_destination.h): the address
/// the scene moved to. In a stream's answer the same address is Error.moved_to.
inline constexpr char kMovedToMetadata[] = "x-collide-moved-to";

/// `status` as a gRPC status with the same code and message.
grpc::Status ToGrpcStatus(const absl::Status& status);

/// Fills `error` with `status`'s code and message (`status` must not be OK), and moved_to when
/// it is a MovedError.
void ToProtoError(const absl::Status& status, v1::Error* error);

/// `status` with `prefix` put in front of its message, same code (OK stays OK).
absl::Status PrefixStatus(const absl::Status& status, absl::string_view prefix);

}  // namespace collide
