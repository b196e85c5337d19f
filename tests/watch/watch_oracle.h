#pragma once

// The brute-force replay of watch semantics: every fence against every body and every pair of
// bodies after every batch, the sweeps by dense sampling and bisection (geom/sweep_oracle.h).
// It shares no code with src/watch: it keeps its own body table, applies the batches itself
// and decides every pair from the definitions.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "geom/pose.h"
#include "geom/shapes.h"
#include "scene/update_batch.h"
#include "watch/watch_types.h"

namespace collide::testing {

/// A fence event with the oracle's first contact, for judging the reported point and normal.
struct OracleEvent {
  WatchEvent event;
  /// For an enter first touched during the slide (after its start): true, and the shapes at
  /// that moment; otherwise the shapes where the enter's minimum translation is measured.
  bool swept = false;
  Shape body_shape{};
  Pose body_pose{};
  Shape fence_shape{};
  Pose fence_pose{};
};

/// The oracle's state and its replay of batches.
class WatchOracle {
 public:
  /// `eps`: the sampling's tie distance (every fence dimension must be >= 2 eps).
  WatchOracle(std::vector<FenceSpec> fences, std::vector<ContactWatchSpec> contacts, float eps);

  /// The events `batch` (valid for the current state) would produce, in the documented order;
  /// sets `*ambiguous` when some slide comes within eps of touching a fence (then the events
  /// cannot be judged). Does not change the state.
  std::vector<OracleEvent> Preview(const UpdateBatch& batch, bool* ambiguous) const;
  /// Applies `batch` (after Preview), updating bodies, fence contents and contacts.
  void Commit(const UpdateBatch& batch);
  /// The whole state as a snapshot (version and tick left 0).
  WatchSnapshot Snapshot() const;

  /// The bodies, by id.
  struct OracleBody {
    Shape shape{};
    Pose pose{};
    uint32_t category = 1;
    uint32_t mask = ~0u;
  };
  const std::map<uint64_t, OracleBody>& bodies() const { return bodies_; }

 private:
  struct Result {
    std::vector<OracleEvent> events;
    std::map<uint64_t, std::set<uint64_t>> inside;
    std::set<std::tuple<uint64_t, uint64_t, uint64_t>> contacts;
    std::map<uint64_t, OracleBody> bodies;
    bool ambiguous = false;
  };
  Result Run(const UpdateBatch& batch) const;

  std::vector<FenceSpec> fences_;
  std::vector<ContactWatchSpec> contacts_;
  float eps_;
  std::map<uint64_t, OracleBody> bodies_;
  std::map<uint64_t, std::set<uint64_t>> inside_;
  std::set<std::tuple<uint64_t, uint64_t, uint64_t>> contact_pairs_;
};

}  // namespace collide::testing
