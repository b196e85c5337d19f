#include "server/infra/metrics_service.h"

#include <atomic>

#include "server/infra/metrics_family.h"

namespace collide {
namespace {

// Label values, in the order of ShapeQuery's alternatives, CollectMode, QueryRpc and
// UpdateOpType.
constexpr const char* kKindNames[kQueryKindCount] = {"raycast", "sphere_cast", "overlap",
                                                     "within_radius", "region"};
constexpr const char* kModeNames[kCollectModeCount] = {"closest", "any", "all"};
constexpr const char* kRpcNames[kQueryRpcCount] = {"QueryStream", "Raycast", "SphereCast",
                                                   "Overlap"};
constexpr const char* kOpNames[kUpdateOpTypeCount] = {"upsert", "move", "set_filter", "remove"};

double Read(const std::atomic<uint64_t>& counter) {
  return static_cast<double>(counter.load(std::memory_order_relaxed));
}

}  // namespace

std::vector<prometheus::MetricFamily> ServiceMetrics::Collect() const {
  using prometheus::MetricType;
  const ServiceCounters& c = *counters_;
  MetricFamilyBuilder queries("collide_queries_total",
                              "Queries answered (unary and QueryStream), by kind and mode.",
                              MetricType::Counter);
  for (int kind = 0; kind < kQueryKindCount; ++kind) {
    for (int mode = 0; mode < kCollectModeCount; ++mode) {
      queries.Add({{"kind", kKindNames[kind]}, {"mode", kModeNames[mode]}},
                  Read(c.queries[kind][mode]));
    }
  }
  MetricFamilyBuilder hits("collide_query_hits_total", "Hits returned by the queries answered.",
                           MetricType::Counter);
  hits.Add({}, Read(c.query_hits));
  MetricFamilyBuilder batches(
      "collide_query_batches_total",
      "Query batches answered, by rpc (a unary Raycast, SphereCast or Overlap is a batch of one).",
      MetricType::Counter);
  for (int rpc = 0; rpc < kQueryRpcCount; ++rpc) {
    batches.Add({{"rpc", kRpcNames[rpc]}}, Read(c.query_batches[rpc]));
  }
  MetricFamilyBuilder updates(
      "collide_update_batches_total",
      "Update batches applied (UpdateStream messages, UpsertBodies and RemoveBodies calls; "
      "duplicates are not counted).",
      MetricType::Counter);
  updates.Add({}, Read(c.update_batches));
  MetricFamilyBuilder ops("collide_update_ops_total",
                          "Operations of the update batches applied, by op (move: a pose set).",
                          MetricType::Counter);
  for (int op = 0; op < kUpdateOpTypeCount; ++op) {
    ops.Add({{"op", kOpNames[op]}}, Read(c.update_ops[op]));
  }
  MetricFamilyBuilder rejected("collide_update_batches_rejected_total",
                               "Update batches refused (nothing applied), by status code.",
                               MetricType::Counter);
  for (int code = 1; code < kStatusCodeCount; ++code) {
    rejected.Add({{"grpc_code", StatusCodeName(code)}}, Read(c.update_batches_rejected[code]));
  }
  std::vector<prometheus::MetricFamily> families;
  families.push_back(queries.Build());
  families.push_back(hits.Build());
  families.push_back(batches.Build());
  families.push_back(updates.Build());
  families.push_back(ops.Build());
  families.push_back(rejected.Build());
  return families;
}

}  // namespace collide
