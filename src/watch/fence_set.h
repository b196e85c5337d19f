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
class FenceSet {
 public:
  /// The fences (ids unique; rotations unit).
  explicit FenceSet(std::vector<FenceSpec> fences);

  /// Places the fences in `scene` and fills what each holds (no events).
  void Start(const SceneView& scene);

  /// Applies one batch: replaces `events` with its events, in order (fence id, body id; an
  /// enter before the exit of the same pair).
  void Apply(const AppliedBatch& batch, const SceneView& scene, std::vector<WatchEvent>* events);

  /// What every fence holds, sorted by fence id (bodies sorted).
  void Snapshot(std::vector<FenceContents>* out) const;

  /// The number of fences.
  size_t size() const { return fences_.size(); }

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
  void Evaluate(const Candidate& c, const AppliedBatch& batch, const SceneView& scene,
                std::vector<WatchEvent>* events);

  // Sorted by id: fence order is event order.
  std::vector<Fence> fences_;
  // Tree user data = index into fences_.
  DynamicTree fixed_tree_;
  DynamicTree attached_tree_;
  // Host body id -> its fences.
  absl::flat_hash_map<uint64_t, std::vector<uint32_t>> attached_;
  // Per fence: its index into motions_ during a batch, or -1.
  std::vector<int32_t> motion_of_;
  std::vector<Motion> motions_;
  std::vector<uint32_t> moved_;
  std::vector<Candidate> candidates_;
};

}  // namespace collide
