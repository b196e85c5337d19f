#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "bvh/dynamic_tree.h"
#include "bvh/wide_tree.h"
#include "geom/aabb.h"
#include "query/collision_world.h"

namespace collide {

/// The spatial index of one run of ticks of a PoseHistory (a "segment"): an 8-wide copy of a
/// world's trees taken when the segment starts, whose leaf boxes then grow, as the bodies change
/// during the segment, to the union of every tight box each body takes, plus a small dynamic
/// tree of the bodies created during the segment (union boxes too). Every state a body has at
/// the end of a tick of the segment is thus inside its leaf box, and a query at such a tick
/// walks this one index and tests each candidate's historic state exactly.
///
/// A leaf names a body by (slot, generation): a slot reused by a later body is a different
/// body. Category bits are the union of those the body had during the segment (the walk prunes
/// by them; the exact filter test is the caller's, on the historic state).
///
/// Taking the copy costs O(bodies) once per segment; each change costs a walk up the copied
/// tree while an ancestor's box does not hold the new box yet (usually a step or two).
class HistorySegment {
 public:
  /// Copies `world`'s trees with each live body's tight box; the body in slot s is
  /// (s, `generations[s]`) (0 beyond the span). `start` is the tick during which the copy is
  /// taken, before any change of that tick.
  HistorySegment(const CollisionWorld& world, std::span<const uint32_t> generations,
                 uint64_t start);

  /// The tick during which the segment started.
  uint64_t start() const { return start_; }
  /// True until Seal().
  bool open() const { return open_; }

  /// Ends the segment after tick `tick` (during which it is called; tick >= start()): it answers
  /// no tick from `tick` on, so bodies created in `tick` need no Include (a caller skips them);
  /// changes of `tick` to other bodies are still included. The history starts the next segment
  /// at its next change after `tick`, which copies them.
  void Close(uint64_t tick) {
    closed_ = true;
    closed_at_ = tick;
  }
  /// True after Close().
  bool closed() const { return closed_; }
  /// True when the segment was closed at a tick before `tick`.
  bool ClosedBefore(uint64_t tick) const { return closed_ && closed_at_ < tick; }
  /// True when the segment answers queries at `t` as far as its end goes (not closed at or
  /// before `t`); which segment holds `t` is the history's choice (PoseHistory::SegmentFor).
  bool Answers(uint64_t t) const { return !closed_ || t < closed_at_; }
  /// Bodies the copy holds.
  size_t CopiedCount() const { return parts_[0].slot.size() + parts_[1].slot.size(); }

  /// Grows the box of body (`slot`, `generation`) to hold `box` too and adds `category` to its
  /// bits; a body the copy does not hold (created since) is added.
  void Include(BodyHandle slot, uint32_t generation, const Aabb& box, uint32_t category);
  /// Ends the changes: frees what only Include needs, optimizes the tree of created bodies and
  /// stores for each body the word `anchor(BodyHandle slot, uint32_t generation) -> uint64_t`
  /// (the owner's pointer into its records, handed to the queries' callbacks).
  template <typename A>
  void Seal(A&& anchor);

  /// Replaces each anchor a sealed segment holds by `f(anchor) -> uint64_t` (the owner's
  /// re-encoding of its records).
  template <typename F>
  void RewriteAnchors(F&& f) {
    for (Part& part : parts_) {
      for (uint64_t& a : part.anchor) a = f(a);
    }
    for (uint64_t& a : added_anchor_) a = f(a);
  }

  /// The anchor the queries hand over before Seal.
  static constexpr uint64_t kOpen = ~uint64_t{0};

  /// Calls `f(BodyHandle slot, uint32_t generation, uint64_t anchor, float max_distance) ->
  /// float` for each body whose box (grown by `half_extent`) the path enters
  /// (DynamicTree::SweptCast's contract: a result < 0 stops the walk, otherwise it clips the
  /// path); `anchor` is the body's word from Seal, kOpen before.
  template <typename F>
  void Cast(const Vec3& origin, const Vec3& unit_dir, float max_distance, const Vec3& half_extent,
            uint32_t mask, F&& f) const;
  /// Calls `f(BodyHandle slot, uint32_t generation, uint64_t anchor) -> bool` for each body
  /// whose box overlaps `box`; false stops the walk.
  template <typename F>
  void Query(const Aabb& box, uint32_t mask, F&& f) const;

  /// Bytes held.
  size_t MemoryBytes() const;

 private:
  // The copy of one world tree.
  struct Part {
    WideTree tree;
    // Per node: where its parent refers to it (node * kWidth + slot), -1 for the root.
    std::vector<int32_t> parent_at;
    // Per leaf (child reference ~leaf): the body.
    std::vector<uint32_t> slot;
    std::vector<uint32_t> generation;
    // After Seal: per leaf, the anchor.
    std::vector<uint64_t> anchor;
  };
  static constexpr int kParts = 2;

  void FreeScratch();
  void CopyPart(const CollisionWorld& world, BodyKind kind, std::span<const uint32_t> generations,
                Part* part);
  // Grows slot `at` (node * kWidth + slot) of `part` and its ancestors to hold `box`.
  static void Grow(Part& part, int32_t at, const Aabb& box, uint32_t category);

  uint64_t start_;
  bool open_ = true;
  bool closed_ = false;
  uint64_t closed_at_ = 0;
  Part parts_[kParts];
  // While open: per world slot, where its body's leaf is ((node * kWidth + slot) * kParts +
  // part), -1 for none.
  std::vector<int32_t> leaf_at_;
  // Bodies created during the segment: a tree whose user data indexes the arrays below.
  DynamicTree added_;
  std::vector<uint32_t> added_slot_;
  std::vector<uint32_t> added_generation_;
  std::vector<uint64_t> added_anchor_;
  std::vector<int32_t> added_proxy_;
  std::vector<Aabb> added_box_;
  std::vector<uint32_t> added_category_;
  // While open: per world slot, the index of its created body, -1 for none.
  std::vector<int32_t> added_of_;
};

template <typename A>
void HistorySegment::Seal(A&& anchor) {
  if (!open_) return;
  open_ = false;
  for (Part& part : parts_) {
    part.anchor.resize(part.slot.size());
    for (size_t i = 0; i < part.slot.size(); ++i) {
      part.anchor[i] = anchor(static_cast<BodyHandle>(part.slot[i]), part.generation[i]);
    }
  }
  added_anchor_.resize(added_slot_.size());
  for (size_t i = 0; i < added_slot_.size(); ++i) {
    added_anchor_[i] = anchor(static_cast<BodyHandle>(added_slot_[i]), added_generation_[i]);
  }
  FreeScratch();
}

template <typename F>
void HistorySegment::Cast(const Vec3& origin, const Vec3& unit_dir, float max_distance,
                          const Vec3& half_extent, uint32_t mask, F&& f) const {
  bool stopped = false;
  float reach = max_distance;
  // Static bodies first, as the current-tick engine walks them.
  for (int p : {static_cast<int>(BodyKind::kStatic), static_cast<int>(BodyKind::kDynamic)}) {
    const Part& part = parts_[p];
    if (!part.tree.HasRoot()) continue;
    part.tree.Cast<true, kDefaultInlineStack>(
        origin, unit_dir, reach, half_extent, mask, part.slot.data(),
        [&](uint32_t slot, int32_t leaf, float distance) -> float {
          const float r = f(static_cast<BodyHandle>(slot), part.generation[leaf],
                            open_ ? kOpen : part.anchor[leaf], distance);
          if (r < 0.0f) {
            stopped = true;
          } else {
            reach = std::min(reach, r);
          }
          return r;
        });
    if (stopped) return;
  }
  if (added_.ProxyCount() == 0) return;
  added_.SweptCast(origin, unit_dir, reach, half_extent, mask,
                   [&](uint32_t index, int32_t /*proxy*/, float distance) -> float {
                     return f(static_cast<BodyHandle>(added_slot_[index]), added_generation_[index],
                              open_ ? kOpen : added_anchor_[index], distance);
                   });
}

template <typename F>
void HistorySegment::Query(const Aabb& box, uint32_t mask, F&& f) const {
  bool stopped = false;
  for (int p : {static_cast<int>(BodyKind::kStatic), static_cast<int>(BodyKind::kDynamic)}) {
    const Part& part = parts_[p];
    if (!part.tree.HasRoot()) continue;
    part.tree.QueryAabb<kDefaultInlineStack>(
        box, mask, part.slot.data(), [&](uint32_t slot, int32_t leaf) -> bool {
          if (f(static_cast<BodyHandle>(slot), part.generation[leaf],
                open_ ? kOpen : part.anchor[leaf])) {
            return true;
          }
          stopped = true;
          return false;
        });
    if (stopped) return;
  }
  if (added_.ProxyCount() == 0) return;
  added_.QueryAabb(box, mask, [&](uint32_t index, int32_t /*proxy*/) -> bool {
    return f(static_cast<BodyHandle>(added_slot_[index]), added_generation_[index],
             open_ ? kOpen : added_anchor_[index]);
  });
}

}  // namespace collide
