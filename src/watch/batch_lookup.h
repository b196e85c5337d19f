#pragma once

// Internal helpers of the watch layer shared by ContactSet and FenceSet.

#include <algorithm>
#include <cstdint>

#include "geom/aabb.h"
#include "query/collision_world.h"
#include "query/query_engine.h"
#include "scene/scene_observer.h"

namespace collide::watch_internal {

using collide::internal::RegionMagnitude;

// The change of body `id` in the batch (its changes are sorted by id), or null.
inline const BodyChange* FindChange(const AppliedBatch& batch, uint64_t id) {
  auto it = std::lower_bound(batch.changes.begin(), batch.changes.end(), id,
                             [](const BodyChange& c, uint64_t v) { return c.id < v; });
  return it != batch.changes.end() && it->id == id ? &*it : nullptr;
}

// Calls f(handle) for the bodies of both trees of `world` whose fat boxes overlap `box`.
template <typename F>
void ForEachBody(const CollisionWorld& world, const Aabb& box, F&& f) {
  // Padded like every broad phase (query/query_engine.h, RoundingPad): a body the narrow phase
  // finds touching is never lost to the boxes' rounding.
  const Aabb padded = Expand(box, RoundingPad(RegionMagnitude(world, box)));
  for (BodyKind kind : {BodyKind::kDynamic, BodyKind::kStatic}) {
    world.tree(kind).QueryAabb(padded, ~0u, [&](uint32_t handle, int32_t) {
      f(static_cast<BodyHandle>(handle));
      return true;
    });
  }
}

}  // namespace collide::watch_internal
