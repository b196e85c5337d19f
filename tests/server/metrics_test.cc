// The /metrics collectors in process: the families and series they build from known figures,
// the scene label's bound, /proc/self/stat parsing, and --metrics_address checks.

#include <algorithm>
#include <cmath>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "collide/v1/collide.grpc.pb.h"
#include "collide/v1/collide.pb.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "prometheus/text_serializer.h"
#include "server/infra/metrics_endpoint.h"
#include "server/infra/metrics_family.h"
#include "server/infra/metrics_process.h"
#include "server/infra/metrics_rpc.h"
#include "server/infra/metrics_scenes.h"
#include "server/infra/metrics_service.h"

namespace collide {
namespace {

const prometheus::MetricFamily* FamilyNamed(const std::vector<prometheus::MetricFamily>& families,
                                            const std::string& name) {
  for (const prometheus::MetricFamily& family : families) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

std::map<std::string, std::string> LabelsOf(const prometheus::ClientMetric& metric) {
  std::map<std::string, std::string> labels;
  for (const auto& label : metric.label) labels[label.name] = label.value;
  return labels;
}

// The counter value of the series of `family` with exactly `labels`; NaN when absent.
double CounterOf(const std::vector<prometheus::MetricFamily>& families, const std::string& family,
                 const std::map<std::string, std::string>& labels) {
  const prometheus::MetricFamily* found = FamilyNamed(families, family);
  if (found == nullptr) return NAN;
  for (const prometheus::ClientMetric& metric : found->metric) {
    if (LabelsOf(metric) == labels) return metric.counter.value;
  }
  return NAN;
}

TEST(MetricFamilyBuilder, HistogramBucketsAreCumulativeAndScaled) {
  AtomicHistogram histogram({1000, 2000});
  for (uint64_t value : {500u, 1500u, 1500u, 9000u}) histogram.Observe(value);
  prometheus::MetricFamily family =
      MetricFamilyBuilder("h", "help", prometheus::MetricType::Histogram)
          .AddHistogram({{"a", "b"}}, histogram.Read(), 1e-3)
          .Build();
  ASSERT_EQ(family.metric.size(), 1u);
  const prometheus::ClientMetric::Histogram& h = family.metric[0].histogram;
  ASSERT_EQ(h.bucket.size(), 3u);
  EXPECT_EQ(h.bucket[0].cumulative_count, 1u);
  EXPECT_DOUBLE_EQ(h.bucket[0].upper_bound, 1.0);
  EXPECT_EQ(h.bucket[1].cumulative_count, 3u);
  EXPECT_DOUBLE_EQ(h.bucket[1].upper_bound, 2.0);
  EXPECT_EQ(h.bucket[2].cumulative_count, 4u);
  EXPECT_TRUE(std::isinf(h.bucket[2].upper_bound));
  EXPECT_EQ(h.sample_count, 4u);
  EXPECT_DOUBLE_EQ(h.sample_sum, 12.5);
}

TEST(StatusCodeName, GrpcSpellings) {
  EXPECT_STREQ(StatusCodeName(0), "OK");
  EXPECT_STREQ(StatusCodeName(1), "CANCELLED");
  EXPECT_STREQ(StatusCodeName(3), "INVALID_ARGUMENT");
  EXPECT_STREQ(StatusCodeName(16), "UNAUTHENTICATED");
  EXPECT_STREQ(StatusCodeName(17), "UNKNOWN");
  EXPECT_STREQ(StatusCodeName(-1), "UNKNOWN");
}

TEST(RpcMetrics, EveryMethodAndCodeHasASeriesFromTheStart) {
  v1::QueryBatch::descriptor();
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName("collide.v1.Collide");
  ASSERT_NE(service, nullptr);
  RpcMetrics metrics(*service);
  const std::vector<prometheus::MetricFamily> families = metrics.Collect();
  const prometheus::MetricFamily* started = FamilyNamed(families, "grpc_server_started_total");
  ASSERT_NE(started, nullptr);
  EXPECT_EQ(started->metric.size(), static_cast<size_t>(service->method_count()));
  const prometheus::MetricFamily* handled = FamilyNamed(families, "grpc_server_handled_total");
  ASSERT_NE(handled, nullptr);
  EXPECT_EQ(handled->metric.size(), static_cast<size_t>(service->method_count()) * 17);
  EXPECT_EQ(CounterOf(families, "grpc_server_started_total",
                      {{"grpc_method", "Watch"},
                       {"grpc_service", "collide.v1.Collide"},
                       {"grpc_type", "server_stream"}}),
            0.0);
  EXPECT_EQ(CounterOf(families, "grpc_server_started_total",
                      {{"grpc_method", "UpdateStream"},
                       {"grpc_service", "collide.v1.Collide"},
                       {"grpc_type", "bidi_stream"}}),
            0.0);

  // Methods are found by gRPC's path; other services' are not counted.
  RpcMetrics::Method* raycast = metrics.Find("/collide.v1.Collide/Raycast");
  ASSERT_NE(raycast, nullptr);
  EXPECT_EQ(raycast->name, "Raycast");
  EXPECT_EQ(raycast->type, "unary");
  EXPECT_EQ(metrics.Find("/collide.v1.Collide/Raycast"), raycast);
  EXPECT_EQ(metrics.Find("/grpc.health.v1.Health/Check"), nullptr);
  EXPECT_EQ(metrics.Find("/collide.v1.Collide/"), nullptr);
  EXPECT_EQ(metrics.Find(nullptr), nullptr);
  raycast->started += 3;
  raycast->handled[5] += 2;
  const std::vector<prometheus::MetricFamily> after = metrics.Collect();
  const std::map<std::string, std::string> labels = {
      {"grpc_method", "Raycast"}, {"grpc_service", "collide.v1.Collide"}, {"grpc_type", "unary"}};
  EXPECT_EQ(CounterOf(after, "grpc_server_started_total", labels), 3.0);
  std::map<std::string, std::string> not_found = labels;
  not_found["grpc_code"] = "NOT_FOUND";
  EXPECT_EQ(CounterOf(after, "grpc_server_handled_total", not_found), 2.0);
}

TEST(ServiceMetrics, CountsQueriesByKindAndModePerBatch) {
  ServiceCounters counters;
  std::vector<Query> queries(5);
  queries[0].shape_query = RaycastQuery{};
  queries[0].mode = CollectMode::kAny;
  queries[1].shape_query = RaycastQuery{};
  queries[1].mode = CollectMode::kAny;
  queries[2].shape_query = RegionQuery{};
  queries[2].mode = CollectMode::kAll;
  queries[3].shape_query = WithinRadiusQuery{};
  queries[3].mode = CollectMode::kClosest;
  queries[4].shape_query = SphereCastQuery{};
  queries[4].mode = CollectMode::kClosest;
  counters.CountQueryBatch(QueryRpc::kQueryStream, queries, 17);
  // Of two more raycasts, one was refused for its tick: not counted.
  const std::vector<absl::Status> errors = {absl::OkStatus(), absl::OutOfRangeError("at_tick")};
  counters.CountQueryBatch(QueryRpc::kQueryStream, std::span<const Query>(queries.data(), 2), 0,
                           errors);
  counters.CountQuery(QueryRpc::kOverlap, 2, CollectMode::kAll, 4);
  UpdateBatch batch;
  batch.ops = {SetPoseOp(1, Pose{}), SetPoseOp(2, Pose{}), RemoveOp(3)};
  counters.CountUpdate(absl::OkStatus(), false, ServiceCounters::CountOps(batch));
  counters.CountUpdate(absl::OkStatus(), /*duplicate=*/true, ServiceCounters::CountOps(batch));
  counters.CountUpdate(absl::InvalidArgumentError("x"), false, ServiceCounters::CountOps(batch));

  const std::vector<prometheus::MetricFamily> families = ServiceMetrics(&counters).Collect();
  EXPECT_EQ(CounterOf(families, "collide_queries_total", {{"kind", "raycast"}, {"mode", "any"}}),
            3.0);
  EXPECT_EQ(CounterOf(families, "collide_queries_total", {{"kind", "region"}, {"mode", "all"}}),
            1.0);
  EXPECT_EQ(CounterOf(families, "collide_queries_total",
                      {{"kind", "within_radius"}, {"mode", "closest"}}),
            1.0);
  EXPECT_EQ(
      CounterOf(families, "collide_queries_total", {{"kind", "sphere_cast"}, {"mode", "closest"}}),
      1.0);
  EXPECT_EQ(CounterOf(families, "collide_queries_total", {{"kind", "overlap"}, {"mode", "all"}}),
            1.0);
  EXPECT_EQ(CounterOf(families, "collide_queries_total", {{"kind", "overlap"}, {"mode", "any"}}),
            0.0);
  EXPECT_EQ(FamilyNamed(families, "collide_queries_total")->metric.size(), 15u);
  EXPECT_EQ(CounterOf(families, "collide_query_hits_total", {}), 21.0);
  EXPECT_EQ(CounterOf(families, "collide_query_batches_total", {{"rpc", "QueryStream"}}), 2.0);
  EXPECT_EQ(CounterOf(families, "collide_query_batches_total", {{"rpc", "Overlap"}}), 1.0);
  EXPECT_EQ(CounterOf(families, "collide_query_batches_total", {{"rpc", "Raycast"}}), 0.0);
  EXPECT_EQ(CounterOf(families, "collide_update_batches_total", {}), 1.0);
  EXPECT_EQ(CounterOf(families, "collide_update_ops_total", {{"op", "move"}}), 2.0);
  EXPECT_EQ(CounterOf(families, "collide_update_ops_total", {{"op", "remove"}}), 1.0);
  EXPECT_EQ(CounterOf(families, "collide_update_ops_total", {{"op", "upsert"}}), 0.0);
  EXPECT_EQ(CounterOf(families, "collide_update_batches_rejected_total",
                      {{"grpc_code", "INVALID_ARGUMENT"}}),
            1.0);
  // Every refusal code has its series; OK is not one.
  EXPECT_EQ(FamilyNamed(families, "collide_update_batches_rejected_total")->metric.size(), 16u);
}

TEST(BoundSceneRows, KeepsTheFirstScenesAndSumsTheRest) {
  std::vector<SceneRow> rows;
  for (int i = 0; i < 5; ++i) {
    rows.push_back(SceneRow{.name = std::string(1, static_cast<char>('a' + i)),
                            .bodies = static_cast<uint64_t>(i + 1),
                            .version = static_cast<uint64_t>(10 * (5 - i)),
                            .tick = static_cast<uint64_t>(i),
                            .history_bytes = 100,
                            .memory_bytes = 1000,
                            .log_bytes = 7});
  }
  const std::vector<SceneRow> bounded = BoundSceneRows(rows, 2);
  ASSERT_EQ(bounded.size(), 3u);
  EXPECT_EQ(bounded[0].name, "a");
  EXPECT_EQ(bounded[1].name, "b");
  EXPECT_EQ(bounded[2].name, kOtherScenes);
  EXPECT_EQ(bounded[2].bodies, 3u + 4 + 5);
  EXPECT_EQ(bounded[2].version, 30u);  // the largest of c, d, e
  EXPECT_EQ(bounded[2].tick, 4u);
  EXPECT_EQ(bounded[2].history_bytes, 300u);
  EXPECT_EQ(bounded[2].memory_bytes, 3000u);
  EXPECT_EQ(bounded[2].log_bytes, 21u);

  EXPECT_EQ(BoundSceneRows(rows, 5).size(), 5u);
  EXPECT_EQ(BoundSceneRows(rows, SIZE_MAX).size(), 5u);
  const std::vector<SceneRow> all_other = BoundSceneRows(rows, 0);
  ASSERT_EQ(all_other.size(), 1u);
  EXPECT_EQ(all_other[0].bodies, 15u);
  EXPECT_TRUE(BoundSceneRows({}, 0).empty());
}

TEST(ParseProcessStat, ReadsTheFieldsAfterTheCommand) {
  // A command with spaces and parentheses; utime 250, stime 150 ticks; 9 threads; started at
  // tick 1000; 4 MiB virtual; 300 pages resident.
  const std::string stat =
      "1234 (my (odd) server) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 150 0 0 20 0 9 0 1000 "
      "4194304 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
  const std::optional<ProcessStat> parsed = ParseProcessStat(stat, 100, 4096, 1.7e9);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_DOUBLE_EQ(parsed->cpu_seconds, 4.0);
  EXPECT_DOUBLE_EQ(parsed->threads, 9);
  EXPECT_DOUBLE_EQ(parsed->start_time_seconds, 1.7e9 + 10);
  EXPECT_DOUBLE_EQ(parsed->virtual_bytes, 4194304);
  EXPECT_DOUBLE_EQ(parsed->resident_bytes, 300 * 4096);

  EXPECT_FALSE(ParseProcessStat("", 100, 4096, 0).has_value());
  EXPECT_FALSE(ParseProcessStat("1234 (x) S 1 2 3", 100, 4096, 0).has_value());
  EXPECT_FALSE(ParseProcessStat("1234 no parenthesis", 100, 4096, 0).has_value());
  EXPECT_FALSE(ParseProcessStat(stat, 0, 4096, 0).has_value());
}

TEST(ProcessMetrics, ReportsThisProcessAndTheBuild) {
  const std::vector<prometheus::MetricFamily> families =
      ProcessMetrics("1.2.3", "", "Release").Collect();
  for (const char* name : {"process_cpu_seconds_total", "process_resident_memory_bytes",
                           "process_virtual_memory_bytes", "process_open_fds", "process_max_fds",
                           "process_threads", "process_start_time_seconds"}) {
    EXPECT_NE(FamilyNamed(families, name), nullptr) << name;
  }
  const prometheus::MetricFamily* threads = FamilyNamed(families, "process_threads");
  ASSERT_NE(threads, nullptr);
  EXPECT_GE(threads->metric[0].gauge.value, 1.0);
  const prometheus::MetricFamily* build = FamilyNamed(families, "collide_build_info");
  ASSERT_NE(build, nullptr);
  ASSERT_EQ(build->metric.size(), 1u);
  EXPECT_EQ(LabelsOf(build->metric[0]),
            (std::map<std::string, std::string>{
                {"build_type", "Release"}, {"commit", "unknown"}, {"version", "1.2.3"}}));
  EXPECT_EQ(build->metric[0].gauge.value, 1.0);
}

TEST(ParseHttpAddress, AcceptsNumericHostsAndLocalhost) {
  auto v4 = ParseHttpAddress("127.0.0.1:9464", false, "metrics_address");
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(v4->port, 9464);
  EXPECT_EQ(v4->bind, "127.0.0.1:9464");
  auto local = ParseHttpAddress("localhost:0", false, "metrics_address");
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_EQ(local->bind, "127.0.0.1:0");
  EXPECT_EQ(local->host, "localhost");
  auto v6 = ParseHttpAddress("[::1]:65535", false, "metrics_address");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->bind, "[::1]:65535");
  EXPECT_TRUE(ParseHttpAddress("0.0.0.0:9464", true, "metrics_address").ok());
  EXPECT_TRUE(ParseHttpAddress("[::]:9464", true, "metrics_address").ok());
}

TEST(ParseHttpAddress, RefusesWithTheFlagName) {
  for (const char* bad :
       {"", "garbage", "9464", ":9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536",
        "127.0.0.1:18446744073709551615", "127.0.0.1:-1", "127.0.0.1:+80", "127.0.0.1:80x",
        "127.0.0.1: 80", "256.0.0.1:80", "127.0.0.1.5:80", "[::1:80", "[zz]:80", "[]:80",
        "host.example:80", "127.0.0.1:0080000"}) {
    auto parsed = ParseHttpAddress(bad, true, "metrics_address");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(absl::StartsWith(parsed.status().message(), "metrics_address: ")) << bad;
  }
  std::string with_nul("127.0.0.1\0:80", 13);
  EXPECT_FALSE(ParseHttpAddress(with_nul, true, "metrics_address").ok());
}

TEST(ParseHttpAddress, ANonLoopbackHostNeedsRemoteAllowed) {
  for (const char* remote : {"0.0.0.0:9464", "10.1.2.3:9464", "[::]:9464", "[2001:db8::1]:80"}) {
    auto refused = ParseHttpAddress(remote, false, "metrics_address");
    ASSERT_FALSE(refused.ok()) << remote;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << remote;
    EXPECT_TRUE(absl::StrContains(refused.status().message(), "without --token_file")) << remote;
  }
  EXPECT_TRUE(ParseHttpAddress("127.8.9.10:1", false, "metrics_address").ok());
}

TEST(MetricsEndpoint, ServesTheRegisteredFamilies) {
  auto address = ParseHttpAddress("127.0.0.1:0", false, "metrics_address");
  ASSERT_TRUE(address.ok());
  auto endpoint = MetricsEndpoint::Start(*address);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  EXPECT_GT((*endpoint)->port(), 0);
  EXPECT_EQ((*endpoint)->bound_address(), absl::StrCat("127.0.0.1:", (*endpoint)->port()));
  // The same port again: in use.
  HttpAddress same = *address;
  same.bind = absl::StrCat("127.0.0.1:", (*endpoint)->port());
  auto second = MetricsEndpoint::Start(same);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StartsWith(second.status().message(), "metrics_address: cannot listen on"))
      << second.status();
}

}  // namespace
}  // namespace collide
