#pragma once

#include "grpcpp/server_builder.h"

namespace collide {

/// Sets the gRPC transport arguments collide-server serves with (the bench echo server uses the
/// same ones, so that its ceiling is measured under the same settings).
void ApplyServerTransportOptions(grpc::ServerBuilder* builder);

}  // namespace collide
