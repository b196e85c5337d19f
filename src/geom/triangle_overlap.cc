#include "geom/triangle_overlap.h"

#include <algorithm>
#include <cmath>

#include "geom/internal/box_sat.h"
#include "geom/triangle_distance.h"

namespace collide {
namespace {

using geom_internal::kCrossAxisBias;
using geom_internal::kMinCrossLength;

// The least overlap found so far over candidate axes, and the unit direction to move along.
struct MinAxis {
  bool have = false;
  float depth = 0.0f;
  Vec3 normal{};
};

// Considers axis `l` (any length, non-zero) along which the moving shape projects to [s_lo, s_hi]
// and the triangle to [t_lo, t_hi]: the moving shape leaves by going up by t_hi - s_lo, or down
// by s_hi - t_lo (in units of |l|). `bias` handicaps cross axes (see box_sat.h).
void ConsiderAxis(const Vec3& l, float s_lo, float s_hi, float t_lo, float t_hi, float bias,
                  MinAxis* best) {
  const float len = Length(l);
  const float up = t_hi - s_lo;
  const float down = s_hi - t_lo;
  const bool go_up = up <= down;
  const float depth = std::fmax((go_up ? up : down) / len, 0.0f);
  if (!best->have || depth < best->depth - bias) {
    best->have = true;
    best->depth = depth;
    best->normal = l * ((go_up ? 1.0f : -1.0f) / len);
  }
}

// The projection interval of the triangle on `l`.
void ProjectTriangle(const Vec3 v[3], const Vec3& l, float* lo, float* hi) {
  const float p0 = Dot(v[0], l), p1 = Dot(v[1], l), p2 = Dot(v[2], l);
  *lo = std::min(p0, std::min(p1, p2));
  *hi = std::max(p0, std::max(p1, p2));
}

// ---------------------------------------------------------------------------------------------
// Round shapes: a core segment [p0, p1] (a point for a sphere) and a radius.

struct Round {
  Vec3 p0{};
  Vec3 p1{};
  float radius = 0.0f;
};

Round MakeRound(const Shape& shape, const Pose& pose) {
  if (shape.type == ShapeType::kCapsule) {
    const Vec3 h = Rotate(pose.rotation, Vec3{0.0f, shape.capsule.half_height, 0.0f});
    return {pose.position - h, pose.position + h, shape.capsule.radius};
  }
  return {pose.position, pose.position, shape.sphere.radius};
}

// A sphere's centre `c`, relative to the triangle's first vertex, against the triangle (also
// relative: a = 0) whose unit normal is `n` (zero without area): true when the plane of the
// triangle is out of the ball's reach. The margin (1e-5 of r^2) keeps every case the exact
// nearest point would accept, rounding included, so that this only saves work.
bool PlaneOutOfReach(const Vec3& c, float r, const Triangle& t, const Vec3& n) {
  if (n == Vec3{}) return false;
  const float s = Dot(c - t.a, n);
  return s * s > r * r * (1.0f + 1e-5f);
}

bool OverlapRound(const Round& r, const Triangle& t) {
  if (r.p0 == r.p1) {
    // A sphere: the plane first, then the nearest point (one normal for both).
    const Triangle rel{Vec3{}, t.b - t.a, t.c - t.a};
    const Vec3 c = r.p0 - t.a;
    const Vec3 n = TriangleUnitNormal(rel.a, rel.b, rel.c, Vec3{});
    if (PlaneOutOfReach(c, r.radius, rel, n)) return false;
    return DistanceSquared(NearestTrianglePoint(c, rel, n).point, c) <= r.radius * r.radius;
  }
  const SegmentTrianglePoints cp = ClosestSegmentTriangle(r.p0, r.p1, t);
  return cp.distance_squared <= r.radius * r.radius;
}

// The direction from the triangle to the core at their closest points, with the rounding of a
// short offset removed: perpendicular to the face, to an edge, to the core segment (where the
// closest point is strictly inside them), as it is exactly. `n` is the unit face normal (zero
// for a triangle without area).
Vec3 SeparationDirection(const SegmentTrianglePoints& cp, const Round& r, const Triangle& t,
                         const Vec3& n) {
  const Vec3 v = cp.on_segment - cp.on_triangle;
  const Vec3 s = r.p1 - r.p0;
  const bool segment_inside =
      LengthSquared(s) > 0.0f && cp.segment_param > 0.0f && cp.segment_param < 1.0f;
  Vec3 dir = v;
  const int f = static_cast<int>(cp.feature);
  if (cp.feature == TriangleFeature::kFace && n != Vec3{}) {
    dir = Dot(v, n) >= 0.0f ? n : -n;
  } else if (f >= 1 && f <= 3) {
    const Vec3* corners[4] = {&t.a, &t.b, &t.c, &t.a};
    const Vec3 e = *corners[f] - *corners[f - 1];
    const Vec3 w = Cross(s, e);
    if (segment_inside && LengthSquared(w) > 1e-6f * LengthSquared(s) * LengthSquared(e)) {
      dir = Dot(v, w) >= 0.0f ? w : -w;
    } else {
      dir = v - (Dot(v, e) / LengthSquared(e)) * e;
    }
  } else if (f >= 4 && segment_inside) {
    dir = v - (Dot(v, s) / LengthSquared(s)) * s;
  }
  // A cleaned direction that lost most of the offset means the offset was not what the feature
  // says (rounding at a feature's boundary): keep the offset as it is.
  if (!(LengthSquared(dir) > 1e-6f * LengthSquared(v))) dir = v;
  return Normalize(dir);
}

// PenetrateRound with everything relative to the triangle's first vertex (small values, so the
// direction between two close points keeps its precision far from the origin).
bool PenetrateRoundRelative(const Round& r, const Triangle& t, Penetration* out) {
  if (r.p0 == r.p1) {
    // A sphere, the common case of a mesh's overlaps: the steps below, with the triangle's
    // normal computed once for all of them (the same values: ClosestSegmentTriangle of a point
    // is its NearestTrianglePoint).
    const Vec3 n = TriangleUnitNormal(t.a, t.b, t.c, Vec3{});
    if (PlaneOutOfReach(r.p0, r.radius, t, n)) return false;
    const TrianglePoint q = NearestTrianglePoint(r.p0, t, n);
    const float d2 = DistanceSquared(r.p0, q.point);
    if (d2 > r.radius * r.radius) return false;
    if (d2 > 0.0f) {
      SegmentTrianglePoints cp;
      cp.on_segment = r.p0;
      cp.on_triangle = q.point;
      cp.distance_squared = d2;
      cp.feature = q.feature;
      out->depth = std::fmax(r.radius - Distance(cp.on_segment, cp.on_triangle), 0.0f);
      out->normal = SeparationDirection(cp, r, t, n);
      out->point = q.point;
      return true;
    }
    // The centre on the triangle: the general path's separating axes below.
  }
  const SegmentTrianglePoints cp = ClosestSegmentTriangle(r.p0, r.p1, t);
  if (cp.distance_squared > r.radius * r.radius) return false;
  if (!cp.intersects) {
    // The core is apart: the shape leaves along the direction from the triangle's nearest point
    // (the distance to a convex set grows at unit rate along it).
    const float d = Distance(cp.on_segment, cp.on_triangle);
    out->depth = std::fmax(r.radius - d, 0.0f);
    out->normal = SeparationDirection(cp, r, t, TriangleUnitNormal(t.a, t.b, t.c, Vec3{}));
    out->point = cp.on_triangle;
    return true;
  }
  // The core meets the triangle: the least overlap of the core and the triangle over the face
  // normals of their Minkowski difference (the triangle's normal and the crosses of the
  // segment with the triangle's edges), plus the radius.
  const Vec3 v[3] = {t.a, t.b, t.c};
  const Vec3 s = r.p1 - r.p0;
  const float size = Length(s) + std::max(Distance(t.a, t.b), Distance(t.a, t.c));
  MinAxis best;
  const Vec3 n = TriangleUnitNormal(t.a, t.b, t.c, Vec3{});
  auto consider = [&](const Vec3& l, float bias) {
    float t_lo, t_hi;
    ProjectTriangle(v, l, &t_lo, &t_hi);
    const float q0 = Dot(r.p0, l), q1 = Dot(r.p1, l);
    ConsiderAxis(l, std::min(q0, q1), std::max(q0, q1), t_lo, t_hi, bias, &best);
  };
  if (n != Vec3{}) consider(n, 0.0f);
  const float ss = LengthSquared(s);
  for (int e = 0; e < 3; ++e) {
    const Vec3 f = v[(e + 1) % 3] - v[e];
    const Vec3 l = Cross(s, f);
    if (!(LengthSquared(l) > kMinCrossLength * kMinCrossLength * ss * LengthSquared(f))) continue;
    consider(l, kCrossAxisBias * size);
  }
  if (!best.have) {
    // The core and the triangle lie on one line (or are points): any direction across it.
    const Vec3 along = ss > 0.0f ? s : (t.b != t.a ? t.b - t.a : t.c - t.a);
    const Vec3 l = LengthSquared(along) > 0.0f ? AnyPerpendicular(Normalize(along)) : Vec3{0, 1, 0};
    consider(l, 0.0f);
  }
  out->depth = best.depth + r.radius;
  out->normal = best.normal;
  // After the move the shape touches the triangle where the triangle is nearest its core.
  const Vec3 move = out->depth * out->normal;
  out->point = ClosestSegmentTriangle(r.p0 + move, r.p1 + move, t).on_triangle;
  return true;
}

bool PenetrateRound(const Round& r, const Triangle& t, Penetration* out) {
  const Round rel{r.p0 - t.a, r.p1 - t.a, r.radius};
  if (!PenetrateRoundRelative(rel, Triangle{Vec3{}, t.b - t.a, t.c - t.a}, out)) return false;
  out->point += t.a;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Boxes, in the box's frame relative to its centre.

// Calls f(l, bias) for each of the 13 candidate axes (the triangle's normal, the box's faces,
// then the crosses of box axes with triangle edges, skipping near-parallel pairs) until it
// returns false; returns false when stopped.
template <typename F>
bool ForEachBoxTriangleAxis(const Vec3& e, const Vec3 v[3], F&& f) {
  const TriangleNormalD nd = TriangleCrossD(v[0], v[1], v[2]);
  const Vec3 n{static_cast<float>(nd.x), static_cast<float>(nd.y), static_cast<float>(nd.z)};
  if (n != Vec3{} && IsFinite(n) && !f(n, 0.0f)) return false;
  for (int i = 0; i < 3; ++i) {
    Vec3 l{};
    l[i] = 1.0f;
    if (!f(l, 0.0f)) return false;
  }
  const float size = MaxComponent(e) + std::max(Distance(v[0], v[1]), Distance(v[0], v[2]));
  for (int j = 0; j < 3; ++j) {
    const Vec3 g = v[(j + 1) % 3] - v[j];
    const float gg = LengthSquared(g);
    for (int i = 0; i < 3; ++i) {
      Vec3 ai{};
      ai[i] = 1.0f;
      const Vec3 l = Cross(ai, g);
      if (!(LengthSquared(l) > kMinCrossLength * kMinCrossLength * gg)) continue;
      if (!f(l, kCrossAxisBias * size)) return false;
    }
  }
  return true;
}

float BoxRadius(const Vec3& e, const Vec3& l) {
  return e.x * std::fabs(l.x) + e.y * std::fabs(l.y) + e.z * std::fabs(l.z);
}

void ToBoxFrame(const Pose& pose, const Triangle& t, Vec3 v[3]) {
  v[0] = InverseTransformPoint(pose, t.a);
  v[1] = InverseTransformPoint(pose, t.b);
  v[2] = InverseTransformPoint(pose, t.c);
}

bool OverlapBox(const Box& box, const Pose& pose, const Triangle& t) {
  Vec3 v[3];
  ToBoxFrame(pose, t, v);
  const Vec3& e = box.half_extents;
  return ForEachBoxTriangleAxis(e, v, [&](const Vec3& l, float) {
    float lo, hi;
    ProjectTriangle(v, l, &lo, &hi);
    const float r = BoxRadius(e, l);
    return !(lo > r || hi < -r);
  });
}

// The middle of the part of the triangle (box frame) within the box of half extents `e` about
// `centre`: Sutherland-Hodgman clipping by the six slab planes. False when nothing is left.
bool ClippedMiddle(const Vec3 v[3], const Vec3& centre, const Vec3& e, Vec3* middle) {
  Vec3 poly[9], next[9];
  int n = 3;
  for (int i = 0; i < 3; ++i) poly[i] = v[i] - centre;
  for (int axis = 0; axis < 3 && n > 0; ++axis) {
    for (float side : {1.0f, -1.0f}) {
      // Keep side * x_axis <= e_axis.
      int m = 0;
      for (int i = 0; i < n; ++i) {
        const Vec3& p = poly[i];
        const Vec3& q = poly[(i + 1) % n];
        const float dp = side * p[axis] - e[axis];
        const float dq = side * q[axis] - e[axis];
        if (dp <= 0.0f) next[m++] = p;
        if ((dp < 0.0f && dq > 0.0f) || (dp > 0.0f && dq < 0.0f)) {
          next[m++] = p + (dp / (dp - dq)) * (q - p);
        }
      }
      n = m;
      std::copy(next, next + n, poly);
      if (n == 0) break;
    }
  }
  if (n == 0) return false;
  Vec3 sum{};
  for (int i = 0; i < n; ++i) sum += poly[i];
  *middle = sum * (1.0f / static_cast<float>(n)) + centre;
  return true;
}

bool PenetrateBox(const Box& box, const Pose& pose, const Triangle& t, Penetration* out) {
  Vec3 v[3];
  ToBoxFrame(pose, t, v);
  const Vec3& e = box.half_extents;
  MinAxis best;
  const bool overlap = ForEachBoxTriangleAxis(e, v, [&](const Vec3& l, float bias) {
    float lo, hi;
    ProjectTriangle(v, l, &lo, &hi);
    const float r = BoxRadius(e, l);
    if (lo > r || hi < -r) return false;
    ConsiderAxis(l, -r, r, lo, hi, bias, &best);
    return true;
  });
  if (!overlap) return false;
  const Vec3 move = best.depth * best.normal;
  // The triangle's contact region after the move: its part within the moved box, grown by the
  // rounding of the depth.
  const float size = MaxComponent(e) + std::max(Distance(v[0], v[1]), Distance(v[0], v[2]));
  const float tol = 1e-5f * size;
  Vec3 local_point;
  if (!ClippedMiddle(v, move, e + Vec3{tol, tol, tol}, &local_point)) {
    local_point = ClosestPointOnTriangle(move, Triangle{v[0], v[1], v[2]});
  }
  out->depth = best.depth;
  out->normal = Rotate(pose.rotation, best.normal);
  out->point = TransformPoint(pose, local_point);
  return true;
}

}  // namespace

bool OverlapTriangle(const Shape& shape, const Pose& pose, const Triangle& t) {
  if (shape.type == ShapeType::kBox) return OverlapBox(shape.box, pose, t);
  return OverlapRound(MakeRound(shape, pose), t);
}

bool PenetrateTriangle(const Shape& shape, const Pose& pose, const Triangle& t, Penetration* out) {
  if (shape.type == ShapeType::kBox) return PenetrateBox(shape.box, pose, t, out);
  return PenetrateRound(MakeRound(shape, pose), t, out);
}

}  // namespace collide
