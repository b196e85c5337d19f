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

/// An UpdateAck's error: OK when the batch was applied (or was a duplicate).
absl::Status AckStatus(const v1::UpdateAck& ack);
/// A QueryBatchResult's whole-batch error (unknown scene, too many queries, permission).
absl::Status BatchStatus(const v1::QueryBatchResult& result);
/// One QueryResult's error (that query was rejected; the others were answered).
absl::Status ResultStatus(const v1::QueryResult& result);

/// Whether a new stream may succeed after a stream ended with `status`: the server went away,
/// restarted or closed the stream (OK), or the stream's deadline passed. INTERNAL and UNKNOWN
/// cover transports torn down mid-frame; a caller bounds how long it keeps retrying.
/// ResilientUpdateWriter and InterestStream reconnect on these.
bool IsRetryableStreamEnd(const absl::Status& status);

}  // namespace collide::client
