#pragma once

#include <cstdint>
#include <optional>

#include "history/pose_history.h"
#include "query/batch.h"
#include "query/collision_world.h"
#include "query/query_engine.h"

namespace collide {

// Queries at a past tick: the engine of query_engine.h with PastTick as its candidate source,
// the history's index of the segment holding that tick (PoseHistory::CastCandidates /
// QueryCandidates: leaf boxes that bound each body over the segment), grown by the
// interpolation slack when interpolating, each candidate tested exactly at its historic (or
// interpolated) state. See pose_history.h. The history only provides the source: the scene's
// entry point (scene/scene_query.cc) chooses it per query (PastTickOf) and runs the past-tick
// queries over it with the query layer's RunQuery / RunBatch.

/// The moment a past-tick query looks at: the end of `tick`, or with `fraction` in (0, 1) that
/// far from the end of `tick` to the end of `tick + 1` (both retained).
struct TickPoint {
  /// A retained tick (PoseHistory::Retains).
  uint64_t tick = 0;
  /// In [0, 1); 0 is the end of `tick` exactly.
  float fraction = 0.0f;

  friend bool operator==(const TickPoint&, const TickPoint&) = default;
};

/// The moment `query` looks at when it must look into `history`: its `at_tick` (and
/// `tick_fraction`) when that is not the current tick exactly. nullopt for a query of the world
/// now (no `at_tick`, or the current tick without a fraction), which runs against the world's
/// trees (CurrentTree). The tick is not checked: see PoseHistory::Retains.
inline std::optional<TickPoint> PastTickOf(const PoseHistory& history, const Query& query) {
  if (!query.at_tick.has_value() ||
      (*query.at_tick == history.tick() && !(query.tick_fraction > 0.0f))) {
    return std::nullopt;
  }
  return TickPoint{.tick = *query.at_tick, .fraction = query.tick_fraction};
}

/// The candidate source (query_engine.h, CandidateSource) of queries at `at`: the bodies as
/// they were then, found through the history's index of that tick.
class PastTick {
 public:
  /// `history` is `world`'s; `at` is retained by it (and at.tick + 1 with a fraction).
  PastTick(const CollisionWorld& world, const PoseHistory& history, const TickPoint& at)
      : world_(world),
        history_(history),
        at_(at),
        growth_(at.fraction > 0.0f ? history.LerpSlackOf(at.tick + 1) : 0.0f) {}

  /// The world queried (its magnitude bounds every past state).
  const CollisionWorld& world() const { return world_; }
  /// The interpolation slack: how far an interpolated body may reach beyond its indexed box.
  float growth() const { return growth_; }

  /// The bodies whose boxes in the index of at.tick the swept box meets, each at its state at
  /// `at` (CandidateSource).
  template <HitCollector Collector, typename Visit>
  void Cast(const Vec3& origin, const Vec3& unit_dir, const Vec3& half_extent, uint32_t mask,
            const Collector& collector, Visit&& visit) const {
    if (collector.Done()) return;
    history_.CastCandidates(
        world_, at_.tick, origin, unit_dir, collector.MaxDistance(), half_extent, mask,
        [&](BodyHandle slot, uint32_t generation, uint64_t anchor, float max_distance) -> float {
          Body body;
          if (!BodyAt(slot, generation, anchor, &body)) return max_distance;
          return visit(body, max_distance);
        });
  }

  /// The bodies whose boxes in the index of at.tick overlap `box`, each at its state at `at`
  /// (CandidateSource).
  template <HitCollector Collector, typename Visit>
  void Gather(const Aabb& box, uint32_t mask, const Collector& collector, Visit&& visit) const {
    if (collector.Done()) return;
    history_.QueryCandidates(world_, at_.tick, box, mask,
                             [&](BodyHandle slot, uint32_t generation, uint64_t anchor) -> bool {
                               Body body;
                               if (!BodyAt(slot, generation, anchor, &body)) return true;
                               return visit(body);
                             });
  }

 private:
  // The state of the body of generation `generation` in `slot` at `at_`: false when it did not
  // exist at the end of at_.tick. A body missing at the end of tick + 1 is taken as at `tick`.
  bool BodyAt(BodyHandle slot, uint32_t generation, uint64_t anchor, Body* out) const {
    const PastBody past = history_.StateFrom(world_, slot, at_.tick, anchor);
    if (!past.alive || past.generation != generation) return false;
    *out = past.body;
    if (at_.fraction > 0.0f) {
      const PastBody next = history_.StateFrom(world_, slot, at_.tick + 1, anchor);
      if (next.alive && next.generation == generation) {
        out->pose = LerpPose(past.body.pose, next.body.pose, at_.fraction);
      }
    }
    return true;
  }

  const CollisionWorld& world_;
  const PoseHistory& history_;
  TickPoint at_;
  float growth_;
};

}  // namespace collide
