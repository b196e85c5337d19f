#pragma once

// The brute force the interest sets are checked against: after every batch, every observer's
// set is computed from every body of the scene (no grid, no dirty observers, no radius guess, no
// partial selection), with the hysteresis of the oracle's own previous sets.

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "scene/scene.h"
#include "watch/interest_set.h"
#include "watch/interest_types.h"

namespace collide::testing {

class InterestOracle {
 public:
  /// The scene's bodies now.
  static std::vector<BodyState> BodiesOf(const Scene& scene) { return scene.CaptureState().bodies; }

  /// Applies observer changes as InterestSet::ApplyChanges does; the new and changed observers'
  /// sets are computed at `bodies`.
  void ApplyChanges(std::span<const InterestSet::Change> changes,
                    const std::vector<BodyState>& bodies);
  /// Computes every observer's set at `bodies` from its previous one.
  void Evaluate(const std::vector<BodyState>& bodies);

  /// Every observer's set, ascending.
  const std::map<uint64_t, std::vector<uint64_t>>& sets() const { return sets_; }
  const std::map<uint64_t, ObserverSpec>& specs() const { return specs_; }

  /// One observer's set at `bodies` given its previous set `before` (ascending).
  static std::vector<uint64_t> Compute(const ObserverSpec& spec,
                                       const std::vector<uint64_t>& before,
                                       const std::vector<BodyState>& bodies);

 private:
  std::map<uint64_t, ObserverSpec> specs_;
  std::map<uint64_t, std::vector<uint64_t>> sets_;
};

}  // namespace collide::testing
