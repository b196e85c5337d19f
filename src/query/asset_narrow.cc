#include "query/asset_narrow.h"

#include "mesh/heightfield_query.h"
#include "mesh/mesh_query.h"

namespace collide {

Aabb AssetBounds(const AssetGeometry& asset, const ScaledPose& pose) {
  return asset.kind() == AssetKind::kMesh ? Bounds(asset.mesh(), pose)
                                          : Bounds(asset.heightfield(), pose);
}

bool AssetRaycast(const AssetGeometry& asset, const ScaledPose& pose, const Ray& ray, bool any,
                  MeshHit* hit) {
  if (asset.kind() == AssetKind::kMesh) {
    return any ? RaycastAny(asset.mesh(), pose, ray, hit) : Raycast(asset.mesh(), pose, ray, hit);
  }
  return any ? RaycastAny(asset.heightfield(), pose, ray, hit)
             : Raycast(asset.heightfield(), pose, ray, hit);
}

void AssetRaycastAll(const AssetGeometry& asset, const ScaledPose& pose, const Ray& ray,
                     MeshHitSink sink) {
  if (asset.kind() == AssetKind::kMesh) return RaycastAll(asset.mesh(), pose, ray, sink);
  RaycastAll(asset.heightfield(), pose, ray, sink);
}

bool AssetSphereCast(const AssetGeometry& asset, const ScaledPose& pose, const Ray& path,
                     float radius, bool any, MeshHit* hit) {
  if (asset.kind() == AssetKind::kMesh) {
    return any ? SphereCastAny(asset.mesh(), pose, path, radius, hit)
               : SphereCast(asset.mesh(), pose, path, radius, hit);
  }
  return any ? SphereCastAny(asset.heightfield(), pose, path, radius, hit)
             : SphereCast(asset.heightfield(), pose, path, radius, hit);
}

void AssetSphereCastAll(const AssetGeometry& asset, const ScaledPose& pose, const Ray& path,
                        float radius, MeshHitSink sink) {
  if (asset.kind() == AssetKind::kMesh) {
    return SphereCastAll(asset.mesh(), pose, path, radius, sink);
  }
  SphereCastAll(asset.heightfield(), pose, path, radius, sink);
}

bool AssetOverlap(const AssetGeometry& asset, const ScaledPose& pose, const Shape& shape,
                  const Pose& shape_pose) {
  return asset.kind() == AssetKind::kMesh ? Overlap(asset.mesh(), pose, shape, shape_pose)
                                          : Overlap(asset.heightfield(), pose, shape, shape_pose);
}

bool AssetPenetrate(const AssetGeometry& asset, const ScaledPose& pose, const Shape& shape,
                    const Pose& shape_pose, MeshContact* contact) {
  return asset.kind() == AssetKind::kMesh
             ? Penetrate(asset.mesh(), pose, shape, shape_pose, contact)
             : Penetrate(asset.heightfield(), pose, shape, shape_pose, contact);
}

void AssetOverlapAll(const AssetGeometry& asset, const ScaledPose& pose, const Shape& shape,
                     const Pose& shape_pose, bool detail, MeshContactSink sink) {
  if (asset.kind() == AssetKind::kMesh) {
    return OverlapAll(asset.mesh(), pose, shape, shape_pose, detail, sink);
  }
  OverlapAll(asset.heightfield(), pose, shape, shape_pose, detail, sink);
}

bool AssetClosestPoint(const AssetGeometry& asset, const ScaledPose& pose, const Vec3& point,
                       float max_distance, MeshPoint* nearest) {
  return asset.kind() == AssetKind::kMesh
             ? ClosestPoint(asset.mesh(), pose, point, max_distance, nearest)
             : ClosestPoint(asset.heightfield(), pose, point, max_distance, nearest);
}

void AssetWithinRadiusAll(const AssetGeometry& asset, const ScaledPose& pose, const Vec3& point,
                          float radius, MeshPointSink sink) {
  if (asset.kind() == AssetKind::kMesh) {
    return WithinRadiusAll(asset.mesh(), pose, point, radius, sink);
  }
  WithinRadiusAll(asset.heightfield(), pose, point, radius, sink);
}

void AssetRegionAll(const AssetGeometry& asset, const ScaledPose& pose, const Aabb& region,
                    MeshContactSink sink) {
  if (asset.kind() == AssetKind::kMesh) return RegionAll(asset.mesh(), pose, region, sink);
  RegionAll(asset.heightfield(), pose, region, sink);
}

}  // namespace collide
