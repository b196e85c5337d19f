#pragma once

#include "geom/aabb.h"
#include "geom/cast.h"
#include "geom/pose.h"
#include "geom/shapes.h"
#include "mesh/mesh_hit.h"
#include "mesh/mesh_shape.h"
#include "mesh/scaled_pose.h"

namespace collide {

// Every query against a posed mesh asset (mesh_shape.h), exactly, in the mesh's local frame: the
// query is mapped there once (scaled_pose.h), the mesh's own tree finds the candidate triangles,
// each is tested exactly (geom/triangle*.h), and the result is mapped back. These are the narrow
// phase of a mesh body: the world's broad phase holds the body as one leaf with `Bounds`.
//
// Conventions (docs/ARCHITECTURE.md, "Conventions", as for the other shapes, with what a
// surface changes):
// - A mesh is a surface: its triangles, closed (edges and vertices included), both sides. It
//   has no inside: a ray that starts within a closed mesh hits the wall it leaves through.
// - Rays use the watertight test of geom/triangle.h: a ray through a shared edge or vertex of a
//   closed mesh hits exactly one of the triangles there. A ray parallel to a triangle's plane
//   misses it; a ray starting exactly on a triangle hits it at distance 0 (start_overlapping)
//   when rounding puts the origin on the plane's near side or on it.
// - A ray's normal is the face normal facing the ray (opposite its direction); back_face tells
//   which side was hit. Triangles of zero area are never hit by rays; casts, overlaps and
//   nearest points touch them as the segments or points they are.
// - Sphere casts of radius 0 are ray casts. A ball of radius > 0 that touches the mesh at the
//   start reports distance 0, start_overlapping, the mesh's point nearest its centre (the
//   triangle holding it) and the direction from that point to the centre.
// - Ties: of the triangles at the same distance (or depth) the lowest triangle index is
//   reported, so the answer does not depend on the tree.
// - Distances and depths are world lengths (the local ones times the scale); `max_distance`
//   bounds them in world units.

/// The world box of the posed mesh: its root's child boxes, each mapped by the pose (Arvo),
/// joined. Contains every triangle; empty mesh: a zero box at the position.
Aabb Bounds(const MeshShape& mesh, const ScaledPose& pose);

/// The nearest hit of the ray (unit direction, max_distance >= 0) on the mesh: true and `*hit`.
bool Raycast(const MeshShape& mesh, const ScaledPose& pose, const Ray& ray, MeshHit* hit);
/// Some hit of the ray (the first the traversal finds, not necessarily the nearest).
bool RaycastAny(const MeshShape& mesh, const ScaledPose& pose, const Ray& ray, MeshHit* hit);
/// Every triangle the ray hits, in no order: `sink` returns the distance still wanted.
void RaycastAll(const MeshShape& mesh, const ScaledPose& pose, const Ray& ray, MeshHitSink sink);

/// The first contact of a ball of `radius` (>= 0) whose centre moves along `path`.
bool SphereCast(const MeshShape& mesh, const ScaledPose& pose, const Ray& path, float radius,
                MeshHit* hit);
/// Some contact of the ball along the path (the first found).
bool SphereCastAny(const MeshShape& mesh, const ScaledPose& pose, const Ray& path, float radius,
                   MeshHit* hit);
/// Every triangle the ball touches along the path (each at its own first contact), in no
/// order: `sink` returns the distance still wanted.
void SphereCastAll(const MeshShape& mesh, const ScaledPose& pose, const Ray& path, float radius,
                   MeshHitSink sink);

/// True when the shape at `shape_pose` (world) touches some triangle of the mesh.
bool Overlap(const MeshShape& mesh, const ScaledPose& pose, const Shape& shape,
             const Pose& shape_pose);
/// The deepest contact of the shape with the mesh's triangles: true and the triangle, its
/// penetration depth (geom/triangle_overlap.h: the shortest move of the shape that separates it
/// from that triangle), direction and contact point. The triangles are separate surfaces: the
/// depth is against the deepest one, not the mesh as a solid.
bool Penetrate(const MeshShape& mesh, const ScaledPose& pose, const Shape& shape,
               const Pose& shape_pose, MeshContact* contact);
/// Every triangle the shape touches, in no order; with `detail` each contact carries its depth,
/// direction and point (without, only the triangle). `sink` returns false to stop.
void OverlapAll(const MeshShape& mesh, const ScaledPose& pose, const Shape& shape,
                const Pose& shape_pose, bool detail, MeshContactSink sink);

/// The mesh's point nearest `point` within `max_distance` (>= 0): true and `*nearest`.
bool ClosestPoint(const MeshShape& mesh, const ScaledPose& pose, const Vec3& point,
                  float max_distance, MeshPoint* nearest);
/// Every triangle within `radius` of `point`, with its nearest point, in no order.
void WithinRadiusAll(const MeshShape& mesh, const ScaledPose& pose, const Vec3& point, float radius,
                     MeshPointSink sink);

/// True when some triangle meets the world box `region` (exactly: the triangle, not its box).
bool AnyInRegion(const MeshShape& mesh, const ScaledPose& pose, const Aabb& region);
/// Every triangle that meets `region`, in no order (contacts without depth).
void RegionAll(const MeshShape& mesh, const ScaledPose& pose, const Aabb& region,
               MeshContactSink sink);

}  // namespace collide
