// Randomised tests of ClosestPoint (src/geom/closest_point.h) against the double-precision
// oracle of tests/geom/oracle.h: the signed distance as -min over unit n of (h(n) - n.p), the
// support-plane definition minimised by direction sampling and refinement (outside: the largest
// gap to a support plane; inside: the depth below the nearest one), cross-checked against the
// SDF formula; the normal against the SDF's numerical gradient.
//
// 100,000 cases per shape type (300,000 for ClosestPoint), each from its own std::mt19937 stream
// (CaseRng(kSeed, case)), printed with every failure: query points around, inside, on and within
// 1e-9..1e-2 of the surface, on a box's medial planes or a capsule's axis (several nearest
// points), and far away; sizes 0.01..100 with zero sizes, rotations identity / quarter and half
// turns / random, positions up to +-1e5 (where sizes start at MinSizeAt, 2 at 1e5). Tolerance,
// from float32 precision:
//   tol = PositionTolerance(world magnitude, local scale) = 1 ulp(magnitude) + 32 eps * scale,
// with the local scale |p - position| + size: the query point is taken into the local frame
// (rounded at the world magnitude, 0.0078 per ulp at 1e5), clamped or projected there with a few
// roundings of local lengths, and the nearest point taken back to world.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "geom/closest_point.h"
#include "geom/oracle.h"
#include "geom/oracle_test_util.h"

namespace collide {
namespace {

using oracle::DVec3;
using oracle::ErrorStats;
using oracle::Failures;
using oracle::kNormalBase;
using oracle::kUnitLengthTolerance;
using oracle::Length;
using oracle::PosedShape;
using oracle::Str;
using oracle::ToDouble;

constexpr uint32_t kSeed = 0xC105E004;
constexpr int kCasesPerShape = 100000;

struct Totals {
  int64_t cases = 0;
  int64_t inside = 0;
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
      oracle::PrintSummary("closest_point", t.cases, t.distance);
      std::printf(
          "oracle-detail closest_point inside=%lld point_worst=%.3g/%.3g "
          "normal_worst=%.3g/%.3g\n",
          static_cast<long long>(t.inside), t.point.worst_error, t.point.worst_tolerance,
          t.normal.worst_error, t.normal.worst_tolerance);
    }));

void CheckCase(uint64_t index, const Shape& shape, const Pose& pose, const Vec3& query,
               const char* kind, Failures* failures, Totals* totals) {
  const PosedShape s = oracle::MakePosed(shape, pose);
  const DVec3 p = ToDouble(query);
  const oracle::ClosestPointOracle o = oracle::ClosestPointBySupport(s, p);
  const double sdf = oracle::Sdf(s, p);
  const double local = Length(p - s.position) + oracle::BoundingRadius(s);
  const double magnitude = std::max(oracle::MaxAbs(p), oracle::MaxAbs(s.position)) + local;
  const double tol = oracle::PositionTolerance(magnitude, local);

  const ClosestPointResult got = ClosestPoint(shape, pose, query);
  ++totals->cases;
  if (o.signed_distance < 0.0) ++totals->inside;

  auto fail = [&](const std::string& what) {
    failures->Add(what, "seed=" + std::to_string(kSeed) + " case=" + std::to_string(index) +
                            " kind=" + kind + " shape=" + Str(shape) + " pose=" + Str(pose) +
                            " p=" + Str(query) + " | got point " + Str(got.point) +
                            " signed_distance " + Str(got.signed_distance) + " normal " +
                            Str(got.normal) + " | oracle signed_distance " +
                            Str(o.signed_distance) + " normal " + Str(o.normal) +
                            " tol=" + Str(tol));
  };

  if (index % 8 == 0) {
    const ClosestPointResult typed =
        Visit(shape, [&](const auto& concrete) { return ClosestPoint(concrete, pose, query); });
    if (!(typed.point == got.point) || typed.signed_distance != got.signed_distance ||
        !(typed.normal == got.normal)) {
      fail("typed overload differs from ClosestPoint(Shape)");
    }
  }
  // The two definitions of the oracle agree (to double rounding at the coordinates' size).
  if (std::fabs(o.signed_distance - sdf) > 1e-9 * (local + 1.0) + 1e-13 * magnitude) {
    fail("oracle inconsistency: support planes give " + Str(o.signed_distance) + ", the SDF " +
         Str(sdf));
  }

  const double distance_error = std::fabs(got.signed_distance - o.signed_distance);
  totals->distance.Add(distance_error, tol);
  if (distance_error > tol) fail("signed distance off by " + Str(distance_error));

  const DVec3 point = ToDouble(got.point);
  const DVec3 n = ToDouble(got.normal);
  if (std::fabs(Length(n) - 1.0) > kUnitLengthTolerance) fail("normal not unit length");
  const DVec3 u = oracle::Normalized(n);
  // The nearest point: on the surface, and p = point + signed_distance * normal.
  const double point_error =
      std::max(std::fabs(oracle::Sdf(s, point)),
               Length(p - point - static_cast<double>(got.signed_distance) * u));
  totals->point.Add(point_error, 2.0 * tol);
  if (point_error > 2.0 * tol) fail("point off the surface or not along the normal from p");
  // The normal is an outward normal at the point (its support plane touches there), and the
  // one that realises the distance: h(n) - n.p = -(signed distance).
  if (std::fabs(oracle::PlaneGap(s, point, u)) > 2.0 * tol) {
    fail("normal is not an outward normal at the point (support plane gap " +
         Str(oracle::PlaneGap(s, point, u)) + ")");
  }
  if (std::fabs(oracle::PlaneGap(s, p, u) + o.signed_distance) > 2.0 * tol) {
    fail("the normal's support plane is at " + Str(oracle::PlaneGap(s, p, u)) +
         " from p, not at minus the signed distance");
  }
  // Against the gradient of the SDF at p (the outward normal at the nearest point), relaxed by
  // the gradient's spread within 2 tol of p (large where the nearest point is not unique).
  // Where the gradient vanishes (p at a point shape, or on a zero-size box) every direction is
  // valid and the support-plane checks above are the whole contract.
  const DVec3 g = oracle::SdfNormal(s, p);
  if (Length(g) > 0.5) {
    const double normal_error = Length(n - g);
    const double normal_tol = oracle::NormalSpread(s, p, 2.0 * tol) + kNormalBase;
    totals->normal.Add(normal_error, normal_tol);
    if (normal_error > normal_tol) {
      fail("normal differs from the SDF gradient " + Str(g) + " by " + Str(normal_error));
    }
  }
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
    const char* kind = "";
    const Vec3 query = oracle::RandomQueryPoint(rng, shape, pose, &kind);
    CheckCase(index, shape, pose, query, kind, &failures, &totals);
  }
  EXPECT_EQ(failures.count(), 0) << "failing cases of " << oracle::ShapeName(type) << " (seed "
                                 << kSeed << "; the first " << oracle::MaxReports()
                                 << " are listed above)";
}

TEST(ClosestPointOracle, AgreesWithSupportPlanesOnRandomSphereCases) {
  RunShape(ShapeType::kSphere);
}

TEST(ClosestPointOracle, AgreesWithSupportPlanesOnRandomBoxCases) { RunShape(ShapeType::kBox); }

TEST(ClosestPointOracle, AgreesWithSupportPlanesOnRandomCapsuleCases) {
  RunShape(ShapeType::kCapsule);
}

}  // namespace
}  // namespace collide
