#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "bvh/dynamic_tree.h"
#include "geom/aabb.h"
#include "geom/vec3.h"

namespace collide::testing {

/// A proxy the tests know about, with its tight box, for brute-force answers.
struct OracleProxy {
  int32_t proxy = kNullProxy;
  Aabb tight{};
  uint32_t user = 0;
  uint32_t category = 0;
};

/// A box hit by a cast, with the distance at which the cast enters it.
struct OracleHit {
  int32_t proxy = kNullProxy;
  float t = 0.0f;
};

/// Uniform float in [lo, hi).
float Uniform(std::mt19937& rng, float lo, float hi);

/// A random box with its centre in [-half_world, half_world]^3 and half extents in
/// [0, max_half) on each axis.
Aabb RandomBox(std::mt19937& rng, float half_world, float max_half);

/// A random unit vector.
Vec3 RandomDirection(std::mt19937& rng);

/// Proxies (sorted by id) among `proxies` whose fat box in `tree` overlaps `box` and whose
/// category meets `mask`.
std::vector<int32_t> OverlapOracle(const DynamicTree& tree, std::span<const OracleProxy> proxies,
                                   const Aabb& box, uint32_t mask);

/// Proxies (sorted by id) whose fat box, grown by `half_extent`, the ray `origin + t * dir`,
/// t in [0, max_distance], enters, with the entry distance (RayAabbInterval).
std::vector<OracleHit> CastOracle(const DynamicTree& tree, std::span<const OracleProxy> proxies,
                                  const Vec3& origin, const Vec3& dir, float max_distance,
                                  const Vec3& half_extent, uint32_t mask);

/// The component-wise reciprocal used by the ray tests (±inf for zero components).
inline Vec3 Reciprocal(const Vec3& d) { return {1.0f / d.x, 1.0f / d.y, 1.0f / d.z}; }

/// `b` grown by `h` on each axis (negative `h` shrinks; an inverted result stays inverted).
inline Aabb Grow(const Aabb& b, const Vec3& h) { return {b.min - h, b.max + h}; }

}  // namespace collide::testing
