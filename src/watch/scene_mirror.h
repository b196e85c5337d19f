#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "query/collision_world.h"
#include "scene/scene.h"
#include "scene/scene_observer.h"
#include "watch/body_grid.h"

namespace collide {

/// What a SceneMirror keeps besides its bodies.
struct MirrorParts {
  /// A CollisionWorld of the bodies, with its trees (fences and contacts query it).
  bool world = true;
  /// A BodyGrid of the bodies' positions (interest sets search it).
  bool grid = false;
};

/// A copy of one scene's bodies, brought from version to version by the scene's applied
/// batches (the after states of their change records): the state standing queries are
/// evaluated on away from the scene's writer, which goes on meanwhile. Not thread-safe.
///
/// It always keeps the bodies by id; and, for what its users need, a CollisionWorld of them
/// with its trees (the watches' fences and contacts query it: KeepWorld) and a BodyGrid of their
/// positions (interest sets: KeepGrid). Either can be asked for at any version: it is built from
/// the bodies held, so no batch is missed. Maintaining the world costs what the scene's own
/// moves cost (tree moves and refits); the table and the grid a few dozen ns per change.
///
/// Memory: the bodies (about 100 bytes each), plus the world (about the scene's own,
/// SceneStats::memory_bytes without the history) and the grid (about 50 bytes per body) when
/// kept.
class SceneMirror {
 public:
  using Parts = MirrorParts;

  explicit SceneMirror(const Parts& parts = Parts{});
  SceneMirror(const SceneMirror&) = delete;
  SceneMirror& operator=(const SceneMirror&) = delete;

  /// Copies `scene`'s bodies at its current version (under the scene's reader lock: writers wait
  /// for the copy, O(bodies)), replacing whatever the mirror held.
  void Capture(const Scene& scene);
  /// Applies one batch's change records (sorted by id, as AppliedBatch holds them), which
  /// produced `version` with the scene at `tick`. The batch must follow the mirror's version.
  void Apply(std::span<const BodyChange> changes, uint64_t version, uint64_t tick);
  /// Applies one batch of moves and filter changes (AppliedBatch::moves, sorted by id), which
  /// produced `version` with the scene at `tick`, and, unless `changes` is null, writes the
  /// batch's change records (each body's state before and after, in the order of `moves`) to
  /// it (cleared first), as Apply would have taken them. The batch must follow the mirror's
  /// version, so every body it names is held.
  void ApplyMoves(std::span<const BodyMove> moves, uint64_t version, uint64_t tick,
                  std::vector<BodyChange>* changes);
  /// Keeps a CollisionWorld of the bodies from now on (built at once when captured).
  void KeepWorld();
  /// Keeps a BodyGrid of the bodies' positions from now on (built at once when captured).
  void KeepGrid();
  /// Runs `f(const SceneView& view)` on the mirror's state. Its world is empty unless kept.
  void WithView(absl::FunctionRef<void(const SceneView&)> f) const;

  /// The bodies' positions (null unless kept).
  const BodyGrid* grid() const { return parts_.grid ? &grid_ : nullptr; }
  /// The body with `id`, or null.
  const Body* Find(uint64_t id) const;
  /// The slot of the body with `id` (as BodyGrid::Cell::slot names it), or -1.
  int64_t SlotOf(uint64_t id) const;
  /// The body in `slot`, or null when the slot is free or out of range (slots are reused).
  const Body* BodyAt(uint32_t slot) const {
    return slot < bodies_.size() && bodies_[slot].proxy >= 0 ? &bodies_[slot] : nullptr;
  }
  /// One more than the largest slot in use (at most).
  size_t slot_count() const { return bodies_.size(); }
  /// The slots' layout: it changes whenever a slot is freed or the slots are numbered anew (a
  /// copy), and never takes the same value twice in a process (nor in two mirrors), so that a
  /// body found in a slot is still there while the layout is the same. Never 0.
  uint64_t layout() const { return layout_; }

  /// True once Capture ran.
  bool captured() const { return captured_; }
  /// The version the mirror holds.
  uint64_t version() const { return version_; }
  /// The scene's tick at that version.
  uint64_t tick() const { return tick_; }
  /// Bytes held by the bodies, the id table, and the world and grid when kept.
  size_t MemoryBytes() const;

 private:
  struct Slot {
    BodyHandle handle = kNullBody;
  };
  void BuildWorld();
  // Lets go of the asset slots no body placed after the previous batch.
  void ReleaseUnusedAssets();
  // Brings the world's copy of the body in `slot` (a body that stays) to `after`: placed anew
  // when `replaced` (its shape or kind may have changed), else moved and refiltered.
  void UpdateWorld(uint32_t slot, const Body& after, bool replaced);
  void BuildGrid();
  uint32_t TakeSlot();
  // Counts a body placing asset `slot` in or out; a slot no body places any more is let go at
  // the next Apply (the batch just applied may still be evaluated with its bodies' old states).
  void UseAsset(AssetSlot slot, int delta);
  // Holds `asset` in asset slot `slot` (and the world's, when kept).
  void PlaceAsset(AssetSlot slot, std::shared_ptr<const AssetGeometry> asset);

  Parts parts_;
  // The bodies by slot (proxy -1: a free slot); free slots; id -> slot.
  std::vector<Body> bodies_;
  std::vector<uint32_t> free_;
  absl::flat_hash_map<uint64_t, uint32_t> slots_;
  // Per slot: the body's handle in world_ (when kept).
  std::vector<BodyHandle> handles_;
  CollisionWorld world_;
  BodyGrid grid_;
  // Per asset slot of the scene's world: the asset the mirror's bodies place (held even when
  // the world is not kept, so that it can be built), how many bodies place it, and the slots
  // that fell to 0.
  std::vector<std::shared_ptr<const AssetGeometry>> assets_;
  std::vector<uint32_t> asset_bodies_;
  std::vector<AssetSlot> unused_assets_;
  bool captured_ = false;
  uint64_t layout_;
  uint64_t version_ = 0;
  uint64_t tick_ = 0;
};

}  // namespace collide
