// Built with `pkg-config --cflags --libs collide-client` alone (tests/install/install_test.sh):
// makes a client (a channel: no server is needed) and prints "connect: ok".

#include <cstdio>
#include <memory>

#include "client/cpp/client.h"
#include "client/cpp/grpc_runtime.h"

int main() {
  collide::client::GrpcRuntime grpc;
  collide::client::ClientOptions options;
  options.address = "127.0.0.1:1";
  absl::StatusOr<std::unique_ptr<collide::client::Client>> client =
      collide::client::Client::Connect(options);
  std::printf("connect: %s\n", client.ok() ? "ok" : client.status().ToString().c_str());
  return client.ok() ? 0 : 1;
}
