#pragma once

#include "absl/status/status.h"
#include "collide/v1/collide.pb.h"
#include "grpcpp/support/status.h"

namespace collide::client {

/// The one conversion of a gRPC status into an absl::Status: same code (the numbering is shared),
/// same message.
absl::Status FromGrpcStatus(const grpc::Status& status);

/// The Error carried inside a stream's answer (an UpdateAck or a QueryResult / QueryBatchResult)
/// as an absl::Status: OK when `has_error` is false, else its code and message. Codes outside
/// the canonical range become UNKNOWN.
absl::Status FromStreamError(bool has_error, const v1::Error& error);

/// Shorthands for the answers that carry an Error.
absl::Status AckStatus(const v1::UpdateAck& ack);
absl::Status BatchStatus(const v1::QueryBatchResult& result);
absl::Status ResultStatus(const v1::QueryResult& result);

}  // namespace collide::client
