#include "server/infra/metrics.h"

#include <cassert>
#include <string>
#include <utility>

#include "collide/v1/collide.grpc.pb.h"
#include "collide/v1/collide.pb.h"
#include "collide/version.h"
#include "google/protobuf/descriptor.h"
#include "server/infra/metrics_process.h"
#include "server/infra/metrics_replication.h"
#include "server/infra/metrics_scenes.h"
#include "server/infra/metrics_service.h"
#include "server/infra/metrics_store.h"
#include "server/infra/metrics_streams.h"

namespace collide {

namespace {

// collide.v1.Collide's descriptor (its file is registered with the generated pool by linking
// the generated messages, which QueryBatch's descriptor makes sure of).
const google::protobuf::ServiceDescriptor& CollideServiceDescriptor() {
  v1::QueryBatch::descriptor();
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          std::string(v1::Collide::service_full_name()));
  assert(service != nullptr);
  return *service;
}

}  // namespace

ServerMetrics::ServerMetrics(const MetricsOptions& options)
    : options_(options), rpc_(std::make_shared<RpcMetrics>(CollideServiceDescriptor())) {}

absl::StatusOr<std::unique_ptr<ServerMetrics>> ServerMetrics::Start(const MetricsOptions& options) {
  absl::StatusOr<HttpAddress> address =
      ParseHttpAddress(options.address, options.allow_remote, "metrics_address");
  if (!address.ok()) return address.status();
  auto metrics = std::unique_ptr<ServerMetrics>(new ServerMetrics(options));
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint = MetricsEndpoint::Start(*address);
  if (!endpoint.ok()) return endpoint.status();
  metrics->endpoint_ = *std::move(endpoint);
  metrics->port_ = metrics->endpoint_->port();
  metrics->bound_address_ = metrics->endpoint_->bound_address();
  metrics->endpoint_->Register(metrics->rpc_);
  metrics->endpoint_->Register(std::make_shared<ServiceMetrics>(&metrics->counters_));
  metrics->endpoint_->Register(std::make_shared<ProcessMetrics>(kVersion, kCommit, kBuildType));
  return metrics;
}

ServerMetrics::~ServerMetrics() { Stop(); }

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
ServerMetrics::InterceptorFactory() {
  return rpc_->InterceptorFactory();
}

void ServerMetrics::Attach(const MetricsSources& sources) {
  if (endpoint_ == nullptr) return;
  endpoint_->Register(std::make_shared<StreamMetrics>(sources.streams, sources.watches));
  endpoint_->Register(std::make_shared<SceneMetrics>(sources.database, options_.max_scenes));
  endpoint_->Register(std::make_shared<StoreMetrics>(sources.database));
  if (sources.replication != nullptr) {
    endpoint_->Register(
        std::make_shared<ReplicationMetrics>(sources.replication, options_.max_scenes));
  }
}

void ServerMetrics::Stop() { endpoint_.reset(); }

}  // namespace collide
