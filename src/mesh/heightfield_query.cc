#include "mesh/heightfield_query.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "geom/bounds.h"
#include "geom/triangle.h"
#include "geom/triangle_distance.h"
#include "geom/triangle_overlap.h"
#include "mesh/internal/mesh_kernels.h"
#include "mesh/internal/shape_triangles.h"
#include "mesh/internal/triangle_queries.h"

namespace collide {
namespace {

using mesh_internal::CastBest;
using mesh_internal::LocalCast;

constexpr float kInf = std::numeric_limits<float>::infinity();
// The slab test's allowances (as mesh/internal/mesh_kernels.h's).
constexpr float kExitScale = 1.0f + 4.0f * 0x1p-23f;
constexpr float kBestScale = 1.0f + 16.0f * 0x1p-23f;

// A node of the pyramid: level 0 is a cell.
struct Node {
  int level;
  uint32_t i;
  uint32_t j;
};

// The walk over the pyramid shared by every query.
class Walker {
 public:
  explicit Walker(const HeightfieldShape& hf) : hf_(hf) {}

  // Nodes along z and x at `level` (0: cells).
  uint32_t Rows(int level) const { return level == 0 ? hf_.cell_rows() : hf_.level_rows(level); }
  uint32_t Columns(int level) const {
    return level == 0 ? hf_.cell_columns() : hf_.level_columns(level);
  }

  // The node's box; false when every cell under it is a hole.
  bool Box(const Node& n, Aabb* box) const {
    uint32_t qmin, qmax;
    if (n.level == 0) {
      hf_.CellRange(n.i, n.j, &qmin, &qmax);
    } else {
      hf_.NodeRange(n.level, n.i, n.j, &qmin, &qmax);
    }
    if (qmin > qmax) return false;
    const uint32_t span = 1u << n.level;
    const uint32_t j0 = n.j * span, j1 = std::min((n.j + 1) * span, hf_.cell_columns());
    const uint32_t i0 = n.i * span, i1 = std::min((n.i + 1) * span, hf_.cell_rows());
    // The same products as the samples' coordinates (HeightfieldShape::Sample).
    box->min = Vec3{static_cast<float>(j0) * hf_.spacing_x(), hf_.Dequantize(qmin),
                    static_cast<float>(i0) * hf_.spacing_z()};
    box->max = Vec3{static_cast<float>(j1) * hf_.spacing_x(), hf_.Dequantize(qmax),
                    static_cast<float>(i1) * hf_.spacing_z()};
    return true;
  }

  // The root: the top level's single node.
  Node Root() const { return Node{hf_.levels(), 0, 0}; }

  // Nearest first: `key(box, limit, &k)` says whether a node is worth a visit and its key (entry
  // distance, or squared distance); `cell(i, j, limit)` visits a cell and returns the limit
  // still wanted (negative: stop).
  template <typename Key, typename Cell>
  void Ordered(float limit, Key&& key, Cell&& cell) const {
    if (hf_.levels() == 0) return;
    struct Entry {
      Node node;
      float k;
    };
    // Each node pushes at most 3 (its nearest child is visited next, without a push).
    Entry stack[3 * 20 + 4];
    int sp = 0;
    Aabb root_box;
    float root_key;
    const Node root = Root();
    if (!Box(root, &root_box) || !key(root_box, limit, &root_key)) return;
    Node current = root;
    while (true) {
      if (current.level == 0) {
        const float next = cell(current.i, current.j, limit);
        if (next < 0.0f) return;
        limit = std::fmin(limit, next);
      } else {
        const int child_level = current.level - 1;
        const uint32_t rows = Rows(child_level), columns = Columns(child_level);
        Entry children[4];
        int count = 0;
        for (uint32_t di = 0; di < 2; ++di) {
          for (uint32_t dj = 0; dj < 2; ++dj) {
            const Node child{child_level, 2 * current.i + di, 2 * current.j + dj};
            if (child.i >= rows || child.j >= columns) continue;
            Aabb box;
            float k;
            if (!Box(child, &box) || !key(box, limit, &k)) continue;
            // Insertion by descending key.
            int p = count++;
            while (p > 0 && children[p - 1].k < k) {
              children[p] = children[p - 1];
              --p;
            }
            children[p] = Entry{child, k};
          }
        }
        if (count > 0) {
          for (int c = 0; c < count - 1; ++c) stack[sp++] = children[c];
          current = children[count - 1].node;
          continue;
        }
      }
      bool next = false;
      while (sp > 0) {
        const Entry e = stack[--sp];
        if (e.k <= limit * kBestScale) {
          current = e.node;
          next = true;
          break;
        }
      }
      if (!next) return;
    }
  }

  // Every cell whose box overlaps `box`: cell(i, j) returns false to stop.
  template <typename Cell>
  void Overlapping(const Aabb& box, Cell&& cell) const {
    if (hf_.levels() == 0) return;
    Node stack[4 * 20 + 4];
    int sp = 0;
    stack[sp++] = Root();
    while (sp > 0) {
      const Node n = stack[--sp];
      Aabb b;
      if (!Box(n, &b) || !Overlaps(b, box)) continue;
      if (n.level == 0) {
        if (!cell(n.i, n.j)) return;
        continue;
      }
      const int child_level = n.level - 1;
      const uint32_t rows = Rows(child_level), columns = Columns(child_level);
      for (uint32_t di = 0; di < 2; ++di) {
        for (uint32_t dj = 0; dj < 2; ++dj) {
          const Node child{child_level, 2 * n.i + di, 2 * n.j + dj};
          if (child.i < rows && child.j < columns) stack[sp++] = child;
        }
      }
    }
  }

 private:
  const HeightfieldShape& hf_;
};

// The slab test of a path (a box of half extent h swept along it) against `box`: the entry
// distance within [0, limit].
struct SlabKey {
  Vec3 origin, inv;
  float h;
  bool operator()(const Aabb& box, float limit, float* t_enter) const {
    float t0 = 0.0f, t1 = kInf;
    for (int a = 0; a < 3; ++a) {
      float lo = (box.min[a] - h - origin[a]) * inv[a];
      float hi = (box.max[a] + h - origin[a]) * inv[a];
      if (lo > hi) std::swap(lo, hi);
      // NaN (an origin on a plane of a zero direction component) keeps the running bounds.
      t0 = lo > t0 ? lo : t0;
      t1 = hi < t1 ? hi : t1;
    }
    t1 = std::fmin(t1 * kExitScale, limit * kBestScale);
    *t_enter = t0;
    return t0 <= t1;
  }
};

SlabKey RayKey(const LocalCast& c, float h) { return SlabKey{c.origin, c.inv_direction, h}; }

// The ray's hit on a cell's triangles: updates the best by (distance, index).
struct RayBest {
  bool found = false;
  float t = 0.0f;
  float det = 0.0f;
  uint32_t id = 0;
};

MeshHit RayHitOf(const HeightfieldShape& hf, const ScaledPose& pose, const Ray& ray,
                 const LocalCast& c, const RayBest& b) {
  const Triangle tri = hf.TriangleAt(b.id);
  const Vec3 n = TriangleUnitNormal(tri.a, tri.b, tri.c, -c.direction);
  MeshHit hit;
  hit.distance = std::fmin(b.t * pose.scale, ray.max_distance);
  hit.point = ToWorldPoint(pose, c.origin + b.t * c.direction);
  hit.normal = ToWorldVector(pose, b.det > 0.0f ? n : -n);
  hit.triangle = b.id;
  hit.start_overlapping = b.t == 0.0f;
  hit.back_face = b.det < 0.0f;
  return hit;
}

// The ray's hits on the heightfield's triangles, nearest node first (the kernel of the active
// instruction set): `on_hit(t, det, id, limit)` returns the new limit (negative: stop).
template <typename OnHit>
void RayCells(const HeightfieldShape& hf, const LocalCast& c, OnHit&& on_hit) {
  float limit = c.max_distance;
  auto hit = [&](uint32_t id, float t, float det) -> float {
    limit = on_hit(t, det, id, limit);
    return limit;
  };
  auto walk = [&]() {
    COLLIDE_MESH_CALL(HeightfieldRay, hf, c.origin, c.direction, c.max_distance, hit);
  };
  walk();
}

}  // namespace

Aabb Bounds(const HeightfieldShape& heightfield, const ScaledPose& pose) {
  const Aabb& local = heightfield.local_bounds();
  const Box box{HalfExtents(local) * pose.scale};
  return collide::Bounds(box, Pose{pose.pose.rotation, ToWorldPoint(pose, Center(local))});
}

bool Raycast(const HeightfieldShape& heightfield, const ScaledPose& pose, const Ray& ray,
             MeshHit* hit) {
  const LocalCast c = mesh_internal::ToLocalCast(pose, ray);
  RayBest best;
  RayCells(heightfield, c, [&](float t, float det, uint32_t id, float limit) {
    if (!best.found || t < best.t || (t == best.t && id < best.id))
      best = RayBest{true, t, det, id};
    return std::fmin(limit, best.t);
  });
  if (!best.found) return false;
  *hit = RayHitOf(heightfield, pose, ray, c, best);
  return true;
}

bool RaycastAny(const HeightfieldShape& heightfield, const ScaledPose& pose, const Ray& ray,
                MeshHit* hit) {
  const LocalCast c = mesh_internal::ToLocalCast(pose, ray);
  RayBest best;
  RayCells(heightfield, c, [&](float t, float det, uint32_t id, float) {
    best = RayBest{true, t, det, id};
    return -1.0f;
  });
  if (!best.found) return false;
  *hit = RayHitOf(heightfield, pose, ray, c, best);
  return true;
}

void RaycastAll(const HeightfieldShape& heightfield, const ScaledPose& pose, const Ray& ray,
                MeshHitSink sink) {
  const LocalCast c = mesh_internal::ToLocalCast(pose, ray);
  RayCells(heightfield, c, [&](float t, float det, uint32_t id, float limit) {
    const float world = sink(RayHitOf(heightfield, pose, ray, c, RayBest{true, t, det, id}));
    return world < 0.0f ? -1.0f : std::fmin(limit, world / pose.scale);
  });
}

namespace {

// The sphere casts' walk: `consider(triangle, id, limit)` per triangle of the cells a swept
// ball can meet, nearest cell first; it returns false to stop.
template <typename Consider>
void SweptTriangles(const HeightfieldShape& hf, const LocalCast& c, float r, CastBest* best,
                    Consider&& consider) {
  const float reach = mesh_internal::SweptReach(hf.local_bounds(), c, r);
  Walker(hf).Ordered(c.max_distance, RayKey(c, reach), [&](uint32_t i, uint32_t j, float limit) {
    for (uint32_t k = 0; k < 2; ++k) {
      if (!consider(hf.CellTriangle(i, j, k), hf.TriangleIndex(i, j, k), limit)) return -1.0f;
      if (best->found) limit = std::fmin(limit, best->t);
    }
    return limit;
  });
}

}  // namespace

bool SphereCast(const HeightfieldShape& heightfield, const ScaledPose& pose, const Ray& path,
                float radius, MeshHit* hit) {
  assert(radius >= 0.0f);
  if (radius == 0.0f) return Raycast(heightfield, pose, path, hit);
  const LocalCast c = mesh_internal::ToLocalCast(pose, path);
  const float r = radius / pose.scale;
  CastBest best;
  SweptTriangles(heightfield, c, r, &best, [&](const Triangle& tri, uint32_t id, float limit) {
    mesh_internal::CastTriangle(tri, id, c, r, limit, &best);
    return true;
  });
  if (!best.found) return false;
  *hit = mesh_internal::CastHitOf(pose, path, best);
  return true;
}

bool SphereCastAny(const HeightfieldShape& heightfield, const ScaledPose& pose, const Ray& path,
                   float radius, MeshHit* hit) {
  assert(radius >= 0.0f);
  if (radius == 0.0f) return RaycastAny(heightfield, pose, path, hit);
  const LocalCast c = mesh_internal::ToLocalCast(pose, path);
  const float r = radius / pose.scale;
  CastBest best;
  SweptTriangles(heightfield, c, r, &best, [&](const Triangle& tri, uint32_t id, float limit) {
    mesh_internal::CastTriangle(tri, id, c, r, limit, &best);
    return !best.found;
  });
  if (!best.found) return false;
  *hit = mesh_internal::CastHitOf(pose, path, best);
  return true;
}

void SphereCastAll(const HeightfieldShape& heightfield, const ScaledPose& pose, const Ray& path,
                   float radius, MeshHitSink sink) {
  assert(radius >= 0.0f);
  if (radius == 0.0f) return RaycastAll(heightfield, pose, path, sink);
  const LocalCast c = mesh_internal::ToLocalCast(pose, path);
  const float r = radius / pose.scale;
  float limit = c.max_distance;
  CastBest unused;
  SweptTriangles(heightfield, c, r, &unused, [&](const Triangle& tri, uint32_t id, float t_max) {
    CastBest one;
    mesh_internal::CastTriangle(tri, id, c, r, std::fmin(t_max, limit), &one);
    if (!one.found) return true;
    const float world = sink(mesh_internal::CastHitOf(pose, path, one));
    if (world < 0.0f) return false;
    limit = std::fmin(limit, world / pose.scale);
    return true;
  });
}

namespace {

// The triangles of the cells overlapping `box` whose own boxes overlap it: `test(triangle, id)`
// returns false to stop.
template <typename Test>
void BoxTriangles(const HeightfieldShape& hf, const Aabb& box, Test&& test) {
  Walker(hf).Overlapping(box, [&](uint32_t i, uint32_t j) {
    for (uint32_t k = 0; k < 2; ++k) {
      const Triangle tri = hf.CellTriangle(i, j, k);
      if (!mesh_internal::TriangleBoxOverlaps(tri, box)) continue;
      if (!test(tri, hf.TriangleIndex(i, j, k))) return false;
    }
    return true;
  });
}

}  // namespace

bool Overlap(const HeightfieldShape& heightfield, const ScaledPose& pose, const Shape& shape,
             const Pose& shape_pose) {
  return mesh_internal::OverlapsAnyTriangle(
      heightfield.local_bounds(), pose, shape, shape_pose,
      [&](const Aabb& box, auto&& test) { BoxTriangles(heightfield, box, test); });
}

bool Penetrate(const HeightfieldShape& heightfield, const ScaledPose& pose, const Shape& shape,
               const Pose& shape_pose, MeshContact* contact) {
  return mesh_internal::DeepestTriangleContact(
      heightfield.local_bounds(), pose, shape, shape_pose,
      [&](const Aabb& box, auto&& test) { BoxTriangles(heightfield, box, test); }, contact);
}

void OverlapAll(const HeightfieldShape& heightfield, const ScaledPose& pose, const Shape& shape,
                const Pose& shape_pose, bool detail, MeshContactSink sink) {
  mesh_internal::EveryTriangleContact(
      heightfield.local_bounds(), pose, shape, shape_pose, detail,
      [&](const Aabb& box, auto&& test) { BoxTriangles(heightfield, box, test); }, sink);
}

bool ClosestPoint(const HeightfieldShape& heightfield, const ScaledPose& pose, const Vec3& point,
                  float max_distance, MeshPoint* nearest) {
  const Vec3 q = ToLocalPoint(pose, point);
  const float max_local = max_distance / pose.scale;
  float best_d2 = max_local * max_local;
  bool found = false;
  uint32_t best_id = 0;
  TrianglePoint best_point;
  const float limit = mesh_internal::PaddedSquare(heightfield.local_bounds(), q, max_local);
  auto key = [&](const Aabb& box, float bound, float* d2) {
    const Vec3 d = q - ClosestPoint(box, q);
    *d2 = LengthSquared(d);
    return *d2 <= bound * kBestScale;
  };
  Walker(heightfield).Ordered(limit, key, [&](uint32_t i, uint32_t j, float bound) {
    for (uint32_t k = 0; k < 2; ++k) {
      const TrianglePoint tp = NearestTrianglePoint(q, heightfield.CellTriangle(i, j, k));
      const float d2 = DistanceSquared(tp.point, q);
      const uint32_t id = heightfield.TriangleIndex(i, j, k);
      if (d2 > best_d2) continue;
      if (!found || d2 < best_d2 || (d2 == best_d2 && id < best_id)) {
        found = true;
        best_d2 = d2;
        best_id = id;
        best_point = tp;
      }
    }
    return found ? std::fmin(bound, best_d2) : bound;
  });
  if (!found) return false;
  *nearest =
      mesh_internal::ToWorldPoint(pose, q, heightfield.TriangleAt(best_id), best_id, best_point);
  return true;
}

void WithinRadiusAll(const HeightfieldShape& heightfield, const ScaledPose& pose, const Vec3& point,
                     float radius, MeshPointSink sink) {
  const Vec3 q = ToLocalPoint(pose, point);
  const float r = radius / pose.scale;
  const float pad = mesh_internal::LocalPad(heightfield.local_bounds(), q, r);
  BoxTriangles(heightfield, Expand(Aabb{q, q}, r + pad), [&](const Triangle& tri, uint32_t id) {
    const TrianglePoint tp = NearestTrianglePoint(q, tri);
    if (DistanceSquared(tp.point, q) > r * r) return true;
    return sink(mesh_internal::ToWorldPoint(pose, q, tri, id, tp));
  });
}

bool AnyInRegion(const HeightfieldShape& heightfield, const ScaledPose& pose, const Aabb& region) {
  return Overlap(heightfield, pose, Box{HalfExtents(region)},
                 Pose{Quat::Identity(), Center(region)});
}

void RegionAll(const HeightfieldShape& heightfield, const ScaledPose& pose, const Aabb& region,
               MeshContactSink sink) {
  OverlapAll(heightfield, pose, Box{HalfExtents(region)}, Pose{Quat::Identity(), Center(region)},
             false, sink);
}

}  // namespace collide
