#pragma once

#include <memory>
#include <vector>

#include "bench/mesh_levels.h"

namespace collide::bench {

/// Bullet over a level (collide-bench-mesh's second peer): one static object in a
/// btCollisionWorld (btDbvtBroadphase), its shape a btBvhTriangleMeshShape (quantized BVH) over
/// the same vertices and indices, or a btHeightfieldTerrainShape over the same heights (with its
/// ray accelerator built); queried with rayTest, convexSweepTest of a btSphereShape and
/// contactTest of a sphere, as a game would.
class BulletMeshPeer {
 public:
  /// The mesh level.
  explicit BulletMeshPeer(const LevelMesh& mesh);
  /// The terrain level: `heights` row-major, rows along z, columns along x, `spacing` apart,
  /// sample (0, 0) at the origin.
  BulletMeshPeer(const std::vector<float>& heights, int rows, int columns, float spacing);
  ~BulletMeshPeer();

  /// The seconds the shape's build took (the BVH, or the heightfield's accelerator).
  double build_seconds() const;

  /// The closest hit: the triangle index reported by Bullet (-1: miss) and the distance.
  int RayClosest(const Ray& ray, float* distance);
  /// True when something lies within the ray's length (the search stops at the first hit).
  bool RayAny(const Ray& ray);
  /// The closest contact of a ball of `radius` swept along the ray: true and its distance.
  bool SphereCastClosest(const Ray& ray, float radius, float* distance);
  /// The contacts (distance <= 0) of a ball of `radius` at `centre` with the level.
  int OverlapSphereContacts(const Vec3& centre, float radius);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace collide::bench
