#pragma once

#include "absl/status/status.h"
#include "collide/v1/collide.pb.h"
#include "grpcpp/support/status.h"

namespace collide {

// The one place where the core's absl::Status becomes what the network sees: a grpc::Status for
// a call, or an Error inside a stream's answer. Codes map one to one (both follow
// google.rpc.Code); the message (`<field path>: <reason>`) is kept as it is.

/// `status` as a gRPC status with the same code and message.
grpc::Status ToGrpcStatus(const absl::Status& status);

/// Fills `error` with `status`'s code and message (`status` must not be OK).
void ToProtoError(const absl::Status& status, v1::Error* error);

/// `status` with `prefix` put in front of its message, same code (OK stays OK).
absl::Status PrefixStatus(const absl::Status& status, absl::string_view prefix);

}  // namespace collide
