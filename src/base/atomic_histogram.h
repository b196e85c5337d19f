#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace collide {

/// A histogram of unsigned integer observations (nanoseconds, counts, bytes) over fixed bucket
/// bounds, for figures a layer keeps for whoever reports them (the server's /metrics reads them
/// at scrape time). Observe is lock-free (two relaxed atomic additions); Read may see an
/// observation in flight half counted (its bucket but not yet its sum), never a torn number.
class AtomicHistogram {
 public:
  /// What Read returns: per bucket (each bound, then the last one for values above every
  /// bound), the observations counted in it, not cumulative; the count and sum of all.
  struct Counts {
    std::vector<uint64_t> upper_bounds;
    std::vector<uint64_t> buckets;  // upper_bounds.size() + 1 entries
    uint64_t count = 0;
    uint64_t sum = 0;
  };

  /// `upper_bounds`: ascending; an observation goes to the first bucket whose bound it does not
  /// exceed (Prometheus's `le`).
  explicit AtomicHistogram(std::vector<uint64_t> upper_bounds)
      : upper_bounds_(std::move(upper_bounds)),
        buckets_(new std::atomic<uint64_t>[upper_bounds_.size() + 1]) {
    for (size_t i = 0; i <= upper_bounds_.size(); ++i) buckets_[i].store(0);
  }
  AtomicHistogram(const AtomicHistogram&) = delete;
  AtomicHistogram& operator=(const AtomicHistogram&) = delete;

  /// Counts one observation of `value`.
  void Observe(uint64_t value) {
    const size_t bucket =
        static_cast<size_t>(std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value) -
                            upper_bounds_.begin());
    buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(value, std::memory_order_relaxed);
  }

  /// The counts so far.
  Counts Read() const {
    Counts counts;
    counts.upper_bounds = upper_bounds_;
    counts.buckets.resize(upper_bounds_.size() + 1);
    for (size_t i = 0; i <= upper_bounds_.size(); ++i) {
      counts.buckets[i] = buckets_[i].load(std::memory_order_relaxed);
      counts.count += counts.buckets[i];
    }
    counts.sum = sum_.load(std::memory_order_relaxed);
    return counts;
  }

  /// `count` bounds from `first`, each `factor` times the one before (rounded down).
  static std::vector<uint64_t> ExponentialBounds(uint64_t first, double factor, size_t count) {
    std::vector<uint64_t> bounds;
    double bound = static_cast<double>(first);
    for (size_t i = 0; i < count; ++i) {
      bounds.push_back(static_cast<uint64_t>(bound));
      bound *= factor;
    }
    return bounds;
  }

 private:
  const std::vector<uint64_t> upper_bounds_;
  const std::unique_ptr<std::atomic<uint64_t>[]> buckets_;
  std::atomic<uint64_t> sum_{0};
};

}  // namespace collide
