#pragma once

#include "geom/aabb.h"
#include "geom/cast.h"
#include "geom/pose.h"
#include "geom/shapes.h"
#include "mesh/heightfield.h"
#include "mesh/mesh_hit.h"
#include "mesh/scaled_pose.h"

namespace collide {

// Every query against a posed heightfield asset (heightfield.h), with the same contracts as the
// mesh's (mesh_query.h: surfaces, both sides, the watertight ray test with its exactly-once edge
// rule, start overlaps, ties to the lowest triangle index), against the triangles the grid
// stands for (HeightfieldShape::CellTriangle), never built: the min/max pyramid finds the cells
// a query can meet, nearest first for casts, and each cell's two triangles are tested exactly.
// Holes have no triangles.

/// The world box of the posed heightfield: its local box mapped by the pose (Arvo).
Aabb Bounds(const HeightfieldShape& heightfield, const ScaledPose& pose);

/// The nearest hit of the ray (unit direction, max_distance >= 0) on the heightfield: true and
/// `*hit`.
bool Raycast(const HeightfieldShape& heightfield, const ScaledPose& pose, const Ray& ray,
             MeshHit* hit);
/// Some hit of the ray (the first the traversal finds, not necessarily the nearest).
bool RaycastAny(const HeightfieldShape& heightfield, const ScaledPose& pose, const Ray& ray,
                MeshHit* hit);
/// Every triangle the ray hits, in no order: `sink` returns the distance still wanted.
void RaycastAll(const HeightfieldShape& heightfield, const ScaledPose& pose, const Ray& ray,
                MeshHitSink sink);

/// The first contact of a ball of `radius` (>= 0) whose centre moves along `path`.
bool SphereCast(const HeightfieldShape& heightfield, const ScaledPose& pose, const Ray& path,
                float radius, MeshHit* hit);
/// Some contact of the ball along the path (the first found).
bool SphereCastAny(const HeightfieldShape& heightfield, const ScaledPose& pose, const Ray& path,
                   float radius, MeshHit* hit);
/// Every triangle the ball touches along the path (each at its own first contact), in no
/// order: `sink` returns the distance still wanted.
void SphereCastAll(const HeightfieldShape& heightfield, const ScaledPose& pose, const Ray& path,
                   float radius, MeshHitSink sink);

/// True when the shape at `shape_pose` (world) touches some triangle of the heightfield.
bool Overlap(const HeightfieldShape& heightfield, const ScaledPose& pose, const Shape& shape,
             const Pose& shape_pose);
/// The deepest contact of the shape with the heightfield's triangles: true and the triangle, its
/// penetration depth (geom/triangle_overlap.h: the shortest move of the shape that separates it
/// from that triangle), direction and contact point. The triangles are separate surfaces: the
/// depth is against the deepest one, not the heightfield as a solid.
bool Penetrate(const HeightfieldShape& heightfield, const ScaledPose& pose, const Shape& shape,
               const Pose& shape_pose, MeshContact* contact);
/// Every triangle the shape touches, in no order; with `detail` each contact carries its depth,
/// direction and point (without, only the triangle). `sink` returns false to stop.
void OverlapAll(const HeightfieldShape& heightfield, const ScaledPose& pose, const Shape& shape,
                const Pose& shape_pose, bool detail, MeshContactSink sink);

/// The heightfield's point nearest `point` within `max_distance` (>= 0): true and `*nearest`.
bool ClosestPoint(const HeightfieldShape& heightfield, const ScaledPose& pose, const Vec3& point,
                  float max_distance, MeshPoint* nearest);
/// Every triangle within `radius` of `point`, with its nearest point, in no order.
void WithinRadiusAll(const HeightfieldShape& heightfield, const ScaledPose& pose, const Vec3& point,
                     float radius, MeshPointSink sink);

/// True when some triangle meets the world box `region` (exactly: the triangle, not its box).
bool AnyInRegion(const HeightfieldShape& heightfield, const ScaledPose& pose, const Aabb& region);
/// Every triangle that meets `region`, in no order (contacts without depth).
void RegionAll(const HeightfieldShape& heightfield, const ScaledPose& pose, const Aabb& region,
               MeshContactSink sink);

}  // namespace collide
