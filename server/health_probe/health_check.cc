#include "server/health_probe/health_check.h"

#include <cstdint>
#include <future>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/client_context.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"

namespace collide {
namespace {

// Protocol buffer wire types.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kFixed64 = 1;
constexpr uint32_t kLengthDelimited = 2;
constexpr uint32_t kFixed32 = 5;

void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

// Reads a varint at `*pos`, advancing it; false when the bytes end first or it is too long.
bool ReadVarint(absl::string_view bytes, size_t* pos, uint64_t* value) {
  *value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= bytes.size()) return false;
    const auto byte = static_cast<uint8_t>(bytes[(*pos)++]);
    *value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

absl::Status FromGrpc(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

}  // namespace

std::string ServingStatusName(ServingStatus status) {
  switch (status) {
    case ServingStatus::kUnknown:
      return "UNKNOWN";
    case ServingStatus::kServing:
      return "SERVING";
    case ServingStatus::kNotServing:
      return "NOT_SERVING";
    case ServingStatus::kServiceUnknown:
      return "SERVICE_UNKNOWN";
  }
  return absl::StrCat("status ", static_cast<int>(status));
}

std::string EncodeHealthCheckRequest(absl::string_view service) {
  std::string out;
  if (service.empty()) return out;  // proto3 leaves a default string out
  AppendVarint((1 << 3) | kLengthDelimited, &out);
  AppendVarint(service.size(), &out);
  out.append(service.data(), service.size());
  return out;
}

absl::StatusOr<ServingStatus> DecodeHealthCheckResponse(absl::string_view bytes) {
  ServingStatus status = ServingStatus::kUnknown;
  size_t pos = 0;
  while (pos < bytes.size()) {
    uint64_t key = 0;
    if (!ReadVarint(bytes, &pos, &key)) return absl::DataLossError("health: truncated field key");
    const uint64_t field = key >> 3;
    const auto wire_type = static_cast<uint32_t>(key & 7);
    uint64_t value = 0;
    switch (wire_type) {
      case kVarint:
        if (!ReadVarint(bytes, &pos, &value)) return absl::DataLossError("health: bad varint");
        // The last value of a repeated scalar wins, as in protobuf parsing.
        if (field == 1) status = static_cast<ServingStatus>(static_cast<int>(value));
        break;
      case kFixed64:
      case kFixed32: {
        const size_t size = wire_type == kFixed64 ? 8 : 4;
        if (bytes.size() - pos < size) return absl::DataLossError("health: truncated field");
        pos += size;
        break;
      }
      case kLengthDelimited:
        if (!ReadVarint(bytes, &pos, &value) || bytes.size() - pos < value) {
          return absl::DataLossError("health: truncated field");
        }
        pos += static_cast<size_t>(value);
        break;
      default:
        return absl::DataLossError(absl::StrCat("health: unsupported wire type ", wire_type));
    }
    if (field == 1 && wire_type != kVarint) {
      return absl::DataLossError("health: field 1 (status) is not a varint");
    }
  }
  return status;
}

absl::StatusOr<ServingStatus> CheckHealth(const std::shared_ptr<grpc::Channel>& channel,
                                          absl::string_view service, absl::Duration timeout) {
  grpc::Slice slice(EncodeHealthCheckRequest(service));
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  // No wait_for_ready: a refused connection fails the probe at once (UNAVAILABLE) instead of
  // holding it until the deadline.
  grpc::GenericStub stub(channel);
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(std::move(status)); });
  const grpc::Status status = done.get_future().get();
  if (!status.ok()) return FromGrpc(status);
  grpc::Slice answer;
  if (!response.DumpToSingleSlice(&answer).ok()) {
    return absl::DataLossError("health: unreadable answer");
  }
  return DecodeHealthCheckResponse(
      absl::string_view(reinterpret_cast<const char*>(answer.begin()), answer.size()));
}

}  // namespace collide
