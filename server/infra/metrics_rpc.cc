#include "server/infra/metrics_rpc.h"

#include <chrono>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/infra/metrics_family.h"

namespace collide {
namespace {

using grpc::experimental::InterceptionHookPoints;

// Counts one call of `method`: started when created, then each message received and sent, and
// the status with the time since the start.
class RpcInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit RpcInterceptor(RpcMetrics::Method* method)
      : method_(method), started_(std::chrono::steady_clock::now()) {
    method_->started.fetch_add(1, std::memory_order_relaxed);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() != nullptr) {
      method_->received.fetch_add(1, std::memory_order_relaxed);
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE)) {
      method_->sent.fetch_add(1, std::memory_order_relaxed);
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const int code = static_cast<int>(methods->GetSendStatus().error_code());
      method_->handled[code >= 0 && code < 17 ? code : 2].fetch_add(1, std::memory_order_relaxed);
      method_->handling_ns.Observe(
          static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now() - started_)
                                    .count()));
    }
    methods->Proceed();
  }

 private:
  RpcMetrics::Method* const method_;
  const std::chrono::steady_clock::time_point started_;
};

class RpcInterceptorFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit RpcInterceptorFactory(const RpcMetrics* metrics) : metrics_(metrics) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    RpcMetrics::Method* method = metrics_->Find(info->method());
    return method == nullptr ? nullptr : new RpcInterceptor(method);
  }

 private:
  const RpcMetrics* const metrics_;
};

}  // namespace

std::vector<uint64_t> RpcMetrics::HandlingBounds() {
  return {25'000,      50'000,      100'000,       250'000,       500'000,       1'000'000,
          2'500'000,   5'000'000,   10'000'000,    25'000'000,    50'000'000,    100'000'000,
          250'000'000, 500'000'000, 1'000'000'000, 2'500'000'000, 5'000'000'000, 10'000'000'000};
}

RpcMetrics::RpcMetrics(const google::protobuf::ServiceDescriptor& service) {
  for (int i = 0; i < service.method_count(); ++i) {
    const google::protobuf::MethodDescriptor& m = *service.method(i);
    const char* type = m.client_streaming()
                           ? (m.server_streaming() ? "bidi_stream" : "client_stream")
                           : (m.server_streaming() ? "server_stream" : "unary");
    methods_.push_back(
        std::make_unique<Method>(absl::StrCat("/", service.full_name(), "/", m.name()),
                                 service.full_name(), m.name(), type));
  }
}

RpcMetrics::Method* RpcMetrics::Find(const char* path) const {
  if (path == nullptr) return nullptr;
  for (const std::unique_ptr<Method>& method : methods_) {
    if (method->seen_path.load(std::memory_order_relaxed) == path) return method.get();
  }
  for (const std::unique_ptr<Method>& method : methods_) {
    if (std::strcmp(method->path.c_str(), path) == 0) {
      method->seen_path.store(path, std::memory_order_relaxed);
      return method.get();
    }
  }
  return nullptr;
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
RpcMetrics::InterceptorFactory() {
  return std::make_unique<RpcInterceptorFactory>(this);
}

std::vector<prometheus::MetricFamily> RpcMetrics::Collect() const {
  using prometheus::MetricType;
  MetricFamilyBuilder started("grpc_server_started_total", "RPCs started on the server.",
                              MetricType::Counter);
  MetricFamilyBuilder handled("grpc_server_handled_total",
                              "RPCs completed on the server, by status code.", MetricType::Counter);
  MetricFamilyBuilder seconds("grpc_server_handling_seconds",
                              "Time from the start of an RPC to its status being sent, seconds.",
                              MetricType::Histogram);
  MetricFamilyBuilder received("grpc_server_msg_received_total",
                               "Messages received from clients, per RPC method.",
                               MetricType::Counter);
  MetricFamilyBuilder sent("grpc_server_msg_sent_total",
                           "Messages sent to clients, per RPC method.", MetricType::Counter);
  for (const std::unique_ptr<Method>& m : methods_) {
    const MetricFamilyBuilder::Labels labels = {
        {"grpc_method", m->name}, {"grpc_service", m->service}, {"grpc_type", m->type}};
    started.Add(labels, static_cast<double>(m->started.load(std::memory_order_relaxed)));
    received.Add(labels, static_cast<double>(m->received.load(std::memory_order_relaxed)));
    sent.Add(labels, static_cast<double>(m->sent.load(std::memory_order_relaxed)));
    seconds.AddHistogram(labels, m->handling_ns.Read(), 1e-9);
    for (int code = 0; code < 17; ++code) {
      MetricFamilyBuilder::Labels with_code = labels;
      with_code.insert(with_code.begin(), {"grpc_code", StatusCodeName(code)});
      handled.Add(with_code, static_cast<double>(m->handled[code].load(std::memory_order_relaxed)));
    }
  }
  std::vector<prometheus::MetricFamily> families;
  families.push_back(started.Build());
  families.push_back(handled.Build());
  families.push_back(seconds.Build());
  families.push_back(received.Build());
  families.push_back(sent.Build());
  return families;
}

}  // namespace collide
