#include "server/infra/metrics_family.h"

#include <limits>

namespace collide {
namespace {

std::vector<prometheus::ClientMetric::Label> ToLabels(const MetricFamilyBuilder::Labels& labels) {
  std::vector<prometheus::ClientMetric::Label> out;
  out.reserve(labels.size());
  for (const auto& [name, value] : labels) out.push_back({name, value});
  return out;
}

constexpr const char* kCodeNames[17] = {
    "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
    "DATA_LOSS", "UNAUTHENTICATED"};

}  // namespace

const char* StatusCodeName(int code) {
  return code >= 0 && code < 17 ? kCodeNames[code] : "UNKNOWN";
}

MetricFamilyBuilder::MetricFamilyBuilder(std::string name, std::string help,
                                         prometheus::MetricType type) {
  family_.name = std::move(name);
  family_.help = std::move(help);
  family_.type = type;
}

MetricFamilyBuilder& MetricFamilyBuilder::Add(const Labels& labels, double value) {
  prometheus::ClientMetric& metric = family_.metric.emplace_back();
  metric.label = ToLabels(labels);
  if (family_.type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  return *this;
}

MetricFamilyBuilder& MetricFamilyBuilder::AddHistogram(const Labels& labels,
                                                       const AtomicHistogram::Counts& counts,
                                                       double scale) {
  prometheus::ClientMetric& metric = family_.metric.emplace_back();
  metric.label = ToLabels(labels);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < counts.buckets.size(); ++i) {
    cumulative += counts.buckets[i];
    metric.histogram.bucket.push_back(
        {cumulative, i < counts.upper_bounds.size()
                         ? static_cast<double>(counts.upper_bounds[i]) * scale
                         : std::numeric_limits<double>::infinity()});
  }
  // The count is the +Inf bucket's, so that the exposition is consistent even when an
  // observation was read half counted.
  metric.histogram.sample_count = cumulative;
  metric.histogram.sample_sum = static_cast<double>(counts.sum) * scale;
  return *this;
}

}  // namespace collide
