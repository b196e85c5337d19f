#include "geom/triangle_cast.h"

#include <cassert>
#include <cmath>

#include "geom/internal/cast_kernels.h"
#include "geom/triangle_distance.h"

namespace collide {
namespace {

// The entry distance of the ray o + t d (d unit) into the capsule of `radius` about the segment
// [p0, p1], for o outside it; false when it misses or enters beyond max_t. The capsule is
// expressed in a frame whose x axis runs along the segment, centred on its middle, and handed to
// the axis-aligned kernel of cast_kernels.h (cylinder, then end balls).
bool RayEdgeCapsule(const Vec3& o, const Vec3& d, const Vec3& p0, const Vec3& p1, float radius,
                    float max_t, float* t) {
  const Vec3 mid = 0.5f * (p0 + p1);
  const Vec3 half = 0.5f * (p1 - p0);
  const float h = Length(half);
  const Vec3 m = o - mid;
  if (!(h > 0.0f)) {
    // A point: the ball about it.
    float tb;
    if (!cast_internal::RayBall(m, d, radius, &tb) || tb > max_t) return false;
    *t = tb;
    return true;
  }
  const Vec3 ex = half * (1.0f / h);
  const Vec3 ey = AnyPerpendicular(ex);
  const Vec3 ez = Cross(ex, ey);
  const Vec3 lo{Dot(m, ex), Dot(m, ey), Dot(m, ez)};
  const Vec3 ld{Dot(d, ex), Dot(d, ey), Dot(d, ez)};
  Vec3 axis_point;
  return cast_internal::RayCapsule<0>(lo, ld, h, radius, max_t, t, &axis_point);
}

}  // namespace

bool SphereCastTriangle(const Vec3& origin, const Vec3& direction, float radius, float max_t,
                        const Triangle& tri, TriangleContact* out) {
  assert(radius > 0.0f);
  const Vec3 n = TriangleUnitNormal(tri.a, tri.b, tri.c, Vec3{});
  if (n != Vec3{}) {
    // Face: the ball reaches the plane at |s(t)| = radius, s(t) = s0 + t (d.n).
    const float s0 = Dot(origin - tri.a, n);
    const float dn = Dot(direction, n);
    // Clear of the plane and not approaching it: every point of the triangle stays out of reach.
    if (std::fabs(s0) > radius && !(s0 * dn < 0.0f)) return false;
    if (std::fabs(s0) > radius) {
      const float side = s0 > 0.0f ? 1.0f : -1.0f;
      // solve: side * (s0 + t dn) = radius
      const float tf = (std::fabs(s0) - radius) / std::fabs(dn);
      // Where the ball touches the plane: its centre then, less radius along the normal.
      const Vec3 centre = origin + tf * direction;
      Vec3 q = centre - (side * radius) * n;
      q = q - Dot(q - tri.a, n) * n;  // onto the plane (rounding)
      if (PointInTriangle(q, tri, n)) {
        // Nothing of the triangle is reached before its plane: this is the first contact.
        if (!(tf <= max_t)) return false;
        out->t = tf;
        out->point = q;
        out->normal = side * n;
        return true;
      }
    }
  }
  // Otherwise the first contact is on the boundary: the edges' capsules (their end balls are the
  // vertices').
  bool found = false;
  float best = 0.0f;
  const Vec3* corners[4] = {&tri.a, &tri.b, &tri.c, &tri.a};
  for (int e = 0; e < 3; ++e) {
    float te;
    if (RayEdgeCapsule(origin, direction, *corners[e], *corners[e + 1], radius, max_t, &te) &&
        (!found || te < best)) {
      found = true;
      best = te;
    }
  }
  if (!found) return false;
  // The contact is the triangle's point nearest the centre at impact (continuous where an edge
  // and a vertex are entered at distances equal within rounding).
  const Vec3 centre = origin + best * direction;
  out->t = best;
  out->point = ClosestPointOnTriangle(centre, tri);
  out->normal = cast_internal::UnitOr(
      centre - out->point, n != Vec3{} ? (Dot(direction, n) > 0.0f ? -n : n) : -direction);
  return true;
}

}  // namespace collide
