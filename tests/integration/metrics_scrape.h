#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace collide::integration {

/// The body of `GET <path>` from 127.0.0.1:`port` over HTTP/1.0 (a plain socket, no client
/// library); an error unless the answer is `200`.
absl::StatusOr<std::string> HttpGet(int port, absl::string_view path);

/// One sample of a Prometheus text exposition: `name{labels} value`.
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

/// The samples of a text exposition (comment lines skipped); an error naming the line that does
/// not parse.
absl::StatusOr<std::vector<Sample>> ParseExposition(absl::string_view text);

/// The value of the one sample named `name` whose labels are exactly `labels`; nullopt when
/// there is none.
std::optional<double> SampleValue(const std::vector<Sample>& samples, absl::string_view name,
                                  const std::map<std::string, std::string>& labels = {});

/// The sum of the samples named `name` (every label set).
double SampleSum(const std::vector<Sample>& samples, absl::string_view name);

/// Scrapes 127.0.0.1:`port`/metrics and parses it.
absl::StatusOr<std::vector<Sample>> Scrape(int port);

}  // namespace collide::integration
