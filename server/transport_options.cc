#include "server/transport_options.h"

namespace collide {

void ApplyServerTransportOptions(grpc::ServerBuilder* builder) {}

}  // namespace collide
