#pragma once

#include <memory>
#include <vector>

#include "bench/reference_scene.h"

namespace collide::bench {

/// The peer: Bullet's btCollisionWorld over btDbvtBroadphase, driven with the same calls as
/// shared/bench/bullet_reference.cc.
class BulletPeer {
 public:
  explicit BulletPeer(const ReferenceScene& scene);
  ~BulletPeer();

  /// Closest hit of ray i: the body index (or -1) and the hit distance.
  int RayClosest(const Ray& ray, float* distance);
  /// Closest sphere cast (radius r): true on a hit.
  bool SphereCastClosest(const Ray& ray, float radius);
  /// Real contacts (distance <= 0) of a ball of radius r at `centre`.
  int OverlapSphereContacts(const Vec3& centre, float radius);
  /// Moves every body by its step of round `round`, then refreshes all bounds.
  void MoveAll(const ReferenceScene& scene, int round);
  /// MoveAll, with the bodies i = `first`, `first + stride`, ... removed from the world and
  /// added back at the pose of body (i + n / 2 + 1) % n before the bounds are refreshed (a
  /// round of respawns).
  void MoveAllRespawning(const ReferenceScene& scene, int round, size_t first, size_t stride);

 private:
  // Moves every body by its step of round `round` (the bounds not refreshed).
  void MoveBodies(const ReferenceScene& scene, int round);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace collide::bench
