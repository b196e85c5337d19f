#pragma once

// Local-frame kernels shared by ray_cast.cc and sphere_cast.cc. Not part of the public API.
//
// Every kernel works in the target's local frame, relative to its centre, and casts a ball of
// radius `r` (0 for a ray) as a ray against the target grown by `r`. A ray cast and a sphere cast
// of radius 0 therefore run the same code and give bit-identical results.

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "geom/cast.h"
#include "geom/pose.h"
#include "geom/vec3.h"

namespace collide::cast_internal {

/// The first contact of a cast, in the target's local frame.
struct LocalContact {
  /// Distance travelled along the path.
  float t = 0.0f;
  /// Contact point on the target's own surface (not the grown one).
  Vec3 point{};
  /// Unit outward normal of the target at `point`.
  Vec3 normal{};
};

/// Debug check of the Ray contract (cast.h): unit direction, finite max_distance >= 0.
inline void AssertValidPath(const Ray& ray) {
  assert(std::fabs(LengthSquared(ray.direction) - 1.0f) <= 1e-4f && "direction must be unit");
  assert(ray.max_distance >= 0.0f && std::isfinite(ray.max_distance) &&
         "max_distance must be finite and >= 0");
  (void)ray;
}

/// `v` normalised, or `fallback` when `v` is zero (a contact on a zero-radius feature).
inline Vec3 UnitOr(const Vec3& v, const Vec3& fallback) {
  float len2 = LengthSquared(v);
  return len2 > 0.0f ? v * (1.0f / std::sqrt(len2)) : fallback;
}

/// The unit outward normal at the entry point of a ray into a round surface of `radius`: the
/// entry point relative to the nearest point of the core, `at_t` as computed from the
/// returned distance, or `exact`, the same point written as orthogonal terms that do not
/// cancel. `at_t` keeps the normal consistent with the distance reported (which matters at
/// grazing entries, where the distance is ill-conditioned); `exact` takes over when `at_t` has
/// lost most of its digits (a small radius far from the ray origin, or a zero radius).
/// `fallback()` is returned when both are zero (a zero radius hit dead on). `exact()` and
/// `fallback()` are evaluated only when needed; the common case needs neither.
template <typename Exact, typename Fallback>
inline Vec3 EntryNormal(const Vec3& at_t, float radius, Exact&& exact, Fallback&& fallback) {
  const float at_len2 = LengthSquared(at_t);
  if (radius > 0.0f && at_len2 >= 0.25f * radius * radius) {
    return at_t * (1.0f / std::sqrt(at_len2));
  }
  const Vec3 e = exact();
  const float len2 = LengthSquared(e);
  return len2 > 0.0f ? e * (1.0f / std::sqrt(len2)) : fallback();
}

/// The contact mapped to the world frame by `pose`.
inline CastHit ToWorld(const Pose& pose, const LocalContact& c) {
  CastHit hit;
  hit.distance = c.t;
  hit.point = pose.position + Rotate(pose.rotation, c.point);
  hit.normal = Rotate(pose.rotation, c.normal);
  hit.start_overlapping = false;
  return hit;
}

/// The contact of a target that no rotation changes (a sphere) mapped to the world frame: moved
/// to `position` only.
inline CastHit Translated(const Vec3& position, const LocalContact& c) {
  CastHit hit;
  hit.distance = c.t;
  hit.point = position + c.point;
  hit.normal = c.normal;
  hit.start_overlapping = false;
  return hit;
}

// ---------------------------------------------------------------------------------------------
// Ball (sphere target, capsule end caps, box corners).

/// True when the point `m` (relative to a ball's centre) lies in the closed ball of `radius`.
inline bool BallContains(const Vec3& m, float radius) {
  return LengthSquared(m) <= radius * radius;
}

/// The entry distance of the ray m + t d into the closed ball of `radius` about the origin, for
/// m outside the ball. False when the ray misses it. When `normal` is given it receives the unit
/// outward normal of the ball at the entry point (-d when the ball has no extent there).
inline bool RayBall(const Vec3& m, const Vec3& d, float radius, float* t, Vec3* normal = nullptr) {
  // solve: |m + t d|^2 = R^2, the smaller root t = -b - sqrt(b^2 - c) with b = m.d and
  // c = |m|^2 - R^2. The discriminant b^2 - c equals R^2 - |q|^2 with q = m - b d the closest
  // approach of the line to the centre: taken from q, it does not cancel two large squares
  // (Real-Time Collision Detection 5.3.2), and -b - sqrt(...) adds two non-negative terms.
  float b = Dot(m, d);
  if (b > 0.0f) return false;  // outside and moving away
  Vec3 q = m - b * d;
  float disc = radius * radius - LengthSquared(q);
  if (disc < 0.0f) return false;  // the line passes further than R from the centre
  const float s = std::sqrt(disc);
  *t = std::max(-b - s, 0.0f);
  if (normal != nullptr) {
    *normal = EntryNormal(
        m + *t * d, radius, [&] { return q - s * d; }, [&] { return -d; });
  }
  return true;
}

/// A ball of radius `r` cast along m + t d against the ball of `radius` about the origin; `m`
/// must be outside the grown ball (radius + r).
inline bool CastBall(const Vec3& m, const Vec3& d, float radius, float r, float max_t,
                     LocalContact* out) {
  float t;
  Vec3 n;
  // The target's outward normal at the contact is the direction from its centre to the
  // moving ball's centre at impact: the grown ball's normal at the entry point.
  if (!RayBall(m, d, radius + r, &t, &n) || t > max_t) return false;
  out->t = t;
  out->normal = n;
  out->point = n * radius;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Capsule about a local axis (capsule target along Y, box edges along X, Y or Z).

/// True when `o` lies within `radius` of the segment from -h to +h on axis kAxis.
template <int kAxis>
inline bool CapsuleContains(const Vec3& o, float h, float radius) {
  Vec3 v = o;
  v[kAxis] -= std::clamp(o[kAxis], -h, h);
  return LengthSquared(v) <= radius * radius;
}

/// The entry of the ray o + t d into the capsule of `radius` about the segment from -h to +h on
/// axis kAxis, for o outside it: distance `*t` and the point of the segment nearest the entry
/// point. False when it misses or enters beyond max_t. When `normal` is given it receives the
/// unit outward normal of the capsule at the entry point; on a zero-radius capsule (a segment)
/// that is the direction closest to -d among the segment's normals at the point hit.
template <int kAxis>
inline bool RayCapsule(const Vec3& o, const Vec3& d, float h, float radius, float max_t, float* t,
                       Vec3* axis_point, Vec3* normal = nullptr) {
  constexpr int a = (kAxis + 1) % 3;
  constexpr int b = (kAxis + 2) % 3;
  const float rr = radius * radius;
  // Project onto the plane across the axis: the infinite cylinder becomes a disc.
  const float ma = o[a], mb = o[b], da = d[a], db = d[b];
  const float c = ma * ma + mb * mb - rr;  // > 0 when outside the infinite cylinder
  float y_ref = o[kAxis];                  // where along the axis the ray meets the cylinder
  if (c > 0.0f) {
    // solve: |m + t d|^2 = R^2 in the plane (m, d projected, d not unit), the smaller root
    //   t = (-bb - sqrt(disc)) / dd = c / (-bb + sqrt(disc)),
    // with bb = m.d, dd = d.d and disc = bb^2 - dd c = R^2 dd - (m x d)^2. The second form
    // stays accurate when the ray is nearly parallel to the axis (dd small).
    const float bb = ma * da + mb * db;
    if (bb >= 0.0f) return false;  // moving away from, or parallel to, a cylinder it is outside
    const float dd = da * da + db * db;
    const float cross = ma * db - mb * da;
    const float disc = rr * dd - cross * cross;
    if (disc < 0.0f) return false;  // misses the infinite cylinder, hence the capsule
    const float root = std::sqrt(disc);
    const float tc = c / (root - bb);
    const float y = o[kAxis] + tc * d[kAxis];
    if (std::fabs(y) <= h) {
      // Only here is tc the answer. Beyond the ends the cap's entry, though never before tc in
      // exact arithmetic, may round below it: rejecting by tc there would lose a hit that a
      // longer cast reports at a distance <= max_t (a cast must hit whenever a longer one hits
      // within its length, or clipping by the best hit so far drops ties).
      if (!(tc <= max_t)) return false;
      *t = tc;
      *axis_point = Vec3{};
      (*axis_point)[kAxis] = y;
      if (normal != nullptr) {
        // The entry point across the axis, m + tc d = q - (root / dd) d, with q = m - (bb / dd) d
        // the closest approach of the projected line: orthogonal terms, no cancellation.
        Vec3 at_t{};
        at_t[a] = ma + tc * da;
        at_t[b] = mb + tc * db;
        *normal = EntryNormal(
            at_t, radius,
            [&] {
              // The entry point across the axis, m + tc d = q - (root / dd) d, with
              // q = m - (bb / dd) d the closest approach of the projected line: orthogonal terms,
              // no cancellation.
              const float k = bb / dd;
              const float s = root / dd;
              Vec3 exact{};
              exact[a] = (ma - k * da) - s * da;
              exact[b] = (mb - k * db) - s * db;
              return exact;
            },
            [&] {
              Vec3 back{};  // a segment hit from the side: -d across the axis
              back[a] = -da;
              back[b] = -db;
              return UnitOr(back, -d);
            });
      }
      return true;
    }
    y_ref = y;
  }
  // The ray is (or gets) inside the infinite cylinder beyond an end: it enters through the end
  // cap on that side, if at all.
  const float side = y_ref > 0.0f ? 1.0f : -1.0f;
  Vec3 cap{};
  cap[kAxis] = side * h;
  float tb;
  Vec3 n;
  if (!RayBall(o - cap, d, radius, &tb, &n) || tb > max_t) return false;
  *t = tb;
  *axis_point = cap;
  if (normal != nullptr) {
    // Only the outer half of the end ball is the capsule's surface (all of it when h = 0): a
    // normal pointing back along the axis (rounding on the rim, or -d at the tip of a
    // segment) is moved onto it.
    if (h > 0.0f && n[kAxis] * side < 0.0f) {
      n[kAxis] = 0.0f;
      Vec3 axial{};
      axial[kAxis] = side;
      n = UnitOr(n, axial);
    }
    *normal = n;
  }
  return true;
}

/// RayCapsule with a run-time axis.
inline bool RayCapsule(int axis, const Vec3& o, const Vec3& d, float h, float radius, float max_t,
                       float* t, Vec3* axis_point) {
  switch (axis) {
    case 0:
      return RayCapsule<0>(o, d, h, radius, max_t, t, axis_point);
    case 1:
      return RayCapsule<1>(o, d, h, radius, max_t, t, axis_point);
    default:
      return RayCapsule<2>(o, d, h, radius, max_t, t, axis_point);
  }
}

/// A ball of radius `r` cast along o + t d against the capsule (`radius`, half height `h`, axis
/// Y); `o` must be outside the grown capsule (radius + r).
inline bool CastCapsule(const Vec3& o, const Vec3& d, float h, float radius, float r, float max_t,
                        LocalContact* out) {
  float t;
  Vec3 axis_point;
  Vec3 n;
  // The outward normal points from the nearest point of the segment to the ball's centre: the
  // grown capsule's normal at the entry point.
  if (!RayCapsule<1>(o, d, h, radius + r, max_t, &t, &axis_point, &n)) return false;
  out->t = t;
  out->normal = n;
  out->point = axis_point + n * radius;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Box, rounded by r.

/// True when `o` lies within `r` of the box of half extents `e` (inside it when r = 0).
inline bool BoxContains(const Vec3& o, const Vec3& e, float r) {
  // Per-axis distance outside the slab; zero inside it.
  Vec3 q = Max(Abs(o) - e, Vec3{});
  if (r > 0.0f) return LengthSquared(q) <= r * r;
  return q.x <= 0.0f && q.y <= 0.0f && q.z <= 0.0f;
}

/// A ball of radius `r` (0 for a ray) cast along o + t d against the box of half extents `e`;
/// `o` must be outside the rounded box (distance to the box > r).
///
/// Real-Time Collision Detection 5.5.7: the slab test against the box expanded by r gives the
/// entry point p. When p lies in a face region (within the box's slabs on the other two axes)
/// it is the contact. In an edge region (outside one more slab) the rounded box, if hit at all,
/// is first hit on that edge's capsule; in a corner region on one of the three capsules of the
/// edges meeting at that corner.
inline bool CastBox(const Vec3& o, const Vec3& d, const Vec3& e, float r, float max_t,
                    LocalContact* out) {
  const Vec3 grown = e + Vec3{r, r, r};
  // Slabs: t in [t_enter, t_exit] inside all three; `axis` is the slab entered last. Not clipped
  // by max_t: in an edge or corner region the contact, never before t_enter in exact arithmetic,
  // may round below it, and a cast must hit whenever a longer one hits within its length.
  float t_enter = 0.0f;
  float t_exit = std::numeric_limits<float>::infinity();
  int axis = -1;
  for (int i = 0; i < 3; ++i) {
    if (d[i] == 0.0f) {
      // Parallel to the slab: inside it for all t, or never.
      if (std::fabs(o[i]) > grown[i]) return false;
      continue;
    }
    // solve: o_i + t d_i = -+grown_i
    float t_lo = (-grown[i] - o[i]) / d[i];
    float t_hi = (grown[i] - o[i]) / d[i];
    float t_near = std::min(t_lo, t_hi);
    float t_far = std::max(t_lo, t_hi);
    // Strictly greater: through an edge or a corner of the grown box, the lowest axis wins.
    if (t_near > t_enter) {
      t_enter = t_near;
      axis = i;
    }
    t_exit = std::min(t_exit, t_far);
  }
  if (t_enter > t_exit) return false;

  const Vec3 p = o + t_enter * d;
  // The regions p lies in: outside the box's own slab on which axes.
  bool outside[3];
  int count = 0;
  for (int i = 0; i < 3; ++i) {
    outside[i] = i == axis || (r > 0.0f && std::fabs(p[i]) > e[i]);
    count += outside[i];
  }

  if (count <= 1) {
    if (t_enter > max_t) return false;
    // Face region: p is on the rounded box. A start inside the grown box (axis = -1) only gets
    // here by rounding on a touching contact; take the face it is furthest out of.
    float face_sign;
    if (axis >= 0) {
      face_sign = d[axis] > 0.0f ? -1.0f : 1.0f;
    } else {
      Vec3 excess = Abs(p) - e;
      axis = (excess.x >= excess.y && excess.x >= excess.z) ? 0 : (excess.y >= excess.z ? 1 : 2);
      face_sign = p[axis] >= 0.0f ? 1.0f : -1.0f;
    }
    out->t = t_enter;
    out->point = Clamp(p, -e, e);
    out->point[axis] = face_sign * e[axis];
    out->normal = Vec3{};
    out->normal[axis] = face_sign;
    return true;
  }

  // Edge or corner region (only when r > 0). The box corner nearest p, with the face sign for
  // the entered axis (p is on the grown face there).
  Vec3 corner;
  for (int i = 0; i < 3; ++i) {
    float s = i == axis ? (d[i] > 0.0f ? -1.0f : 1.0f) : (p[i] >= 0.0f ? 1.0f : -1.0f);
    corner[i] = s * e[i];
  }
  float best_t = 0.0f;
  bool found = false;
  for (int c = 0; c < 3; ++c) {
    // The capsule about the edge along c: in an edge region only the edge along the one axis
    // still inside its slab; in a corner region all three edges through the corner.
    if (count == 2 && outside[c]) continue;
    Vec3 mid = corner;
    mid[c] = 0.0f;
    float t;
    Vec3 axis_point;
    if (RayCapsule(c, o - mid, d, e[c], r, max_t, &t, &axis_point) && (!found || t < best_t)) {
      found = true;
      best_t = t;
    }
  }
  if (!found) return false;
  // The ball touches the box at the box point nearest its centre. Taking that point from the
  // centre at impact, rather than from whichever capsule won the minimum, keeps it continuous
  // where an edge's side and a corner ball are entered at t equal within rounding.
  const Vec3 centre = o + best_t * d;
  out->t = best_t;
  out->point = Clamp(centre, -e, e);
  out->normal = UnitOr(centre - out->point, -d);
  return true;
}

}  // namespace collide::cast_internal
