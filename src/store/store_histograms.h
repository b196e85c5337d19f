#pragma once

#include <cstdint>

#include "base/atomic_histogram.h"

namespace collide {

/// The store's distributions, kept for whoever reports them (the server's /metrics): every
/// fsync of the log, every group commit, every snapshot written. Observing is lock-free.
struct StoreHistograms {
  /// Nanoseconds of each fsync of the log's active segment (group commits and periodic syncs),
  /// 10 us to about 10 s.
  AtomicHistogram fsync_ns{AtomicHistogram::ExponentialBounds(10'000, 2.0, 21)};
  /// Records written by each group commit (one write for everything queued), 1 to 65,536.
  AtomicHistogram group_commit_records{AtomicHistogram::ExponentialBounds(1, 2.0, 17)};
  /// Nanoseconds to write each scene snapshot (capture, wait for the log, encode, write, sync),
  /// 100 us to about 100 s.
  AtomicHistogram snapshot_ns{AtomicHistogram::ExponentialBounds(100'000, 2.0, 21)};
};

}  // namespace collide
