#include "geom/penetration.h"

#include <cassert>
#include <cmath>
#include <limits>

#include "geom/internal/box_sat.h"
#include "geom/internal/round_pair.h"
#include "geom/internal/segment.h"
#include "geom/internal/shape_access.h"

namespace collide {
namespace {

using geom_internal::BoxPair;
using geom_internal::RoundPair;
using geom_internal::SatAxis;

// Clipped contact points within this fraction of the boxes' size of the deepest one are
// averaged: ten times the rounding noise of a rotation's matrix entries (~1e-7), so the corners
// of faces that are parallel in exact arithmetic all count, and small enough that the average
// is within float tolerance of both surfaces.
constexpr float kFeatureTol = 2e-6f;

// Some unit vector, when every direction is as good as any other.
constexpr Vec3 kAnyDirection{0.0f, 1.0f, 0.0f};

// The result for B against A from the result for A against B: the same depth, the normal
// reversed, and the point moved from the first shape's surface to the second's
// (point - depth * normal), which keeps the contract for the swapped pair.
void Flip(Penetration* p) {
  p->point = p->point - p->depth * p->normal;
  p->normal = -p->normal;
}

// ---------------------------------------------------------------------------------------------
// Spheres and capsules: the core segments' closest points.

// `v` with its component along `axis` removed (axis non-zero), for a `v` that is across `axis`
// in exact arithmetic. When less than 1e-3 of |v| remains, `v` was rounding noise along the
// axis (its exact length is ~0, so it has no direction) and zero is returned.
Vec3 Across(const Vec3& v, const Vec3& axis) {
  const Vec3 r = v - (Dot(v, axis) / LengthSquared(axis)) * axis;
  return LengthSquared(r) > 1e-6f * LengthSquared(v) ? r : Vec3{};
}

// Round shapes A and B overlap when dist(segments) <= ra + rb, and the minimum translation is
// then (ra + rb) - dist along the direction from A's closest segment point to B's: the set of
// translations of B that keep them overlapping is the parallelogram {sa - sb} grown by
// ra + rb, and a point at distance dist from a convex set leaves that set grown by R after
// exactly R - dist along the direction away from the set.
bool PenetrateRound(const RoundPair& p, const Vec3& origin, Penetration* out) {
  if (!geom_internal::RoundOverlap(p)) return false;
  const geom_internal::SegmentPair& cp = p.closest;
  const Vec3& ua = p.a.u;
  const Vec3& ub = p.b.u;
  const float uua = LengthSquared(ua);
  const float uub = LengthSquared(ub);
  const Vec3 w = Cross(ua, ub);
  // The segments are parallel to within 1e-6 rad (or one is a point): no plane normal.
  const bool has_plane = LengthSquared(w) > 1e-12f * uua * uub;

  // The offset between the closest points is perpendicular to every segment whose closest
  // point is interior. Removing the rounding along those directions keeps the normal exact
  // when the offset is tiny; at an interior-interior pair it is parallel to ua x ub.
  const Vec3 d = cp.p2 - cp.p1;
  const bool a_inside = uua > 0.0f && cp.s > -1.0f && cp.s < 1.0f;
  const bool b_inside = uub > 0.0f && cp.t > -1.0f && cp.t < 1.0f;
  Vec3 v = d;
  if (a_inside && b_inside && has_plane) {
    v = Dot(d, w) >= 0.0f ? w : -w;
    if (Dot(d, w) == 0.0f) v = Vec3{};  // touching segments: decided below
  } else if (a_inside) {
    v = Across(d, ua);
  } else if (b_inside) {
    v = Across(d, ub);
  }

  Vec3 n;
  const float vv = LengthSquared(v);
  if (vv > 0.0f) {
    n = v * (1.0f / std::sqrt(vv));
  } else {
    // The segments meet: every direction in the normal cone of the parallelogram at the origin
    // works, and the normal of the plane of both segments always lies in it (across one segment
    // when they are parallel). Prefer the side B's centre is on.
    if (has_plane) {
      n = Normalize(w);
    } else if (uua > 0.0f) {
      n = AnyPerpendicular(ua * (1.0f / std::sqrt(uua)));
    } else if (uub > 0.0f) {
      n = AnyPerpendicular(ub * (1.0f / std::sqrt(uub)));
    } else {
      n = kAnyDirection;
    }
    if (Dot(n, p.b.c - p.a.c) < 0.0f) n = -n;
  }
  const float dist = std::sqrt(cp.distance_squared);
  out->depth = std::fmax(p.a.radius + p.b.radius - dist, 0.0f);
  out->normal = n;
  out->point = origin + (cp.p1 + n * p.a.radius);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Box contacts.

// A box in the frame of the computation: centre, unit axes and half extents.
struct BoxFrame {
  Vec3 c{};
  Vec3 axes[3];
  Vec3 e{};
};

// `x` (in the box's local frame, inside or near the box) moved onto the box's surface: clamped
// into the box, then, if inside, out through its nearest face. Contact points computed from
// touching features are off the surface only by rounding; this puts them back on it.
Vec3 OntoSurface(const Vec3& x, const Vec3& e) {
  Vec3 y = Clamp(x, -e, e);
  int axis = 0;
  float gap = e.x - std::fabs(y.x);
  for (int i = 1; i < 3; ++i) {
    const float g = e[i] - std::fabs(y[i]);
    if (g < gap) {
      gap = g;
      axis = i;
    }
  }
  if (gap > 0.0f) y[axis] = y[axis] >= 0.0f ? e[axis] : -e[axis];
  return y;
}

// Sutherland-Hodgman: the part of the polygon (or segment, or point) `in` where
// side * (x - origin) . axis <= extent. Returns the new count (at most n + 1).
int ClipHalfSpace(const Vec3* in, int n, Vec3* out, const Vec3& origin, const Vec3& axis,
                  float extent, float side) {
  int m = 0;
  for (int i = 0; i < n; ++i) {
    const Vec3& cur = in[i];
    const Vec3& next = in[(i + 1) % n];
    const float gc = side * Dot(cur - origin, axis) - extent;
    const float gn = side * Dot(next - origin, axis) - extent;
    if (gc <= 0.0f) out[m++] = cur;
    if ((gc <= 0.0f) != (gn <= 0.0f)) {
      // solve: g(cur + s (next - cur)) = 0 for the linear g
      out[m++] = cur + (next - cur) * (gc / (gc - gn));
    }
  }
  return m;
}

// Face contact of two touching boxes: `ref` touches with its face m on side `side` (outward
// normal side * axes[m], towards `inc`). The face of `inc` most opposed to that normal is
// clipped to the slabs of the reference face, and the clipped points deepest along the normal
// (within `tol`) are averaged. Returns that point on the incident face, and in `*inc_face` /
// `*inc_side` which face it is.
Vec3 FaceContact(const BoxFrame& ref, int m, float side, const BoxFrame& inc, float tol,
                 int* inc_face, float* inc_side) {
  const Vec3 n = side * ref.axes[m];
  int k = 0;
  float best = -1.0f;
  for (int i = 0; i < 3; ++i) {
    const float d = std::fabs(Dot(n, inc.axes[i]));
    if (d > best) {
      best = d;
      k = i;
    }
  }
  const float s = Dot(n, inc.axes[k]) > 0.0f ? -1.0f : 1.0f;
  *inc_face = k;
  *inc_side = s;
  const int k1 = (k + 1) % 3;
  const int k2 = (k + 2) % 3;
  const Vec3 fc = inc.c + (s * inc.e[k]) * inc.axes[k];
  const Vec3 h1 = inc.e[k1] * inc.axes[k1];
  const Vec3 h2 = inc.e[k2] * inc.axes[k2];
  Vec3 a[8] = {fc - h1 - h2, fc + h1 - h2, fc + h1 + h2, fc - h1 + h2};
  Vec3 b[8];
  int count = 4;
  for (int i = 1; i <= 2 && count > 0; ++i) {
    const int r = (m + i) % 3;
    // The slab is widened by `tol` so that rounding cannot empty a slab of zero width (a flat
    // box) after the first of its two planes has cut the polygon exactly onto the second.
    count = ClipHalfSpace(a, count, b, ref.c, ref.axes[r], ref.e[r] + tol, 1.0f);
    count = ClipHalfSpace(b, count, a, ref.c, ref.axes[r], ref.e[r] + tol, -1.0f);
  }
  if (count == 0) {
    // Only rounding can empty it (the boxes touch): the incident face's centre will do.
    return fc;
  }
  // Deepest = least height (x - c) . n above the reference box's centre.
  float lowest = Dot(a[0] - ref.c, n);
  for (int i = 1; i < count; ++i) lowest = std::fmin(lowest, Dot(a[i] - ref.c, n));
  Vec3 sum{};
  int used = 0;
  for (int i = 0; i < count; ++i) {
    if (Dot(a[i] - ref.c, n) <= lowest + tol) {
      sum += a[i];
      ++used;
    }
  }
  return sum * (1.0f / static_cast<float>(used));
}

// Distance from `x` to the surface of the box `b` (inside or outside).
float SurfaceDistance(const BoxFrame& b, const Vec3& x) {
  const Vec3 d = x - b.c;
  Vec3 q{};
  float inside = -b.e.x;  // the largest |q_k| - e_k: minus the depth when inside
  float outside2 = 0.0f;
  for (int k = 0; k < 3; ++k) {
    q[k] = std::fabs(Dot(d, b.axes[k])) - b.e[k];
    inside = k == 0 ? q[k] : std::fmax(inside, q[k]);
    if (q[k] > 0.0f) outside2 += q[k] * q[k];
  }
  return outside2 > 0.0f ? std::sqrt(outside2) : -inside;
}

// The index of the unit axis most parallel (or anti-parallel) to `n`.
int MostAligned(const Vec3& n, const Vec3 axes[3]) {
  int k = 0;
  for (int i = 1; i < 3; ++i) {
    if (std::fabs(Dot(n, axes[i])) > std::fabs(Dot(n, axes[k]))) k = i;
  }
  return k;
}

// The contact point of two overlapping boxes on A's surface, in A's frame, for the minimum
// axis `axis`. B is moved by depth * normal so that the two just touch; the contact lies where
// A's support feature along the normal meets B's along its reverse.
//
// Candidates: the face contacts with A's and with B's face most aligned with the normal (the
// other box's most opposed face is clipped to the reference face's rectangle and the deepest
// clipped points averaged: a vertex, the middle of an edge segment or of a face overlap), and
// for a cross axis the closest points of the two support edges. Each candidate lies on A's
// surface by construction; the one whose distance to the moved B's surface is least is kept,
// the natural one for the axis kind first. The check matters when axes nearly tie: a cross
// axis of near-parallel edges can win over a face axis by a rounding error while the support
// edges it names, chosen by the signs of tiny components, do not meet.
Vec3 BoxBoxContact(const BoxPair& p, const SatAxis& axis) {
  const Vec3& n = axis.normal;
  const float tol = kFeatureTol * (MaxComponent(p.ea) + MaxComponent(p.eb));
  const BoxFrame a{Vec3{}, {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, p.ea};
  const BoxFrame b{p.t + axis.depth * n, {p.ub[0], p.ub[1], p.ub[2]}, p.eb};

  auto a_face_contact = [&] {
    // A's face is the reference: the point, projected onto it along its normal.
    const int m = axis.index < 3 ? axis.index : MostAligned(n, a.axes);
    const float sa = n[m] >= 0.0f ? 1.0f : -1.0f;
    int face;
    float side;
    Vec3 x = FaceContact(a, m, sa, b, tol, &face, &side);
    x = Clamp(x, -p.ea, p.ea);
    x[m] = sa * p.ea[m];
    return x;
  };
  auto b_face_contact = [&] {
    // B's face is the reference, A's face the incident one: the point lies on A's face.
    const int m = axis.index >= 3 && axis.index < 6 ? axis.index - 3 : MostAligned(n, b.axes);
    const float sb = Dot(n, b.axes[m]) > 0.0f ? -1.0f : 1.0f;
    int face;
    float side;
    Vec3 x = FaceContact(b, m, sb, a, tol, &face, &side);
    x = Clamp(x, -p.ea, p.ea);
    x[face] = side * p.ea[face];
    return x;
  };
  auto edge_contact = [&] {
    // Edge A_i against edge B_j, each on the side its box's support points to.
    const int i = (axis.index - 6) / 3;
    const int j = (axis.index - 6) % 3;
    Vec3 ca{};
    for (int k = 0; k < 3; ++k) {
      if (k != i) ca[k] = n[k] >= 0.0f ? p.ea[k] : -p.ea[k];
    }
    Vec3 cb = b.c;
    for (int k = 0; k < 3; ++k) {
      if (k != j) cb += (Dot(n, b.axes[k]) > 0.0f ? -p.eb[k] : p.eb[k]) * b.axes[k];
    }
    Vec3 ha{};
    ha[i] = p.ea[i];
    return OntoSurface(geom_internal::ClosestSegmentSegment(ca, ha, cb, p.eb[j] * b.axes[j]).p1,
                       p.ea);
  };

  Vec3 best{};
  float best_error = 0.0f;
  bool have = false;
  auto consider = [&](const Vec3& x) {
    const float error = std::fabs(SurfaceDistance(b, x));
    if (!have || error < best_error) {
      have = true;
      best = x;
      best_error = error;
    }
    return error <= tol;  // good enough: stop
  };
  if (axis.index < 3) {
    if (!consider(a_face_contact())) consider(b_face_contact());
  } else if (axis.index < 6) {
    if (!consider(b_face_contact())) consider(a_face_contact());
  } else if (!consider(edge_contact()) && !consider(a_face_contact())) {
    consider(b_face_contact());
  }
  return best;
}

// The unit direction from the box's nearest point to the segment's (c + t u, box frame), for a
// segment outside the box. The offset is exactly zero on the axes where the box point is
// strictly inside its slab; when the segment point is interior it is also perpendicular to u.
// At an edge (one such axis k) with an interior segment point it is therefore along u x e_k:
// taking that direction, exact from the inputs, rather than the offset itself avoids a tilt of
// ulp / distance from the rounding of the two points (which the projection of a long shape on
// the normal would magnify). At a vertex the offset is made perpendicular to u.
Vec3 BoxSegmentDirection(const geom_internal::SegmentBoxResult& closest, const Vec3& u,
                         const Vec3& e) {
  Vec3 d = closest.segment_point - closest.box_point;
  const float uu = LengthSquared(u);
  if (uu > 0.0f && closest.t > -1.0f && closest.t < 1.0f) {
    int free_axis = -1;
    int free_count = 0;
    for (int i = 0; i < 3; ++i) {
      // Strictly inside the slab by more than rounding: at a break point (the edge's end, where
      // the nearest box feature changes) the point counts as a vertex.
      const float noise = 4.0f * std::numeric_limits<float>::epsilon() *
                          (std::fabs(closest.segment_point[i]) + std::fabs(u[i]) + e[i]);
      if (std::fabs(closest.box_point[i]) < e[i] - noise) {
        free_axis = i;
        ++free_count;
      }
    }
    if (free_count == 1) {
      Vec3 axis{};
      axis[free_axis] = 1.0f;
      const Vec3 w = Cross(u, axis);
      // Unless the segment is parallel to the edge (then d is already across both).
      if (LengthSquared(w) > 1e-12f * uu) d = Dot(d, w) >= 0.0f ? w : -w;
    } else if (free_count == 0) {
      const Vec3 across = Across(d, u);
      if (LengthSquared(across) > 0.0f) d = across;
    }
  }
  const float len2 = LengthSquared(d);
  return len2 > 0.0f ? d * (1.0f / std::sqrt(len2)) : Vec3{0.0f, 1.0f, 0.0f};
}

}  // namespace

bool Penetrate(const Sphere& a, const Pose& pa, const Sphere& b, const Pose& pb, Penetration* out) {
  assert(geom_internal::IsValid(a) && geom_internal::IsValid(b) && "sizes must be >= 0");
  assert(out != nullptr);
  return PenetrateRound(geom_internal::MakeRoundPair(a, pa, b, pb), pa.position, out);
}

bool Penetrate(const Sphere& a, const Pose& pa, const Box& b, const Pose& pb, Penetration* out) {
  assert(geom_internal::IsValid(a) && geom_internal::IsValid(b) && "sizes must be >= 0");
  assert(out != nullptr);
  if (!Penetrate(b, pb, a, pa, out)) return false;
  Flip(out);
  return true;
}

bool Penetrate(const Sphere& a, const Pose& pa, const Capsule& b, const Pose& pb,
               Penetration* out) {
  assert(geom_internal::IsValid(a) && geom_internal::IsValid(b) && "sizes must be >= 0");
  assert(out != nullptr);
  return PenetrateRound(geom_internal::MakeRoundPair(a, pa, b, pb), pa.position, out);
}

bool Penetrate(const Box& a, const Pose& pa, const Sphere& b, const Pose& pb, Penetration* out) {
  assert(geom_internal::IsValid(a) && geom_internal::IsValid(b) && "sizes must be >= 0");
  assert(out != nullptr);
  const Vec3& e = a.half_extents;
  const float r = b.radius;
  // The sphere's centre in the box's frame (then clamped, Ericson 5.1).
  const Vec3 q = InverseTransformPoint(pa, pb.position);
  const Vec3 clamped = Clamp(q, -e, e);
  const float d2 = DistanceSquared(q, clamped);
  if (d2 > r * r) return false;
  Vec3 n{};
  Vec3 point;
  float depth;
  if (d2 > 0.0f) {
    // Centre outside: depth = r - |q - clamp(q)| along the direction from the box's nearest
    // point to the centre.
    const float dist = std::sqrt(d2);
    n = (q - clamped) * (1.0f / dist);
    depth = std::fmax(r - dist, 0.0f);
    point = clamped;
  } else {
    // Centre inside (or on the surface): out through the nearest face, depth = gap + r with
    // gap = e_i - |q_i| the least over the axes. Ties go to the lowest axis, q_i = 0 to +.
    int axis = 0;
    float gap = e.x - std::fabs(q.x);
    for (int i = 1; i < 3; ++i) {
      const float g = e[i] - std::fabs(q[i]);
      if (g < gap) {
        gap = g;
        axis = i;
      }
    }
    const float sign = q[axis] >= 0.0f ? 1.0f : -1.0f;
    n[axis] = sign;
    // gap < 0 only when the centre is outside by so little that d2 underflowed to 0.
    depth = std::fmax(gap, 0.0f) + r;
    point = q;
    point[axis] = sign * e[axis];
  }
  out->depth = depth;
  out->normal = TransformVector(pa, n);
  out->point = TransformPoint(pa, point);
  return true;
}

bool Penetrate(const Box& a, const Pose& pa, const Box& b, const Pose& pb, Penetration* out) {
  assert(geom_internal::IsValid(a) && geom_internal::IsValid(b) && "sizes must be >= 0");
  assert(out != nullptr);
  const BoxPair p = geom_internal::MakeBoxPair(a.half_extents, pa, b.half_extents, pb);
  SatAxis axis;
  if (!geom_internal::BoxBoxMinimumAxis(p, &axis)) return false;
  const Vec3 point = BoxBoxContact(p, axis);
  out->depth = std::fmax(axis.depth, 0.0f);
  out->normal = TransformVector(pa, axis.normal);
  out->point = TransformPoint(pa, point);
  return true;
}

bool Penetrate(const Box& a, const Pose& pa, const Capsule& b, const Pose& pb, Penetration* out) {
  assert(geom_internal::IsValid(a) && geom_internal::IsValid(b) && "sizes must be >= 0");
  assert(out != nullptr);
  const Vec3& e = a.half_extents;
  const float r = b.radius;
  // The capsule's segment c + t u in the box's frame.
  const Vec3 c = InverseTransformPoint(pa, pb.position);
  const Vec3 u = Rotate(Conjugate(pa.rotation) * pb.rotation, Vec3{0.0f, b.half_height, 0.0f});
  const auto closest = geom_internal::SegmentBoxClosest(c, u, e);
  if (!closest.intersects && closest.distance_squared > r * r) return false;
  Vec3 n;
  Vec3 point;
  float depth;
  if (!closest.intersects) {
    // The segment is outside the box: depth = r - dist(segment, box) along the direction from
    // the box's nearest point to the segment's.
    const float dist = std::sqrt(closest.distance_squared);
    n = BoxSegmentDirection(closest, u, e);
    depth = std::fmax(r - dist, 0.0f);
    point = closest.box_point;
  } else {
    // The segment meets the box: the exact depth is that of the segment in the box (the least
    // over the 6 axes of the Minkowski difference) plus r.
    const SatAxis axis = geom_internal::BoxSegmentMinimumAxis(e, c, u);
    n = axis.normal;
    depth = axis.depth + r;
    // Moved by axis.depth the segment touches the box: the box point nearest to it, which only
    // rounding keeps off the surface.
    const auto touch = geom_internal::SegmentBoxClosest(c + axis.depth * n, u, e);
    point = OntoSurface(touch.box_point, e);
  }
  out->depth = depth;
  out->normal = TransformVector(pa, n);
  out->point = TransformPoint(pa, point);
  return true;
}

bool Penetrate(const Capsule& a, const Pose& pa, const Sphere& b, const Pose& pb,
               Penetration* out) {
  assert(geom_internal::IsValid(a) && geom_internal::IsValid(b) && "sizes must be >= 0");
  assert(out != nullptr);
  return PenetrateRound(geom_internal::MakeRoundPair(a, pa, b, pb), pa.position, out);
}

bool Penetrate(const Capsule& a, const Pose& pa, const Box& b, const Pose& pb, Penetration* out) {
  assert(geom_internal::IsValid(a) && geom_internal::IsValid(b) && "sizes must be >= 0");
  assert(out != nullptr);
  if (!Penetrate(b, pb, a, pa, out)) return false;
  Flip(out);
  return true;
}

bool Penetrate(const Capsule& a, const Pose& pa, const Capsule& b, const Pose& pb,
               Penetration* out) {
  assert(geom_internal::IsValid(a) && geom_internal::IsValid(b) && "sizes must be >= 0");
  assert(out != nullptr);
  return PenetrateRound(geom_internal::MakeRoundPair(a, pa, b, pb), pa.position, out);
}

namespace {

using PenetrateFn = bool (*)(const Shape&, const Pose&, const Shape&, const Pose&, Penetration*);

template <typename A, typename B>
bool PenetratePair(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb,
                   Penetration* out) {
  return Penetrate(geom_internal::ShapeAs<A>(a), pa, geom_internal::ShapeAs<B>(b), pb, out);
}

// Indexed by [ShapeType of a][ShapeType of b], in the enum's order: sphere, box, capsule.
constexpr PenetrateFn kPenetrateTable[kShapeTypeCount][kShapeTypeCount] = {
    {PenetratePair<Sphere, Sphere>, PenetratePair<Sphere, Box>, PenetratePair<Sphere, Capsule>},
    {PenetratePair<Box, Sphere>, PenetratePair<Box, Box>, PenetratePair<Box, Capsule>},
    {PenetratePair<Capsule, Sphere>, PenetratePair<Capsule, Box>, PenetratePair<Capsule, Capsule>},
};

}  // namespace

bool Penetrate(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, Penetration* out) {
  const int i = static_cast<int>(a.type);
  const int j = static_cast<int>(b.type);
  assert(i >= 0 && i < kShapeTypeCount && j >= 0 && j < kShapeTypeCount && "bad shape type");
  return kPenetrateTable[i][j](a, pa, b, pb, out);
}

}  // namespace collide
