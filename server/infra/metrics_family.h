#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "base/atomic_histogram.h"
#include "prometheus/metric_family.h"

namespace collide {

/// The name of status code `code` (0 to 16) as gRPC spells it: OK, CANCELLED,
/// INVALID_ARGUMENT, ... (the grpc_code label's values); "UNKNOWN" for any other number.
const char* StatusCodeName(int code);

/// Builds one metric family of the exposition from figures read at scrape time (the server's
/// collectables use it instead of prometheus-cpp's own counters, which their hot paths would
/// pay a compare-and-swap loop or a mutex for).
class MetricFamilyBuilder {
 public:
  /// Labels of one series: (name, value) pairs.
  using Labels = std::vector<std::pair<std::string, std::string>>;

  MetricFamilyBuilder(std::string name, std::string help, prometheus::MetricType type);

  /// Adds a counter or gauge series (by the family's type).
  MetricFamilyBuilder& Add(const Labels& labels, double value);
  /// Adds a histogram series from `counts`, each observation and bound multiplied by `scale`
  /// (1e-9 for nanoseconds reported in seconds).
  MetricFamilyBuilder& AddHistogram(const Labels& labels, const AtomicHistogram::Counts& counts,
                                    double scale = 1.0);

  /// The family.
  prometheus::MetricFamily Build() { return std::move(family_); }

 private:
  prometheus::MetricFamily family_;
};

}  // namespace collide
