#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/atomic_histogram.h"
#include "google/protobuf/descriptor.h"
#include "grpcpp/support/server_interceptor.h"
#include "prometheus/collectable.h"

namespace collide {

/// The per-rpc figures of one gRPC service, named and labelled as go-grpc-prometheus does
/// (grpc_type, grpc_service, grpc_method; grpc_code on handled): calls started and handled,
/// handling time, messages received and sent. A server interceptor (InterceptorFactory) counts
/// every call of the service, whatever its handler; the series of every method (and every code)
/// exist from the start at 0. Counting is lock-free; Collect reads the figures at scrape time.
class RpcMetrics final : public prometheus::Collectable {
 public:
  /// The buckets of grpc_server_handling_seconds, in nanoseconds: 25 us to 10 s.
  static std::vector<uint64_t> HandlingBounds();

  /// Series for every method of `service`.
  explicit RpcMetrics(const google::protobuf::ServiceDescriptor& service);
  RpcMetrics(const RpcMetrics&) = delete;
  RpcMetrics& operator=(const RpcMetrics&) = delete;

  /// An interceptor factory for grpc::ServerBuilder that counts the calls of the service into
  /// this object (which must outlive the server); calls of other services are not intercepted.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> InterceptorFactory();

  std::vector<prometheus::MetricFamily> Collect() const override;

  /// The figures of one method.
  struct Method {
    explicit Method(std::string path_in, std::string service_in, std::string name_in,
                    std::string type_in)
        : path(std::move(path_in)),
          service(std::move(service_in)),
          name(std::move(name_in)),
          type(std::move(type_in)),
          handling_ns(HandlingBounds()) {}
    const std::string path;     // "/collide.v1.Collide/Raycast", as gRPC names the method
    const std::string service;  // "collide.v1.Collide"
    const std::string name;     // "Raycast"
    const std::string type;     // unary, client_stream, server_stream, bidi_stream
    // gRPC hands the same method name pointer for every call of a method: remembered at the
    // first call so that later ones compare one pointer.
    std::atomic<const char*> seen_path{nullptr};
    std::atomic<uint64_t> started{0};
    std::atomic<uint64_t> received{0};
    std::atomic<uint64_t> sent{0};
    std::atomic<uint64_t> handled[17] = {};
    AtomicHistogram handling_ns;
  };

  /// The method gRPC calls `path`, or null when it is not one of the service's.
  Method* Find(const char* path) const;

 private:
  std::vector<std::unique_ptr<Method>> methods_;
};

}  // namespace collide
