#pragma once

#include <cstddef>
#include <memory>

#include "bench/mesh_levels.h"

namespace collide::bench {

/// Embree 3 over a level's triangles (collide-bench-mesh's first peer): one scene holding one
/// native triangle geometry (RTC_GEOMETRY_TYPE_TRIANGLE) of the same vertices and indices, built
/// at RTC_BUILD_QUALITY_MEDIUM on a device of one thread, queried with rtcIntersect1 and
/// rtcOccluded1. `robust`: RTC_SCENE_FLAG_ROBUST (Embree's watertight mode, the guarantee
/// collide's rays give).
class EmbreeMeshPeer {
 public:
  EmbreeMeshPeer(const LevelMesh& mesh, bool robust);
  ~EmbreeMeshPeer();

  /// The seconds rtcCommitScene took (the build).
  double build_seconds() const;
  /// Bytes Embree held after the build, as its memory monitor counted them (its own copies of
  /// the vertices and indices, and the tree).
  size_t bytes() const;

  /// The closest hit: the triangle index (-1: miss) and its distance.
  int Intersect(const Ray& ray, float* distance);
  /// True when something lies within the ray's length.
  bool Occluded(const Ray& ray);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace collide::bench
