#pragma once

#include <cmath>
#include <utility>

#include "geom/vec3.h"

namespace collide {

// One triangle of a mesh or a heightfield, and the watertight ray test every triangle query of
// the mesh layer runs (src/mesh). A triangle is the closed set of points a + u (b - a) + v (c - a)
// with u, v >= 0 and u + v <= 1; a triangle whose vertices are collinear (zero area) is a
// segment or a point.

/// A triangle by its three corners. Its winding gives the "front" side: the face normal
/// (b - a) x (c - a) points out of the front (counter-clockwise seen from the front).
struct Triangle {
  Vec3 a{};
  Vec3 b{};
  Vec3 c{};
};

/// (b - a) x (c - a) in double precision (not normalised): the front normal, its length twice
/// the area. Zero exactly when the triangle has no area at that precision.
struct TriangleNormalD {
  double x = 0.0;
  double y = 0.0;
  double z = 0.0;
};
inline TriangleNormalD TriangleCrossD(const Vec3& a, const Vec3& b, const Vec3& c) {
  const double ux = double(b.x) - a.x, uy = double(b.y) - a.y, uz = double(b.z) - a.z;
  const double vx = double(c.x) - a.x, vy = double(c.y) - a.y, vz = double(c.z) - a.z;
  return {uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx};
}

/// True when the triangle has zero area: (b - a) x (c - a), in double precision, is zero.
/// Rays never hit such a triangle; balls, boxes and capsules touch it as the segment or point it
/// is.
inline bool IsDegenerate(const Vec3& a, const Vec3& b, const Vec3& c) {
  const TriangleNormalD n = TriangleCrossD(a, b, c);
  return n.x == 0.0 && n.y == 0.0 && n.z == 0.0;
}

/// The unit front normal of the triangle; `fallback` for a triangle of zero area. In float when
/// the triangle is well shaped (its cross product then has a rounding error of a few eps
/// relative to its length), otherwise in double, so that slivers and tiny triangles get an
/// accurate direction too.
inline Vec3 TriangleUnitNormal(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& fallback) {
  const Vec3 e1 = b - a, e2 = c - a;
  const Vec3 f = Cross(e1, e2);
  const float ff = LengthSquared(f);
  // |e1 x e2| >= 0.1 |e1| |e2| (an angle of at least 5.7 degrees, each edge difference exact or
  // rounded once): the float normal is within 1e-6 of the exact one.
  const float ee = LengthSquared(e1) * LengthSquared(e2);
  if (ff >= 0.01f * ee && ff > 1e-30f && std::isfinite(ff) && std::isfinite(ee)) {
    return f * (1.0f / std::sqrt(ff));
  }
  const TriangleNormalD n = TriangleCrossD(a, b, c);
  const double len = std::sqrt(n.x * n.x + n.y * n.y + n.z * n.z);
  if (!(len > 0.0) || !std::isfinite(len)) return fallback;
  return Vec3{static_cast<float>(n.x / len), static_cast<float>(n.y / len),
              static_cast<float>(n.z / len)};
}

// ---------------------------------------------------------------------------------------------
// The watertight ray-triangle test.
//
// Woop, Benthin and Wald, "Watertight Ray/Triangle Intersection" (JCGT 2(1), 2013): the ray
// becomes the z axis of a sheared frame (a translation, a permutation of the axes so that the
// largest direction component is z, and a shear), each vertex is mapped into it once, and the
// ray hits the triangle where the three 2-D edge functions U, V, W of the mapped vertices have
// the same sign. A vertex maps to the same floats in every triangle that holds it and an edge
// function is computed from its two vertices alone, products first (no fused multiply-add), so
// two triangles that share an edge compute exactly opposite values for it: no ray passes between
// them. A value that rounds to zero is recomputed in double, where the products are exact and the
// sign is right.
//
// Which triangle owns a ray that passes exactly through a shared edge or vertex. Woop's paper
// counts such a ray in every triangle around it; here the ray is moved, symbolically, by
// (e, e^2) in the sheared plane for an infinitesimal e > 0 (a "simulation of simplicity"): an
// edge function that is exactly zero takes the sign of its first non-zero derivative along that
// move. Every triangle decides from the same exact values, so a ray that crosses a closed surface
// through an edge or a vertex hits exactly one of the triangles there, never none and never two.
// The price: a ray that only grazes a mesh along a silhouette edge (touching it without crossing
// it) counts as the moved ray does, either missing both faces there or hitting both. A ray
// parallel to a triangle's plane never hits it, even a ray lying in it.

/// A ray prepared for the watertight test (per ray, once): its origin, the axis permutation and
/// the shear constants.
struct WatertightRay {
  Vec3 origin{};
  /// The axes of the sheared frame: kz is the direction's largest component.
  int kx = 0;
  int ky = 1;
  int kz = 2;
  /// Shear and scale: sx = d[kx] / d[kz], sy = d[ky] / d[kz], sz = 1 / d[kz].
  float sx = 0.0f;
  float sy = 0.0f;
  float sz = 1.0f;
};

/// The watertight form of the ray from `origin` along `direction` (non-zero, finite).
inline WatertightRay MakeWatertightRay(const Vec3& origin, const Vec3& direction) {
  const Vec3 ad = Abs(direction);
  WatertightRay r;
  r.origin = origin;
  r.kz = (ad.x >= ad.y && ad.x >= ad.z) ? 0 : (ad.y >= ad.z ? 1 : 2);
  r.kx = r.kz == 2 ? 0 : r.kz + 1;
  r.ky = r.kx == 2 ? 0 : r.kx + 1;
  // Keeps the sheared frame right-handed, so U, V, W > 0 means counter-clockwise.
  if (direction[r.kz] < 0.0f) std::swap(r.kx, r.ky);
  r.sx = direction[r.kx] / direction[r.kz];
  r.sy = direction[r.ky] / direction[r.kz];
  r.sz = 1.0f / direction[r.kz];
  return r;
}

/// A vertex in the ray's sheared frame: x, y in the plane across the ray, z along it (scaled so
/// that the hit distance is (U z_a + V z_b + W z_c) / (U + V + W)).
struct ShearedVertex {
  float x = 0.0f;
  float y = 0.0f;
  float z = 0.0f;
};

/// `v` in the sheared frame of `r`. The order of operations is the one every SIMD kernel of the
/// mesh layer repeats.
inline ShearedVertex Shear(const WatertightRay& r, const Vec3& v) {
  const float px = v[r.kx] - r.origin[r.kx];
  const float py = v[r.ky] - r.origin[r.ky];
  const float pz = v[r.kz] - r.origin[r.kz];
  const float tx = r.sx * pz;
  const float ty = r.sy * pz;
  return ShearedVertex{px - tx, py - ty, r.sz * pz};
}

/// The sign (-1, 0, +1) an exactly-zero edge function takes when the ray moves by (e, e^2):
/// `dx` and `dy` are its derivatives along x and y.
inline int PerturbedSign(float dx, float dy) {
  if (dx != 0.0f) return dx > 0.0f ? 1 : -1;
  if (dy != 0.0f) return dy > 0.0f ? 1 : -1;
  return 0;
}

/// The hit decision of the watertight test once an edge function rounded to zero (the rare
/// path; SIMD kernels call it for such lanes): recomputes U, V, W in double (exact signs), gives
/// each exact zero its perturbed sign, and writes the float values the distance uses. False when
/// the signs disagree.
inline bool WatertightEdgesExact(const ShearedVertex& a, const ShearedVertex& b,
                                 const ShearedVertex& c, float* u, float* v, float* w) {
  const double ud = double(c.x) * b.y - double(c.y) * b.x;
  const double vd = double(a.x) * c.y - double(a.y) * c.x;
  const double wd = double(b.x) * a.y - double(b.y) * a.x;
  // U is the edge b -> c: dU/dx = c.y - b.y, dU/dy = b.x - c.x (and cyclically for V, W).
  const int su = ud != 0.0 ? (ud > 0.0 ? 1 : -1) : PerturbedSign(c.y - b.y, b.x - c.x);
  const int sv = vd != 0.0 ? (vd > 0.0 ? 1 : -1) : PerturbedSign(a.y - c.y, c.x - a.x);
  const int sw = wd != 0.0 ? (wd > 0.0 ? 1 : -1) : PerturbedSign(b.y - a.y, a.x - b.x);
  if (su == 0 || su != sv || su != sw) return false;
  *u = static_cast<float>(ud);
  *v = static_cast<float>(vd);
  *w = static_cast<float>(wd);
  return true;
}

/// The watertight test of the prepared ray against the triangle (a, b, c), both sides: true and
/// the distance `*t` (in units of the direction's length) when the ray meets it within
/// [0, t_max]. `*det` receives U + V + W: > 0 when the ray sees the triangle counter-clockwise
/// (from its front), < 0 from its back. A triangle of zero area is never hit.
inline bool RayTriangle(const WatertightRay& r, const Vec3& a, const Vec3& b, const Vec3& c,
                        float t_max, float* t, float* det = nullptr) {
  const ShearedVertex sa = Shear(r, a);
  const ShearedVertex sb = Shear(r, b);
  const ShearedVertex sc = Shear(r, c);
  // The 2-D edge functions: products first, then one subtraction (never fused).
  float u = sc.x * sb.y - sc.y * sb.x;
  float v = sa.x * sc.y - sa.y * sc.x;
  float w = sb.x * sa.y - sb.y * sa.x;
  // A non-zero float edge function has the exact sign (rounding is monotonic: it can reach zero,
  // never cross it), so two of opposite signs are a miss whatever the third is.
  if ((u < 0.0f || v < 0.0f || w < 0.0f) && (u > 0.0f || v > 0.0f || w > 0.0f)) return false;
  if (u == 0.0f || v == 0.0f || w == 0.0f) {
    if (!WatertightEdgesExact(sa, sb, sc, &u, &v, &w)) return false;
  }
  const float d = u + v + w;
  if (d == 0.0f) return false;
  const float tt = (u * sa.z + v * sb.z + w * sc.z) / d;
  if (!(tt >= 0.0f && tt <= t_max)) return false;
  *t = tt;
  if (det != nullptr) *det = d;
  return true;
}

}  // namespace collide
