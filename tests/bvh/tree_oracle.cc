#include "bvh/tree_oracle.h"

#include <algorithm>
#include <cmath>

namespace collide::testing {

float Uniform(std::mt19937& rng, float lo, float hi) {
  return std::uniform_real_distribution<float>(lo, hi)(rng);
}

Aabb RandomBox(std::mt19937& rng, float half_world, float max_half) {
  float cx = Uniform(rng, -half_world, half_world);
  float cy = Uniform(rng, -half_world, half_world);
  float cz = Uniform(rng, -half_world, half_world);
  float hx = Uniform(rng, 0.0f, max_half);
  float hy = Uniform(rng, 0.0f, max_half);
  float hz = Uniform(rng, 0.0f, max_half);
  Vec3 c{cx, cy, cz};
  Vec3 h{hx, hy, hz};
  return {c - h, c + h};
}

Vec3 RandomDirection(std::mt19937& rng) {
  while (true) {
    float x = Uniform(rng, -1.0f, 1.0f);
    float y = Uniform(rng, -1.0f, 1.0f);
    float z = Uniform(rng, -1.0f, 1.0f);
    Vec3 v{x, y, z};
    float len2 = LengthSquared(v);
    if (len2 > 1e-4f && len2 <= 1.0f) return Normalize(v);
  }
}

std::vector<int32_t> OverlapOracle(const DynamicTree& tree, std::span<const OracleProxy> proxies,
                                   const Aabb& box, uint32_t mask) {
  std::vector<int32_t> out;
  for (const OracleProxy& p : proxies) {
    if ((p.category & mask) != 0 && Overlaps(tree.FatAabb(p.proxy), box)) out.push_back(p.proxy);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<OracleHit> CastOracle(const DynamicTree& tree, std::span<const OracleProxy> proxies,
                                  const Vec3& origin, const Vec3& dir, float max_distance,
                                  const Vec3& half_extent, uint32_t mask) {
  std::vector<OracleHit> out;
  const Vec3 inv = Reciprocal(dir);
  for (const OracleProxy& p : proxies) {
    if ((p.category & mask) == 0) continue;
    Aabb b = Grow(tree.FatAabb(p.proxy), half_extent);
    float t0, t1;
    if (RayAabbInterval(b, origin, inv, max_distance, &t0, &t1)) out.push_back({p.proxy, t0});
  }
  std::sort(out.begin(), out.end(),
            [](const OracleHit& a, const OracleHit& b) { return a.proxy < b.proxy; });
  return out;
}

}  // namespace collide::testing
