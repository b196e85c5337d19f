#pragma once

// A double-precision reference ("oracle") for the geometry layer, built only from the simplest
// definitions of the shapes and independent of the closed forms in src/geom:
//
//   - the signed distance function (SDF) of each shape in its local frame,
//   - the support function h(n) = max over the shape of n.x,
//   - the pose applied in double (world -> local by the float pose, renormalised in double),
//
// and generic numerical algorithms on top of them: 1-D convex root finding along a cast, a
// convex minimisation in 3-D with certified bounds (the ellipsoid method), and minimisation over
// unit directions by dense sampling plus local refinement. None of them knows which shape it is
// working on beyond calling Sdf and SupportValue.

#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "geom/aabb.h"
#include "geom/cast.h"
#include "geom/pose.h"
#include "geom/shapes.h"
#include "geom/vec3.h"

namespace collide::oracle {

// ---------------------------------------------------------------------------------------------
// Double-precision vectors.

/// A 3-vector of double.
struct DVec3 {
  double x = 0.0;
  double y = 0.0;
  double z = 0.0;

  /// Component by index: 0 = x, 1 = y, 2 = z.
  constexpr double operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }
  constexpr double& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }
};

constexpr DVec3 operator+(const DVec3& a, const DVec3& b) {
  return {a.x + b.x, a.y + b.y, a.z + b.z};
}
constexpr DVec3 operator-(const DVec3& a, const DVec3& b) {
  return {a.x - b.x, a.y - b.y, a.z - b.z};
}
constexpr DVec3 operator-(const DVec3& a) { return {-a.x, -a.y, -a.z}; }
constexpr DVec3 operator*(const DVec3& a, double s) { return {a.x * s, a.y * s, a.z * s}; }
constexpr DVec3 operator*(double s, const DVec3& a) { return {a.x * s, a.y * s, a.z * s}; }
constexpr double Dot(const DVec3& a, const DVec3& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
constexpr DVec3 Cross(const DVec3& a, const DVec3& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
inline double Length(const DVec3& a) { return std::sqrt(Dot(a, a)); }
/// `a` scaled to unit length; `a` unchanged when it is zero.
inline DVec3 Normalized(const DVec3& a) {
  double len = Length(a);
  return len > 0.0 ? a * (1.0 / len) : a;
}
/// The largest absolute component.
inline double MaxAbs(const DVec3& a) {
  return std::fmax(std::fabs(a.x), std::fmax(std::fabs(a.y), std::fabs(a.z)));
}
/// The float vector `v` exactly, in double.
constexpr DVec3 ToDouble(const Vec3& v) { return {v.x, v.y, v.z}; }

// ---------------------------------------------------------------------------------------------
// Posed shapes.

/// A shape and its pose in double precision: the rotation is the float quaternion renormalised
/// in double, the position the float position exactly.
struct PosedShape {
  ShapeType type = ShapeType::kSphere;
  /// Sphere and capsule radius.
  double radius = 0.0;
  /// Capsule half height (the segment runs along local Y from -half_height to +half_height).
  double half_height = 0.0;
  /// Box half extents.
  DVec3 half_extents{};
  /// World position of the shape's origin.
  DVec3 position{};
  /// The shape's local X, Y and Z axes in world coordinates (columns of the rotation matrix).
  DVec3 axis[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
};

/// The shape `shape` at `pose`, in double precision.
PosedShape MakePosed(const Shape& shape, const Pose& pose);
/// A ball of `radius` at `centre` (the moving ball of a sphere cast, or a point when 0).
PosedShape MakeBall(const DVec3& centre, double radius);

/// The world point `p` in the shape's local frame: R^T (p - position).
DVec3 ToLocal(const PosedShape& s, const DVec3& p);
/// The world direction `v` in the shape's local frame: R^T v.
DVec3 ToLocalVector(const PosedShape& s, const DVec3& v);
/// The local direction `v` in world coordinates: R v.
DVec3 ToWorldVector(const PosedShape& s, const DVec3& v);

/// The radius of a ball about the shape's origin that contains the shape.
double BoundingRadius(const PosedShape& s);

// ---------------------------------------------------------------------------------------------
// The definitions: signed distance and support functions.

/// Exact Euclidean signed distance of the world point `p` to the shape's surface: > 0 outside,
/// < 0 inside. Sphere |q| - r; box length(max(d, 0)) + min(max(d.x, d.y, d.z), 0) with
/// d = |q| - e; capsule |q - clamp(q.y, -h, h) e_y| - r; q = the point in the local frame.
double Sdf(const PosedShape& s, const DVec3& p);

/// A subgradient of Sdf at `p` (the gradient where it is differentiable), from the same formulas
/// differentiated by hand. Used only as the cutting plane of the ellipsoid method; zero at a
/// sphere's centre.
DVec3 SdfSubgradient(const PosedShape& s, const DVec3& p);

/// The gradient of Sdf at `p` by central differences in the local frame, normalised: the
/// outward surface normal at (or nearest to) `p`. The step is 1e-7 of the local scale.
DVec3 SdfNormal(const PosedShape& s, const DVec3& p);

/// The support function h(n) = max over the shape of n.x for a world direction `n` (any length).
double SupportValue(const PosedShape& s, const DVec3& n);

/// A point of the shape maximising n.x (a boundary point whose outward normal cone contains n).
DVec3 SupportPoint(const PosedShape& s, const DVec3& n);

// ---------------------------------------------------------------------------------------------
// Bounds.

/// The exact world AABB of the shape: max_i = h(e_i), min_i = -h(-e_i).
struct DAabb {
  DVec3 min{};
  DVec3 max{};
};
DAabb ExactBounds(const PosedShape& s);

// ---------------------------------------------------------------------------------------------
// Minimisation over unit directions.

/// The smallest value found of a function over unit vectors, and where.
struct DirectionMinimum {
  double value = 0.0;
  DVec3 direction{};
};

/// min over unit n of h_A(n) + h_B(-n), by evaluating a Fibonacci sphere of directions and
/// refining the best few local candidates by a pattern search on the sphere.
///
/// h_A(n) + h_B(-n) is how far B must move along +n for the two to stop overlapping along n
/// (the overlap of their shadows on n). Its minimum over n is the penetration depth when the
/// shapes overlap (>= 0), and minus their distance when they are apart (< 0). The returned value
/// is attained at the returned direction, so it is always an upper bound of the true minimum.
DirectionMinimum SupportGapMinimum(const PosedShape& a, const PosedShape& b);

/// The support value h_A(n) + h_B(-n) of the pair at one unit direction `n`.
double SupportGap(const PosedShape& a, const PosedShape& b, const DVec3& n);

/// The point of the shape's surface nearest to `p`, from support planes only.
struct ClosestPointOracle {
  /// > 0 outside, < 0 inside.
  double signed_distance = 0.0;
  /// The minimising direction: the outward normal at the nearest surface point.
  DVec3 normal{};
  /// p - signed_distance * normal.
  DVec3 point{};
};

/// signed distance = -min over unit n of (h(n) - n.p): outside, the largest gap between `p` and
/// a support plane; inside, the depth below the nearest support plane. Sampling plus refinement;
/// the value is attained, so -signed_distance is an upper bound of the true minimum.
ClosestPointOracle ClosestPointBySupport(const PosedShape& s, const DVec3& p);

/// The support-plane gap h(n) - n.p of `p` along the unit direction `n`.
double PlaneGap(const PosedShape& s, const DVec3& p, const DVec3& n);

// ---------------------------------------------------------------------------------------------
// Overlap.

/// The result of a convex minimisation: certified bounds on the minimum and the best point.
struct CertifiedMinimum {
  /// A certified lower bound of the minimum.
  double lower = 0.0;
  /// The smallest value found (an upper bound of the minimum), attained at `argmin`.
  double upper = 0.0;
  DVec3 argmin{};
};

/// min over x of Sdf_A(x) + Sdf_B(x), by the ellipsoid method (convex, so the bounds are
/// certified). When the shapes are apart it equals their distance (triangle inequality, with
/// equality between the closest points). When they overlap it is <= 0, and a point x with
/// Sdf_A(x) + Sdf_B(x) = -rho proves that B still overlaps A after any translation of length
/// <= rho (so -min is a lower bound of the penetration depth). Stops once the bounds exclude
/// the band [-band, band] or are `resolution` apart.
CertifiedMinimum MinSdfSum(const PosedShape& a, const PosedShape& b, double band,
                           double resolution);

// ---------------------------------------------------------------------------------------------
// Casts.

/// A ball of `radius` (0 for a ray) moving along origin + t * direction, t in [0, max_distance],
/// against one shape, described by phi(t) = Sdf(origin + t * direction) - radius, which is
/// convex in t (the SDF of a convex set is convex).
struct CastPath {
  DVec3 origin{};
  /// The cast's direction as given (float unit vector, in double).
  DVec3 direction{};
  double max_distance = 0.0;
  double radius = 0.0;
};

/// The oracle's view of a cast.
struct CastOracle {
  /// phi(0): <= 0 when the cast starts inside or touching.
  double start_gap = 0.0;
  /// The smallest phi over [0, max_distance] and where it is attained.
  double min_gap = 0.0;
  double t_min = 0.0;
  /// True when phi(t) <= 0 for some t in [0, max_distance].
  bool hits = false;
  /// The first root of phi (the first contact distance) when `hits`; 0 when it starts inside.
  double t_hit = 0.0;
};

/// phi(t) of the cast.
double CastGap(const PosedShape& s, const CastPath& path, double t);

/// Golden-section minimisation of the convex phi over [0, max_distance], then bisection on the
/// decreasing branch for the first root, to ~1e-12 of the path length.
CastOracle CastBySdf(const PosedShape& s, const CastPath& path);

/// The t in [0, t_end] on the decreasing branch of phi where phi(t) = level, given
/// phi(0) > level >= phi(t_end); by bisection.
double CrossingOnEntry(const PosedShape& s, const CastPath& path, double level, double t_end);

// ---------------------------------------------------------------------------------------------
// Checks shared by the tests.

/// How far the world unit normal `n` may differ from the SDF normal at `p` when the contact is
/// only known to within `position_tolerance`: twice the largest change of SdfNormal over points
/// within that distance of `p` (14 stencil points), plus `base`. Large at edges and corners,
/// where the normal is not unique.
double NormalSpread(const PosedShape& s, const DVec3& p, double position_tolerance);

// ---------------------------------------------------------------------------------------------
// Float precision.

/// The spacing of float32 values at magnitude |x| (2^-23 * 2^floor(log2 |x|)); at 1e5 this is
/// 2^-7 = 0.0078125.
double FloatUlp(double x);

/// float32 machine epsilon, 2^-23.
inline constexpr double kFloatEps = 1.0 / 8388608.0;

/// The error of a float32 unit normal that is a rotated axis or a normalised difference: a few
/// roundings of components <= 1 and a rotation by a float quaternion, so 32 float epsilons
/// (3.8e-6). Added to the spread of the exact normal over the contact's position tolerance.
inline constexpr double kNormalBase = 32.0 * kFloatEps;

/// How far from 1 the length of a float32 unit normal may be: normalised in float (a few eps)
/// and rotated by a float quaternion that is itself unit only to a few eps; 16 eps (1.9e-6).
inline constexpr double kUnitLengthTolerance = 16.0 * kFloatEps;

/// The tolerance of a float32 geometric result whose world coordinates reach `magnitude` and
/// whose local computation (relative to the shape) works with lengths up to `local_scale`:
/// 1 ulp at the world magnitude (the inputs are exact floats; the kernels work relative to the
/// shape, and a result in world coordinates is rounded once, by at most half an ulp, when the
/// shape's position is added back) plus 32 float epsilons of the local scale (the kernels take
/// a chain of a few dozen roundings at most, each <= eps/2 relative, of values bounded by the
/// local scale, and the float rotation adds a few eps more).
double PositionTolerance(double magnitude, double local_scale);

// ---------------------------------------------------------------------------------------------
// Random cases.

/// The generator of one case: case `index` of a test with seed `seed` always gets the same
/// stream, so a failure can be replayed from the two numbers alone.
std::mt19937 CaseRng(uint32_t seed, uint64_t index);

/// Uniform in [lo, hi).
double Uniform(std::mt19937& rng, double lo, double hi);
/// log-uniform in [lo, hi], lo > 0.
double LogUniform(std::mt19937& rng, double lo, double hi);
/// True with probability p.
bool Chance(std::mt19937& rng, double p);
/// Uniform integer in [0, n).
int Index(std::mt19937& rng, int n);
/// A uniformly random unit vector (float).
Vec3 RandomUnit(std::mt19937& rng);

/// A random size in [0.01, 100] (log-uniform), or 0 with probability `zero_chance`.
float RandomSize(std::mt19937& rng, double zero_chance);
/// A random shape of the given type: sizes 0.01..100 with zero half extents, zero radii and
/// capsule half height 0 mixed in.
Shape RandomShape(std::mt19937& rng, ShapeType type);
/// A rotation: identity, a product of axis-aligned 90/180 degree turns, or a uniformly random
/// unit quaternion (normalised in float).
Quat RandomRotation(std::mt19937& rng);
/// A scene offset: the origin, or coordinates far from it, up to +-1e5 (sometimes exactly).
Vec3 RandomSceneOffset(std::mt19937& rng);

/// The float32 point of `p` (round to nearest).
Vec3 ToFloat(const DVec3& p);

/// A random cast of a ball of `radius` (0 for a ray) against `shape` at `pose`, drawn from a mix
/// of ordinary and hard cases, labelled by `kind`: aimed at the shape; through a box corner or
/// edge (a capsule's rim, a sphere's surface); parallel to the local axes with offsets on, just
/// inside and just outside the (grown) faces; tangent to the grown surface, exactly or off by
/// 1e-9..1e-2 of the size; starting inside; starting on the surface; from anywhere nearby; and
/// with max_distance within 1e-7..1e-2 (relative) of the oracle's first contact, or equal to it;
/// and max_distance 0 in 3% of the others.
struct CastCase {
  Ray ray;
  const char* kind = "";
};
CastCase RandomCast(std::mt19937& rng, const Shape& shape, const Pose& pose, float radius);

/// A random query point for `shape` at `pose`, labelled by `*kind`: anywhere around it, inside,
/// on or within 1e-9..1e-2 (relative) of the surface, on a box's medial planes or a capsule's
/// axis or a sphere's centre (where the nearest surface point is not unique), or far away.
Vec3 RandomQueryPoint(std::mt19937& rng, const Shape& shape, const Pose& pose, const char** kind);

/// B's pose for a random pair test against A at `pose_a`: B's rotation is random and B is placed
/// along a random direction u (or one of A's axes) at the distance where the two shapes' extents
/// along u just meet, plus a gap: 0 exactly, +-1e-9..1e-2 (relative), or anything from deep
/// overlap to well apart; or B near A's centre. `overlap_bias` in [0, 1] moves the mix towards
/// overlapping placements. The kind is stored in `*kind`.
Pose RandomPairPose(std::mt19937& rng, const Shape& a, const Pose& pose_a, const Shape& b,
                    double overlap_bias, const char** kind);

/// A random pose: RandomRotation at RandomSceneOffset plus a jitter of up to 10.
Pose RandomPose(std::mt19937& rng);

/// The smallest non-zero size a random shape gets at `pose`: 0.01, or where the position is far
/// from the origin 256 float ulps of its magnitude (2 at 1e5), so that the shape is many times
/// larger than PositionTolerance there and an error at the shape's own scale still shows.
double MinSizeAt(const Pose& pose);

/// `shape` (from RandomShape) with each non-zero size mapped log-linearly from [0.01, 100] onto
/// [MinSizeAt(pose), 100]: the same mix of proportions, large enough for where it is. Draws no
/// random numbers, so a test's cases stay where they were near the origin.
Shape FitToPose(const Shape& shape, const Pose& pose);

// ---------------------------------------------------------------------------------------------
// Printing (round-trip precision, so a printed case can be typed back in).

std::string Str(float v);
std::string Str(double v);
std::string Str(const Vec3& v);
std::string Str(const DVec3& v);
std::string Str(const Quat& q);
std::string Str(const Pose& p);
std::string Str(const Shape& s);
std::string Str(const Ray& r);
std::string Str(const CastHit& h);
std::string ShapeName(ShapeType t);

// ---------------------------------------------------------------------------------------------
// Statistics for the summary line.

/// The worst case of one function: the largest error relative to its tolerance.
struct ErrorStats {
  int64_t cases = 0;
  double worst_ratio = 0.0;
  double worst_error = 0.0;
  double worst_tolerance = 0.0;
  /// The largest tolerance recorded (printed as the tolerance when no error was above zero).
  double max_tolerance = 0.0;

  /// Records one comparison: error `error` against tolerance `tolerance`.
  void Add(double error, double tolerance);
};

/// Prints `oracle-summary <function> cases=<n> worst_error=<x> tolerance=<y>` to stdout, where
/// the worst error is the one closest to its tolerance and `tolerance` is that case's (the
/// largest tolerance recorded when every error was 0).
void PrintSummary(const std::string& function, int64_t cases, const ErrorStats& stats);

}  // namespace collide::oracle
