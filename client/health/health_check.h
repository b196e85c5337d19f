#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"

namespace collide {

/// The serving status a grpc.health.v1.Health service reports (the values of
/// grpc.health.v1.HealthCheckResponse.ServingStatus).
enum class ServingStatus : int {
  kUnknown = 0,
  kServing = 1,
  kNotServing = 2,
  /// Only from the Watch rpc; Check answers NOT_FOUND for an unknown service instead.
  kServiceUnknown = 3,
};

/// "UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN", or "status N" for another value.
std::string ServingStatusName(ServingStatus status);

/// The serialized grpc.health.v1.HealthCheckRequest for `service` (the empty name, the whole
/// server, is the empty message); the messages are generated from
/// proto/grpc/health/v1/health.proto.
std::string EncodeHealthCheckRequest(absl::string_view service);

/// The status field of a serialized grpc.health.v1.HealthCheckResponse (absent: UNKNOWN).
/// Unknown fields are skipped; DATA_LOSS when the bytes are not a well-formed message or the
/// status is not a varint.
absl::StatusOr<ServingStatus> DecodeHealthCheckResponse(absl::string_view bytes);

/// Calls grpc.health.v1.Health/Check for `service` ("" = the whole server) on `channel`, waiting
/// at most `timeout` (connecting included; a refused connection fails at once). The call's gRPC
/// error (UNAVAILABLE when nothing listens, DEADLINE_EXCEEDED, NOT_FOUND for a service the server
/// does not know) or the reported status.
absl::StatusOr<ServingStatus> CheckHealth(const std::shared_ptr<grpc::Channel>& channel,
                                          absl::string_view service, absl::Duration timeout);

}  // namespace collide
