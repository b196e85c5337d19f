// Randomised tests of Overlap (src/geom/overlap.h) against two independent double-precision
// oracles of tests/geom/oracle.h:
//   - mu = min over x of Sdf_A(x) + Sdf_B(x), by the ellipsoid method with certified bounds: it
//     is the distance when the shapes are apart, and a point where it is -rho < 0 proves that
//     they still overlap after any translation of length <= rho;
//   - U = min over unit n of h_A(n) + h_B(-n), by direction sampling and refinement on the
//     support functions: a direction where it is negative separates them (by -U), and when
//     they overlap it is the penetration depth (this one decides for two flat boxes crossing,
//     where no point lies inside both).
//
// Every ordered pair of shape types; kCasesPerPair cases each (so 9 * kCasesPerPair for Overlap),
// each from its own std::mt19937 stream (CaseRng(kSeed, case)), printed with every failure. B is
// placed along a random direction (or one of A's axes) where the shapes' extents along it meet,
// plus a gap of exactly 0, +-1e-9..1e-2 (relative), or anything; or near A's centre. Sizes
// 0.01..100 with zero half extents, zero radii and capsule half height 0; rotations identity /
// quarter and half turns / random; positions up to +-1e5 (where sizes start at MinSizeAt, 2 at
// 1e5, so that both shapes are many tolerances large).
//
// Tolerance, from float32 precision: tol = PositionTolerance(world magnitude, local scale) =
// 1 ulp(magnitude) + 32 eps * scale (at 1e5 an ulp is 0.0078), the local scale being the centres'
// distance plus both sizes: each shape's surface is known to the implementation only to about
// that. Clearly apart (distance > tol) must give false, clearly overlapping (robust to any
// translation by tol, or penetrating deeper than tol) must give true; the cases in between are
// near-boundary, counted and not asserted. Both argument orders are checked.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "geom/oracle.h"
#include "geom/oracle_test_util.h"
#include "geom/overlap.h"

namespace collide {
namespace {

using oracle::DVec3;
using oracle::ErrorStats;
using oracle::Failures;
using oracle::Length;
using oracle::PosedShape;
using oracle::Str;

constexpr uint32_t kSeed = 0x0E1A0005;
constexpr int kCasesPerPair = 100000;

struct Totals {
  int64_t cases = 0;
  int64_t clearly_apart = 0;
  int64_t clearly_overlapping = 0;
  int64_t near_boundary = 0;
  int64_t near_boundary_disagreeing = 0;
  int64_t near_boundary_asymmetric = 0;
  // Disagreements of the implementation with the oracle's sign, as |signed distance| / tol.
  ErrorStats disagreement;
};

Totals& GlobalTotals() {
  static Totals totals;
  return totals;
}

[[maybe_unused]] ::testing::Environment* const kSummary =
    ::testing::AddGlobalTestEnvironment(new oracle::SummaryEnvironment([] {
      const Totals& t = GlobalTotals();
      // The worst error is the largest |oracle signed distance| of a case where the
      // implementation's answer has the other sign (0 when it never does).
      oracle::PrintSummary("overlap", t.cases, t.disagreement);
      std::printf(
          "oracle-detail overlap clearly_apart=%lld clearly_overlapping=%lld near_boundary=%lld "
          "near_boundary_disagreeing=%lld near_boundary_asymmetric=%lld\n",
          static_cast<long long>(t.clearly_apart), static_cast<long long>(t.clearly_overlapping),
          static_cast<long long>(t.near_boundary),
          static_cast<long long>(t.near_boundary_disagreeing),
          static_cast<long long>(t.near_boundary_asymmetric));
    }));

void CheckCase(uint64_t index, const Shape& a, const Pose& pa, const Shape& b, const Pose& pb,
               const char* kind, Failures* failures, Totals* totals) {
  const PosedShape sa = oracle::MakePosed(a, pa);
  const PosedShape sb = oracle::MakePosed(b, pb);
  const double local =
      Length(sa.position - sb.position) + oracle::BoundingRadius(sa) + oracle::BoundingRadius(sb);
  const double magnitude =
      std::max(oracle::MaxAbs(sa.position), oracle::MaxAbs(sb.position)) + local;
  const double tol = oracle::PositionTolerance(magnitude, local);
  // Double rounding of the oracle's own evaluation at these coordinates.
  const double tiny = 1e-9 * (local + 1.0) + 1e-12 * magnitude;

  const bool got = Overlap(a, pa, b, pb);
  const bool swapped = Overlap(b, pb, a, pa);
  ++totals->cases;

  const oracle::CertifiedMinimum mu = oracle::MinSdfSum(sa, sb, tol, 1e-3 * tol);
  // The oracle's verdict: +1 apart, -1 overlapping, 0 near the boundary; and its estimate of
  // the signed distance (> 0 apart, minus the depth when overlapping).
  int verdict = 0;
  double signed_distance = 0.5 * (mu.lower + mu.upper);
  double u_value = 0.0;
  bool have_u = false;
  if (mu.lower > tol) {
    verdict = 1;
  } else if (mu.upper < -tol) {
    verdict = -1;
  } else {
    u_value = oracle::SupportGapMinimum(sa, sb).value;
    have_u = true;
    signed_distance = -u_value;
    if (u_value < -tol) {
      verdict = 1;  // a separating direction with a gap > tol
    } else if (u_value > tol && mu.upper <= tiny) {
      verdict = -1;  // a common point, and no translation shorter than u_value separates them
    }
  }

  auto context = [&] {
    return "seed=" + std::to_string(kSeed) + " case=" + std::to_string(index) + " kind=" + kind +
           " A=" + Str(a) + " at " + Str(pa) + " B=" + Str(b) + " at " + Str(pb) + " | got " +
           (got ? "true" : "false") + " swapped " + (swapped ? "true" : "false") +
           " | oracle min(sdfA + sdfB) in [" + Str(mu.lower) + ", " + Str(mu.upper) + "]" +
           (have_u ? " support gap minimum " + Str(u_value) : std::string()) + " tol=" + Str(tol);
  };
  auto fail = [&](const std::string& what) { failures->Add(what, context()); };

  if (index % 8 == 0) {
    const bool typed = Visit(a, [&](const auto& ca) {
      return Visit(b, [&](const auto& cb) { return Overlap(ca, pa, cb, pb); });
    });
    if (typed != got) fail("typed overload differs from Overlap(Shape, Shape)");
  }
  // Cross-check of the two oracles on a sample of the clear cases: both measure the distance.
  if (index % 16 == 1 && verdict == 1 && !have_u) {
    const double u = oracle::SupportGapMinimum(sa, sb).value;
    if (std::fabs(-u - signed_distance) > 0.5 * (mu.upper - mu.lower) + tiny) {
      fail("oracle inconsistency: the support gap minimum is " + Str(u));
    }
  }

  totals->disagreement.Add((signed_distance > 0.0) == got ? std::fabs(signed_distance) : 0.0, tol);
  if (verdict == 1) {
    ++totals->clearly_apart;
    if (got || swapped) fail("overlap reported for shapes clearly apart");
  } else if (verdict == -1) {
    ++totals->clearly_overlapping;
    if (!got || !swapped) fail("no overlap reported for shapes clearly overlapping");
  } else {
    // Within tol of touching the answer depends on rounding, and may even differ between the
    // two argument orders (each works in its first shape's frame).
    ++totals->near_boundary;
    if ((signed_distance > 0.0) == got) ++totals->near_boundary_disagreeing;
    if (got != swapped) ++totals->near_boundary_asymmetric;
  }
}

void RunPair(ShapeType type_a, ShapeType type_b) {
  Failures failures;
  Totals& totals = GlobalTotals();
  for (int i = 0; i < kCasesPerPair; ++i) {
    const uint64_t index =
        (static_cast<uint64_t>(type_a) * 3 + static_cast<uint64_t>(type_b)) * 1000000 + i;
    std::mt19937 rng = oracle::CaseRng(kSeed, index);
    const Shape drawn_a = oracle::RandomShape(rng, type_a);
    const Pose pa = oracle::RandomPose(rng);
    // B is placed next to A, so both get sizes fit for A's position.
    const Shape a = oracle::FitToPose(drawn_a, pa);
    const Shape b = oracle::FitToPose(oracle::RandomShape(rng, type_b), pa);
    const char* kind = "";
    const Pose pb = oracle::RandomPairPose(rng, a, pa, b, 0.3, &kind);
    CheckCase(index, a, pa, b, pb, kind, &failures, &totals);
  }
  EXPECT_EQ(failures.count(), 0) << "failing cases of " << oracle::ShapeName(type_a) << "-"
                                 << oracle::ShapeName(type_b) << " (seed " << kSeed
                                 << "; the first " << oracle::MaxReports() << " are listed above)";
}

constexpr ShapeType kSphere = ShapeType::kSphere;
constexpr ShapeType kBox = ShapeType::kBox;
constexpr ShapeType kCapsule = ShapeType::kCapsule;

TEST(OverlapOracle, AgreesOnRandomSphereSpherePairs) { RunPair(kSphere, kSphere); }
TEST(OverlapOracle, AgreesOnRandomSphereBoxPairs) { RunPair(kSphere, kBox); }
TEST(OverlapOracle, AgreesOnRandomSphereCapsulePairs) { RunPair(kSphere, kCapsule); }
TEST(OverlapOracle, AgreesOnRandomBoxSpherePairs) { RunPair(kBox, kSphere); }
TEST(OverlapOracle, AgreesOnRandomBoxBoxPairs) { RunPair(kBox, kBox); }
TEST(OverlapOracle, AgreesOnRandomBoxCapsulePairs) { RunPair(kBox, kCapsule); }
TEST(OverlapOracle, AgreesOnRandomCapsuleSpherePairs) { RunPair(kCapsule, kSphere); }
TEST(OverlapOracle, AgreesOnRandomCapsuleBoxPairs) { RunPair(kCapsule, kBox); }
TEST(OverlapOracle, AgreesOnRandomCapsuleCapsulePairs) { RunPair(kCapsule, kCapsule); }

}  // namespace
}  // namespace collide
