#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "bvh/dynamic_tree.h"
#include "query/body.h"

namespace collide {

/// A body's handle in a world: its slot, stable while the body lives; reused after removal.
using BodyHandle = int32_t;
inline constexpr BodyHandle kNullBody = -1;

/// Tuning of a world's trees.
struct CollisionWorldOptions {
  /// How far (length units) a leaf's fat box reaches beyond the body's tight box, so that small
  /// moves leave the tree untouched.
  float fat_margin = 0.1f;
};

/// Bodies and their trees: the in-process collision world the query engine runs on. Not
/// thread-safe; the scene layer puts a reader/writer lock around it. Ids are not checked for
/// uniqueness here (the scene owns the id -> handle map).
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
  /// Moves a live body (the hot path: touches the tree only when the tight box leaves the fat
  /// one).
  void SetPose(BodyHandle handle, const Pose& pose);
  /// Replaces a live body's shape.
  void SetShape(BodyHandle handle, const Shape& shape);
  /// Replaces a live body's filter bits.
  void SetFilter(BodyHandle handle, uint32_t category, uint32_t mask);
  /// Rebuilds both trees by binned SAH (after many moves or inserts).
  void Optimize();

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
  /// Bytes held by bodies and trees.
  size_t MemoryBytes() const;
  /// Checks both trees and the body table against each other (tests).
  bool Validate() const;

 private:
  DynamicTree& MutableTree(BodyKind kind) { return trees_[static_cast<int>(kind)]; }
  BodyHandle AllocateSlot();

  std::vector<Body> bodies_;
  std::vector<BodyHandle> free_slots_;
  int32_t body_count_ = 0;
  DynamicTree trees_[2];
};

}  // namespace collide
