#include "geom/oracle.h"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <numbers>

namespace collide::oracle {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

DVec3 AbsD(const DVec3& a) { return {std::fabs(a.x), std::fabs(a.y), std::fabs(a.z)}; }
double SignOf(double v) { return v < 0.0 ? -1.0 : 1.0; }

// A unit vector perpendicular to the unit vector n.
DVec3 Perpendicular(const DVec3& n) {
  DVec3 a = AbsD(n);
  DVec3 axis =
      (a.x <= a.y && a.x <= a.z) ? DVec3{1, 0, 0} : (a.y <= a.z ? DVec3{0, 1, 0} : DVec3{0, 0, 1});
  return Normalized(Cross(n, axis));
}

// ---------------------------------------------------------------------------------------------
// The definitions in the local frame.

double LocalSdf(const PosedShape& s, const DVec3& q) {
  switch (s.type) {
    case ShapeType::kBox: {
      DVec3 d = AbsD(q) - s.half_extents;
      DVec3 outside{std::fmax(d.x, 0.0), std::fmax(d.y, 0.0), std::fmax(d.z, 0.0)};
      double inside = std::fmin(std::fmax(d.x, std::fmax(d.y, d.z)), 0.0);
      return Length(outside) + inside;
    }
    case ShapeType::kCapsule: {
      DVec3 v = q;
      v.y -= std::clamp(q.y, -s.half_height, s.half_height);
      return Length(v) - s.radius;
    }
    case ShapeType::kSphere:
    default:
      return Length(q) - s.radius;
  }
}

DVec3 LocalSubgradient(const PosedShape& s, const DVec3& q) {
  switch (s.type) {
    case ShapeType::kBox: {
      DVec3 d = AbsD(q) - s.half_extents;
      if (std::fmax(d.x, std::fmax(d.y, d.z)) > 0.0) {
        // Outside: the gradient of length(max(d, 0)), signs restored.
        DVec3 w{std::fmax(d.x, 0.0) * SignOf(q.x), std::fmax(d.y, 0.0) * SignOf(q.y),
                std::fmax(d.z, 0.0) * SignOf(q.z)};
        return Normalized(w);
      }
      // Inside: the gradient of the active face's plane.
      int i = (d.x >= d.y && d.x >= d.z) ? 0 : (d.y >= d.z ? 1 : 2);
      DVec3 g{};
      g[i] = SignOf(q[i]);
      return g;
    }
    case ShapeType::kCapsule: {
      DVec3 v = q;
      v.y -= std::clamp(q.y, -s.half_height, s.half_height);
      return Normalized(v);
    }
    case ShapeType::kSphere:
    default:
      return Normalized(q);
  }
}

double LocalSupport(const PosedShape& s, const DVec3& n) {
  switch (s.type) {
    case ShapeType::kBox:
      return std::fabs(n.x) * s.half_extents.x + std::fabs(n.y) * s.half_extents.y +
             std::fabs(n.z) * s.half_extents.z;
    case ShapeType::kCapsule:
      return s.half_height * std::fabs(n.y) + s.radius * Length(n);
    case ShapeType::kSphere:
    default:
      return s.radius * Length(n);
  }
}

// Every shape is a core (a point, a segment or a box) grown by a ball: a sphere is its centre
// grown by its radius, a capsule its segment grown by its radius, a box itself grown by 0. Its
// support function is the core's plus radius * |n|.
double CoreRadius(const PosedShape& s) { return s.type == ShapeType::kBox ? 0.0 : s.radius; }

// A point of the core maximising n.x, in the local frame.
DVec3 LocalCoreSupportPoint(const PosedShape& s, const DVec3& n) {
  switch (s.type) {
    case ShapeType::kBox:
      // copysign: branch free, and either sign is a support point where n_i = 0.
      return {std::copysign(s.half_extents.x, n.x), std::copysign(s.half_extents.y, n.y),
              std::copysign(s.half_extents.z, n.z)};
    case ShapeType::kCapsule:
      return {0.0, std::copysign(s.half_height, n.y), 0.0};
    case ShapeType::kSphere:
    default:
      return {};
  }
}

// A point of the shape maximising n.x, in the local frame.
DVec3 LocalSupportPoint(const PosedShape& s, const DVec3& n) {
  switch (s.type) {
    case ShapeType::kBox:
      return LocalCoreSupportPoint(s, n);
    case ShapeType::kCapsule:
      return LocalCoreSupportPoint(s, n) + Normalized(n) * s.radius;
    case ShapeType::kSphere:
    default:
      return Normalized(n) * s.radius;
  }
}

// ---------------------------------------------------------------------------------------------
// Minimisation over the unit sphere.

constexpr int kDirections = 256;
constexpr int kMaxStarts = 3;

// A Fibonacci sphere: kDirections nearly evenly spaced unit vectors.
const std::array<DVec3, kDirections>& FibonacciDirections() {
  static const std::array<DVec3, kDirections> dirs = [] {
    std::array<DVec3, kDirections> d{};
    const double golden_angle = std::numbers::pi * (3.0 - std::sqrt(5.0));
    for (int i = 0; i < kDirections; ++i) {
      double z = 1.0 - (2.0 * i + 1.0) / kDirections;
      double r = std::sqrt(std::fmax(0.0, 1.0 - z * z));
      double phi = golden_angle * i;
      d[i] = {r * std::cos(phi), r * std::sin(phi), z};
    }
    return d;
  }();
  return dirs;
}

constexpr int kNeighbours = 8;

// The kNeighbours nearest directions of each Fibonacci direction.
const std::array<std::array<int, kNeighbours>, kDirections>& FibonacciNeighbours() {
  static const auto table = [] {
    const auto& d = FibonacciDirections();
    std::array<std::array<int, kNeighbours>, kDirections> t{};
    for (int i = 0; i < kDirections; ++i) {
      std::array<std::pair<double, int>, kDirections> by_angle;
      for (int j = 0; j < kDirections; ++j) by_angle[j] = {-Dot(d[i], d[j]), j};
      std::partial_sort(by_angle.begin(), by_angle.begin() + kNeighbours + 1, by_angle.end());
      for (int k = 0; k < kNeighbours; ++k) t[i][k] = by_angle[k + 1].second;
    }
    return t;
  }();
  return table;
}

// The angular spacing of the Fibonacci sphere: sqrt(4 pi / N) radians.
double FibonacciSpacing() { return std::sqrt(4.0 * std::numbers::pi / kDirections); }

// The pattern of a refinement step: 8 directions around the current point, rotated by a
// different phase at every iteration.
struct Pattern {
  static constexpr int kPhases = 7;
  std::array<std::array<double, 2>, 8> offsets[kPhases];
  Pattern() {
    for (int p = 0; p < kPhases; ++p) {
      for (int k = 0; k < 8; ++k) {
        double a = (k + static_cast<double>(p) / kPhases) * std::numbers::pi / 4.0;
        offsets[p][k] = {std::cos(a), std::sin(a)};
      }
    }
  }
};

const Pattern& RefinePattern() {
  static const Pattern pattern;
  return pattern;
}

// True when the origin lies in the convex hull of the tangential parts (at the unit direction n)
// of the points `s[0..count)`: then 0 is in the subdifferential on the sphere at n of the largest
// of the linear pieces n.s_i, and n is a local minimum of it. Tested as: no angular gap of more
// than pi between the tangential parts (up to rounding), or one of them is zero.
bool ZeroInTangentialHull(const DVec3& n, const DVec3* s, int count, double tiny) {
  const DVec3 u = Perpendicular(n);
  const DVec3 v = Cross(n, u);
  std::array<double, 16> angles{};
  for (int i = 0; i < count; ++i) {
    const double x = Dot(s[i], u), y = Dot(s[i], v);
    if (std::hypot(x, y) <= tiny) return true;
    angles[i] = std::atan2(y, x);
  }
  std::sort(angles.begin(), angles.begin() + count);
  double gap = angles[0] + 2.0 * std::numbers::pi - angles[count - 1];
  for (int i = 1; i < count; ++i) gap = std::fmax(gap, angles[i] - angles[i - 1]);
  return gap <= std::numbers::pi + 1e-9;
}

// The minimisation works on the support function of a polytope P (the difference of the cores;
// the balls add the constant sum of radii on the unit sphere): h_P(n) = max over the vertices v
// of n.v, given by its support mapping s(n) (a vertex maximising n.v).
struct Probe {
  DVec3 n;
  DVec3 s;
  double f;
};

template <typename S>
Probe Evaluate(const S& support, const DVec3& n) {
  DVec3 s = support(n);
  return {n, s, Dot(n, s)};
}

// Local search on the sphere from `*best` for the largest of the linear pieces n.v. Each
// iteration polls 8 points at angle `step` around the current direction n (on a circle whose
// phase turns from one iteration to the next) and collects the distinct vertices s_i active
// there, s_0 being n's own. The minima of such a function over the sphere are where the active
// pieces' tangential parts surround the origin, and each active set has one candidate, tried:
//  - one piece n.s_0: its minimum over the sphere, -s_0 / |s_0|;
//  - two pieces, tied on the great circle n.(s_i - s_0) = 0 (a ridge): the minimum of n.s_0 on
//    that circle, -(s_0 minus its component along s_i - s_0), normalised; and the points one
//    step either way along the circle from n's projection onto it, to follow a ridge whose
//    minimum lies beyond other pieces;
//  - three pieces, tied at +-(s_i - s_0) x (s_j - s_0) (a vertex): the one near n.
// The best improving point is taken (and the step widened), else when the pieces tied at n
// satisfy the optimality condition the search stops, else the step shrinks by 0.3. It also
// stops at a step of 1e-10 radians (then the value is within |v| * 1e-10 of a local minimum).
template <typename S>
void Refine(const S& support, double step, double scale, Probe* best) {
  const Pattern& pattern = RefinePattern();
  const double tie = 1e-12 * scale;
  int phase = 0;
  while (step > 1e-10) {
    const DVec3 n = best->n;
    const DVec3 u = Perpendicular(n);
    const DVec3 v = Cross(n, u);
    Probe next = *best;
    DVec3 distinct[9];
    int count = 0;
    distinct[count++] = best->s;
    for (int k = 0; k < 8; ++k) {
      const auto& cs = pattern.offsets[phase][k];
      const Probe p = Evaluate(support, Normalized(n + step * (cs[0] * u + cs[1] * v)));
      if (p.f < next.f) next = p;
      bool seen = false;
      for (int j = 0; j < count && !seen; ++j) seen = Length(p.s - distinct[j]) <= tie;
      if (!seen) distinct[count++] = p.s;
    }
    phase = (phase + 1) % Pattern::kPhases;
    auto consider = [&](const DVec3& m) {
      if (!(Length(m) > 0.0)) return;
      const Probe p = Evaluate(support, m);
      if (p.f < next.f) next = p;
    };
    consider(Normalized(-distinct[0]));
    for (int i = 1; i < count; ++i) {
      const DVec3 w = distinct[i] - distinct[0];
      const double ww = Dot(w, w);
      consider(Normalized(-(distinct[0] - (Dot(distinct[0], w) / ww) * w)));
      const DVec3 t = Normalized(Cross(n, w));
      const DVec3 on = Normalized(n - (Dot(n, w) / ww) * w);
      consider(Normalized(on + step * t));
      consider(Normalized(on - step * t));
      for (int j = i + 1; j < count; ++j) {
        DVec3 m = Normalized(Cross(w, distinct[j] - distinct[0]));
        consider(Dot(m, n) < 0.0 ? -m : m);
      }
    }
    if (next.f < best->f - tie) {
      *best = next;
      step = std::fmin(step * 2.0, 0.5);
      continue;
    }
    if (next.f < best->f) *best = next;  // an improvement within rounding
    // The pieces tied at n and the optimality condition.
    DVec3 active[9];
    int active_count = 0;
    for (int i = 0; i < count; ++i) {
      if (std::fabs(Dot(best->n, distinct[i]) - best->f) <= tie)
        active[active_count++] = distinct[i];
    }
    if (active_count > 0 && ZeroInTangentialHull(best->n, active, active_count, tie)) break;
    step *= 0.3;
  }
}

// min over unit n of h_P(n) + radius: evaluate the Fibonacci sphere, then refine from the
// samples that are local minima among their neighbours and from the best crossings of the kinks
// seen between samples. When a sample is negative, the origin is outside P and the minimum over
// the sphere is unique (the directions where h_P < c < 0 form a convex cone), so one start
// suffices. `scale` bounds |s(n)|.
template <typename S>
DirectionMinimum MinimizeOverSphere(const S& support, double radius, double scale) {
  const auto& dirs = FibonacciDirections();
  const double spacing = FibonacciSpacing();
  // A coarse pass over every 8th direction first: a negative value there settles that the
  // minimum is unique, and the refinement can start from it.
  {
    int best = -1;
    double best_f = kInf;
    for (int i = 0; i < kDirections; i += 8) {
      double f = Dot(dirs[i], support(dirs[i]));
      if (f < best_f) {
        best_f = f;
        best = i;
      }
    }
    if (best_f < 0.0) {
      Probe p = Evaluate(support, dirs[best]);
      Refine(support, 3.0 * spacing, scale, &p);
      return {p.f + radius, p.n};
    }
  }
  std::array<Probe, kDirections> samples;
  int best = 0;
  for (int i = 0; i < kDirections; ++i) {
    samples[i] = Evaluate(support, dirs[i]);
    if (samples[i].f < samples[best].f) best = i;
  }
  const double tie = 1e-12 * scale;
  // Where neighbouring samples have different support points, a kink of h_P (a great circle
  // n.w = 0, w an edge of P) runs between them. The minima of a polytope's support function lie
  // where such circles cross, so the crossings of the most often seen circles are candidate
  // starts too: they reach minima whose neighbourhood no sample ranks well, like a vertex on
  // a ridge that is steep across and nearly flat along.
  constexpr int kMaxKinks = 64;
  std::array<DVec3, kMaxKinks> kinks;
  std::array<int, kMaxKinks> kink_seen{};
  int kink_count = 0;
  const auto& neighbours = FibonacciNeighbours();
  for (int i = 0; i < kDirections; ++i) {
    for (int k = 0; k < 4; ++k) {
      const int j = neighbours[i][k];
      if (j < i) continue;
      DVec3 w = samples[i].s - samples[j].s;
      if (Length(w) <= tie) continue;
      w = Normalized(w);
      // One sign per circle: the first clearly non-zero component positive.
      const int lead = std::fabs(w.x) > 1e-3 ? 0 : (std::fabs(w.y) > 1e-3 ? 1 : 2);
      if (w[lead] < 0.0) w = -w;
      int at = 0;
      while (at < kink_count && Dot(w, kinks[at]) < 1.0 - 1e-12) ++at;
      if (at < kink_count) {
        ++kink_seen[at];
      } else if (kink_count < kMaxKinks) {
        kinks[kink_count] = w;
        kink_seen[kink_count++] = 1;
      }
    }
  }
  // The most often seen circles first (a pair of samples across two kinks gives a spurious w,
  // seen rarely).
  std::array<int, kMaxKinks> order{};
  for (int i = 0; i < kink_count; ++i) order[i] = i;
  std::sort(order.begin(), order.begin() + kink_count,
            [&](int x, int y) { return kink_seen[x] > kink_seen[y]; });
  const int circles = std::min(kink_count, 8);
  // The starts, best value first: samples that are local minima among their neighbours (one per
  // basin of f, roughly), and the best crossings.
  constexpr int kMaxCandidates = kMaxStarts + 4;
  std::array<Probe, kMaxCandidates> starts;
  int start_count = 0;
  auto add_start = [&](const Probe& p, int limit) {
    // Insert in order of value among the first `limit` slots, dropping the worst.
    int at = start_count < limit ? start_count++ : limit;
    while (at > 0 && starts[at - 1].f > p.f) {
      if (at < limit) starts[at] = starts[at - 1];
      --at;
    }
    if (at < limit) starts[at] = p;
  };
  for (int i = 0; i < kDirections; ++i) {
    bool local_min = true;
    for (int k = 0; k < kNeighbours && local_min; ++k) {
      local_min = samples[i].f <= samples[neighbours[i][k]].f;
    }
    if (local_min) add_start(samples[i], kMaxStarts);
  }
  if (start_count == 0) add_start(samples[best], kMaxStarts);
  std::array<Probe, 4> crossings;
  int crossing_count = 0;
  for (int i = 0; i < circles; ++i) {
    for (int j = i + 1; j < circles; ++j) {
      const DVec3 m = Normalized(Cross(kinks[order[i]], kinks[order[j]]));
      if (!(Length(m) > 0.0)) continue;
      for (const DVec3& c : {m, -m}) {
        const Probe p = Evaluate(support, c);
        // Keep the 4 best.
        int at = crossing_count < 4 ? crossing_count++ : 4;
        while (at > 0 && crossings[at - 1].f > p.f) {
          if (at < 4) crossings[at] = crossings[at - 1];
          --at;
        }
        if (at < 4) crossings[at] = p;
      }
    }
  }
  for (int i = 0; i < crossing_count; ++i) add_start(crossings[i], kMaxCandidates);
  DirectionMinimum result{kInf, {}};
  for (int c = 0; c < start_count; ++c) {
    Probe p = starts[c];
    // Near the start, h(n) >= n.s(c) >= f(c) - |n - c| |s(c)| (s(c) lies in P). Every direction
    // lies within one spacing of a sample, so a sample whose bound is above the best value
    // found cannot lead below it.
    if (p.f - spacing * Length(p.s) > result.value) continue;
    Refine(support, spacing, scale, &p);
    if (p.f < result.value) result = {p.f, p.n};
  }
  result.value += radius;
  return result;
}

// The rows of R_b^T R_a: maps a direction in a's local frame to b's local frame.
struct Relative {
  DVec3 row[3];
  DVec3 Apply(const DVec3& v) const { return {Dot(row[0], v), Dot(row[1], v), Dot(row[2], v)}; }
  DVec3 ApplyTransposed(const DVec3& v) const { return row[0] * v.x + row[1] * v.y + row[2] * v.z; }
};

Relative RelativeRotation(const PosedShape& a, const PosedShape& b) {
  Relative r;
  for (int i = 0; i < 3; ++i) {
    // (R_b^T R_a)_{ij} = b.axis[i] . a.axis[j].
    r.row[i] = {Dot(b.axis[i], a.axis[0]), Dot(b.axis[i], a.axis[1]), Dot(b.axis[i], a.axis[2])};
  }
  return r;
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Posed shapes.

PosedShape MakePosed(const Shape& shape, const Pose& pose) {
  PosedShape s;
  s.type = shape.type;
  switch (shape.type) {
    case ShapeType::kBox:
      s.half_extents = ToDouble(shape.box.half_extents);
      break;
    case ShapeType::kCapsule:
      s.radius = shape.capsule.radius;
      s.half_height = shape.capsule.half_height;
      break;
    case ShapeType::kSphere:
    default:
      s.radius = shape.sphere.radius;
      break;
  }
  s.position = ToDouble(pose.position);
  double x = pose.rotation.x, y = pose.rotation.y, z = pose.rotation.z, w = pose.rotation.w;
  double len = std::sqrt(x * x + y * y + z * z + w * w);
  x /= len;
  y /= len;
  z /= len;
  w /= len;
  // The rotation matrix of a unit quaternion; its columns are the rotated basis axes.
  s.axis[0] = {1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)};
  s.axis[1] = {2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)};
  s.axis[2] = {2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)};
  return s;
}

PosedShape MakeBall(const DVec3& centre, double radius) {
  PosedShape s;
  s.type = ShapeType::kSphere;
  s.radius = radius;
  s.position = centre;
  return s;
}

DVec3 ToLocal(const PosedShape& s, const DVec3& p) { return ToLocalVector(s, p - s.position); }

DVec3 ToLocalVector(const PosedShape& s, const DVec3& v) {
  return {Dot(s.axis[0], v), Dot(s.axis[1], v), Dot(s.axis[2], v)};
}

DVec3 ToWorldVector(const PosedShape& s, const DVec3& v) {
  return s.axis[0] * v.x + s.axis[1] * v.y + s.axis[2] * v.z;
}

double BoundingRadius(const PosedShape& s) {
  switch (s.type) {
    case ShapeType::kBox:
      return Length(s.half_extents);
    case ShapeType::kCapsule:
      return s.radius + s.half_height;
    case ShapeType::kSphere:
    default:
      return s.radius;
  }
}

// ---------------------------------------------------------------------------------------------
// Definitions.

double Sdf(const PosedShape& s, const DVec3& p) { return LocalSdf(s, ToLocal(s, p)); }

DVec3 SdfSubgradient(const PosedShape& s, const DVec3& p) {
  return ToWorldVector(s, LocalSubgradient(s, ToLocal(s, p)));
}

DVec3 SdfNormal(const PosedShape& s, const DVec3& p) {
  // Differences are taken in the local frame: the world -> local offset is the same for every
  // stencil point, so its rounding (1e-11 at 1e5) cancels instead of swamping the difference.
  const DVec3 q = ToLocal(s, p);
  const double h = 1e-7 * std::fmax(MaxAbs(q), 1e-6);
  DVec3 g;
  for (int i = 0; i < 3; ++i) {
    DVec3 plus = q, minus = q;
    plus[i] += h;
    minus[i] -= h;
    g[i] = (LocalSdf(s, plus) - LocalSdf(s, minus)) / (2.0 * h);
  }
  return ToWorldVector(s, Normalized(g));
}

double SupportValue(const PosedShape& s, const DVec3& n) {
  return LocalSupport(s, ToLocalVector(s, n)) + Dot(n, s.position);
}

DVec3 SupportPoint(const PosedShape& s, const DVec3& n) {
  return s.position + ToWorldVector(s, LocalSupportPoint(s, ToLocalVector(s, n)));
}

DAabb ExactBounds(const PosedShape& s) {
  DAabb b;
  for (int i = 0; i < 3; ++i) {
    DVec3 e{};
    e[i] = 1.0;
    b.max[i] = SupportValue(s, e);
    b.min[i] = -SupportValue(s, -e);
  }
  return b;
}

// ---------------------------------------------------------------------------------------------
// Minimisation over directions.

double SupportGap(const PosedShape& a, const PosedShape& b, const DVec3& n) {
  return SupportValue(a, n) + SupportValue(b, -n);
}

DirectionMinimum SupportGapMinimum(const PosedShape& a, const PosedShape& b) {
  // The cores' difference P in a's local frame: s_P(n) = s_A(n) - M^T s_B(-M n) + R_a^T (pA - pB),
  // with M = R_b^T R_a, so that h_A(n) + h_B(-n) = h_P(n) + r_A + r_B for unit n. The offset is
  // taken in double before rotating, exact enough at 1e5.
  const Relative m = RelativeRotation(a, b);
  const DVec3 offset = ToLocalVector(a, a.position - b.position);
  auto support = [&](const DVec3& n) {
    return LocalCoreSupportPoint(a, n) - m.ApplyTransposed(LocalCoreSupportPoint(b, -m.Apply(n))) +
           offset;
  };
  const double scale = BoundingRadius(a) + BoundingRadius(b) + Length(offset);
  DirectionMinimum r = MinimizeOverSphere(support, CoreRadius(a) + CoreRadius(b), scale);
  r.direction = ToWorldVector(a, r.direction);
  return r;
}

double PlaneGap(const PosedShape& s, const DVec3& p, const DVec3& n) {
  return SupportValue(s, n) - Dot(n, p);
}

ClosestPointOracle ClosestPointBySupport(const PosedShape& s, const DVec3& p) {
  // The core minus p in the local frame: h(n) - n.q = h_core(n) - n.q + r for unit n.
  const DVec3 q = ToLocal(s, p);
  auto support = [&](const DVec3& n) { return LocalCoreSupportPoint(s, n) - q; };
  DirectionMinimum r = MinimizeOverSphere(support, CoreRadius(s), BoundingRadius(s) + Length(q));
  ClosestPointOracle out;
  out.signed_distance = -r.value;
  out.normal = ToWorldVector(s, r.direction);
  out.point = p - out.signed_distance * out.normal;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Overlap.

CertifiedMinimum MinSdfSum(const PosedShape& a, const PosedShape& b, double band,
                           double resolution) {
  // A minimiser lies in the convex hull of the two shapes (projecting onto the hull brings a
  // point no further from either shape), so in this ball.
  DVec3 x = 0.5 * (a.position + b.position);
  const double r0 =
      (0.5 * Length(a.position - b.position) + std::fmax(BoundingRadius(a), BoundingRadius(b))) *
          (1.0 + 1e-9) +
      1e-12;
  // The ellipsoid {y : (y - x)^T P^-1 (y - x) <= 1}, P symmetric positive definite.
  double p[3][3] = {{r0 * r0, 0, 0}, {0, r0 * r0, 0}, {0, 0, r0 * r0}};
  CertifiedMinimum out{-kInf, kInf, x};
  for (int iter = 0; iter < 3000; ++iter) {
    const double fx = Sdf(a, x) + Sdf(b, x);
    if (fx < out.upper) {
      out.upper = fx;
      out.argmin = x;
    }
    const DVec3 g = SdfSubgradient(a, x) + SdfSubgradient(b, x);
    const DVec3 pg{p[0][0] * g.x + p[0][1] * g.y + p[0][2] * g.z,
                   p[1][0] * g.x + p[1][1] * g.y + p[1][2] * g.z,
                   p[2][0] * g.x + p[2][1] * g.y + p[2][2] * g.z};
    const double gpg = Dot(g, pg);
    if (Length(g) == 0.0) {
      // 0 is a subgradient: x is a minimiser.
      out.lower = fx;
      break;
    }
    if (!(gpg > 0.0)) break;  // numerical breakdown: keep the bounds found so far
    const double s = std::sqrt(gpg);
    // Over the ellipsoid, f(y) >= f(x) + g.(y - x) >= f(x) - sqrt(g^T P g).
    out.lower = std::fmax(out.lower, fx - s);
    if (out.upper < -band || out.lower > band || out.upper - out.lower < resolution) break;
    // Central cut through x with the normalised subgradient (dimension 3):
    //   x' = x - P g~ / 4,  P' = 9/8 (P - 1/2 P g~ g~^T P),  g~ = g / sqrt(g^T P g).
    const DVec3 pt = pg * (1.0 / s);
    x = x - 0.25 * pt;
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) p[i][j] = 1.125 * (p[i][j] - 0.5 * pt[i] * pt[j]);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Casts.

double CastGap(const PosedShape& s, const CastPath& path, double t) {
  return Sdf(s, path.origin + t * path.direction) - path.radius;
}

CastOracle CastBySdf(const PosedShape& s, const CastPath& path) {
  CastOracle out;
  const double tmax = path.max_distance;
  out.start_gap = CastGap(s, path, 0.0);
  // Golden-section search for the minimum of the convex phi on [0, tmax]. Convexity makes it
  // unimodal, so a ray grazing a small shape far along the path is not stepped over, which a
  // marcher with a minimum step could do.
  double lo = 0.0, hi = tmax;
  const double inv_phi = (std::sqrt(5.0) - 1.0) / 2.0;
  double c = hi - inv_phi * (hi - lo), d = lo + inv_phi * (hi - lo);
  double fc = CastGap(s, path, c), fd = CastGap(s, path, d);
  double best_t = 0.0, best_f = out.start_gap;
  const double f_end = CastGap(s, path, tmax);
  if (f_end < best_f) {
    best_t = tmax;
    best_f = f_end;
  }
  const double stop = 1e-13 * std::fmax(tmax, 1.0);
  while (hi - lo > stop) {
    if (fc < fd) {
      hi = d;
      d = c;
      fd = fc;
      c = hi - inv_phi * (hi - lo);
      fc = CastGap(s, path, c);
    } else {
      lo = c;
      c = d;
      fc = fd;
      d = lo + inv_phi * (hi - lo);
      fd = CastGap(s, path, d);
    }
    if (fc < best_f) {
      best_f = fc;
      best_t = c;
    }
    if (fd < best_f) {
      best_f = fd;
      best_t = d;
    }
  }
  out.t_min = best_t;
  out.min_gap = best_f;
  if (out.start_gap <= 0.0) {
    out.hits = true;
    out.t_hit = 0.0;
  } else if (out.min_gap <= 0.0) {
    out.hits = true;
    out.t_hit = CrossingOnEntry(s, path, 0.0, out.t_min);
  }
  return out;
}

double CrossingOnEntry(const PosedShape& s, const CastPath& path, double level, double t_end) {
  // phi(lo) > level >= phi(hi); phi is convex and phi(0) > phi(t_end), so it is decreasing on
  // [0, t_end] up to its minimum and crosses `level` once there.
  double lo = 0.0, hi = t_end;
  for (int i = 0; i < 200 && hi - lo > 1e-15 * std::fmax(hi, 1e-300); ++i) {
    double mid = 0.5 * (lo + hi);
    if (CastGap(s, path, mid) > level) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return hi;
}

// ---------------------------------------------------------------------------------------------
// Checks.

double NormalSpread(const PosedShape& s, const DVec3& p, double position_tolerance) {
  static const std::array<DVec3, 14> stencil = [] {
    std::array<DVec3, 14> d{};
    int k = 0;
    for (int i = 0; i < 3; ++i) {
      for (double sign : {-1.0, 1.0}) {
        DVec3 v{};
        v[i] = sign;
        d[k++] = v;
      }
    }
    const double c = 1.0 / std::sqrt(3.0);
    for (double x : {-c, c}) {
      for (double y : {-c, c}) {
        for (double z : {-c, c}) d[k++] = {x, y, z};
      }
    }
    return d;
  }();
  const DVec3 g0 = SdfNormal(s, p);
  double spread = 0.0;
  for (const DVec3& u : stencil) {
    spread = std::fmax(spread, Length(SdfNormal(s, p + position_tolerance * u) - g0));
  }
  return 2.0 * spread;
}

// ---------------------------------------------------------------------------------------------
// Float precision.

double FloatUlp(double x) {
  x = std::fabs(x);
  if (x < FLT_MIN) return std::ldexp(1.0, -149);
  return std::ldexp(1.0, std::ilogb(x) - 23);
}

double PositionTolerance(double magnitude, double local_scale) {
  return FloatUlp(magnitude) + 32.0 * kFloatEps * local_scale;
}

// ---------------------------------------------------------------------------------------------
// Random cases.

std::mt19937 CaseRng(uint32_t seed, uint64_t index) {
  uint64_t h = SplitMix64((static_cast<uint64_t>(seed) << 32) ^ SplitMix64(index));
  return std::mt19937(static_cast<uint32_t>(h ^ (h >> 32)));
}

double Uniform(std::mt19937& rng, double lo, double hi) {
  // 53 random bits, the same on every standard library (unlike uniform_real_distribution).
  uint32_t a = rng() >> 5, b = rng() >> 6;
  double u = (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
  return lo + (hi - lo) * u;
}

double LogUniform(std::mt19937& rng, double lo, double hi) {
  return std::exp(Uniform(rng, std::log(lo), std::log(hi)));
}

bool Chance(std::mt19937& rng, double p) { return Uniform(rng, 0.0, 1.0) < p; }

int Index(std::mt19937& rng, int n) {
  return std::min(n - 1, static_cast<int>(Uniform(rng, 0.0, n)));
}

Vec3 RandomUnit(std::mt19937& rng) {
  for (;;) {
    DVec3 v{Uniform(rng, -1, 1), Uniform(rng, -1, 1), Uniform(rng, -1, 1)};
    double l2 = Dot(v, v);
    if (l2 > 1e-4 && l2 <= 1.0) return Normalize(ToFloat(v));
  }
}

float RandomSize(std::mt19937& rng, double zero_chance) {
  if (Chance(rng, zero_chance)) return 0.0f;
  return static_cast<float>(LogUniform(rng, 0.01, 100.0));
}

Shape RandomShape(std::mt19937& rng, ShapeType type) {
  switch (type) {
    case ShapeType::kBox: {
      Vec3 e{RandomSize(rng, 0.07), RandomSize(rng, 0.07), RandomSize(rng, 0.07)};
      if (Chance(rng, 0.05)) e = {e.x, e.x, e.x};  // a cube
      return Box{e};
    }
    case ShapeType::kCapsule:
      return Capsule{RandomSize(rng, 0.05), RandomSize(rng, 0.15)};
    case ShapeType::kSphere:
    default:
      return Sphere{RandomSize(rng, 0.05)};
  }
}

Quat RandomRotation(std::mt19937& rng) {
  double pick = Uniform(rng, 0.0, 1.0);
  if (pick < 0.25) return Quat::Identity();
  if (pick < 0.55) {
    // A product of one to three quarter, half or three-quarter turns about the axes.
    const float s = std::sqrt(0.5f);
    Quat q = Quat::Identity();
    int turns = 1 + Index(rng, 3);
    for (int i = 0; i < turns; ++i) {
      int axis = Index(rng, 3);
      int quarters = 1 + Index(rng, 3);
      Quat t{0, 0, 0, 1};
      float* comp = axis == 0 ? &t.x : (axis == 1 ? &t.y : &t.z);
      if (quarters == 1) {
        *comp = s;
        t.w = s;
      } else if (quarters == 2) {
        *comp = 1.0f;
        t.w = 0.0f;
      } else {
        *comp = -s;
        t.w = s;
      }
      q = t * q;
    }
    return Normalize(q);
  }
  for (;;) {
    double v[4] = {Uniform(rng, -1, 1), Uniform(rng, -1, 1), Uniform(rng, -1, 1),
                   Uniform(rng, -1, 1)};
    double l2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3];
    if (l2 > 1e-4 && l2 <= 1.0) {
      double inv = 1.0 / std::sqrt(l2);
      return Normalize(Quat{static_cast<float>(v[0] * inv), static_cast<float>(v[1] * inv),
                            static_cast<float>(v[2] * inv), static_cast<float>(v[3] * inv)});
    }
  }
}

Vec3 RandomSceneOffset(std::mt19937& rng) {
  double pick = Uniform(rng, 0.0, 1.0);
  if (pick < 0.5) return Vec3{};
  Vec3 o;
  for (int i = 0; i < 3; ++i) {
    if (pick < 0.7) {
      o[i] = static_cast<float>(Uniform(rng, -1e5, 1e5));
    } else if (pick < 0.85) {
      // Exactly at the edge of the tested range, or 0.
      int k = Index(rng, 3);
      o[i] = k == 0 ? 0.0f : (k == 1 ? 1e5f : -1e5f);
    } else {
      o[i] = static_cast<float>((Chance(rng, 0.5) ? -1.0 : 1.0) * LogUniform(rng, 1.0, 1e5));
    }
  }
  return o;
}

Vec3 ToFloat(const DVec3& p) {
  return {static_cast<float>(p.x), static_cast<float>(p.y), static_cast<float>(p.z)};
}

Pose RandomPose(std::mt19937& rng) {
  Pose pose;
  pose.rotation = RandomRotation(rng);
  pose.position = RandomSceneOffset(rng);
  if (Chance(rng, 0.5)) {
    pose.position += ToFloat(Uniform(rng, 0.0, 10.0) * ToDouble(RandomUnit(rng)));
  }
  return pose;
}

double MinSizeAt(const Pose& pose) {
  return std::fmax(0.01, 256.0 * FloatUlp(MaxAbs(ToDouble(pose.position))));
}

Shape FitToPose(const Shape& shape, const Pose& pose) {
  const double lo = MinSizeAt(pose);
  if (lo <= 0.01) return shape;
  // log(s / 0.01) / log(100 / 0.01) in [0, 1] becomes the same fraction of [lo, 100] in logs.
  auto fit = [&](float s) {
    if (s == 0.0f) return 0.0f;
    const double u = std::log(s / 0.01) / std::log(100.0 / 0.01);
    return static_cast<float>(lo * std::pow(100.0 / lo, u));
  };
  Shape out = shape;
  switch (shape.type) {
    case ShapeType::kBox:
      out.box.half_extents = {fit(shape.box.half_extents.x), fit(shape.box.half_extents.y),
                              fit(shape.box.half_extents.z)};
      break;
    case ShapeType::kCapsule:
      out.capsule.radius = fit(shape.capsule.radius);
      out.capsule.half_height = fit(shape.capsule.half_height);
      break;
    case ShapeType::kSphere:
    default:
      out.sphere.radius = fit(shape.sphere.radius);
      break;
  }
  return out;
}

namespace {

// The half extents of the local AABB of the shape grown by r.
DVec3 GrownLocalExtents(const PosedShape& s, double r) {
  switch (s.type) {
    case ShapeType::kBox:
      return s.half_extents + DVec3{r, r, r};
    case ShapeType::kCapsule:
      return {s.radius + r, s.half_height + s.radius + r, s.radius + r};
    case ShapeType::kSphere:
    default:
      return {s.radius + r, s.radius + r, s.radius + r};
  }
}

// A unit vector perpendicular to the unit vector n, uniformly random about it.
DVec3 RandomPerpendicular(std::mt19937& rng, const DVec3& n) {
  const DVec3 u = Perpendicular(n);
  const DVec3 v = Cross(n, u);
  const double a = Uniform(rng, 0.0, 2.0 * std::numbers::pi);
  return std::cos(a) * u + std::sin(a) * v;
}

// A point of the shape's surface feature the casts aim at: a box corner or edge point, a
// capsule's rim (where cylinder and cap meet) or pole, a sphere's surface point; local frame.
DVec3 LocalFeaturePoint(std::mt19937& rng, const PosedShape& s) {
  switch (s.type) {
    case ShapeType::kBox: {
      DVec3 p;
      const int free_axis = Chance(rng, 0.4) ? -1 : Index(rng, 3);  // -1: a corner
      for (int i = 0; i < 3; ++i) {
        p[i] = i == free_axis ? Uniform(rng, -1.0, 1.0) * s.half_extents[i]
                              : (Chance(rng, 0.5) ? -1.0 : 1.0) * s.half_extents[i];
      }
      return p;
    }
    case ShapeType::kCapsule: {
      const double side = Chance(rng, 0.5) ? -1.0 : 1.0;
      if (Chance(rng, 0.3)) return {0.0, side * (s.half_height + s.radius), 0.0};
      const double a = Uniform(rng, 0.0, 2.0 * std::numbers::pi);
      return {s.radius * std::cos(a), side * s.half_height, s.radius * std::sin(a)};
    }
    case ShapeType::kSphere:
    default:
      return s.radius * ToDouble(RandomUnit(rng));
  }
}

// A random point inside the local AABB scaled by `scale` (inside the shape for a box; for the
// rounded shapes mostly inside).
DVec3 LocalInteriorPoint(std::mt19937& rng, const PosedShape& s, double r, double scale) {
  switch (s.type) {
    case ShapeType::kBox: {
      const DVec3 e = s.half_extents;
      return {Uniform(rng, -1, 1) * scale * (e.x + r), Uniform(rng, -1, 1) * scale * (e.y + r),
              Uniform(rng, -1, 1) * scale * (e.z + r)};
    }
    case ShapeType::kCapsule: {
      DVec3 p = Uniform(rng, 0.0, scale * (s.radius + r)) * ToDouble(RandomUnit(rng));
      p.y += Uniform(rng, -1.0, 1.0) * s.half_height;
      return p;
    }
    case ShapeType::kSphere:
    default:
      return Uniform(rng, 0.0, scale * (s.radius + r)) * ToDouble(RandomUnit(rng));
  }
}

DVec3 ToWorldPoint(const PosedShape& s, const DVec3& local) {
  return s.position + ToWorldVector(s, local);
}

}  // namespace

Vec3 RandomQueryPoint(std::mt19937& rng, const Shape& shape, const Pose& pose, const char** kind) {
  const PosedShape s = MakePosed(shape, pose);
  const double reach = BoundingRadius(s);
  const double pick = Uniform(rng, 0.0, 1.0);
  DVec3 p;
  if (pick < 0.35) {
    *kind = "around";
    p = s.position + Uniform(rng, 0.0, 2.0 * reach + 1.0) * ToDouble(RandomUnit(rng));
  } else if (pick < 0.55) {
    *kind = "inside";
    p = ToWorldPoint(s, LocalInteriorPoint(rng, s, 0.0, 0.98));
  } else if (pick < 0.75) {
    *kind = "near_surface";
    const DVec3 n = ToDouble(RandomUnit(rng));
    const double off = Chance(rng, 0.3) ? 0.0
                                        : (Chance(rng, 0.5) ? -1.0 : 1.0) *
                                              LogUniform(rng, 1e-9, 1e-2) * std::fmax(reach, 1.0);
    p = SupportPoint(s, n) + off * n;
  } else if (pick < 0.85) {
    *kind = "medial";
    DVec3 local{};
    if (s.type == ShapeType::kBox) {
      // Equally deep below two faces.
      const DVec3 e = s.half_extents;
      const int i = Index(rng, 3);
      const int j = (i + 1 + Index(rng, 2)) % 3;
      const int k = 3 - i - j;
      const double d = Uniform(rng, 0.0, 1.0) * std::fmin(e[i], e[j]);
      local[i] = (Chance(rng, 0.5) ? -1.0 : 1.0) * (e[i] - d);
      local[j] = (Chance(rng, 0.5) ? -1.0 : 1.0) * (e[j] - d);
      local[k] = Uniform(rng, -1.0, 1.0) * std::fmax(e[k] - d, 0.0);
    } else if (s.type == ShapeType::kCapsule) {
      local.y = Uniform(rng, -1.0, 1.0) * s.half_height;  // on the segment
    }
    p = ToWorldPoint(s, local);
  } else {
    *kind = "far";
    p = s.position + LogUniform(rng, reach + 1.0, 1e4) * ToDouble(RandomUnit(rng));
  }
  return ToFloat(p);
}

Pose RandomPairPose(std::mt19937& rng, const Shape& a, const Pose& pose_a, const Shape& b,
                    double overlap_bias, const char** kind) {
  const PosedShape sa = MakePosed(a, pose_a);
  Pose pose_b;
  pose_b.rotation = RandomRotation(rng);
  const PosedShape sb0 = MakePosed(b, Pose{pose_b.rotation, Vec3{}});
  const double scale = BoundingRadius(sa) + BoundingRadius(sb0) + 1e-3;
  DVec3 u = ToDouble(RandomUnit(rng));
  if (Chance(rng, 0.3)) {
    // One of A's axes: face-to-face contacts when the rotations are axis aligned.
    DVec3 local{};
    local[Index(rng, 3)] = Chance(rng, 0.5) ? -1.0 : 1.0;
    u = ToWorldVector(sa, local);
  }
  // A's extent along u beyond its centre, and B's on the other side of its own.
  const double touch = SupportValue(sa, u) - Dot(u, sa.position) + SupportValue(sb0, -u);
  const double pick = Uniform(rng, 0.0, 1.0);
  double gap;
  if (pick < 0.2) {
    *kind = "extents_touching";
    gap = 0.0;
  } else if (pick < 0.5) {
    *kind = "extents_nearly_touching";
    const bool inward = Chance(rng, 0.5 + 0.5 * overlap_bias);
    gap = (inward ? -1.0 : 1.0) * LogUniform(rng, 1e-9, 1e-2) * scale;
  } else if (pick < 0.9) {
    *kind = "anywhere";
    gap = Uniform(rng, -1.0, 0.3 * (1.0 - overlap_bias)) * std::fmax(touch, 0.1 * scale);
  } else {
    *kind = "near_centre";
    gap = -touch + Uniform(rng, 0.0, 0.2) * scale;
  }
  pose_b.position = ToFloat(sa.position + (touch + gap) * u);
  return pose_b;
}

CastCase RandomCast(std::mt19937& rng, const Shape& shape, const Pose& pose, float radius) {
  const PosedShape s = MakePosed(shape, pose);
  const double r = radius;
  const double reach = BoundingRadius(s) + r;
  // Distance from the start to the point aimed at.
  const double dist = reach + LogUniform(rng, 0.01, 300.0);
  CastCase c;
  DVec3 origin, dir;
  double max_distance = dist * Uniform(rng, 1.2, 3.0);
  bool clip_at_hit = false;
  const double pick = Uniform(rng, 0.0, 1.0);
  if (pick < 0.18) {
    c.kind = "aimed";
    const DVec3 target = s.position + Uniform(rng, 0.0, 1.2 * reach) * ToDouble(RandomUnit(rng));
    dir = ToDouble(RandomUnit(rng));
    origin = target - dist * dir;
  } else if (pick < 0.30) {
    c.kind = "feature";
    const DVec3 target = ToWorldPoint(s, LocalFeaturePoint(rng, s));
    dir = ToDouble(RandomUnit(rng));
    origin = target - dist * dir;
  } else if (pick < 0.42) {
    c.kind = "axis_parallel";
    const DVec3 e = GrownLocalExtents(s, r);
    const int axis = Index(rng, 3);
    const double sign = Chance(rng, 0.5) ? -1.0 : 1.0;
    DVec3 local_dir{};
    local_dir[axis] = sign;
    DVec3 local;
    local[axis] = -sign * (e[axis] + LogUniform(rng, 0.01, 300.0));
    for (int k = 1; k <= 2; ++k) {
      const int j = (axis + k) % 3;
      const double side = Chance(rng, 0.5) ? -1.0 : 1.0;
      const double q = Uniform(rng, 0.0, 1.0);
      if (k == 1 && q < 0.35) {
        local[j] = side * e[j];  // in the grown face plane: grazing along the face
      } else if (k == 1 && q < 0.6) {
        local[j] = side * e[j] * (1.0 + (Chance(rng, 0.5) ? -1 : 1) * LogUniform(rng, 1e-9, 1e-2));
      } else if (k == 1 && q < 0.7 && s.type == ShapeType::kBox) {
        local[j] = side * s.half_extents[j];  // in a face plane of the box itself
      } else {
        local[j] = Uniform(rng, -1.1, 1.1) * e[j];
      }
    }
    origin = ToWorldPoint(s, local);
    dir = ToWorldVector(s, local_dir);
  } else if (pick < 0.58) {
    c.kind = "tangent";
    DVec3 n = ToDouble(RandomUnit(rng));
    if (Chance(rng, 0.25)) {
      // A face normal of a box (or a capsule's axis / equator direction).
      DVec3 local{};
      local[Index(rng, 3)] = Chance(rng, 0.5) ? -1.0 : 1.0;
      n = ToWorldVector(s, local);
    }
    const DVec3 x = SupportPoint(s, n) + r * n;
    const double off = Chance(rng, 0.3) ? 0.0
                                        : (Chance(rng, 0.5) ? -1.0 : 1.0) *
                                              LogUniform(rng, 1e-9, 1e-2) * std::fmax(reach, 1.0);
    dir = RandomPerpendicular(rng, n);
    origin = x + off * n - dist * dir;
  } else if (pick < 0.70) {
    c.kind = "inside_start";
    origin = ToWorldPoint(s, LocalInteriorPoint(rng, s, r, 0.95));
    dir = ToDouble(RandomUnit(rng));
  } else if (pick < 0.75) {
    c.kind = "surface_start";
    const DVec3 n = ToDouble(RandomUnit(rng));
    origin = SupportPoint(s, n) + r * n;
    dir = ToDouble(RandomUnit(rng));
  } else if (pick < 0.88) {
    c.kind = "anywhere";
    origin = s.position + Uniform(rng, 0.0, 3.0 * reach + 1.0) * ToDouble(RandomUnit(rng));
    dir = ToDouble(RandomUnit(rng));
    max_distance = LogUniform(rng, 0.01, 4.0 * reach + 10.0);
  } else {
    c.kind = "max_distance_at_hit";
    const DVec3 target = s.position + Uniform(rng, 0.0, 0.9 * reach) * ToDouble(RandomUnit(rng));
    dir = ToDouble(RandomUnit(rng));
    origin = target - dist * dir;
    clip_at_hit = true;
  }
  if (!clip_at_hit && Chance(rng, 0.1)) max_distance = Uniform(rng, 0.0, 1.0) * dist;
  if (!clip_at_hit && Chance(rng, 0.03)) max_distance = 0.0;  // only what contains the start
  c.ray.origin = ToFloat(origin);
  c.ray.direction = Normalize(ToFloat(dir));
  c.ray.max_distance = static_cast<float>(max_distance);
  if (clip_at_hit) {
    const CastPath path{ToDouble(c.ray.origin), ToDouble(c.ray.direction),
                        static_cast<double>(c.ray.max_distance), r};
    const CastOracle o = CastBySdf(s, path);
    if (o.hits && o.t_hit > 0.0) {
      const double q = Uniform(rng, 0.0, 1.0);
      const double t =
          q < 0.3 ? o.t_hit
                  : o.t_hit * (1.0 + (q < 0.65 ? -1.0 : 1.0) * LogUniform(rng, 1e-7, 1e-2));
      c.ray.max_distance = static_cast<float>(t);
    }
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// Printing.

std::string Str(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  return buf;
}

std::string Str(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string Str(const Vec3& v) {
  std::string out = "{";
  out += Str(v.x);
  out += ", ";
  out += Str(v.y);
  out += ", ";
  out += Str(v.z);
  out += "}";
  return out;
}

std::string Str(const DVec3& v) {
  std::string out = "{";
  out += Str(v.x);
  out += ", ";
  out += Str(v.y);
  out += ", ";
  out += Str(v.z);
  out += "}";
  return out;
}

std::string Str(const Quat& q) {
  std::string out = "Quat{";
  out += Str(q.x);
  out += ", ";
  out += Str(q.y);
  out += ", ";
  out += Str(q.z);
  out += ", ";
  out += Str(q.w);
  out += "}";
  return out;
}

std::string Str(const Pose& p) {
  std::string out = "Pose{";
  out += Str(p.rotation);
  out += ", Vec3";
  out += Str(p.position);
  out += "}";
  return out;
}

std::string Str(const Shape& s) {
  std::string out;
  switch (s.type) {
    case ShapeType::kBox:
      out = "Box{Vec3";
      out += Str(s.box.half_extents);
      break;
    case ShapeType::kCapsule:
      out = "Capsule{";
      out += Str(s.capsule.radius);
      out += ", ";
      out += Str(s.capsule.half_height);
      break;
    case ShapeType::kSphere:
    default:
      out = "Sphere{";
      out += Str(s.sphere.radius);
      break;
  }
  out += "}";
  return out;
}

std::string Str(const Ray& r) {
  std::string out = "Ray{Vec3";
  out += Str(r.origin);
  out += ", Vec3";
  out += Str(r.direction);
  out += ", ";
  out += Str(r.max_distance);
  out += "}";
  return out;
}

std::string Str(const CastHit& h) {
  std::string out = "CastHit{distance ";
  out += Str(h.distance);
  out += ", point ";
  out += Str(h.point);
  out += ", normal ";
  out += Str(h.normal);
  out += ", start_overlapping ";
  out += h.start_overlapping ? "true" : "false";
  out += "}";
  return out;
}

std::string ShapeName(ShapeType t) {
  switch (t) {
    case ShapeType::kBox:
      return "box";
    case ShapeType::kCapsule:
      return "capsule";
    case ShapeType::kSphere:
    default:
      return "sphere";
  }
}

// ---------------------------------------------------------------------------------------------
// Statistics.

void ErrorStats::Add(double error, double tolerance) {
  ++cases;
  max_tolerance = std::fmax(max_tolerance, tolerance);
  double ratio = tolerance > 0.0 ? error / tolerance : (error > 0.0 ? kInf : 0.0);
  if (cases == 1 || ratio > worst_ratio) {
    worst_ratio = ratio;
    worst_error = error;
    worst_tolerance = tolerance;
  }
}

void PrintSummary(const std::string& function, int64_t cases, const ErrorStats& stats) {
  std::printf("oracle-summary %s cases=%" PRId64 " worst_error=%.3g tolerance=%.3g\n",
              function.c_str(), cases, stats.worst_error,
              stats.worst_error > 0.0 ? stats.worst_tolerance : stats.max_tolerance);
  std::fflush(stdout);
}

}  // namespace collide::oracle
