#include "geom/triangle_oracle.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

namespace collide::oracle {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The barycentric coordinates (u, v, w) of `p` (in the plane) for a + v (b - a) + w (c - a),
// from the Gram system; false when the triangle has no area.
bool Barycentric(const DVec3& p, const DTriangle& t, double* u, double* v, double* w) {
  const DVec3 e0 = t.b - t.a;
  const DVec3 e1 = t.c - t.a;
  const DVec3 e2 = p - t.a;
  const double d00 = Dot(e0, e0), d01 = Dot(e0, e1), d11 = Dot(e1, e1);
  const double d20 = Dot(e2, e0), d21 = Dot(e2, e1);
  const double denom = d00 * d11 - d01 * d01;
  if (!(denom > 0.0)) return false;
  *v = (d11 * d20 - d01 * d21) / denom;
  *w = (d00 * d21 - d01 * d20) / denom;
  *u = 1.0 - *v - *w;
  return true;
}

// The distance from p to the segment [a, b] and the nearest point.
double PointSegment(const DVec3& p, const DVec3& a, const DVec3& b, DVec3* nearest) {
  const DVec3 ab = b - a;
  const double len2 = Dot(ab, ab);
  const double s = len2 > 0.0 ? std::clamp(Dot(p - a, ab) / len2, 0.0, 1.0) : 0.0;
  *nearest = a + ab * s;
  return Length(p - *nearest);
}

// Golden-section minimisation of a convex f over [lo, hi]; returns the argument.
template <typename F>
double GoldenMin(F&& f, double lo, double hi, int iterations = 200) {
  const double g = (std::sqrt(5.0) - 1.0) / 2.0;
  double a = lo, b = hi;
  double x1 = b - g * (b - a), x2 = a + g * (b - a);
  double f1 = f(x1), f2 = f(x2);
  for (int i = 0; i < iterations && b - a > 0.0; ++i) {
    if (f1 <= f2) {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - g * (b - a);
      f1 = f(x1);
    } else {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + g * (b - a);
      f2 = f(x2);
    }
  }
  // The ends too (a convex function's minimum may sit on one).
  double best = 0.5 * (a + b);
  double fbest = f(best);
  for (double x : {lo, hi}) {
    const double fx = f(x);
    if (fx < fbest) {
      fbest = fx;
      best = x;
    }
  }
  return best;
}

}  // namespace

DTriangle ToDouble(const Triangle& t) {
  return {oracle::ToDouble(t.a), oracle::ToDouble(t.b), oracle::ToDouble(t.c)};
}

RayTriangleOracle RayTriangleByPlane(const DVec3& origin, const DVec3& direction,
                                     double max_distance, const DTriangle& t) {
  RayTriangleOracle out;
  const DVec3 n = Cross(t.b - t.a, t.c - t.a);
  const double nn = Length(n);
  const DVec3 d = Normalized(direction);
  const double dn = Dot(d, n);
  if (nn == 0.0 || dn == 0.0) {
    out.t = kInf;
    out.margin = -kInf;
    return out;
  }
  out.cosine = std::fabs(dn) / nn;
  // The plane: (x - a).n = 0; the ray: origin + t direction.
  out.t = Dot(t.a - origin, n) / Dot(direction, n);
  const DVec3 p = origin + direction * out.t;
  double u, v, w;
  if (!Barycentric(p, t, &u, &v, &w)) {
    out.margin = -kInf;
    return out;
  }
  const double longest =
      std::fmax(Length(t.b - t.a), std::fmax(Length(t.c - t.b), Length(t.a - t.c)));
  out.margin = std::fmin(u, std::fmin(v, w)) * (nn / longest);
  out.hits = u >= 0.0 && v >= 0.0 && w >= 0.0 && out.t >= 0.0 && out.t <= max_distance;
  return out;
}

double PointTriangleDistance(const DVec3& p, const DTriangle& t, DVec3* nearest) {
  DVec3 best_point{};
  double best = kInf;
  const DVec3 n = Normalized(Cross(t.b - t.a, t.c - t.a));
  if (Length(n) > 0.0) {
    const DVec3 q = p - n * Dot(p - t.a, n);
    double u, v, w;
    if (Barycentric(q, t, &u, &v, &w) && u >= 0.0 && v >= 0.0 && w >= 0.0) {
      best = Length(p - q);
      best_point = q;
    }
  }
  const DVec3* corners[4] = {&t.a, &t.b, &t.c, &t.a};
  for (int e = 0; e < 3; ++e) {
    DVec3 q;
    const double d = PointSegment(p, *corners[e], *corners[e + 1], &q);
    if (d < best) {
      best = d;
      best_point = q;
    }
  }
  if (nearest != nullptr) *nearest = best_point;
  return best;
}

double SegmentTriangleDistance(const DVec3& p0, const DVec3& p1, const DTriangle& t) {
  auto f = [&](double s) { return PointTriangleDistance(p0 + (p1 - p0) * s, t); };
  return f(GoldenMin(f, 0.0, 1.0));
}

TriangleCastOracle SphereCastByDistance(const DVec3& origin, const DVec3& direction,
                                        double max_distance, double radius, const DTriangle& t) {
  TriangleCastOracle out;
  auto phi = [&](double s) { return PointTriangleDistance(origin + direction * s, t) - radius; };
  out.start_gap = phi(0.0);
  if (out.start_gap <= 0.0) {
    out.hits = true;
    out.t_hit = 0.0;
    out.min_gap = out.start_gap;
    return out;
  }
  const double t_min = GoldenMin(phi, 0.0, max_distance);
  out.min_gap = phi(t_min);
  if (out.min_gap > 0.0) return out;
  // phi(0) > 0 >= phi(t_min), decreasing on [0, t_min]: bisection for the first root.
  double lo = 0.0, hi = t_min;
  for (int i = 0; i < 200 && hi - lo > 0.0; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    if (phi(mid) > 0.0) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  out.hits = true;
  out.t_hit = hi;
  return out;
}

bool BoxTriangleOverlapByClipping(const PosedShape& box, const DTriangle& t, double grow) {
  std::vector<DVec3> poly = {ToLocal(box, t.a), ToLocal(box, t.b), ToLocal(box, t.c)};
  std::vector<DVec3> next;
  for (int axis = 0; axis < 3; ++axis) {
    for (double side : {1.0, -1.0}) {
      const double limit = box.half_extents[axis] + grow;
      next.clear();
      const size_t n = poly.size();
      for (size_t i = 0; i < n; ++i) {
        const DVec3& p = poly[i];
        const DVec3& q = poly[(i + 1) % n];
        const double dp = side * p[axis] - limit;
        const double dq = side * q[axis] - limit;
        if (dp <= 0.0) next.push_back(p);
        if ((dp < 0.0 && dq > 0.0) || (dp > 0.0 && dq < 0.0)) {
          next.push_back(p + (q - p) * (dp / (dp - dq)));
        }
      }
      poly.swap(next);
      if (poly.empty()) return false;
    }
  }
  return true;
}

double TriangleSupport(const DTriangle& t, const DVec3& n) {
  return std::fmax(Dot(t.a, n), std::fmax(Dot(t.b, n), Dot(t.c, n)));
}

double TrianglePenetrationByHull(const DTriangle& world_t, const Shape& shape, const Pose& pose) {
  // Relative to the triangle's first vertex (differences of floats are exact in double), so the
  // golden section's resolution is that of the sizes, not of the distance from the origin.
  PosedShape s = MakePosed(shape, pose);
  s.position = s.position - world_t.a;
  const DTriangle t{DVec3{}, world_t.b - world_t.a, world_t.c - world_t.a};
  std::vector<DVec3> core;
  double radius = 0.0;
  bool apart;
  double distance = 0.0;
  if (shape.type == ShapeType::kBox) {
    for (int i = 0; i < 8; ++i) {
      DVec3 p = s.position;
      for (int k = 0; k < 3; ++k) {
        p = p + s.axis[k] * (((i >> k) & 1) ? s.half_extents[k] : -s.half_extents[k]);
      }
      core.push_back(p);
    }
    // Clipping by a box of zero thickness loses its flat polygon to rounding: a box grown by
    // 1e-12 of its size (the depth is continuous there: 0 either way).
    const double size = Length(t.b - t.a) + Length(t.c - t.a) + MaxAbs(s.half_extents);
    apart = !BoxTriangleOverlapByClipping(s, t, 1e-12 * size);
  } else {
    radius = s.radius;
    const DVec3 h = s.axis[1] * (shape.type == ShapeType::kCapsule ? s.half_height : 0.0);
    core = {s.position - h, s.position + h};
    distance = SegmentTriangleDistance(core[0], core[1], t);
    // Golden section reaches a crossing only to ~1e-16 of the sizes: closer than 1e-12 of them
    // counts as meeting (the depth is continuous there, r - 0 either way).
    const double size = Length(t.b - t.a) + Length(t.c - t.a) + Length(core[1] - core[0]);
    apart = distance > 1e-12 * size;
  }
  if (apart) return radius - distance;
  // P = A - C: every vertex of A minus every vertex of C.
  std::vector<DVec3> pts;
  for (const DVec3& a : {t.a, t.b, t.c}) {
    for (const DVec3& c : core) pts.push_back(a - c);
  }
  double size = 0.0;
  for (const DVec3& p : pts) size = std::fmax(size, MaxAbs(p));
  const double eps = 1e-11 * std::fmax(size, 1e-300);
  double best = kInf;
  const size_t n = pts.size();
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      for (size_t k = j + 1; k < n; ++k) {
        const DVec3 nn = Cross(pts[j] - pts[i], pts[k] - pts[i]);
        const double len = Length(nn);
        if (!(len > 1e-9 * size * size)) continue;
        const DVec3 u = nn * (1.0 / len);
        const double offset = Dot(u, pts[i]);
        double lo = 0.0, hi = 0.0;
        for (const DVec3& p : pts) {
          const double d = Dot(u, p) - offset;
          lo = std::fmin(lo, d);
          hi = std::fmax(hi, d);
        }
        // A supporting plane: every point on one side; its outward normal is away from them,
        // and the origin's depth below it is the plane's offset along that normal.
        if (hi <= eps) best = std::fmin(best, offset);
        if (lo >= -eps) best = std::fmin(best, -offset);
      }
    }
  }
  // A flat or collinear P (no facet found, or only its own plane): the origin lies in it.
  if (best == kInf) best = 0.0;
  return radius + std::fmax(best, 0.0);
}

Triangle RandomTriangle(std::mt19937& rng, double scale, const char** kind) {
  auto point = [&] {
    return Vec3{static_cast<float>(Uniform(rng, -scale, scale)),
                static_cast<float>(Uniform(rng, -scale, scale)),
                static_cast<float>(Uniform(rng, -scale, scale))};
  };
  const int pick = Index(rng, 20);
  Triangle t{point(), point(), point()};
  if (pick < 12) {
    *kind = "ordinary";
  } else if (pick < 14) {
    *kind = "sliver";
    const double k = Uniform(rng, 0.0, 1.0);
    const double off = LogUniform(rng, 1e-6, 1e-3) * scale;
    t.c = t.a + (t.b - t.a) * static_cast<float>(k) + RandomUnit(rng) * static_cast<float>(off);
  } else if (pick < 16) {
    *kind = "right-angled axis-aligned";
    const float s = static_cast<float>(Uniform(rng, 0.1, 1.0) * scale);
    t.b = t.a + Vec3{s, 0, 0};
    t.c = t.a + Vec3{0, 0, s};
  } else if (pick < 17) {
    *kind = "repeated vertex";
    t.b = t.a;
  } else if (pick < 19) {
    *kind = "collinear";
    // Exactly collinear: on a line along one axis.
    t.b = t.a;
    t.c = t.a;
    const int axis = Index(rng, 3);
    t.b[axis] += static_cast<float>(Uniform(rng, 0.1, 1.0) * scale);
    t.c[axis] -= static_cast<float>(Uniform(rng, 0.1, 1.0) * scale);
  } else {
    *kind = "point";
    t.b = t.a;
    t.c = t.a;
  }
  return t;
}

double RoundGap(const Shape& shape, const Pose& pose, const DTriangle& t) {
  const PosedShape s = MakePosed(shape, pose);
  if (shape.type == ShapeType::kCapsule) {
    const DVec3 h = s.axis[1] * s.half_height;
    return SegmentTriangleDistance(s.position - h, s.position + h, t) - s.radius;
  }
  return PointTriangleDistance(s.position, t) - s.radius;
}

}  // namespace collide::oracle
