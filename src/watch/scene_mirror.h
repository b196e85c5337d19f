#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "query/collision_world.h"
#include "scene/scene.h"
#include "scene/scene_observer.h"

namespace collide {

/// A copy of one scene's bodies and trees, brought from version to version by the scene's
/// applied batches (the after states of their change records): the state watches are evaluated
/// on away from the scene's writer, which goes on meanwhile. Not thread-safe.
///
/// Memory: about the scene's own (SceneStats::memory_bytes without the history).
class SceneMirror {
 public:
  SceneMirror() = default;
  SceneMirror(const SceneMirror&) = delete;
  SceneMirror& operator=(const SceneMirror&) = delete;

  /// Copies `scene`'s world at its current version (under the scene's reader lock: writers wait
  /// for the copy, O(bodies)), replacing whatever the mirror held.
  void Capture(const Scene& scene);
  /// Applies one batch's change records (sorted by id, as AppliedBatch holds them), which
  /// produced `version` with the scene at `tick`. The batch must follow the mirror's version.
  void Apply(std::span<const BodyChange> changes, uint64_t version, uint64_t tick);
  /// Runs `f(const SceneView& view)` on the mirror's state.
  void WithView(absl::FunctionRef<void(const SceneView&)> f) const;

  /// True once Capture ran.
  bool captured() const { return captured_; }
  /// The version the mirror holds.
  uint64_t version() const { return version_; }
  /// Bytes held by the bodies, trees and the id table.
  size_t MemoryBytes() const;

 private:
  // Counts a body placing `slot` in or out; a slot no body places any more is freed at the
  // next Apply (the batch just applied may still be evaluated with its bodies' old states).
  void UseSlot(AssetSlot slot, int delta);

  CollisionWorld world_;
  absl::flat_hash_map<uint64_t, BodyHandle> handles_;
  // Per asset slot: the mirror's bodies placing it; the slots that fell to 0.
  std::vector<uint32_t> slot_bodies_;
  std::vector<AssetSlot> unused_slots_;
  bool captured_ = false;
  uint64_t version_ = 0;
  uint64_t tick_ = 0;
};

}  // namespace collide
