#pragma once

#include "geom/aabb.h"
#include "geom/cast.h"
#include "geom/pose.h"
#include "geom/shapes.h"
#include "mesh/mesh_hit.h"
#include "mesh/scaled_pose.h"
#include "query/asset_geometry.h"

namespace collide {

// The narrow phase of a body that places an asset (query/asset_geometry.h) at a ScaledPose: the
// mesh layer's queries of a posed mesh (mesh/mesh_query.h) or heightfield
// (mesh/heightfield_query.h), whichever the asset is, with their conventions (surfaces, both
// sides, the watertight ray test, ties to the lowest triangle index, world lengths).

/// The world box of the placed asset.
Aabb AssetBounds(const AssetGeometry& asset, const ScaledPose& pose);

/// The nearest hit of the ray on the asset (`any`: some hit, the first the walk finds). A ball of
/// radius 0 is a ray in every respect.
bool AssetRaycast(const AssetGeometry& asset, const ScaledPose& pose, const Ray& ray, bool any,
                  MeshHit* hit);
/// Every triangle the ray hits, in no order (MeshHitSink's contract).
void AssetRaycastAll(const AssetGeometry& asset, const ScaledPose& pose, const Ray& ray,
                     MeshHitSink sink);
/// The first contact (`any`: some contact) of a ball of `radius` (> 0) moving along `path`.
bool AssetSphereCast(const AssetGeometry& asset, const ScaledPose& pose, const Ray& path,
                     float radius, bool any, MeshHit* hit);
/// Every triangle the ball touches along the path, each at its first contact, in no order.
void AssetSphereCastAll(const AssetGeometry& asset, const ScaledPose& pose, const Ray& path,
                        float radius, MeshHitSink sink);

/// True when the posed shape touches a triangle of the asset.
bool AssetOverlap(const AssetGeometry& asset, const ScaledPose& pose, const Shape& shape,
                  const Pose& shape_pose);
/// The deepest contact of the posed shape with the asset's triangles.
bool AssetPenetrate(const AssetGeometry& asset, const ScaledPose& pose, const Shape& shape,
                    const Pose& shape_pose, MeshContact* contact);
/// Every triangle the posed shape touches (with `detail`, each contact's depth, normal, point),
/// in no order; the sink returns false to stop.
void AssetOverlapAll(const AssetGeometry& asset, const ScaledPose& pose, const Shape& shape,
                     const Pose& shape_pose, bool detail, MeshContactSink sink);

/// The asset's point nearest `point` within `max_distance`.
bool AssetClosestPoint(const AssetGeometry& asset, const ScaledPose& pose, const Vec3& point,
                       float max_distance, MeshPoint* nearest);
/// Every triangle within `radius` of `point`, with its nearest point, in no order.
void AssetWithinRadiusAll(const AssetGeometry& asset, const ScaledPose& pose, const Vec3& point,
                          float radius, MeshPointSink sink);

/// Every triangle that meets the world box `region` (exactly), in no order.
void AssetRegionAll(const AssetGeometry& asset, const ScaledPose& pose, const Aabb& region,
                    MeshContactSink sink);

}  // namespace collide
