#pragma once

#include <cstdint>
#include <vector>

#include "scene/update_batch.h"

namespace collide {

/// A deterministic stream of valid update batches for one scene, a function of its seed only:
/// batch k is the same in every process that asks for it (the crash test's child and the test
/// replaying it). Batches mix creates, replacements, moves, filter changes and removes of a few
/// dozen bodies, each valid against the state the batches before it leave.
class BatchStream {
 public:
  explicit BatchStream(uint64_t seed, int max_live = 48);

  /// The next batch (the first call returns batch 1).
  UpdateBatch Next();
  /// How many batches Next() has returned.
  uint64_t count() const { return count_; }

 private:
  uint64_t Random();
  float Uniform(float lo, float hi);
  Pose RandomPose();
  UpdateOp RandomUpsert(uint64_t id);

  uint64_t state_;
  const int max_live_;
  uint64_t count_ = 0;
  uint64_t next_id_ = 1;
  std::vector<uint64_t> live_;
};

}  // namespace collide
