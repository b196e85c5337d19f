// Randomised tests of Raycast (src/geom/ray_cast.h) against the double-precision oracle of
// tests/geom/oracle.h: the first root of phi(t) = Sdf(origin + t * direction) on the convex
// phi, found by golden-section search and bisection, never by solving the shape's equations.
//
// 100,000 cases per shape type (300,000 for Raycast), each from its own std::mt19937 stream
// (CaseRng(kSeed, case)), printed with every failure; far from the origin sizes start at
// MinSizeAt (2 at 1e5), many tolerances large. Every hit must be reported again, identically, by
// the same ray clipped at its distance. Tolerances, all from float32 precision:
//   tol = PositionTolerance(world magnitude, local scale) = 1 ulp(magnitude) + 32 eps * scale,
// the error of a handful of float roundings of local lengths plus the one rounding of a result
// taken back to world coordinates (at 1e5 a float ulp is 0.0078). A case counts as a clear hit, a
// clear miss or a clear start inside only when the oracle's answer is more than tol away from the
// other answer; the rest (grazing within tol, starting within tol of the surface, the entry within
// tol of max_distance) are near-boundary cases, checked only for consistency (a reported hit must
// lie within tol of the surface).

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
using oracle::PosedShape;
using oracle::Str;
using oracle::ToDouble;

constexpr uint32_t kSeed = 0x7A7C0001;
constexpr int kCasesPerShape = 100000;

struct Totals {
  int64_t cases = 0;
  int64_t clear_hits = 0;
  int64_t clear_misses = 0;
  int64_t starts_inside = 0;
  int64_t near_boundary = 0;
  // Per kind of generated case: how many, and how many were decided clearly (not near the
  // boundary), so that the hard kinds are seen to be asserted.
  std::map<std::string, std::pair<int64_t, int64_t>> kinds;
  ErrorStats distance;
  ErrorStats point;
  ErrorStats normal;
};

Totals& GlobalTotals() {
  static Totals totals;
  return totals;
}

[[maybe_unused]] ::testing::Environment* const kSummary =
    ::testing::AddGlobalTestEnvironment(new oracle::SummaryEnvironment([] {
      const Totals& t = GlobalTotals();
      oracle::PrintSummary("ray_cast", t.cases, t.distance);
      std::printf(
          "oracle-detail ray_cast clear_hits=%lld clear_misses=%lld starts_inside=%lld "
          "near_boundary=%lld point_worst=%.3g/%.3g normal_worst=%.3g/%.3g\n",
          static_cast<long long>(t.clear_hits), static_cast<long long>(t.clear_misses),
          static_cast<long long>(t.starts_inside), static_cast<long long>(t.near_boundary),
          t.point.worst_error, t.point.worst_tolerance, t.normal.worst_error,
          t.normal.worst_tolerance);
      std::printf("oracle-kinds %s", "ray_cast");
      for (const auto& [kind, counts] : t.kinds) {
        std::printf(" %s=%lld/%lld", kind.c_str(), static_cast<long long>(counts.second),
                    static_cast<long long>(counts.first));
      }
      std::printf(" (clearly decided/generated)\n");
    }));

// Checks one case; returns nothing, records into `failures` and `totals`.
void CheckCase(uint64_t index, const Shape& shape, const Pose& pose, const oracle::CastCase& cc,
               Failures* failures, Totals* totals) {
  const Ray& ray = cc.ray;
  const PosedShape s = oracle::MakePosed(shape, pose);
  const CastPath path{ToDouble(ray.origin), ToDouble(ray.direction),
                      static_cast<double>(ray.max_distance), 0.0};
  const CastOracle o = CastBySdf(s, path);
  const double local = oracle::Length(path.origin - s.position) + oracle::BoundingRadius(s);
  const double magnitude =
      std::max(oracle::MaxAbs(path.origin), oracle::MaxAbs(s.position)) + local;
  const double tol = oracle::PositionTolerance(magnitude, local);

  CastHit hit = oracle::SentinelHit();
  const bool got = Raycast(shape, pose, ray, &hit);
  ++totals->cases;

  auto context = [&] {
    return "seed=" + std::to_string(kSeed) + " case=" + std::to_string(index) + " kind=" + cc.kind +
           " shape=" + Str(shape) + " pose=" + Str(pose) + " ray=" + Str(ray) + " | got " +
           (got ? Str(hit) : std::string("miss")) + " | oracle start_gap=" + Str(o.start_gap) +
           " min_gap=" + Str(o.min_gap) + " at t=" + Str(o.t_min) + " t_hit=" + Str(o.t_hit) +
           " tol=" + Str(tol);
  };
  auto fail = [&](const std::string& what) { failures->Add(what, context()); };

  // The typed overload must give the same answer as the dispatch through Shape.
  if (index % 8 == 0) {
    CastHit typed = oracle::SentinelHit();
    const bool typed_got =
        Visit(shape, [&](const auto& concrete) { return Raycast(concrete, pose, ray, &typed); });
    if (typed_got != got || !oracle::SameHit(typed, hit))
      fail("typed overload differs from Raycast(Shape)");
  }
  if (!got && !oracle::SameHit(hit, oracle::SentinelHit())) fail("a miss modified the hit");

  // A ray as long as its own hit distance (or longer) reports the same hit: the query engine
  // clips the narrow phase at the best distance so far, and a tie must survive that.
  if (got && !hit.start_overlapping) {
    for (const float max_distance :
         {hit.distance, std::nextafter(hit.distance, std::numeric_limits<float>::infinity())}) {
      Ray clipped = ray;
      clipped.max_distance = max_distance;
      CastHit again = oracle::SentinelHit();
      if (!Raycast(shape, pose, clipped, &again) || !oracle::SameHit(again, hit)) {
        fail("clipped to max_distance " + Str(max_distance) + " the ray reports " + Str(again));
      }
    }
  }

  if (o.start_gap < -tol) {
    // Clearly inside: distance 0, the origin, -direction.
    ++totals->starts_inside;
    if (!got) return fail("missed a ray starting inside");
    if (!hit.start_overlapping || hit.distance != 0.0f || !(hit.point == ray.origin) ||
        !(hit.normal == -ray.direction)) {
      fail("a ray starting inside must report distance 0, the origin, normal -direction");
    }
    return;
  }

  // Checks a reported entry at hit.distance: on the surface, on the ray, and a valid outward
  // normal there; returns the residual |phi(t)|.
  auto check_entry = [&](bool record) {
    const DVec3 p = ToDouble(hit.point);
    const DVec3 on_ray = path.origin + static_cast<double>(hit.distance) * path.direction;
    const double point_error = std::max(oracle::Length(p - on_ray), std::fabs(oracle::Sdf(s, p)));
    if (point_error > tol) fail("hit point off the surface or off the ray");
    const DVec3 n = ToDouble(hit.normal);
    if (std::fabs(oracle::Length(n) - 1.0) > kUnitLengthTolerance) fail("normal not unit length");
    // A valid outward normal at p: the shape lies behind the plane through p with normal n.
    if (std::fabs(oracle::PlaneGap(s, p, oracle::Normalized(n))) > 2.0 * tol) {
      fail("normal is not an outward normal at the hit point (support plane gap " +
           Str(oracle::PlaneGap(s, p, oracle::Normalized(n))) + ")");
    }
    if (record) totals->point.Add(point_error, tol);
    // Where the gradient vanishes (a hit exactly on a point shape) every direction is an
    // outward normal and the support-plane check is the whole contract.
    const DVec3 g = oracle::SdfNormal(s, p);
    if (oracle::Length(g) > 0.5) {
      const double normal_error = oracle::Length(n - g);
      const double normal_tol = oracle::NormalSpread(s, p, 2.0 * tol) + kNormalBase;
      if (normal_error > normal_tol) {
        fail("normal differs from the SDF gradient " + Str(g) + " by " + Str(normal_error));
      }
      if (record) totals->normal.Add(normal_error, normal_tol);
    }
  };

  if (o.start_gap > tol) {
    if (o.min_gap > tol) {
      ++totals->clear_misses;
      if (got) fail("invented a hit: the oracle's ray passes clear of the shape");
      return;
    }
    if (o.min_gap < -tol) {
      // Entry window: phi falls from +tol to -tol over [t_lo, t_hi] (wide when grazing).
      const double t_lo = CrossingOnEntry(s, path, tol, o.t_min);
      const double t_hi = CrossingOnEntry(s, path, -tol, o.t_min);
      if (t_hi <= ray.max_distance) {
        ++totals->clear_hits;
        if (!got) return fail("missed a hit");
        if (hit.start_overlapping) fail("start_overlapping set for a ray starting outside");
        const double t = hit.distance;
        if (t < t_lo || t > t_hi) {
          fail("distance outside the oracle's entry window [" + Str(t_lo) + ", " + Str(t_hi) + "]");
        }
        totals->distance.Add(std::fabs(t - o.t_hit), t < o.t_hit ? o.t_hit - t_lo : t_hi - o.t_hit);
        check_entry(true);
        return;
      }
      if (t_lo > ray.max_distance) {
        ++totals->clear_misses;
        if (got) fail("invented a hit beyond max_distance");
        return;
      }
    }
  }
  // Near-boundary: grazing, starting on the surface, or entering at max_distance. A reported
  // hit must still be consistent.
  ++totals->near_boundary;
  if (!got) {
    if (o.min_gap < -tol && o.t_min <= ray.max_distance && o.start_gap <= tol) {
      fail("missed a ray that starts on the surface and goes in");
    }
    return;
  }
  if (hit.start_overlapping) {
    if (o.start_gap > tol) fail("start_overlapping for a start clearly outside");
    return;
  }
  if (hit.distance > ray.max_distance) fail("distance beyond max_distance");
  if (std::fabs(CastGap(s, path, hit.distance)) > tol) {
    fail("near-boundary hit at a distance where the ray is not at the surface");
  }
  check_entry(false);
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
    const oracle::CastCase cc = oracle::RandomCast(rng, shape, pose, 0.0f);
    const int64_t near_before = totals.near_boundary;
    CheckCase(index, shape, pose, cc, &failures, &totals);
    auto& counts = totals.kinds[cc.kind];
    ++counts.first;
    if (totals.near_boundary == near_before) ++counts.second;
  }
  EXPECT_EQ(failures.count(), 0) << "failing cases of " << oracle::ShapeName(type) << " (seed "
                                 << kSeed << "; the first " << oracle::MaxReports()
                                 << " are listed above)";
}

TEST(RayCastOracle, AgreesWithSphereTracingOnRandomSphereCases) { RunShape(ShapeType::kSphere); }

TEST(RayCastOracle, AgreesWithSphereTracingOnRandomBoxCases) { RunShape(ShapeType::kBox); }

TEST(RayCastOracle, AgreesWithSphereTracingOnRandomCapsuleCases) { RunShape(ShapeType::kCapsule); }

}  // namespace
}  // namespace collide
