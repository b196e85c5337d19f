#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "geom/aabb.h"
#include "geom/pose.h"
#include "query/body.h"
#include "query/collision_world.h"

namespace collide {

/// The pose a body has at `fraction` (in [0, 1)) of the way from `a` to `b`: position lerped,
/// rotation nlerped along the shorter arc.
Pose LerpPose(const Pose& a, const Pose& b, float fraction);

/// A body as it was at the end of a past tick.
struct PastBody {
  /// The body (its `proxy` is meaningless).
  Body body{};
  /// The slot's generation: grows by one each time a body is created in the slot, so that a
  /// recycled slot never inherits the past of the body that held it before.
  uint32_t generation = 0;
  /// False when the slot held no body then.
  bool alive = false;
};

/// A bounded per-tick history of a CollisionWorld's bodies, storing only what changed: for each
/// retained tick, one entry per slot that changed in it (moved, created, removed, filter
/// changed) holding the slot's state at the START of that tick (an undo record: only the pose
/// when only the pose changed), chained per slot from the newest entry to older ones. The state
/// of a slot at the end of tick t is the undo record of its oldest change after t, or its current
/// state when it has not changed since t.
///
/// Queries at a past tick walk the CURRENT trees with the query grown by the largest box shift
/// any body made since t (kept per retained tick: each move raises the growth of every tick by
/// that body's distance from its state then), then test each candidate's
/// historic state exactly, plus a small side list of bodies the grown walk cannot find (removed
/// or replaced since t, moved further than `far_shift` in one tick, or with changed category
/// bits). Why this and not a per-body union box over the window: the union boxes would need a
/// second tree (or two, for a sliding window) updated on every move, doubling or tripling the
/// writer's cost and the memory; growing the query costs the writer O(retained ticks) float
/// maxima per move and, with the far movers taken out, keeps the growth to the largest real
/// displacement of one body since t (a first version summed per-tick maxima instead: that bound
/// grew with the window and made 63-tick-old raycasts far slower). The cost is measured by
/// bench/history_bench.cc.
///
/// Not thread-safe: the scene writes it under its writer lock and reads it under the reader
/// lock, like the world. Not durable: it starts empty (retaining only the current tick) when a
/// scene is created or restored.
class PoseHistory {
 public:
  /// A history answering the last `retained_ticks` ticks (the current one included; 0 and 1
  /// retain only the current tick) starting at tick `start_tick`. A body whose tight box moves
  /// further than `far_shift` (length units, per axis) in one tick goes to the side list instead
  /// of growing every past query.
  explicit PoseHistory(uint32_t retained_ticks = 64, uint64_t start_tick = 0,
                       float far_shift = 1.0f);

  /// The current tick (the one batches amend).
  uint64_t tick() const { return tick_; }
  /// The oldest tick a query may name.
  uint64_t oldest_tick() const;
  /// True when queries at tick `t` can be answered (oldest_tick() <= t <= tick()).
  bool Retains(uint64_t t) const { return t >= oldest_tick() && t <= tick_; }
  /// How many ticks are retained at most (>= 1).
  uint32_t retained_ticks() const { return capacity_; }

  /// Writer side. Makes `t` (>= tick()) the current tick; ticks in between are empty.
  void AdvanceTo(uint64_t t);
  /// Writer side: call before moving the live body in `slot` (records its pose).
  void BeforeMove(const CollisionWorld& world, BodyHandle slot);
  /// Writer side: call before refiltering or removing the live body in `slot` (records it all).
  void BeforeChange(const CollisionWorld& world, BodyHandle slot);
  /// Writer side: call after a body was created in `slot`.
  void AfterCreate(const CollisionWorld& world, BodyHandle slot);
  /// Writer side: call after the world's changes of one batch (classifies the slots it touched).
  void EndBatch(const CollisionWorld& world);

  /// The state of `slot` at the end of retained tick `t`.
  PastBody StateAt(const CollisionWorld& world, BodyHandle slot, uint64_t t) const;
  /// How far (per axis, length units) every body the current trees hold and that had the same
  /// generation at the end of `t` has moved its tight box since then, at most (for bodies not on
  /// the side list of a tick after t).
  float GrowthSince(uint64_t t) const;
  /// For interpolation between the ends of t-1 and t: the most any body in the trees may reach
  /// beyond its tight box at the end of tick t - 1 at an interpolated pose (its move in tick t
  /// plus its bounding radius).
  float LerpSlackOf(uint64_t t) const;
  /// True when the tree walk must skip the body now in `slot` for a query at `t`: the side list
  /// of a tick after t holds it.
  bool OnSideListSince(BodyHandle slot, uint64_t t) const {
    return static_cast<size_t>(slot) < last_side_.size() && last_side_[slot] > t + 1;
  }
  /// The generation of the body now in `slot`.
  uint32_t generation(BodyHandle slot) const { return generation_[slot]; }

  /// Calls `f(BodyHandle slot, uint32_t generation)` once for every body alive at the end of
  /// `t` that the tree walk for `t` does not see (see OnSideListSince); `f` must still check
  /// StateAt(slot, t) holds that generation alive (the side entry may be of a body created
  /// after t).
  template <typename F>
  void ForEachSideBody(uint64_t t, F&& f) const;

  /// Bytes held by the history (capacity).
  size_t MemoryBytes() const;
  /// Undo records held in retained ticks (tests and benchmarks).
  size_t EntryCount() const;

 private:
  struct Ref {
    uint64_t tick = 0;
    int32_t index = -1;  // -1: none
  };
  // The parts of a body other than its pose, for records of more than a move.
  struct Full {
    Shape shape{};
    uint64_t id = 0;
    uint32_t category = 0;
    uint32_t mask = 0;
    BodyKind kind = BodyKind::kDynamic;
  };
  struct Entry {
    Pose pose{};
    Ref prev{};
    int32_t slot = 0;
    int32_t full = -1;  // index into TickRecord::full, or -1 (only the pose changed)
    int32_t side = -1;  // index into TickRecord::side, or -1
    uint32_t generation = 0;
    // The slot's last_side_ when the entry was made (tick + 1 of the previous side entry of
    // this generation, 0 for none).
    uint64_t prev_side = 0;
    bool alive = false;
  };
  struct TickRecord {
    uint64_t tick = 0;
    std::vector<Entry> entries;
    std::vector<Full> full;
    std::vector<int32_t> side;  // entry indices
    // How far (per axis) any body the trees hold, and not on a side list since, has moved its
    // tight box since the end of this tick (kept exact per body move, see Grow).
    float growth = 0.0f;
    float max_lerp_slack = 0.0f;
  };

  bool Recording() const { return capacity_ >= 2; }
  TickRecord& Record(uint64_t t) { return ring_[t % capacity_]; }
  const TickRecord& Record(uint64_t t) const { return ring_[t % capacity_]; }
  void EnsureSlot(BodyHandle slot);
  // Records the slot's state at the start of the current tick unless done already.
  Entry& Touch(const CollisionWorld& world, BodyHandle slot, bool need_full);
  void Classify(const CollisionWorld& world, BodyHandle slot);
  // Raises the growth of every retained tick by how far the body in `slot` (tight box `now`)
  // is from where it was at that tick's end.
  void Grow(BodyHandle slot, const Shape& shape, const Aabb& now);
  void SetSide(TickRecord& record, int32_t index, bool side);

  uint32_t capacity_;
  float far_shift_;
  uint64_t start_tick_;
  uint64_t tick_;
  std::vector<TickRecord> ring_;
  // Per slot: the newest entry, the generation of the body now in it, and (tick + 1) of the
  // newest side entry of that generation (0: none).
  std::vector<Ref> head_;
  std::vector<uint32_t> generation_;
  std::vector<uint64_t> last_side_;
  // Slots touched by the batch being applied.
  std::vector<BodyHandle> touched_;
};

template <typename F>
void PoseHistory::ForEachSideBody(uint64_t t, F&& f) const {
  if (!Recording()) return;
  for (uint64_t k = t + 1; k <= tick_; ++k) {
    const TickRecord& record = Record(k);
    for (int32_t index : record.side) {
      const Entry& e = record.entries[index];
      // Only the earliest side entry after t of one (slot, generation) counts.
      if (e.prev_side > t + 1) continue;
      if (!e.alive) continue;
      f(static_cast<BodyHandle>(e.slot), e.generation);
    }
  }
}

}  // namespace collide
