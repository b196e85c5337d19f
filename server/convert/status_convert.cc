#include "server/convert/status_convert.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "scene/move_destination.h"

namespace collide {

std::string BoundedStatusMessage(absl::string_view message) {
  if (message.size() <= kMaxStatusMessageBytes) return std::string(message);
  constexpr size_t kKept = kMaxStatusMessageBytes - 32;  // room for the suffix
  size_t end = kKept;
  // Back up over UTF-8 continuation bytes (10xxxxxx) so that no character is split.
  while (end > 0 && (static_cast<unsigned char>(message[end]) & 0xC0) == 0x80) --end;
  return absl::StrCat(message.substr(0, end), "... (", message.size() - end, " more bytes)");
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      BoundedStatusMessage(status.message()));
}

void ToProtoError(const absl::Status& status, v1::Error* error) {
  error->set_code(static_cast<int32_t>(status.code()));
  error->set_message(BoundedStatusMessage(status.message()));
  if (std::string moved_to = MovedToOf(status); !moved_to.empty()) {
    error->set_moved_to(std::move(moved_to));
  }
}

absl::Status PrefixStatus(const absl::Status& status, absl::string_view prefix) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

}  // namespace collide
