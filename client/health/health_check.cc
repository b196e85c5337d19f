#include "client/health/health_check.h"

#include <future>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/unknown_field_set.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/health/v1/health.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"

namespace collide {
namespace {

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
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(std::string(service));
  return request.SerializeAsString();
}

absl::StatusOr<ServingStatus> DecodeHealthCheckResponse(absl::string_view bytes) {
  grpc::health::v1::HealthCheckResponse response;
  if (!response.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::DataLossError("health: not a well-formed HealthCheckResponse");
  }
  // Protobuf keeps a field of the wrong wire type as an unknown field; for the status that is a
  // malformed answer, not an absent status.
  const google::protobuf::UnknownFieldSet& unknown =
      response.GetReflection()->GetUnknownFields(response);
  for (int i = 0; i < unknown.field_count(); ++i) {
    if (unknown.field(i).number() == grpc::health::v1::HealthCheckResponse::kStatusFieldNumber) {
      return absl::DataLossError("health: field 1 (status) is not a varint");
    }
  }
  return static_cast<ServingStatus>(static_cast<int>(response.status()));
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
  const std::string method =
      absl::StrCat("/", grpc::health::v1::Health::service_full_name(), "/Check");
  stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
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
