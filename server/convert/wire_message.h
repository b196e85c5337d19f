#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "grpcpp/support/byte_buffer.h"

namespace collide {

// The service receives and sends every message as bytes (gRPC's raw callback methods) and does
// the protobuf work itself, because gRPC's typed methods cannot tell a message that fails to
// parse from the end of a stream: a corrupt message between two batches would end an
// UpdateStream with status OK, and a unary call with a malformed body got UNIMPLEMENTED with an
// empty message. Here a malformed message is INVALID_ARGUMENT with a message that says so.

/// Parses `buffer`, a message as received, into `message` (cleared first); `buffer` is consumed.
/// INVALID_ARGUMENT `<what>: not a valid <type> message (<n> bytes)` when the bytes are not a
/// valid encoding of `message`'s type (truncated, a bad tag or wire type, a bad length, nesting
/// beyond protobuf's recursion limit, invalid UTF-8 in a string field).
absl::Status ParseMessage(grpc::ByteBuffer* buffer, google::protobuf::Message* message,
                          absl::string_view what);

/// As ParseMessage, but merges into `message` as it is instead of clearing it first (a field
/// the bytes hold is set, a repeated field appended to); for a caller that empties `message`
/// its own way, keeping what it allocated. On an error `message` is cleared.
absl::Status MergeMessage(grpc::ByteBuffer* buffer, google::protobuf::Message* message,
                          absl::string_view what);

/// Serializes `message` into `buffer` (replacing what it held). INTERNAL when the message is too
/// large to encode (over 2 GiB), which the service's limits keep from happening.
absl::Status SerializeMessage(const google::protobuf::Message& message, grpc::ByteBuffer* buffer);

}  // namespace collide
