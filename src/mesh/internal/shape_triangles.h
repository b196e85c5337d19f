#pragma once

// A posed shape against the triangles of an asset, shared by meshes (mesh_query.cc) and
// heightfields (heightfield_query.cc): each passes its own local broad phase, `box_triangles`,
// called as box_triangles(local_box, test) and calling test(triangle, index) for every triangle
// whose box may overlap local_box until test returns false. Not part of the public API.

#include <cstdint>

#include "geom/aabb.h"
#include "geom/penetration.h"
#include "geom/shapes.h"
#include "geom/triangle.h"
#include "geom/triangle_overlap.h"
#include "mesh/internal/triangle_queries.h"
#include "mesh/mesh_hit.h"
#include "mesh/scaled_pose.h"

namespace collide::mesh_internal {

/// Whether `shape` at `shape_pose` overlaps a triangle of the asset at `pose` whose local box is
/// `local_bounds`.
template <typename BoxTriangles>
bool OverlapsAnyTriangle(const Aabb& local_bounds, const ScaledPose& pose, const Shape& shape,
                         const Pose& shape_pose, BoxTriangles&& box_triangles) {
  Shape s;
  Pose p;
  ToLocalShape(pose, shape, shape_pose, &s, &p);
  bool found = false;
  box_triangles(PaddedBounds(local_bounds, s, p), [&](const Triangle& tri, uint32_t) {
    found = OverlapTriangle(s, p, tri);
    return !found;
  });
  return found;
}

/// The deepest contact of `shape` at `shape_pose` with a triangle of the asset (ties: the lowest
/// triangle index), in world space; false when none overlaps.
template <typename BoxTriangles>
bool DeepestTriangleContact(const Aabb& local_bounds, const ScaledPose& pose, const Shape& shape,
                            const Pose& shape_pose, BoxTriangles&& box_triangles,
                            MeshContact* contact) {
  Shape s;
  Pose p;
  ToLocalShape(pose, shape, shape_pose, &s, &p);
  bool found = false;
  MeshContact best;
  box_triangles(PaddedBounds(local_bounds, s, p), [&](const Triangle& tri, uint32_t id) {
    Penetration pen;
    if (!PenetrateTriangle(s, p, tri, &pen)) return true;
    if (!found || pen.depth > best.depth || (pen.depth == best.depth && id < best.triangle)) {
      found = true;
      best = MeshContact{id, pen.depth, pen.normal, pen.point};
    }
    return true;
  });
  if (!found) return false;
  *contact = ToWorldContact(pose, best);
  return true;
}

/// Every triangle `shape` at `shape_pose` overlaps, to `sink` (until it returns false): with its
/// depth, normal and point in world space when `detail`, else the index alone.
template <typename BoxTriangles>
void EveryTriangleContact(const Aabb& local_bounds, const ScaledPose& pose, const Shape& shape,
                          const Pose& shape_pose, bool detail, BoxTriangles&& box_triangles,
                          MeshContactSink sink) {
  Shape s;
  Pose p;
  ToLocalShape(pose, shape, shape_pose, &s, &p);
  box_triangles(PaddedBounds(local_bounds, s, p), [&](const Triangle& tri, uint32_t id) {
    MeshContact out{id, 0.0f, Vec3{}, Vec3{}};
    if (detail) {
      Penetration pen;
      if (!PenetrateTriangle(s, p, tri, &pen)) return true;
      out = ToWorldContact(pose, MeshContact{id, pen.depth, pen.normal, pen.point});
    } else if (!OverlapTriangle(s, p, tri)) {
      return true;
    }
    return sink(out);
  });
}

}  // namespace collide::mesh_internal
