#include "mesh/mesh_query.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <limits>

#include "geom/bounds.h"
#include "geom/triangle.h"
#include "geom/triangle_cast.h"
#include "geom/triangle_distance.h"
#include "geom/triangle_overlap.h"
#include "mesh/internal/mesh_kernels.h"
#include "mesh/internal/shape_triangles.h"
#include "mesh/internal/triangle_queries.h"

namespace collide {
namespace {

using mesh_internal::CastBest;
using mesh_internal::LocalCast;
using mesh_internal::RayClosestHit;
using mesh_internal::RayLeafHit;

bool KernelRayClosest(const MeshShape& m, const Vec3& o, const Vec3& d, float t_max,
                      RayClosestHit* out) {
  COLLIDE_MESH_CALL(RayClosest, m, o, d, t_max, out);
}

bool KernelRayAny(const MeshShape& m, const Vec3& o, const Vec3& d, float t_max, RayLeafHit* out) {
  COLLIDE_MESH_CALL(RayAny, m, o, d, t_max, out);
}

template <typename F>
void KernelRayAll(const MeshShape& m, const Vec3& o, const Vec3& d, float t_max, F& f) {
  COLLIDE_MESH_CALL(RayAll, m, o, d, t_max, f);
}

template <typename F>
void KernelSwept(const MeshShape& m, const Vec3& o, const Vec3& d, float t_max, const Vec3& h,
                 F& f) {
  COLLIDE_MESH_CALL(SweptLeaves, m, o, d, t_max, h, f);
}

template <typename F>
void KernelBox(const MeshShape& m, const Aabb& box, F& f) {
  COLLIDE_MESH_CALL(BoxLeaves, m, box, f);
}

template <typename F>
void KernelNearest(const MeshShape& m, const Vec3& p, float max_d2, F& f) {
  COLLIDE_MESH_CALL(NearestLeaves, m, p, max_d2, f);
}

// The hit of a ray at local distance `t` on triangle `lane` of leaf `leaf` (seen from the front
// when det > 0).
MeshHit RayHit(const MeshShape& m, const ScaledPose& pose, const Ray& ray, const LocalCast& c,
               uint32_t leaf, uint32_t lane, float t, float det) {
  const MeshLeaf l = m.Leaf(leaf);
  const Triangle tri = l.triangle(lane);
  const Vec3 n = TriangleUnitNormal(tri.a, tri.b, tri.c, -c.direction);
  MeshHit hit;
  hit.distance = std::fmin(t * pose.scale, ray.max_distance);
  hit.point = ToWorldPoint(pose, c.origin + t * c.direction);
  hit.normal = ToWorldVector(pose, det > 0.0f ? n : -n);
  hit.triangle = l.id(lane);
  hit.start_overlapping = t == 0.0f;
  hit.back_face = det < 0.0f;
  return hit;
}

}  // namespace

Aabb Bounds(const MeshShape& mesh, const ScaledPose& pose) {
  const uint32_t root = mesh.root();
  auto posed = [&](const Aabb& local) {
    // Arvo: centre R c + t, half extents |R| e (Ericson 4.2), in scaled units.
    const Box box{HalfExtents(local) * pose.scale};
    const Pose p{pose.pose.rotation, ToWorldPoint(pose, Center(local))};
    return collide::Bounds(box, p);
  };
  if (root == MeshShape::kEmptyChild) return Aabb{pose.pose.position, pose.pose.position};
  if ((root & MeshShape::kLeafBit) != 0) return posed(mesh.local_bounds());
  const MeshShape::Node& n = mesh.nodes()[root];
  bool have = false;
  Aabb out{};
  for (int k = 0; k < MeshShape::kWidth; ++k) {
    if (n.child[k] == MeshShape::kEmptyChild) continue;
    const Aabb child = posed(n.ChildBox(k));
    out = have ? Union(out, child) : child;
    have = true;
  }
  return out;
}

bool Raycast(const MeshShape& mesh, const ScaledPose& pose, const Ray& ray, MeshHit* hit) {
  const LocalCast c = mesh_internal::ToLocalCast(pose, ray);
  RayClosestHit h;
  if (!KernelRayClosest(mesh, c.origin, c.direction, c.max_distance, &h)) return false;
  *hit = RayHit(mesh, pose, ray, c, h.leaf, h.lane, h.t, h.det);
  return true;
}

bool RaycastAny(const MeshShape& mesh, const ScaledPose& pose, const Ray& ray, MeshHit* hit) {
  const LocalCast c = mesh_internal::ToLocalCast(pose, ray);
  RayLeafHit h;
  if (!KernelRayAny(mesh, c.origin, c.direction, c.max_distance, &h)) return false;
  *hit = RayHit(mesh, pose, ray, c, h.leaf, h.lane, h.t, h.det);
  return true;
}

void RaycastAll(const MeshShape& mesh, const ScaledPose& pose, const Ray& ray, MeshHitSink sink) {
  const LocalCast c = mesh_internal::ToLocalCast(pose, ray);
  auto on_hit = [&](const RayLeafHit& h) -> float {
    const float limit = sink(RayHit(mesh, pose, ray, c, h.leaf, h.lane, h.t, h.det));
    return limit < 0.0f ? -1.0f : limit / pose.scale;
  };
  KernelRayAll(mesh, c.origin, c.direction, c.max_distance, on_hit);
}

namespace {

// The sphere casts' traversal: `consider(triangle, id, t_max)` per candidate triangle, in order
// of the leaves' entry distances; stops when consider returns false.
template <typename Consider>
void SweptTriangles(const MeshShape& mesh, const LocalCast& c, float radius, Consider&& consider,
                    CastBest* best) {
  const float reach = mesh_internal::SweptReach(mesh.local_bounds(), c, radius);
  auto on_leaf = [&](const MeshLeaf& leaf, float t_max) -> float {
    for (uint32_t k = 0; k < leaf.count(); ++k) {
      if (!consider(leaf.triangle(k), leaf.id(k), t_max)) return -1.0f;
      if (best->found) t_max = std::fmin(t_max, best->t);
    }
    return t_max;
  };
  KernelSwept(mesh, c.origin, c.direction, c.max_distance, Vec3{reach, reach, reach}, on_leaf);
}

}  // namespace

bool SphereCast(const MeshShape& mesh, const ScaledPose& pose, const Ray& path, float radius,
                MeshHit* hit) {
  assert(radius >= 0.0f);
  if (radius == 0.0f) return Raycast(mesh, pose, path, hit);
  const LocalCast c = mesh_internal::ToLocalCast(pose, path);
  const float r = radius / pose.scale;
  CastBest best;
  SweptTriangles(
      mesh, c, r,
      [&](const Triangle& tri, uint32_t id, float t_max) {
        mesh_internal::CastTriangle(tri, id, c, r, t_max, &best);
        return true;
      },
      &best);
  if (!best.found) return false;
  *hit = mesh_internal::CastHitOf(pose, path, best);
  return true;
}

bool SphereCastAny(const MeshShape& mesh, const ScaledPose& pose, const Ray& path, float radius,
                   MeshHit* hit) {
  assert(radius >= 0.0f);
  if (radius == 0.0f) return RaycastAny(mesh, pose, path, hit);
  const LocalCast c = mesh_internal::ToLocalCast(pose, path);
  const float r = radius / pose.scale;
  CastBest best;
  SweptTriangles(
      mesh, c, r,
      [&](const Triangle& tri, uint32_t id, float t_max) {
        mesh_internal::CastTriangle(tri, id, c, r, t_max, &best);
        return !best.found;
      },
      &best);
  if (!best.found) return false;
  *hit = mesh_internal::CastHitOf(pose, path, best);
  return true;
}

void SphereCastAll(const MeshShape& mesh, const ScaledPose& pose, const Ray& path, float radius,
                   MeshHitSink sink) {
  assert(radius >= 0.0f);
  if (radius == 0.0f) return RaycastAll(mesh, pose, path, sink);
  const LocalCast c = mesh_internal::ToLocalCast(pose, path);
  const float r = radius / pose.scale;
  float limit = c.max_distance;
  CastBest unused;
  SweptTriangles(
      mesh, c, r,
      [&](const Triangle& tri, uint32_t id, float t_max) {
        CastBest one;
        mesh_internal::CastTriangle(tri, id, c, r, std::fmin(t_max, limit), &one);
        if (!one.found) return true;
        const float world = sink(mesh_internal::CastHitOf(pose, path, one));
        if (world < 0.0f) return false;
        limit = std::fmin(limit, world / pose.scale);
        return true;
      },
      &unused);
}

namespace {

// The triangles whose boxes overlap the local box of the shape (the kernel tests a leaf's
// triangles' boxes together), each tested exactly by `test(triangle, id)`; stops when it
// returns false.
template <typename Test>
void BoxTriangles(const MeshShape& mesh, const Aabb& local_box, Test&& test) {
  auto on_leaf = [&](const MeshLeaf& leaf, unsigned lanes) -> bool {
    for (; lanes != 0; lanes &= lanes - 1) {
      const uint32_t k = static_cast<uint32_t>(std::countr_zero(lanes));
      if (!test(leaf.triangle(k), leaf.id(k))) return false;
    }
    return true;
  };
  KernelBox(mesh, local_box, on_leaf);
}

}  // namespace

bool Overlap(const MeshShape& mesh, const ScaledPose& pose, const Shape& shape,
             const Pose& shape_pose) {
  return mesh_internal::OverlapsAnyTriangle(
      mesh.local_bounds(), pose, shape, shape_pose,
      [&](const Aabb& box, auto&& test) { BoxTriangles(mesh, box, test); });
}

bool Penetrate(const MeshShape& mesh, const ScaledPose& pose, const Shape& shape,
               const Pose& shape_pose, MeshContact* contact) {
  return mesh_internal::DeepestTriangleContact(
      mesh.local_bounds(), pose, shape, shape_pose,
      [&](const Aabb& box, auto&& test) { BoxTriangles(mesh, box, test); }, contact);
}

void OverlapAll(const MeshShape& mesh, const ScaledPose& pose, const Shape& shape,
                const Pose& shape_pose, bool detail, MeshContactSink sink) {
  mesh_internal::EveryTriangleContact(
      mesh.local_bounds(), pose, shape, shape_pose, detail,
      [&](const Aabb& box, auto&& test) { BoxTriangles(mesh, box, test); }, sink);
}

bool ClosestPoint(const MeshShape& mesh, const ScaledPose& pose, const Vec3& point,
                  float max_distance, MeshPoint* nearest) {
  const Vec3 q = ToLocalPoint(pose, point);
  const float max_local = max_distance / pose.scale;
  float best_d2 = max_local * max_local;
  bool found = false;
  uint32_t best_id = 0;
  Triangle best_tri;
  TrianglePoint best_point;
  auto on_leaf = [&](const MeshLeaf& leaf, float max_d2) -> float {
    for (uint32_t k = 0; k < leaf.count(); ++k) {
      const Triangle tri = leaf.triangle(k);
      const TrianglePoint tp = NearestTrianglePoint(q, tri);
      const float d2 = DistanceSquared(tp.point, q);
      const uint32_t id = leaf.id(k);
      if (d2 > best_d2) continue;
      if (!found || d2 < best_d2 || (d2 == best_d2 && id < best_id)) {
        found = true;
        best_d2 = d2;
        best_tri = tri;
        best_id = id;
        best_point = tp;
      }
    }
    (void)max_d2;
    return best_d2;
  };
  KernelNearest(mesh, q, mesh_internal::PaddedSquare(mesh.local_bounds(), q, max_local), on_leaf);
  if (!found) return false;
  *nearest = mesh_internal::ToWorldPoint(pose, q, best_tri, best_id, best_point);
  return true;
}

void WithinRadiusAll(const MeshShape& mesh, const ScaledPose& pose, const Vec3& point, float radius,
                     MeshPointSink sink) {
  const Vec3 q = ToLocalPoint(pose, point);
  const float r = radius / pose.scale;
  const float pad = mesh_internal::LocalPad(mesh.local_bounds(), q, r);
  const Aabb box = Expand(Aabb{q, q}, r + pad);
  BoxTriangles(mesh, box, [&](const Triangle& tri, uint32_t id) {
    const TrianglePoint tp = NearestTrianglePoint(q, tri);
    if (DistanceSquared(tp.point, q) > r * r) return true;
    return sink(mesh_internal::ToWorldPoint(pose, q, tri, id, tp));
  });
}

bool AnyInRegion(const MeshShape& mesh, const ScaledPose& pose, const Aabb& region) {
  return Overlap(mesh, pose, Box{HalfExtents(region)}, Pose{Quat::Identity(), Center(region)});
}

void RegionAll(const MeshShape& mesh, const ScaledPose& pose, const Aabb& region,
               MeshContactSink sink) {
  OverlapAll(mesh, pose, Box{HalfExtents(region)}, Pose{Quat::Identity(), Center(region)}, false,
             sink);
}

}  // namespace collide
