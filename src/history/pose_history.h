#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "geom/aabb.h"
#include "geom/pose.h"
#include "history/history_segment.h"
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
/// Spatial index: the window is cut into segments of `segment_ticks` ticks. When a segment
/// starts, it takes an 8-wide copy of the world's trees (HistorySegment); while it runs, each
/// change grows the changed body's leaf box in the copy to the union of its boxes, so the copy
/// bounds every state a body has at the end of any tick of the segment. A query at a past tick
/// walks the one segment holding that tick and tests each candidate's historic state exactly.
/// A segment that sees more creations than about half its copy closes at the end of that tick
/// (the next segment copies them instead of this one indexing them), and a creation into a slot
/// with no record in the window writes no record, only the slot's tick of birth: a load of n
/// bodies costs the history 28 bytes per slot.
/// Its cost is that of a current query on boxes a little larger (each body's motion over at most
/// `segment_ticks` ticks) plus the state lookups; the memory is one copy of the trees per
/// segment. Two earlier designs were measured and dropped: growing the query on the CURRENT
/// trees by the largest displacement of any body since t (one far or fast body slows every
/// query; 39x a current raycast at 63 ticks back on the reference workload) and summing
/// per-tick maxima (worse). Figures: bench/history_bench.cc, docs/PERFORMANCE.md.
///
/// Not thread-safe: the scene writes it under its writer lock and reads it under the reader
/// lock, like the world. Not durable: it starts empty (retaining only the current tick) when a
/// scene is created or restored.
class PoseHistory {
 public:
  /// The largest tick a history accepts (2^63 - 1): tick arithmetic (t + 1, the window's start)
  /// never overflows below it. The service refuses larger ticks at its edge.
  static constexpr uint64_t kMaxTick = (uint64_t{1} << 63) - 1;

  /// A history answering the last `retained_ticks` ticks (the current one included; 0 and 1
  /// retain only the current tick) starting at tick `start_tick`, indexed by segments of
  /// `segment_ticks` ticks (0: an eighth of the window, between 1 and 8).
  explicit PoseHistory(uint32_t retained_ticks = 64, uint64_t start_tick = 0,
                       uint32_t segment_ticks = 0);

  /// The current tick (the one batches amend).
  uint64_t tick() const { return tick_; }
  /// The oldest tick a query may name.
  uint64_t oldest_tick() const;
  /// True when queries at tick `t` can be answered (oldest_tick() <= t <= tick()).
  bool Retains(uint64_t t) const { return t >= oldest_tick() && t <= tick_; }
  /// How many ticks are retained at most (>= 1).
  uint32_t retained_ticks() const { return capacity_; }
  /// How many ticks a segment of the index spans at most.
  uint32_t segment_ticks() const { return segment_ticks_; }

  /// Writer side. Makes `t` (tick() <= t <= kMaxTick) the current tick; ticks in between are
  /// empty. Costs at most one pass over the retained ticks, however far `t` jumps, and once per
  /// 2^30 ticks of advance one pass over the slots, retained records and indexed bodies (Rebase).
  void AdvanceTo(uint64_t t);
  /// Writer side: call before moving the live body in `slot` (records its pose).
  void BeforeMove(const CollisionWorld& world, BodyHandle slot);
  /// Writer side: call before refiltering or removing the live body in `slot` (records it all).
  void BeforeChange(const CollisionWorld& world, BodyHandle slot);
  /// Writer side: call after a body was created in `slot`.
  void AfterCreate(const CollisionWorld& world, BodyHandle slot);
  /// Writer side: call after the world's changes of one batch (indexes the slots it touched).
  void EndBatch(const CollisionWorld& world);

  /// The state of `slot` at the end of retained tick `t`: walks the slot's records from the
  /// newest back to t.
  PastBody StateAt(const CollisionWorld& world, BodyHandle slot, uint64_t t) const;
  /// StateAt for a candidate of CastCandidates / QueryCandidates at `t` (or t + 1 when
  /// interpolating), given the anchor the walk handed over: starts from the records of the
  /// candidate's segment, so it reads about as many records as the slot has in that segment.
  PastBody StateFrom(const CollisionWorld& world, BodyHandle slot, uint64_t t,
                     uint64_t anchor) const;
  /// For interpolation between the ends of t-1 and t: how far beyond its box in the index any
  /// body may reach at an interpolated pose (a few float roundings when every body that changed
  /// in tick t only translated; else the largest move plus bounding radius of one that rotated).
  float LerpSlackOf(uint64_t t) const;
  /// The generation of the body now in `slot`: grows by one each time a body is created there.
  uint32_t generation(BodyHandle slot) const {
    return static_cast<size_t>(slot) < generation_.size() ? generation_[slot] : 0u;
  }

  /// Calls `f(BodyHandle slot, uint32_t generation, uint64_t anchor, float max_distance) ->
  /// float` for a superset of the bodies alive at the end of retained tick `t` (and, for
  /// interpolation, of t + 1) whose box then, grown by `half_extent`, the path enters
  /// (DynamicTree::SweptCast's contract); `f` must look the body's state up (StateFrom with
  /// `anchor`) and check it has that generation alive.
  template <typename F>
  void CastCandidates(const CollisionWorld& world, uint64_t t, const Vec3& origin,
                      const Vec3& unit_dir, float max_distance, const Vec3& half_extent,
                      uint32_t mask, F&& f) const;
  /// Like CastCandidates for the bodies whose box at `t` overlaps `box`:
  /// `f(BodyHandle slot, uint32_t generation, uint64_t anchor) -> bool`, false stops.
  template <typename F>
  void QueryCandidates(const CollisionWorld& world, uint64_t t, const Aabb& box, uint32_t mask,
                       F&& f) const;

  /// Bytes held by the history (capacity).
  size_t MemoryBytes() const;
  /// Undo records held in retained ticks (tests and benchmarks).
  size_t EntryCount() const;
  /// Segments of the index held (tests and benchmarks).
  size_t SegmentCount() const { return segments_.size(); }
  /// Bytes of MemoryBytes() held by the segments of the index.
  size_t IndexBytes() const;

 private:
  // An entry: the mark of its tick (see Mark) and its index in that tick's record.
  struct Ref {
    uint32_t mark = 0;
    int32_t index = -1;  // -1: none
  };
  // The parts of a body other than its pose, for records of more than a move.
  struct Full {
    Shape shape{};
    uint64_t id = 0;
    uint32_t category = 0;
    uint32_t mask = 0;
    float scale = 1.0f;
    BodyKind kind = BodyKind::kDynamic;
    AssetSlot asset = kNoAsset;

    // The parts of `b` other than its pose.
    static Full Of(const Body& b) {
      return Full{.shape = b.shape,
                  .id = b.id,
                  .category = b.category,
                  .mask = b.mask,
                  .scale = b.scale,
                  .kind = b.kind,
                  .asset = b.asset};
    }
    // Sets the parts of `b` other than its pose (and its proxy) to these.
    void CopyTo(Body& b) const {
      b.shape = shape;
      b.scale = scale;
      b.id = id;
      b.category = category;
      b.mask = mask;
      b.kind = kind;
      b.asset = asset;
    }
  };
  struct Entry {
    Pose pose{};
    Ref prev{};
    Ref next{};  // the slot's next newer entry (none yet: index -1)
    int32_t slot = 0;
    int32_t full = -1;  // index into TickRecord::full, or -1 (only the pose changed)
    uint32_t generation = 0;
    bool alive = false;
  };
  static_assert(sizeof(Entry) == 60, "an undo record is 60 bytes");
  struct TickRecord {
    uint64_t tick = 0;
    std::vector<Entry> entries;
    std::vector<Full> full;
    float max_lerp_slack = 0.0f;
  };

  bool Recording() const { return capacity_ >= 2; }
  TickRecord& Record(uint64_t t) { return ring_[t % capacity_]; }
  const TickRecord& Record(uint64_t t) const { return ring_[t % capacity_]; }
  TickRecord& Record(const Ref& ref) { return Record(TickOf(ref.mark)); }
  const TickRecord& Record(const Ref& ref) const { return Record(TickOf(ref.mark)); }
  // Ticks as refs and full_at_ hold them: 1 + the distance from base_ (0: none). Only ticks from
  // base_ on are marked, and AdvanceTo rebases before a mark reaches kRebaseSpan, so a mark fits
  // in 31 bits (the 32nd is kBorn's) and a stale mark never aliases a retained tick.
  uint32_t Mark(uint64_t t) const { return static_cast<uint32_t>(t - base_ + 1); }
  uint64_t TickOf(uint32_t mark) const { return base_ + mark - 1; }
  static constexpr uint64_t kRebaseSpan = uint64_t{1} << 30;
  // Moves base_ to the oldest retained tick, re-encoding every ref, mark and segment anchor and
  // clearing those of ticks no longer held. O(slots + retained entries + indexed bodies), once
  // per 2^30 ticks of advance (or per jump that long).
  void Rebase();
  // True when the slot's first body in the window was created with no record after tick `t`.
  bool BornAfter(BodyHandle slot, uint64_t t) const {
    return (full_at_[slot] & kBorn) != 0 && (full_at_[slot] & ~kBorn) > Mark(t);
  }
  // True when the slot's body was created this tick with no record (full_at_'s kBorn).
  bool BornThisTick(BodyHandle slot) const { return full_at_[slot] == (Mark(tick_) | kBorn); }
  // The generation of the slot before the first body its records hold (or, with none, before
  // its body now): the generation a record of its empty state before that body carries.
  uint32_t GenerationBeforeFirst(BodyHandle slot) const;
  // Writes the record the slot's creation with no record stands for (full_at_'s kBorn), before
  // a record of more than a move replaces that tick in full_at_.
  void RecordBirth(BodyHandle slot);
  void EnsureSlot(BodyHandle slot);
  // Gives back the capacity of the `n` records from tick `first` on (just cleared for reuse)
  // when it is more than twice the largest retained record's and kKeptRecordCapacity.
  void ReleaseBurstCapacity(uint64_t first, uint64_t n);
  // Entries (and full records) a reused record always keeps room for.
  static constexpr size_t kKeptRecordCapacity = 4096;
  // Starts a segment when none is running or the running one is full. Called before each change
  // reaches the world, except a creation (AfterCreate): a body the copy takes with the
  // generation of its slot's previous body is then indexed again as created since.
  void EnsureSegment(const CollisionWorld& world);
  // Seals the newest segment (its anchors are the slots' newest records now).
  void SealNewest();
  // Records the slot's state at the start of the current tick unless done already.
  void Touch(const CollisionWorld& world, BodyHandle slot, bool need_full);
  // True when the body in `slot` (touched this tick) was created this tick.
  bool CreatedThisTick(BodyHandle slot) const;
  // The state of `slot` at a retained tick before born_[slot] - 1: empty.
  PastBody BeforeBirth(BodyHandle slot) const;
  void Classify(const CollisionWorld& world, BodyHandle slot);
  // The segment answering queries at `t`; null when the world's trees hold every state at the
  // end of t and t + 1 (no segment was started, or the one holding t was closed at or before t
  // and nothing changed since).
  const HistorySegment* SegmentFor(uint64_t t) const;
  // True when `ref`'s record is still held.
  bool Held(const Ref& ref) const { return ref.index >= 0 && Record(ref).tick == TickOf(ref.mark); }
  // Appends `e` to the current tick's records as the slot's newest entry.
  void Push(BodyHandle slot, const Entry& e);
  // A segment's anchor of a body: the slot's newest entry when the segment is sealed.
  static uint64_t EncodeAnchor(const Ref& ref);
  static Ref DecodeAnchor(uint64_t anchor);
  static constexpr uint64_t kUnknownAnchor = ~uint64_t{0} - 1;

  uint32_t capacity_;
  uint32_t segment_ticks_;
  uint64_t start_tick_;
  uint64_t tick_;
  // The tick marks count from (Mark).
  uint64_t base_;
  std::vector<TickRecord> ring_;
  // Per slot: the newest entry, the oldest entry still held, the generation of the body now in
  // it, and the mark of the last tick it had a record of more than a move or a creation, with
  // kBorn when that was a creation with no record: the slot had no record held (it was empty
  // since before the window), so it was empty at the end of every retained tick before that.
  // A load of n bodies thus records nothing per body (an undo record is 60 bytes); a later
  // record of more than a move writes the creation's record first (RecordBirth). 28 bytes per
  // slot in all.
  std::vector<Ref> head_;
  std::vector<Ref> tail_;
  std::vector<uint32_t> generation_;
  std::vector<uint32_t> full_at_;
  static constexpr uint32_t kBorn = uint32_t{1} << 31;
  // Bodies created since the newest segment started (AfterCreate).
  size_t created_in_segment_ = 0;
  // A segment closes at the end of a batch once more bodies were created during it than
  // max(this, half the bodies its copy holds): the next segment's copy takes them at O(1) extra
  // memory per body instead of this one's index of created bodies (a dynamic tree and arrays,
  // about 180 bytes per body).
  static constexpr size_t kCloseAfterCreated = 256;
  // Slots touched by the batch being applied.
  std::vector<BodyHandle> touched_;
  // Oldest first. The newest takes every change; older ones are sealed. None while nothing
  // changed in the retained ticks.
  std::deque<HistorySegment> segments_;
  // The tick of the latest change recorded.
  uint64_t last_change_tick_ = 0;
};

template <typename F>
void PoseHistory::CastCandidates(const CollisionWorld& world, uint64_t t, const Vec3& origin,
                                 const Vec3& unit_dir, float max_distance, const Vec3& half_extent,
                                 uint32_t mask, F&& f) const {
  if (const HistorySegment* segment = SegmentFor(t)) {
    segment->Cast(origin, unit_dir, max_distance, half_extent, mask, f);
    return;
  }
  constexpr uint64_t kOpen = HistorySegment::kOpen;
  // Nothing changed since t: the world's trees hold every state.
  bool stopped = false;
  for (BodyKind kind : {BodyKind::kStatic, BodyKind::kDynamic}) {
    world.tree(kind).SweptCast(origin, unit_dir, max_distance, half_extent, mask,
                               [&](uint32_t slot, int32_t /*proxy*/, float distance) -> float {
                                 const BodyHandle handle = static_cast<BodyHandle>(slot);
                                 const float r = f(handle, generation(handle), kOpen, distance);
                                 if (r < 0.0f) {
                                   stopped = true;
                                 } else {
                                   max_distance = std::min(max_distance, r);
                                 }
                                 return r;
                               });
    if (stopped) return;
  }
}

template <typename F>
void PoseHistory::QueryCandidates(const CollisionWorld& world, uint64_t t, const Aabb& box,
                                  uint32_t mask, F&& f) const {
  if (const HistorySegment* segment = SegmentFor(t)) {
    segment->Query(box, mask, f);
    return;
  }
  bool stopped = false;
  for (BodyKind kind : {BodyKind::kStatic, BodyKind::kDynamic}) {
    world.tree(kind).QueryAabb(box, mask, [&](uint32_t slot, int32_t /*proxy*/) -> bool {
      const BodyHandle handle = static_cast<BodyHandle>(slot);
      stopped = !f(handle, generation(handle), HistorySegment::kOpen);
      return !stopped;
    });
    if (stopped) return;
  }
}

}  // namespace collide
