#pragma once

#include <vector>

#include "prometheus/collectable.h"
#include "server/infra/service_counters.h"

namespace collide {

/// The service's query and update figures (ServiceCounters) as metric families, read at scrape
/// time: collide_queries_total{kind,mode}, collide_query_hits_total,
/// collide_query_batches_total{rpc}, collide_update_batches_total, collide_update_ops_total{op},
/// collide_update_batches_rejected_total{grpc_code}. Every series exists from the start.
class ServiceMetrics final : public prometheus::Collectable {
 public:
  /// `counters` must outlive this object.
  explicit ServiceMetrics(const ServiceCounters* counters) : counters_(counters) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const ServiceCounters* const counters_;
};

}  // namespace collide
