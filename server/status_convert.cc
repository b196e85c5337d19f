#include "server/status_convert.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace collide {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

void ToProtoError(const absl::Status& status, v1::Error* error) {
  error->set_code(static_cast<int32_t>(status.code()));
  error->set_message(std::string(status.message()));
}

absl::Status PrefixStatus(const absl::Status& status, absl::string_view prefix) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

}  // namespace collide
