#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "bvh/dynamic_tree.h"
#include "geom/aabb.h"
#include "mesh/scaled_pose.h"
#include "query/asset_geometry.h"
#include "query/body.h"

namespace collide {

/// A body's handle in a world: its slot, stable while the body lives; reused after removal.
using BodyHandle = int32_t;
inline constexpr BodyHandle kNullBody = -1;

/// Tuning of a world's trees.
struct CollisionWorldOptions {
  /// How far (length units) a body's leaf box reaches beyond its tight box when the body is
  /// added. Moves and shape changes write the exact box (SetPose), so a margin only loosens the
  /// boxes of bodies that have not moved since they were added; 0 (the default, what a scene
  /// uses) keeps every box exact.
  float fat_margin = 0.0f;
  /// `FinishUpdates` rebuilds a tree by binned SAH when the sum of its query form's box areas
  /// over its leaves' (DynamicTree::WideAreaOverLeafArea) exceeds this multiple of the same
  /// measure right after its last full build (must be >= 1).
  float rebuild_cost_ratio = 1.1f;
  /// When true, a tree of at least `kBackgroundRebuildMin` bodies starts a rebuild on a thread
  /// of its own (DynamicTree::StartBackgroundRebuild) halfway to the bound (1 + (ratio - 1) / 2
  /// times its value after the last build) while batches go on, and the first `FinishUpdates`
  /// after it is done installs it; a check that finds the tree past the bound still waits for
  /// it (or rebuilds at once when none is under way). When false, `FinishUpdates` rebuilds at
  /// once at the bound.
  bool rebuild_in_background = true;
};

/// The fewest bodies of a tree that `FinishUpdates` rebuilds in the background (smaller ones
/// take less time to rebuild than a thread takes to start).
inline constexpr int32_t kBackgroundRebuildMin = 2048;

/// Bodies and their trees: the in-process collision world the query engine runs on. Not
/// thread-safe; the scene layer puts a reader/writer lock around it. Ids are not checked for
/// uniqueness here (the scene owns the id -> handle map).
///
/// Assets: a table of shared built assets (AddAsset), each in a slot that bodies name
/// (BodyDesc::asset). A body that places an asset is one leaf of its kind's tree, its box the
/// placed asset's (AssetBounds); the asset keeps its own tree in its local frame, so moving the
/// body moves nothing else. Who frees a slot (RemoveAsset) makes sure no body, and no past state
/// it still answers for, names it (the scene does).
class CollisionWorld {
 public:
  explicit CollisionWorld(const CollisionWorldOptions& options = {});

  /// Adds one body and returns its handle.
  BodyHandle Add(const BodyDesc& desc);
  /// Adds many bodies at once; into an empty tree this is a bulk (binned SAH) build. Writes one
  /// handle per description into `handles` (same size as `descs`).
  void AddBulk(std::span<const BodyDesc> descs, std::span<BodyHandle> handles);
  /// Removes a live body; its handle may be reused.
  void Remove(BodyHandle handle);
  /// Moves a live body (the hot path): writes the pose and its leaf's exact box and marks the
  /// leaf (DynamicTree::SetProxyBox); nothing above the leaf changes and nothing is
  /// re-inserted. Queries are exact again after `FinishUpdates`, which refits the marked
  /// leaves' ancestors once per batch: call it before any query (the scene applies a batch
  /// under its exclusive lock and ends it with `FinishUpdates`).
  void SetPose(BodyHandle handle, const Pose& pose);
  /// Replaces a live body's shape; like `SetPose`, exact again after `FinishUpdates`.
  void SetShape(BodyHandle handle, const Shape& shape);
  /// Replaces a live body's filter bits.
  void SetFilter(BodyHandle handle, uint32_t category, uint32_t mask);
  /// Ends a batch of updates; queries need it after `SetPose` and `SetShape`. Refits the 8-wide
  /// query form bottom-up from the marked leaves (its boxes exact again: each leaf's box is its
  /// body's, each node's the union of its children's), and once a quarter of a tree's bodies
  /// have moved since the last check, measures the form's decay
  /// (DynamicTree::WideAreaOverLeafArea, one pass) and rebuilds the tree by binned SAH when it
  /// has drifted past `rebuild_cost_ratio` times its value after the last build. The static
  /// tree is also rebuilt after every batch that added or removed a static body (at once below
  /// kBackgroundRebuildMin bodies, else in the background). Bodies added and removed keep the
  /// query form's shape (DynamicTree's secondary structure holds the added ones); a tree whose
  /// secondary structure holds half its most starts a background rebuild, whose install takes
  /// them into the main form (a smaller tree collapses at the most). Cost: O(nodes above the moved
  /// leaves), plus O(n) at a check, plus a small static tree's O(n log n) build. The binary trees
  /// (`tree()`) are refitted only when something reads their boxes: measure a copy's shape after
  /// its `Refit`.
  void FinishUpdates();
  /// Rebuilds both trees by binned SAH and refreshes their query form.
  void Optimize();

  /// Puts `asset` in a free slot of the asset table and returns the slot; kNoAsset when all
  /// kMaxAssetSlots are taken.
  AssetSlot AddAsset(std::shared_ptr<const AssetGeometry> asset);
  /// Frees a slot: no live body may name it (nor any past state still queried).
  void RemoveAsset(AssetSlot slot);
  /// Puts `asset` in slot `slot` (1 to kMaxAssetSlots), replacing what it held: for a copy of
  /// another world that follows its bodies (the copy's slots mirror the original's).
  void PlaceAsset(AssetSlot slot, std::shared_ptr<const AssetGeometry> asset);
  /// The asset in a taken slot.
  const AssetGeometry& asset(AssetSlot slot) const { return *assets_[slot]; }
  /// The shared asset in a slot (null when free).
  const std::shared_ptr<const AssetGeometry>& shared_asset(AssetSlot slot) const {
    return assets_[slot];
  }
  /// Slots taken in the asset table.
  uint32_t asset_slot_count() const { return asset_slots_taken_; }
  /// One past the largest slot ever used (shared_asset() is valid below it).
  uint32_t asset_table_size() const { return static_cast<uint32_t>(assets_.size()); }
  /// The tight world box of a body as `body` holds it (its shape's, or its placed asset's).
  Aabb BoundsOf(const Body& body) const;
  /// The radius of the smallest ball about the body's pose origin that holds it at any rotation.
  float BoundingRadiusOf(const Body& body) const;

  /// The body in a live slot.
  const Body& body(BodyHandle handle) const { return bodies_[handle]; }
  /// True when `handle` names a live body.
  bool IsLive(BodyHandle handle) const {
    return handle >= 0 && handle < static_cast<BodyHandle>(bodies_.size()) &&
           bodies_[handle].proxy >= 0;
  }
  /// Live bodies.
  int32_t body_count() const { return body_count_; }
  /// One past the largest handle ever given out.
  int32_t slot_count() const { return static_cast<int32_t>(bodies_.size()); }
  /// The tree holding the bodies of a kind (user data = body handle).
  const DynamicTree& tree(BodyKind kind) const { return trees_[static_cast<int>(kind)]; }
  /// The largest absolute coordinate of any body's tight bounds the world has held since it was
  /// made (it never decreases, so it also bounds every past state a PoseHistory retains). The
  /// query engine scales its rounding allowance by it (query_engine.h, RoundingPad).
  float magnitude() const { return magnitude_; }
  /// Bytes held by bodies and trees.
  size_t MemoryBytes() const;
  /// Bytes of MemoryBytes() held by the world itself, its body table and its free slots (the
  /// rest is the trees').
  size_t BodyBytes() const;
  /// Checks both trees and the body table against each other (tests).
  bool Validate() const;

 private:
  DynamicTree& MutableTree(BodyKind kind) { return trees_[static_cast<int>(kind)]; }
  // The decay at which a background rebuild starts: halfway to rebuild_cost_ratio_.
  float BackgroundStartRatio() const { return 1.0f + 0.5f * (rebuild_cost_ratio_ - 1.0f); }
  // Takes the cost of the tree `kind` after a background build was installed into built_cost_.
  void TakeInstalledCost(int kind);
  // Rebuilds the tree `kind` by binned SAH now (no background build may be pending), refreshes
  // its query form and takes its cost as the bar.
  void RebuildNow(int kind);
  BodyHandle AllocateSlot();
  // Returns `tight` after taking its magnitude into magnitude_.
  const Aabb& Track(const Aabb& tight) {
    magnitude_ = std::max(magnitude_, Magnitude(tight));
    return tight;
  }

  std::vector<Body> bodies_;
  std::vector<BodyHandle> free_slots_;
  // Slot 0 is kNoAsset (always empty).
  std::vector<std::shared_ptr<const AssetGeometry>> assets_{1};
  std::vector<AssetSlot> free_asset_slots_;
  uint32_t asset_slots_taken_ = 0;
  int32_t body_count_ = 0;
  float magnitude_ = 0.0f;
  float fat_margin_;
  float rebuild_cost_ratio_;
  bool rebuild_in_background_;
  DynamicTree trees_[2];
  // Per tree: WideAreaOverLeafArea after its last full build (0: not measured, the first check
  // takes its value; -1: measure after the next Optimize), and the leaves re-boxed since the
  // cost was last checked (checking is O(nodes), so it happens once per a quarter of the leaves).
  float built_cost_[2] = {0.0f, 0.0f};
  int32_t changed_since_check_[2] = {0, 0};
  // Static bodies added or removed since the static tree's last build started (it is rebuilt
  // after every batch that changed them).
  int32_t static_membership_changes_ = 0;
};

}  // namespace collide
