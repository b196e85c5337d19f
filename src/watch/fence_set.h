#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "bvh/dynamic_tree.h"
#include "geom/aabb.h"
#include "geom/pose.h"
#include "query/body.h"
#include "scene/scene_observer.h"
#include "watch/watch_budget.h"
#include "watch/watch_types.h"

namespace collide {

/// A watcher's fences, what each one holds, and the enter/exit events of each applied batch.
///
/// Semantics (per fence f and body b; b is tracked by f when f's filter accepts it and b is not
/// f's host):
/// - after each batch, b is *inside* f when it is tracked and the closed shapes overlap at
///   their poses after the batch;
/// - a body inside that is no longer inside (moved out, removed, filtered out, or f's host is
///   gone) gets an exit; one that was not inside and is now gets an enter;
/// - the motion of a batch is continuous: each shape (body or attached fence) keeps its
///   rotation from before the batch and slides linearly from its old position to its new one,
///   then takes its new rotation in place. A body that was not inside, is not inside after the
///   batch, but touches f during that slide (ShapeCast of the relative translation) gets an
///   enter and then an exit. Upserted bodies, and fences whose host was upserted, jump: no
///   slide;
/// - an enter carries the first contact on the slide (point on the fence's surface at that
///   moment, the fence's outward normal), or, for a body that only overlaps after a jump or the
///   final rotation, the contact of the end poses' minimum translation (Penetrate).
///
/// Cost of a batch: a tree query per touched body (its old-to-new box) plus one per moved
/// attached fence, and the exact tests of the candidates found: independent of the number of
/// fences that nothing came near. Fixed fences live in their own tree, built once.
///
/// Memory: what the fences hold (one entry per body inside a fence) and the candidate pairs of
/// the batch being applied are counted in a ContentsMeter when one is given; when it refuses an
/// entry, Start or Apply stops at once and returns false, and the set must not be used again
/// (its watch is over).
class FenceSet {
 public:
  /// The fences (ids unique; rotations unit).
  explicit FenceSet(std::vector<FenceSpec> fences);

  /// Places the fences in `scene` and fills what each holds (no events), forgetting any earlier
  /// state (a resync). False when `meter` refused an entry.
  bool Start(const SceneView& scene, ContentsMeter* meter = nullptr);

  /// Applies one batch: replaces `events` with its events, in order (fence id, body id; an
  /// enter before the exit of the same pair). False when `meter` refused an entry.
  bool Apply(const AppliedBatch& batch, const SceneView& scene, std::vector<WatchEvent>* events,
             ContentsMeter* meter = nullptr);

  /// What every fence holds, sorted by fence id (bodies sorted).
  void Snapshot(std::vector<FenceContents>* out) const;

  /// The number of fences.
  size_t size() const { return fences_.size(); }
  /// Bodies held, summed over the fences (the entries counted in the meter).
  uint64_t held() const { return held_; }

 private:
  struct Fence {
    FenceSpec spec;
    /// False while an attached fence has no host.
    bool active = false;
    /// The world pose while active.
    Pose pose{};
    /// The proxy in the tree of its kind while active.
    int32_t proxy = kNullProxy;
    absl::flat_hash_set<uint64_t> inside;
  };
  // How an attached fence moved in the batch being applied.
  struct Motion {
    bool active_before = false;
    bool active_after = false;
    Pose before{};
    Pose after{};
    bool jumped = false;
    // The box of the fence's whole motion in the batch (its attached proxy's box).
    Aabb box{};
  };
  // A (fence, body) pair to decide; `handle` is the body's handle when the batch left it
  // alone (kNullBody for a touched body).
  struct Candidate {
    uint32_t fence;
    uint64_t body;
    BodyHandle handle;
  };

  DynamicTree& TreeOf(const Fence& fence) {
    return fence.spec.attached_to.has_value() ? attached_tree_ : fixed_tree_;
  }
  // False when the meter refused the body's entry.
  bool Evaluate(const Candidate& c, const AppliedBatch& batch, const SceneView& scene,
                std::vector<WatchEvent>* events, ContentsMeter* meter);
  // Counts `n` candidates; false when the meter refused them.
  bool CountCandidates(size_t n, ContentsMeter* meter);
  // Erases `body` from `fence`'s contents, shrinking a set that emptied out.
  void Forget(Fence& fence, uint64_t body, ContentsMeter* meter);

  // Sorted by id: fence order is event order.
  std::vector<Fence> fences_;
  // Tree user data = index into fences_.
  DynamicTree fixed_tree_;
  DynamicTree attached_tree_;
  // The largest coordinate magnitude of any box put in the fence trees (never decreases): with
  // the world's, what the broad phases' rounding pad scales with (query/query_engine.h).
  float magnitude_ = 0.0f;
  // Host body id -> its fences.
  absl::flat_hash_map<uint64_t, std::vector<uint32_t>> attached_;
  // Per fence: its index into motions_ during a batch, or -1.
  std::vector<int32_t> motion_of_;
  std::vector<Motion> motions_;
  std::vector<uint32_t> moved_;
  std::vector<Candidate> candidates_;
  // Candidates counted in the meter during the batch being applied.
  size_t counted_candidates_ = 0;
  uint64_t held_ = 0;
};

}  // namespace collide
