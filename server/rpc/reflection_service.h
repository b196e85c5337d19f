#pragma once

#include <string>
#include <vector>

#include "grpc/reflection/v1/reflection.grpc.pb.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/sync_stream.h"

namespace collide {

/// grpc.reflection.v1.ServerReflection over the generated descriptor pool (every message and
/// service compiled into the server), beside gRPC's own grpc.reflection.v1alpha service: the
/// same questions and answers under the v1 names, one response per request on a stream.
/// Unknown files, symbols and types are answered with an ErrorResponse of NOT_FOUND; a request
/// with no question with one of UNIMPLEMENTED. Like v1alpha, it needs no token.
class ReflectionService final : public grpc::reflection::v1::ServerReflection::Service {
 public:
  /// `services`: the fully qualified names list_services answers.
  explicit ReflectionService(std::vector<std::string> services);

  grpc::Status ServerReflectionInfo(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<grpc::reflection::v1::ServerReflectionResponse,
                               grpc::reflection::v1::ServerReflectionRequest>* stream) override;

 private:
  const std::vector<std::string> services_;
};

}  // namespace collide
