#pragma once

#include <cstddef>
#include <span>
#include <variant>
#include <vector>

#include "query/batch.h"
#include "query/body.h"
#include "query/hit.h"

namespace collide::testing {

/// The query of kind `index` (ShapeQuery's order: raycast, sphere cast, overlap, within radius,
/// region) made of the given fields; a within-radius query is about `ray.origin`. Lets random
/// tests draw every field whatever the kind.
inline ShapeQuery ShapeQueryOfKind(size_t index, const Ray& ray, float radius, const Shape& shape,
                                   const Pose& pose, bool detail, const Aabb& region) {
  switch (index) {
    case 0:
      return RaycastQuery{.ray = ray};
    case 1:
      return SphereCastQuery{.ray = ray, .radius = radius};
    case 2:
      return OverlapQuery{.shape = shape, .pose = pose, .detail = detail};
    case 3:
      return WithinRadiusQuery{.point = ray.origin, .radius = radius};
    default:
      return RegionQuery{.region = region};
  }
}

/// For messages: the path of a cast, a ray from a within-radius query's point, else a zero ray.
inline Ray DescribedPath(const Query& query) {
  if (const auto* ray = std::get_if<RaycastQuery>(&query.shape_query)) return ray->ray;
  if (const auto* sphere = std::get_if<SphereCastQuery>(&query.shape_query)) return sphere->ray;
  if (const auto* within = std::get_if<WithinRadiusQuery>(&query.shape_query)) {
    return Ray{.origin = within->point};
  }
  return Ray{};
}

/// For messages: the radius of a sphere cast or a within-radius query, else 0.
inline float DescribedRadius(const Query& query) {
  if (const auto* sphere = std::get_if<SphereCastQuery>(&query.shape_query)) return sphere->radius;
  if (const auto* within = std::get_if<WithinRadiusQuery>(&query.shape_query)) {
    return within->radius;
  }
  return 0.0f;
}

/// Every hit of `query` on `bodies` by brute force: the filter and the same narrow-phase
/// function the engine runs (ray cast, sphere cast, overlap or penetration, closest point, bounds
/// overlap) applied to every body, no tree involved, sorted by (distance, id). `at_tick` and
/// `tick_fraction` are ignored: `bodies` is the state the query looks at.
std::vector<QueryHit> BruteForce(std::span<const BodyDesc> bodies, const Query& query);

/// Checks an engine answer (`got`, whose hits start at `hits`) against the brute force's
/// `expected` by the query's mode: kClosest, the first expected hit; kAny, one of the expected
/// hits; kAll, the first min(expected, max_hits) hits in order and the truncation flag. Hits are
/// compared field by field (id, distance, depth, point, normal, start_overlapping): the engine
/// runs the same narrow phase, so they agree bit for bit.
void ExpectAnswer(const Query& query, const std::vector<QueryHit>& expected, const QueryResult& got,
                  const QueryHit* hits);

}  // namespace collide::testing
