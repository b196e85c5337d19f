#pragma once

#include <memory>

#include "grpcpp/support/server_interceptor.h"

namespace collide {

/// The access log: one line at debug level for every call to the server, as its status is sent:
///
///   access: method /collide.v1.Collide/GetScene, scene "arena", code OK, 0.412 ms,
///   peer ipv4:127.0.0.1:53710, bytes in 9, out 131
///
/// The scene is the call's x-collide-scene header, else the `scene` field of its first request
/// (collide.v1 methods; "-" when there is none); the bytes are those of the request and response
/// messages (serialized, all messages of a stream). A call that ended without a status sent
/// (the client cancelled it, or the server was stopped) is logged with CANCELLED. No other
/// metadata (tokens among them) and no message content is logged. When the logger's level is
/// above debug the factory creates no interceptor: calls pay nothing for it.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> NewAccessLogFactory();

}  // namespace collide
