#pragma once

// Internal helpers of the watch layer shared by ContactSet and FenceSet.

#include <algorithm>
#include <cstdint>

#include "geom/aabb.h"
#include "query/collision_world.h"
#include "scene/scene_observer.h"

namespace collide::watch_internal {

// The change of body `id` in the batch (its changes are sorted by id), or null.
inline const BodyChange* FindChange(const AppliedBatch& batch, uint64_t id) {
  auto it = std::lower_bound(batch.changes.begin(), batch.changes.end(), id,
                             [](const BodyChange& c, uint64_t v) { return c.id < v; });
  return it != batch.changes.end() && it->id == id ? &*it : nullptr;
}

// Calls f(handle) for the bodies of both trees of `world` whose fat boxes overlap `box`.
template <typename F>
void ForEachBody(const CollisionWorld& world, const Aabb& box, F&& f) {
  for (BodyKind kind : {BodyKind::kDynamic, BodyKind::kStatic}) {
    world.tree(kind).QueryAabb(box, ~0u, [&](uint32_t handle, int32_t) {
      f(static_cast<BodyHandle>(handle));
      return true;
    });
  }
}

}  // namespace collide::watch_internal
