#include "client/cpp/grpc_runtime.h"

#include <grpc/grpc.h>

namespace collide::client {

GrpcRuntime::GrpcRuntime() { grpc_init(); }

// grpc_shutdown_blocking runs the clean-up here even when gRPC's count of users reaches zero
// on this call, instead of handing it to a detached thread.
GrpcRuntime::~GrpcRuntime() { grpc_shutdown_blocking(); }

}  // namespace collide::client
