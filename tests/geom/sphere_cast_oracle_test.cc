// Randomised tests of SphereCast (src/geom/sphere_cast.h) against the double-precision oracle of
// tests/geom/oracle.h: the first root of phi(t) = Sdf(origin + t * direction) - radius on the
// convex phi (golden-section search and bisection), the SDF's numerical gradient for the normal,
// and the support-plane minimisation for the separating direction of a start overlapping.
//
// 100,000 cases per shape type (300,000 for SphereCast), radius 0 in 15% of them and
// 0.01..100 otherwise, each from its own std::mt19937 stream (CaseRng(kSeed, case)), printed
// with every failure. The radius-0 cases must equal Raycast bit for bit, and every hit must be
// reported again, identically, by the same cast clipped at its distance. Tolerances, all from
// float32 precision (far from the origin sizes start at MinSizeAt, 2 at 1e5):
//   tol = PositionTolerance(world magnitude, local scale) = 1 ulp(magnitude) + 32 eps * scale,
// the error of a handful of float roundings of local lengths plus the one rounding of a result
// taken back to world coordinates (at 1e5 a float ulp is 0.0078); the local scale includes the
// cast radius. Cases within
// tol of the other answer (grazing, starting within tol of touching, the contact within tol of
// max_distance) are near-boundary cases, checked only for consistency.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "geom/oracle.h"
#include "geom/oracle_test_util.h"
#include "geom/ray_cast.h"
#include "geom/sphere_cast.h"

namespace collide {
namespace {

using oracle::CastBySdf;
using oracle::CastGap;
using oracle::CastOracle;
using oracle::CastPath;
using oracle::CrossingOnEntry;
using oracle::DVec3;
using oracle::ErrorStats;
using oracle::Failures;
using oracle::kNormalBase;
using oracle::kUnitLengthTolerance;
using oracle::Length;
using oracle::PosedShape;
using oracle::Str;
using oracle::ToDouble;

constexpr uint32_t kSeed = 0x5C0A0002;
constexpr int kCasesPerShape = 100000;

struct Totals {
  int64_t cases = 0;
  int64_t clear_hits = 0;
  int64_t clear_misses = 0;
  int64_t starts_overlapping = 0;
  int64_t near_boundary = 0;
  int64_t radius_zero_compared = 0;
  // Per kind of generated case: how many, and how many were decided clearly (not near the
  // boundary), so that the hard kinds are seen to be asserted.
  std::map<std::string, std::pair<int64_t, int64_t>> kinds;
  ErrorStats distance;
  ErrorStats point;
  ErrorStats normal;
  ErrorStats mtv;
};

Totals& GlobalTotals() {
  static Totals totals;
  return totals;
}

[[maybe_unused]] ::testing::Environment* const kSummary =
    ::testing::AddGlobalTestEnvironment(new oracle::SummaryEnvironment([] {
      const Totals& t = GlobalTotals();
      oracle::PrintSummary("sphere_cast", t.cases, t.distance);
      std::printf(
          "oracle-detail sphere_cast clear_hits=%lld clear_misses=%lld starts_overlapping=%lld "
          "near_boundary=%lld radius_zero_vs_ray_cast=%lld point_worst=%.3g/%.3g "
          "normal_worst=%.3g/%.3g mtv_depth_worst=%.3g/%.3g\n",
          static_cast<long long>(t.clear_hits), static_cast<long long>(t.clear_misses),
          static_cast<long long>(t.starts_overlapping), static_cast<long long>(t.near_boundary),
          static_cast<long long>(t.radius_zero_compared), t.point.worst_error,
          t.point.worst_tolerance, t.normal.worst_error, t.normal.worst_tolerance,
          t.mtv.worst_error, t.mtv.worst_tolerance);
      std::printf("oracle-kinds %s", "sphere_cast");
      for (const auto& [kind, counts] : t.kinds) {
        std::printf(" %s=%lld/%lld", kind.c_str(), static_cast<long long>(counts.second),
                    static_cast<long long>(counts.first));
      }
      std::printf(" (clearly decided/generated)\n");
    }));

void CheckCase(uint64_t index, const Shape& shape, const Pose& pose, float radius,
               const oracle::CastCase& cc, Failures* failures, Totals* totals) {
  const Ray& path_f = cc.ray;
  const PosedShape s = oracle::MakePosed(shape, pose);
  const CastPath path{ToDouble(path_f.origin), ToDouble(path_f.direction),
                      static_cast<double>(path_f.max_distance), static_cast<double>(radius)};
  const CastOracle o = CastBySdf(s, path);
  const double local = Length(path.origin - s.position) + oracle::BoundingRadius(s) + radius;
  const double magnitude =
      std::max(oracle::MaxAbs(path.origin), oracle::MaxAbs(s.position)) + local;
  const double tol = oracle::PositionTolerance(magnitude, local);

  CastHit hit = oracle::SentinelHit();
  const bool got = SphereCast(shape, pose, path_f, radius, &hit);
  ++totals->cases;

  auto context = [&] {
    return "seed=" + std::to_string(kSeed) + " case=" + std::to_string(index) + " kind=" + cc.kind +
           " shape=" + Str(shape) + " pose=" + Str(pose) + " path=" + Str(path_f) +
           " radius=" + Str(radius) + " | got " + (got ? Str(hit) : std::string("miss")) +
           " | oracle start_gap=" + Str(o.start_gap) + " min_gap=" + Str(o.min_gap) +
           " at t=" + Str(o.t_min) + " t_hit=" + Str(o.t_hit) + " tol=" + Str(tol);
  };
  auto fail = [&](const std::string& what) { failures->Add(what, context()); };

  if (index % 8 == 0) {
    CastHit typed = oracle::SentinelHit();
    const bool typed_got = Visit(shape, [&](const auto& concrete) {
      return SphereCast(concrete, pose, path_f, radius, &typed);
    });
    if (typed_got != got || !oracle::SameHit(typed, hit)) {
      fail("typed overload differs from SphereCast(Shape)");
    }
  }
  if (!got && !oracle::SameHit(hit, oracle::SentinelHit())) fail("a miss modified the hit");

  // Radius 0 is the ray cast, bit for bit, starts inside included.
  if (radius == 0.0f) {
    CastHit ray_hit = oracle::SentinelHit();
    const bool ray_got = Raycast(shape, pose, path_f, &ray_hit);
    ++totals->radius_zero_compared;
    if (ray_got != got) {
      fail(std::string("radius 0 differs from the ray cast, which ") +
           (ray_got ? "hits" : "misses"));
    } else if (got && !oracle::SameHit(hit, ray_hit)) {
      fail("radius 0 differs from the ray cast " + Str(ray_hit));
    }
  }

  // A cast as long as its own hit distance (or longer) reports the same hit: the query engine
  // clips the narrow phase at the best distance so far, and a tie must survive that.
  if (got && !hit.start_overlapping) {
    for (const float max_distance :
         {hit.distance, std::nextafter(hit.distance, std::numeric_limits<float>::infinity())}) {
      Ray clipped = path_f;
      clipped.max_distance = max_distance;
      CastHit again = oracle::SentinelHit();
      if (!SphereCast(shape, pose, clipped, radius, &again) || !oracle::SameHit(again, hit)) {
        fail("clipped to max_distance " + Str(max_distance) + " the cast reports " + Str(again));
      }
    }
  }

  auto check_unit = [&](const DVec3& n) {
    if (std::fabs(Length(n) - 1.0) > kUnitLengthTolerance) fail("normal not unit length");
  };

  if (o.start_gap < -tol) {
    // Clearly overlapping at the start: distance 0, the MTV direction as normal, the contact
    // point of the minimum translation; for radius 0 (a ray) the origin and -direction.
    ++totals->starts_overlapping;
    if (!got) return fail("missed a ball overlapping the shape at the start");
    if (!hit.start_overlapping || hit.distance != 0.0f) {
      return fail("a start overlapping must report distance 0 and start_overlapping");
    }
    if (radius == 0.0f) {
      if (!(hit.point == path_f.origin) || !(hit.normal == -path_f.direction)) {
        fail("radius 0 starting inside must report the origin and -direction");
      }
      return;
    }
    const DVec3 c = path.origin;
    const DVec3 n = ToDouble(hit.normal);
    const DVec3 p = ToDouble(hit.point);
    check_unit(n);
    const DVec3 u = oracle::Normalized(n);
    // Moving the ball by d along u separates it when d >= h(u) - u.c + r; the oracle's
    // minimum over all directions is the penetration depth.
    const oracle::ClosestPointOracle cp = oracle::ClosestPointBySupport(s, c);
    const double min_depth = radius - cp.signed_distance;
    const double depth_along = oracle::PlaneGap(s, c, u) + radius;
    totals->mtv.Add(std::fabs(depth_along - min_depth), 2.0 * tol);
    if (depth_along > min_depth + 2.0 * tol) {
      fail("normal is not the minimum translation direction: depth along it " + Str(depth_along) +
           ", oracle minimum " + Str(min_depth) + " along " + Str(cp.normal));
    }
    if (std::fabs(oracle::Sdf(s, p)) > tol) fail("MTV contact point off the surface");
    if (std::fabs(oracle::PlaneGap(s, p, u)) > 2.0 * tol) {
      fail("MTV contact point not where the normal's support plane touches the shape");
    }
    const DVec3 cp_offset = c - p;
    if (Length(cp_offset - Dot(cp_offset, u) * u) > 2.0 * tol) {
      fail("MTV contact point not on the line from the centre along the normal");
    }
    return;
  }

  // Checks a reported first contact: the point on the target's surface and on the ball at
  // impact, the normal the target's outward normal there.
  auto check_contact = [&](bool record) {
    const DVec3 p = ToDouble(hit.point);
    const DVec3 centre = path.origin + static_cast<double>(hit.distance) * path.direction;
    const double point_error =
        std::max(std::fabs(oracle::Sdf(s, p)), std::fabs(Length(p - centre) - radius));
    if (point_error > tol) fail("contact point off the surface or off the ball at impact");
    const DVec3 n = ToDouble(hit.normal);
    check_unit(n);
    const DVec3 u = oracle::Normalized(n);
    if (std::fabs(oracle::PlaneGap(s, p, u)) > 2.0 * tol) {
      fail("normal is not an outward normal at the contact point (support plane gap " +
           Str(oracle::PlaneGap(s, p, u)) + ")");
    }
    if (Length((centre - p) - radius * u) > 2.0 * tol) {
      fail("normal does not point from the contact point to the ball's centre");
    }
    // The gradient of the SDF at the centre is the outward normal at the nearest surface point.
    // Where the gradient vanishes (a radius-0 cast exactly through a point shape) every
    // direction is an outward normal and the support-plane check is the whole contract.
    if (record) totals->point.Add(point_error, tol);
    const DVec3 g = oracle::SdfNormal(s, centre);
    if (Length(g) > 0.5) {
      const double normal_error = Length(n - g);
      const double normal_tol = oracle::NormalSpread(s, centre, 2.0 * tol) + kNormalBase;
      if (normal_error > normal_tol) {
        fail("normal differs from the SDF gradient " + Str(g) + " by " + Str(normal_error));
      }
      if (record) totals->normal.Add(normal_error, normal_tol);
    }
  };

  if (o.start_gap > tol) {
    if (o.min_gap > tol) {
      ++totals->clear_misses;
      if (got) fail("invented a hit: the oracle's ball passes clear of the shape");
      return;
    }
    if (o.min_gap < -tol) {
      const double t_lo = CrossingOnEntry(s, path, tol, o.t_min);
      const double t_hi = CrossingOnEntry(s, path, -tol, o.t_min);
      if (t_hi <= path_f.max_distance) {
        ++totals->clear_hits;
        if (!got) return fail("missed a hit");
        if (hit.start_overlapping) fail("start_overlapping set for a ball starting clear");
        const double t = hit.distance;
        if (t < t_lo || t > t_hi) {
          fail("distance outside the oracle's contact window [" + Str(t_lo) + ", " + Str(t_hi) +
               "]");
        }
        totals->distance.Add(std::fabs(t - o.t_hit), t < o.t_hit ? o.t_hit - t_lo : t_hi - o.t_hit);
        check_contact(true);
        return;
      }
      if (t_lo > path_f.max_distance) {
        ++totals->clear_misses;
        if (got) fail("invented a hit beyond max_distance");
        return;
      }
    }
  }
  // Near-boundary cases.
  ++totals->near_boundary;
  if (!got) {
    if (o.min_gap < -tol && o.t_min <= path_f.max_distance && o.start_gap <= tol) {
      fail("missed a ball that starts touching and moves in");
    }
    return;
  }
  if (hit.start_overlapping) {
    if (o.start_gap > tol) fail("start_overlapping for a start clearly apart");
    return;
  }
  if (hit.distance > path_f.max_distance) fail("distance beyond max_distance");
  if (std::fabs(CastGap(s, path, hit.distance)) > tol) {
    fail("near-boundary hit at a distance where the ball does not touch the shape");
  }
  check_contact(false);
}

float RandomCastRadius(std::mt19937& rng) {
  if (oracle::Chance(rng, 0.15)) return 0.0f;
  return static_cast<float>(oracle::LogUniform(rng, 0.01, 100.0));
}

void RunShape(ShapeType type) {
  Failures failures;
  Totals& totals = GlobalTotals();
  for (int i = 0; i < kCasesPerShape; ++i) {
    const uint64_t index = static_cast<uint64_t>(type) * 1000000 + i;
    std::mt19937 rng = oracle::CaseRng(kSeed, index);
    const Shape drawn = oracle::RandomShape(rng, type);
    const Pose pose = oracle::RandomPose(rng);
    const Shape shape = oracle::FitToPose(drawn, pose);
    const float radius = RandomCastRadius(rng);
    const oracle::CastCase cc = oracle::RandomCast(rng, shape, pose, radius);
    const int64_t near_before = totals.near_boundary;
    CheckCase(index, shape, pose, radius, cc, &failures, &totals);
    auto& counts = totals.kinds[cc.kind];
    ++counts.first;
    if (totals.near_boundary == near_before) ++counts.second;
  }
  EXPECT_EQ(failures.count(), 0) << "failing cases of " << oracle::ShapeName(type) << " (seed "
                                 << kSeed << "; the first " << oracle::MaxReports()
                                 << " are listed above)";
}

TEST(SphereCastOracle, AgreesWithSphereTracingOnRandomSphereCases) { RunShape(ShapeType::kSphere); }

TEST(SphereCastOracle, AgreesWithSphereTracingOnRandomBoxCases) { RunShape(ShapeType::kBox); }

TEST(SphereCastOracle, AgreesWithSphereTracingOnRandomCapsuleCases) {
  RunShape(ShapeType::kCapsule);
}

}  // namespace
}  // namespace collide
