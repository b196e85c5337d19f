#ifndef COLLIDE_CLIENT_CPP_GRPC_RUNTIME_H_
#define COLLIDE_CLIENT_CPP_GRPC_RUNTIME_H_

namespace collide::client {

/// Holds gRPC's runtime for the scope of a program's main(): initialised on construction, shut
/// down on destruction, fully, on the calling thread, before the program exits.
///
/// Without it, gRPC shuts itself down when its last channel goes away; when that happens on one
/// of gRPC's own threads (a subchannel released after the call that used it returned), the
/// clean-up runs on a detached thread that the process's exit may overtake, and what it had not
/// yet freed (TLS contexts among them) is reported as leaked by LeakSanitizer. Declare one
/// first in main(), before any Client, so every Client is destroyed before it.
///
/// A channel's last reference can outlive its Client by a few milliseconds on one of gRPC's
/// threads; the destructor then waits, up to two seconds, until gRPC is no longer initialised
/// and the calling thread is the process's only one. Join the program's own threads before it
/// goes out of scope, or it waits the full two seconds for them.
class GrpcRuntime {
 public:
  GrpcRuntime();
  ~GrpcRuntime();
  GrpcRuntime(const GrpcRuntime&) = delete;
  GrpcRuntime& operator=(const GrpcRuntime&) = delete;
};

}  // namespace collide::client

#endif  // COLLIDE_CLIENT_CPP_GRPC_RUNTIME_H_
