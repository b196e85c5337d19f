#include "client/cpp/grpc_status.h"

#include <string>

namespace collide::client {
namespace {

// google.rpc.Code: 0 OK ... 16 UNAUTHENTICATED.
constexpr int kLastCanonicalCode = 16;

absl::StatusCode ToAbslCode(int code) {
  if (code < 0 || code > kLastCanonicalCode) return absl::StatusCode::kUnknown;
  return static_cast<absl::StatusCode>(code);
}

}  // namespace

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(ToAbslCode(static_cast<int>(status.error_code())), status.error_message());
}

absl::Status FromStreamError(bool has_error, const v1::Error& error) {
  if (!has_error) return absl::OkStatus();
  absl::StatusCode code = ToAbslCode(error.code());
  // An Error that is present but says OK is still an error: keep it visible.
  if (code == absl::StatusCode::kOk) code = absl::StatusCode::kUnknown;
  return absl::Status(code, error.message());
}

absl::Status AckStatus(const v1::UpdateAck& ack) {
  return FromStreamError(ack.has_error(), ack.error());
}

absl::Status BatchStatus(const v1::QueryBatchResult& result) {
  return FromStreamError(result.has_error(), result.error());
}

absl::Status ResultStatus(const v1::QueryResult& result) {
  return FromStreamError(result.has_error(), result.error());
}

bool IsRetryableStreamEnd(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
      return true;
    default:
      return false;
  }
}

}  // namespace collide::client
