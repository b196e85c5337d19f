#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace collide::bench {

/// Latencies in nanoseconds, in log-linear buckets (64 per power of two: under 1.6% error), so
/// that any number of samples costs a fixed 30 KiB and percentiles are exact to a bucket.
class LatencyHistogram {
 public:
  LatencyHistogram() : counts_(kBuckets, 0) {}

  /// Adds one sample (negative values count as 0).
  void Record(int64_t ns) {
    const uint64_t v = ns < 0 ? 0 : static_cast<uint64_t>(ns);
    ++counts_[Index(v)];
    ++count_;
    max_ = std::max(max_, v);
  }
  /// Adds every sample of `other`.
  void Merge(const LatencyHistogram& other) {
    for (int i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
    count_ += other.count_;
    max_ = std::max(max_, other.max_);
  }
  /// Forgets every sample.
  void Clear() {
    std::fill(counts_.begin(), counts_.end(), 0);
    count_ = 0;
    max_ = 0;
  }
  /// The number of samples.
  uint64_t count() const { return count_; }
  /// The largest sample, in nanoseconds.
  uint64_t max() const { return max_; }
  /// The `p`-quantile (0 to 1), the middle of its bucket, in nanoseconds; 0 when empty.
  double Percentile(double p) const {
    if (count_ == 0) return 0;
    const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(p * count_ + 0.5));
    uint64_t seen = 0;
    for (int i = 0; i < kBuckets; ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::min<double>(Middle(i), static_cast<double>(max_));
    }
    return static_cast<double>(max_);
  }

 private:
  static constexpr int kSubBits = 6;
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kBuckets = kSub * (64 - kSubBits + 1);

  static int Index(uint64_t v) {
    if (v < kSub) return static_cast<int>(v);
    const int msb = std::bit_width(v) - 1;
    const int shift = msb - kSubBits;
    return (shift + 1) * kSub + static_cast<int>((v >> shift) - kSub);
  }
  static double Middle(int index) {
    if (index < kSub) return index;
    const int shift = index / kSub - 1;
    const uint64_t low = static_cast<uint64_t>(index % kSub + kSub) << shift;
    return static_cast<double>(low) + 0.5 * static_cast<double>((uint64_t{1} << shift) - 1);
  }

  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t max_ = 0;
};

}  // namespace collide::bench
