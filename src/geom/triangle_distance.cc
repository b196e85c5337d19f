#include "geom/triangle_distance.h"

#include <algorithm>
#include <cmath>

#include "geom/internal/segment.h"

namespace collide {
namespace {

// The point of the segment [a, b] nearest to `p` (Ericson 5.1.2), its squared distance, and
// whether it is an end (0: a, 1: b) or inside (-1).
Vec3 ClosestOnEdge(const Vec3& p, const Vec3& a, const Vec3& b, float* d2, int* end) {
  const Vec3 ab = b - a;
  const float len2 = LengthSquared(ab);
  // minimise |a + s ab - p|^2 over s in [0, 1]: s = (p - a).ab / |ab|^2, clamped.
  const float s = len2 > 0.0f ? std::clamp(Dot(p - a, ab) / len2, 0.0f, 1.0f) : 0.0f;
  *end = s <= 0.0f ? 0 : (s >= 1.0f ? 1 : -1);
  const Vec3 q = *end == 0 ? a : (*end == 1 ? b : a + s * ab);
  *d2 = DistanceSquared(p, q);
  return q;
}

// The feature of edge `e` (0: ab, 1: bc, 2: ca) at end `end` (as ClosestOnEdge's).
TriangleFeature EdgeFeature(int e, int end) {
  if (end < 0) return static_cast<TriangleFeature>(1 + e);
  return static_cast<TriangleFeature>(4 + (e + end) % 3);
}

// The nearest point of the triangle's three edges to `p`.
TrianglePoint ClosestOnBoundary(const Vec3& p, const Triangle& t) {
  const Vec3* v[4] = {&t.a, &t.b, &t.c, &t.a};
  TrianglePoint best_point;
  float best = 0.0f;
  for (int e = 0; e < 3; ++e) {
    float d2;
    int end;
    const Vec3 q = ClosestOnEdge(p, *v[e], *v[e + 1], &d2, &end);
    if (e == 0 || d2 < best) {
      best = d2;
      best_point = {q, EdgeFeature(e, end)};
    }
  }
  return best_point;
}

}  // namespace

bool PointInTriangle(const Vec3& q, const Triangle& t, const Vec3& n) {
  // q is inside when it is on the left of each edge seen from the front: ((v1 - v0) x (q - v0)).n
  // >= 0 for the edges a->b, b->c, c->a.
  return Dot(Cross(t.b - t.a, q - t.a), n) >= 0.0f && Dot(Cross(t.c - t.b, q - t.b), n) >= 0.0f &&
         Dot(Cross(t.a - t.c, q - t.c), n) >= 0.0f;
}

namespace {

// NearestTrianglePoint with the triangle's first vertex at the origin (a = 0) and its unit
// normal `n` (zero: no area).
TrianglePoint NearestRelative(const Vec3& p, const Triangle& t, const Vec3& n) {
  if (n == Vec3{}) return ClosestOnBoundary(p, t);  // zero area: a segment or a point
  // The projection onto the plane: p - ((p - a).n) n.
  const Vec3 q = p - Dot(p - t.a, n) * n;
  if (PointInTriangle(q, t, n)) return {q, TriangleFeature::kFace};
  return ClosestOnBoundary(p, t);
}

// The triangle moved by -a: its coordinates relative to its first vertex (small, so precise far
// from the origin).
Triangle Relative(const Triangle& t) { return Triangle{Vec3{}, t.b - t.a, t.c - t.a}; }

}  // namespace

TrianglePoint NearestRelative(const Vec3& p, const Triangle& t) {
  return NearestRelative(p, t, TriangleUnitNormal(t.a, t.b, t.c, Vec3{}));
}

TrianglePoint NearestTrianglePoint(const Vec3& p, const Triangle& t) {
  TrianglePoint q = NearestRelative(p - t.a, Relative(t));
  q.point += t.a;
  return q;
}

TrianglePoint NearestTrianglePoint(const Vec3& p, const Triangle& t, const Vec3& unit_normal) {
  TrianglePoint q = NearestRelative(p - t.a, Relative(t), unit_normal);
  q.point += t.a;
  return q;
}

namespace {

// ClosestSegmentTriangle for a triangle whose first vertex is the origin.
SegmentTrianglePoints ClosestSegmentRelative(const Vec3& p0, const Vec3& p1, const Triangle& t) {
  SegmentTrianglePoints out;
  if (p0 == p1) {
    // A point (a sphere's core): its nearest point of the triangle.
    const TrianglePoint q = NearestRelative(p0, t);
    out.on_segment = p0;
    out.on_triangle = q.point;
    out.distance_squared = DistanceSquared(p0, q.point);
    out.intersects = out.distance_squared == 0.0f;
    out.feature = q.feature;
    return out;
  }
  const Vec3 n = TriangleUnitNormal(t.a, t.b, t.c, Vec3{});
  if (n != Vec3{}) {
    // Does the segment cross the plane inside the triangle? solve: (p0 + s (p1 - p0) - a).n = 0.
    const float s0 = Dot(p0 - t.a, n);
    const float s1 = Dot(p1 - t.a, n);
    if ((s0 <= 0.0f && s1 >= 0.0f) || (s0 >= 0.0f && s1 <= 0.0f)) {
      if (s0 != s1) {
        const float s = s0 / (s0 - s1);
        Vec3 x = p0 + s * (p1 - p0);
        x = x - Dot(x - t.a, n) * n;  // onto the plane (rounding)
        if (PointInTriangle(x, t, n)) {
          out.on_segment = x;
          out.on_triangle = x;
          out.intersects = true;
          out.segment_param = s;
          out.feature = TriangleFeature::kFace;
          return out;
        }
      }
      // A segment in the plane meets the triangle only where an end point lies inside it or it
      // crosses an edge: both among the candidates below, at distance 0.
    }
  }
  // Disjoint (or touching within the plane): the minimum lies at an end point of the segment
  // against the triangle, or between the segment and an edge.
  bool have = false;
  auto consider = [&](const Vec3& on_segment, float param, const TrianglePoint& on_triangle) {
    const float d2 = DistanceSquared(on_segment, on_triangle.point);
    if (!have || d2 < out.distance_squared) {
      have = true;
      out.on_segment = on_segment;
      out.on_triangle = on_triangle.point;
      out.distance_squared = d2;
      out.segment_param = param;
      out.feature = on_triangle.feature;
    }
  };
  consider(p0, 0.0f, NearestRelative(p0, t));
  if (p1 != p0) consider(p1, 1.0f, NearestRelative(p1, t));
  const Vec3 c = 0.5f * (p0 + p1);
  const Vec3 u = 0.5f * (p1 - p0);
  const Vec3* corners[4] = {&t.a, &t.b, &t.c, &t.a};
  for (int e = 0; e < 3; ++e) {
    const Vec3& v0 = *corners[e];
    const Vec3& v1 = *corners[e + 1];
    const geom_internal::SegmentPair sp =
        geom_internal::ClosestSegmentSegment(c, u, 0.5f * (v0 + v1), 0.5f * (v1 - v0));
    const int end = sp.t <= -1.0f ? 0 : (sp.t >= 1.0f ? 1 : -1);
    consider(sp.p1, 0.5f * (sp.s + 1.0f), TrianglePoint{sp.p2, EdgeFeature(e, end)});
  }
  out.intersects = out.distance_squared == 0.0f;
  return out;
}

}  // namespace

SegmentTrianglePoints ClosestSegmentTriangle(const Vec3& p0, const Vec3& p1, const Triangle& t) {
  SegmentTrianglePoints out = ClosestSegmentRelative(p0 - t.a, p1 - t.a, Relative(t));
  out.on_segment += t.a;
  out.on_triangle += t.a;
  return out;
}

}  // namespace collide
