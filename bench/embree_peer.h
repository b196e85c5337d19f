#pragma once

#include <memory>

#include "bench/reference_scene.h"

namespace collide::bench {

/// The second peer: Embree 3 (the reference for CPU ray traversal), the reference bodies as one
/// user geometry whose bounds and intersect callbacks call collide's own shape functions, so the
/// comparison is of the acceleration structure and its traversal, not the narrow phase. The
/// device runs one thread (as collide and Bullet do here) on the widest ISA this CPU offers.
class EmbreePeer {
 public:
  /// Built at RTC_BUILD_QUALITY_MEDIUM. `refit`: after moves the scene is refitted (a dynamic
  /// scene, the geometry at RTC_BUILD_QUALITY_REFIT); otherwise rebuilt: Embree's two ways.
  EmbreePeer(const ReferenceScene& scene, bool refit);
  ~EmbreePeer();

  /// Closest hit of one ray (rtcIntersect1): the body index (or -1) and the hit distance.
  int RayClosest(const Ray& ray, float* distance);
  /// Closest hits of `count` rays in packets of 16 (rtcIntersect16): body indices (-1: miss)
  /// and hit distances.
  void RaysClosest16(const Ray* rays, int count, int* bodies, float* distances);
  /// Moves every body by its step of round `round`, then commits the scene.
  void MoveAll(const ReferenceScene& scene, int round);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace collide::bench
