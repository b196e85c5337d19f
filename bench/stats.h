#pragma once

// Order statistics of a benchmark's samples (run times, rates, latencies), one rule for every
// benchmark: the median of an even count is the mean of the two middle values, and a percentile
// is the sample at the nearest rank (index p * (n - 1), rounded).

#include <algorithm>
#include <cstddef>
#include <vector>

namespace collide::bench {

/// The median of `samples`: the middle value, or the mean of the two middle values of an even
/// count; 0 when there are none.
inline double Median(std::vector<double> samples) {
  if (samples.empty()) return 0.0;
  std::sort(samples.begin(), samples.end());
  const size_t middle = samples.size() / 2;
  if (samples.size() % 2 == 1) return samples[middle];
  return 0.5 * (samples[middle - 1] + samples[middle]);
}

/// The `p`-quantile (0 to 1) of `samples`: the sample at index p * (n - 1) rounded to the
/// nearest, of the sorted samples (0: the smallest, 1: the largest); 0 when there are none.
inline double Percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return 0.0;
  std::sort(samples.begin(), samples.end());
  const double clamped = std::clamp(p, 0.0, 1.0);
  const auto index = static_cast<size_t>(clamped * static_cast<double>(samples.size() - 1) + 0.5);
  return samples[std::min(index, samples.size() - 1)];
}

}  // namespace collide::bench
