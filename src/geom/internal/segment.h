#pragma once

// Closest-point helpers for points, segments and boxes, shared by closest_point.cc, overlap.cc
// and penetration.cc. Not part of the public API.
//
// A segment is written c + t u for t in [-1, 1]: its centre `c` and half axis `u` (u = 0 is a
// point). Callers pass coordinates relative to one of the shapes' centres, so that the values
// stay small (and precise) even when the shapes sit far from the world origin.

#include <algorithm>
#include <cmath>
#include <limits>

#include "geom/vec3.h"

namespace collide::geom_internal {

/// The parameter t in [-1, 1] of the point of the segment c + t u nearest to `p`.
inline float ClosestParameterOnSegment(const Vec3& c, const Vec3& u, const Vec3& p) {
  // minimise |c + t u - p|^2: t = (p - c).u / u.u, clamped to the segment.
  const float uu = LengthSquared(u);
  if (uu <= 0.0f) return 0.0f;
  return std::clamp(Dot(p - c, u) / uu, -1.0f, 1.0f);
}

/// The closest points of two segments c1 + s u1 and c2 + t u2, s and t in [-1, 1].
struct SegmentPair {
  float s = 0.0f;
  float t = 0.0f;
  /// The closest points c1 + s u1 and c2 + t u2.
  Vec3 p1{};
  Vec3 p2{};
  /// |p2 - p1|^2.
  float distance_squared = 0.0f;
};

/// The closest points of the segments c1 + s u1 and c2 + t u2 (either may have u = 0).
///
/// The minimum of the convex |c1 + s u1 - c2 - t u2|^2 over the square [-1, 1]^2 lies either at
/// the interior stationary point or on one of the square's four sides, and each side is a
/// point-segment problem. All five candidates are evaluated as actual point pairs and the
/// nearest kept, so the result never depends on a badly conditioned solve: for near-parallel
/// segments the interior solve is taken from the component of u1 perpendicular to u2 (whose
/// rounding is relative to |u1|), not from Cramer's rule on a*e - b^2 (which squares the
/// conditioning).
///
/// Candidates whose distances agree to rounding are told apart by how many of their parameters
/// sit at an end point: the fewer, the better. Near its minimum the distance changes only to
/// second order, so an end point a hair from an interior minimum can round to the smaller
/// value; the interior candidate is the exact stationary point, and the direction between its
/// two points the exact normal.
inline SegmentPair ClosestSegmentSegment(const Vec3& c1, const Vec3& u1, const Vec3& c2,
                                         const Vec3& u2) {
  const float uu1 = LengthSquared(u1);
  const float uu2 = LengthSquared(u2);
  SegmentPair candidates[5];
  int ends[5];
  int n = 0;
  auto add = [&](float s, float t) {
    const Vec3 p1 = c1 + s * u1;
    const Vec3 p2 = c2 + t * u2;
    candidates[n] = SegmentPair{s, t, p1, p2, DistanceSquared(p1, p2)};
    ends[n] = (uu1 > 0.0f && std::fabs(s) == 1.0f) + (uu2 > 0.0f && std::fabs(t) == 1.0f);
    ++n;
  };
  // Interior stationary point. With r = c1 - c2 and P the projection across u2,
  //   s* = -(P r).(P u1) / |P u1|^2,  t* = (c1 + s* u1 - c2).u2 / |u2|^2.
  if (uu2 > 0.0f) {
    const Vec3 r = c1 - c2;
    const Vec3 w = u1 - (Dot(u1, u2) / uu2) * u2;
    const float ww = LengthSquared(w);
    if (ww > 0.0f) {
      const Vec3 pr = r - (Dot(r, u2) / uu2) * u2;
      const float s = -Dot(pr, w) / ww;
      if (s > -1.0f && s < 1.0f) {
        const float t = Dot(r + s * u1, u2) / uu2;
        if (t > -1.0f && t < 1.0f) add(s, t);
      }
    }
  }
  // The four sides of the square: an end point of one segment against the other segment.
  for (float s : {-1.0f, 1.0f}) add(s, ClosestParameterOnSegment(c2, u2, c1 + s * u1));
  for (float t : {-1.0f, 1.0f}) add(ClosestParameterOnSegment(c1, u1, c2 + t * u2), t);

  float least = candidates[0].distance_squared;
  for (int i = 1; i < n; ++i) least = std::fmin(least, candidates[i].distance_squared);
  // Rounding of a squared distance: relative eps, plus that of the coordinates' size when the
  // distance is near zero.
  const float size = Length(c1 - c2) + std::sqrt(uu1) + std::sqrt(uu2);
  const float eps = 8.0f * std::numeric_limits<float>::epsilon();
  const float tie = least * (1.0f + eps) + (eps * size) * (eps * size);
  int best = -1;
  for (int i = 0; i < n; ++i) {
    if (candidates[i].distance_squared > tie) continue;
    if (best < 0 || ends[i] < ends[best] ||
        (ends[i] == ends[best] &&
         candidates[i].distance_squared < candidates[best].distance_squared)) {
      best = i;
    }
  }
  return candidates[best];
}

/// Squared distance from the local point `p` to the box of half extents `e` about the origin.
inline float PointBoxDistanceSquared(const Vec3& p, const Vec3& e) {
  // Per-axis excess outside the slab |x_i| <= e_i (Ericson 5.1: clamp, then measure).
  const Vec3 d = p - Clamp(p, -e, e);
  return LengthSquared(d);
}

/// The result of SegmentBoxClosest.
struct SegmentBoxResult {
  /// True when the segment meets the closed box (then the distance is 0).
  bool intersects = false;
  /// Parameter of the segment point nearest the box (inside the box when it intersects).
  float t = 0.0f;
  /// That segment point and the box point nearest to it (equal when it intersects).
  Vec3 segment_point{};
  Vec3 box_point{};
  /// The squared distance between them.
  float distance_squared = 0.0f;
};

/// The closest points of the segment c + t u (t in [-1, 1]) and the box of half extents `e`
/// about the origin, all in the box's frame.
///
/// First a slab clip decides whether the segment meets the box. Otherwise the squared distance
///   f(t) = sum_i max(|c_i + t u_i| - e_i, 0)^2
/// is a convex piecewise quadratic in t whose pieces change where c_i + t u_i = +-e_i. On each
/// piece it is a plain quadratic, minimised in closed form and clamped to the piece; the least
/// of these piece minima is the exact minimum (no iteration, no tolerance).
inline SegmentBoxResult SegmentBoxClosest(const Vec3& c, const Vec3& u, const Vec3& e) {
  SegmentBoxResult out;
  // Slab clip: the part of [-1, 1] inside all three slabs.
  float t0 = -1.0f;
  float t1 = 1.0f;
  bool inside = true;
  for (int i = 0; i < 3 && inside; ++i) {
    if (u[i] == 0.0f) {
      inside = std::fabs(c[i]) <= e[i];
      continue;
    }
    // solve: c_i + t u_i = -+e_i
    float lo = (-e[i] - c[i]) / u[i];
    float hi = (e[i] - c[i]) / u[i];
    if (lo > hi) std::swap(lo, hi);
    t0 = std::max(t0, lo);
    t1 = std::min(t1, hi);
    inside = t0 <= t1;
  }
  if (inside) {
    out.intersects = true;
    out.t = 0.5f * (t0 + t1);
    out.segment_point = c + out.t * u;
    // Rounding may leave the point an ulp outside; the clamp puts both on the closed box.
    out.segment_point = Clamp(out.segment_point, -e, e);
    out.box_point = out.segment_point;
    out.distance_squared = 0.0f;
    return out;
  }

  // Break points of the piecewise quadratic strictly inside (-1, 1), sorted.
  float knots[8];
  int n = 0;
  knots[n++] = -1.0f;
  for (int i = 0; i < 3; ++i) {
    if (u[i] == 0.0f) continue;
    for (float side : {-1.0f, 1.0f}) {
      const float k = (side * e[i] - c[i]) / u[i];
      if (k > -1.0f && k < 1.0f) knots[n++] = k;
    }
  }
  // Insertion sort of the (at most six) inner break points.
  for (int i = 2; i < n; ++i) {
    const float k = knots[i];
    int j = i;
    for (; j > 1 && knots[j - 1] > k; --j) knots[j] = knots[j - 1];
    knots[j] = k;
  }
  knots[n++] = 1.0f;

  bool have = false;
  for (int k = 0; k + 1 < n; ++k) {
    const float lo = knots[k];
    const float hi = knots[k + 1];
    // Which side of each slab the piece lies on, read at its middle.
    const float mid = 0.5f * (lo + hi);
    float num = 0.0f;
    float den = 0.0f;
    for (int i = 0; i < 3; ++i) {
      const float x = c[i] + mid * u[i];
      if (x > e[i] || x < -e[i]) {
        // This axis adds (c_i - target_i + t u_i)^2 with target_i = +-e_i.
        const float target = x > e[i] ? e[i] : -e[i];
        num += u[i] * (c[i] - target);
        den += u[i] * u[i];
      }
    }
    // solve: d/dt sum (c_i - target_i + t u_i)^2 = 0  =>  t = -sum u_i (c_i - target_i) / sum u_i^2
    const float t = den > 0.0f ? std::clamp(-num / den, lo, hi) : mid;
    const Vec3 p = c + t * u;
    const Vec3 q = Clamp(p, -e, e);
    const float d2 = DistanceSquared(p, q);
    if (!have || d2 < out.distance_squared) {
      have = true;
      out.t = t;
      out.segment_point = p;
      out.box_point = q;
      out.distance_squared = d2;
    }
  }
  // When the nearest segment point sits at a break point, c_i + t u_i = +-e_i holds exactly
  // only in exact arithmetic: rounded, it leaves an offset of an ulp or so across that face,
  // which would tilt the direction from the box to the segment by ulp / distance. Offsets of
  // that size on axes where the box point is on a face are rounding: drop them.
  for (int i = 0; i < 3; ++i) {
    const float noise =
        4.0f * std::numeric_limits<float>::epsilon() * (std::fabs(c[i]) + std::fabs(u[i]) + e[i]);
    if (std::fabs(out.box_point[i]) == e[i] &&
        std::fabs(out.segment_point[i] - out.box_point[i]) <= noise) {
      out.segment_point[i] = out.box_point[i];
    }
  }
  out.distance_squared = DistanceSquared(out.segment_point, out.box_point);
  // A minimum of exactly 0 means the segment touches the box after all (the slab clip and the
  // pieces round differently by an ulp at a grazing contact).
  out.intersects = out.distance_squared == 0.0f;
  return out;
}

}  // namespace collide::geom_internal
