// Randomised tests of Penetrate (src/geom/penetration.h) against the double-precision oracles of
// tests/geom/oracle.h:
//   - the depth: U = min over unit n of h_A(n) + h_B(-n), how far B must move along n before
//     the shapes stop overlapping along n, minimised by direction sampling and refinement on
//     the support functions (never the separating-axis set or the pair's closed form);
//   - overlap or not: min over x of Sdf_A(x) + Sdf_B(x) with certified bounds (see
//     overlap_oracle_test.cc), and the sign of U.
// The reported normal is not compared with a direction (the minimum translation may not be
// unique) but evaluated: h_A(n) + h_B(-n) must equal the reported depth (moving B by depth * n
// leaves the shapes touching along n) and the depth must not exceed U (no shorter translation
// exists). The contact point must lie on A's surface, and point - depth * normal on B's.
//
// Every ordered pair of shape types; kCasesPerPair cases each (so 9 * kCasesPerPair for
// Penetrate), each from its own std::mt19937 stream (CaseRng(kSeed, case)), printed with every
// failure; B is placed as in the overlap test but mostly overlapping. Both argument orders are
// checked against the same oracle; far from the origin sizes start at MinSizeAt (2 at 1e5).
// Tolerance, from float32 precision: tol =
// PositionTolerance(world magnitude, local scale) = 1 ulp(magnitude) + 32 eps * scale (at 1e5 an
// ulp is 0.0078), the local scale being the centres' distance plus both sizes; depths compare to
// 2 tol (each shape's surface is known to tol).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "geom/oracle.h"
#include "geom/oracle_test_util.h"
#include "geom/penetration.h"

namespace collide {
namespace {

using oracle::DVec3;
using oracle::ErrorStats;
using oracle::Failures;
using oracle::kUnitLengthTolerance;
using oracle::Length;
using oracle::PosedShape;
using oracle::Str;
using oracle::ToDouble;

constexpr uint32_t kSeed = 0x9E7E0006;
constexpr int kCasesPerPair = 100000;

struct Totals {
  int64_t cases = 0;
  int64_t clearly_apart = 0;
  int64_t clearly_overlapping = 0;
  int64_t near_boundary = 0;
  ErrorStats depth;
  ErrorStats point;
};

Totals& GlobalTotals() {
  static Totals totals;
  return totals;
}

[[maybe_unused]] ::testing::Environment* const kSummary =
    ::testing::AddGlobalTestEnvironment(new oracle::SummaryEnvironment([] {
      const Totals& t = GlobalTotals();
      oracle::PrintSummary("penetration", t.cases, t.depth);
      std::printf(
          "oracle-detail penetration clearly_apart=%lld clearly_overlapping=%lld "
          "near_boundary=%lld point_worst=%.3g/%.3g\n",
          static_cast<long long>(t.clearly_apart), static_cast<long long>(t.clearly_overlapping),
          static_cast<long long>(t.near_boundary), t.point.worst_error, t.point.worst_tolerance);
    }));

Penetration Sentinel() { return Penetration{-123.0f, Vec3{-7, -7, -7}, Vec3{-7, -7, -7}}; }

bool Same(const Penetration& a, const Penetration& b) {
  return a.depth == b.depth && a.normal == b.normal && a.point == b.point;
}

// The oracle's view of one pair.
struct PairOracle {
  int verdict = 0;     // +1 clearly apart, -1 clearly overlapping, 0 near the boundary
  double depth = 0.0;  // U: the least translation found (minus the distance when apart)
  oracle::CertifiedMinimum mu;
};

// Checks one call Penetrate(a, pa, b, pb) against the oracle of the pair (A, B).
void CheckCall(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, const PairOracle& o,
               double tol, bool record, const std::string& order,
               const std::function<void(const std::string&)>& fail_with, Totals* totals) {
  const PosedShape sa = oracle::MakePosed(a, pa);
  const PosedShape sb = oracle::MakePosed(b, pb);
  Penetration out = Sentinel();
  const bool got = Penetrate(a, pa, b, pb, &out);
  auto fail = [&](const std::string& what) {
    fail_with(
        order + ": " + what + " | got " +
        (got ? "depth " + Str(out.depth) + " normal " + Str(out.normal) + " point " + Str(out.point)
             : std::string("false")));
  };
  if (!got) {
    if (!Same(out, Sentinel())) fail("returned false but modified the result");
    if (o.verdict == -1) fail("no penetration reported for shapes clearly overlapping");
    return;
  }
  if (o.verdict == 1) return fail("penetration reported for shapes clearly apart");
  const double depth = out.depth;
  const DVec3 n = ToDouble(out.normal);
  if (!(depth >= 0.0)) fail("negative depth");
  if (std::fabs(Length(n) - 1.0) > kUnitLengthTolerance) fail("normal not unit length");
  const DVec3 u = oracle::Normalized(n);
  // Moving B by depth along u leaves the shapes touching along u.
  const double along = oracle::SupportGap(sa, sb, u);
  if (std::fabs(along - depth) > 2.0 * tol) {
    fail(
        "moving B by depth * normal does not leave them touching: the overlap along the normal "
        "is " +
        Str(along));
  }
  // No shorter translation: the depth is at most the oracle's least one.
  if (depth > o.depth + 2.0 * tol) {
    fail("depth exceeds the oracle's least separating translation " + Str(o.depth));
  } else if (depth < o.depth - 2.0 * tol && std::fabs(along - depth) <= 2.0 * tol) {
    // The reported translation is verified and shorter: the oracle's search missed it.
    fail("oracle weakness: the direction search missed a translation of " + Str(depth));
  }
  if (record) totals->depth.Add(std::fabs(depth - std::max(o.depth, 0.0)), 2.0 * tol);
  // The contact: on A's surface, and point - depth * normal on B's.
  const DVec3 p = ToDouble(out.point);
  const double point_error =
      std::max(std::fabs(oracle::Sdf(sa, p)), std::fabs(oracle::Sdf(sb, p - depth * u)));
  if (record) totals->point.Add(point_error, 2.0 * tol);
  if (point_error > 2.0 * tol) {
    fail("contact point not on A's surface, or point - depth * normal not on B's (sdf " +
         Str(oracle::Sdf(sa, p)) + ", " + Str(oracle::Sdf(sb, p - depth * u)) + ")");
  }
}

void CheckCase(uint64_t index, const Shape& a, const Pose& pa, const Shape& b, const Pose& pb,
               const char* kind, Failures* failures, Totals* totals) {
  const PosedShape sa = oracle::MakePosed(a, pa);
  const PosedShape sb = oracle::MakePosed(b, pb);
  const double local =
      Length(sa.position - sb.position) + oracle::BoundingRadius(sa) + oracle::BoundingRadius(sb);
  const double magnitude =
      std::max(oracle::MaxAbs(sa.position), oracle::MaxAbs(sb.position)) + local;
  const double tol = oracle::PositionTolerance(magnitude, local);
  const double tiny = 1e-9 * (local + 1.0) + 1e-12 * magnitude;
  ++totals->cases;

  PairOracle o;
  o.mu = oracle::MinSdfSum(sa, sb, tol, 1e-3 * tol);
  o.depth = oracle::SupportGapMinimum(sa, sb).value;
  if (o.mu.lower > tol || o.depth < -tol) {
    o.verdict = 1;
    ++totals->clearly_apart;
  } else if (o.mu.upper < -tol || (o.depth > tol && o.mu.upper <= tiny)) {
    o.verdict = -1;
    ++totals->clearly_overlapping;
  } else {
    ++totals->near_boundary;
  }

  auto fail = [&](const std::string& what) {
    failures->Add(what, "seed=" + std::to_string(kSeed) + " case=" + std::to_string(index) +
                            " kind=" + kind + " A=" + Str(a) + " at " + Str(pa) + " B=" + Str(b) +
                            " at " + Str(pb) + " | oracle least translation " + Str(o.depth) +
                            " min(sdfA + sdfB) in [" + Str(o.mu.lower) + ", " + Str(o.mu.upper) +
                            "] tol=" + Str(tol));
  };
  // Oracle self-consistency: a certified robust overlap of rho needs a translation >= rho.
  if (o.depth < -o.mu.upper - tiny) fail("oracle inconsistency between the two oracles");

  CheckCall(a, pa, b, pb, o, tol, true, "Penetrate(A, B)", fail, totals);
  // The swapped pair has the same least translation, in the opposite direction.
  CheckCall(b, pb, a, pa, o, tol, false, "Penetrate(B, A)", fail, totals);
  if (index % 8 == 0) {
    Penetration typed = Sentinel(), dispatched = Sentinel();
    const bool typed_got = Visit(a, [&](const auto& ca) {
      return Visit(b, [&](const auto& cb) { return Penetrate(ca, pa, cb, pb, &typed); });
    });
    const bool got = Penetrate(a, pa, b, pb, &dispatched);
    if (typed_got != got || !Same(typed, dispatched)) {
      fail("typed overload differs from Penetrate(Shape, Shape)");
    }
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
    const Pose pb = oracle::RandomPairPose(rng, a, pa, b, 0.8, &kind);
    CheckCase(index, a, pa, b, pb, kind, &failures, &totals);
  }
  EXPECT_EQ(failures.count(), 0) << "failing cases of " << oracle::ShapeName(type_a) << "-"
                                 << oracle::ShapeName(type_b) << " (seed " << kSeed
                                 << "; the first " << oracle::MaxReports() << " are listed above)";
}

constexpr ShapeType kSphere = ShapeType::kSphere;
constexpr ShapeType kBox = ShapeType::kBox;
constexpr ShapeType kCapsule = ShapeType::kCapsule;

TEST(PenetrationOracle, AgreesOnRandomSphereSpherePairs) { RunPair(kSphere, kSphere); }
TEST(PenetrationOracle, AgreesOnRandomSphereBoxPairs) { RunPair(kSphere, kBox); }
TEST(PenetrationOracle, AgreesOnRandomSphereCapsulePairs) { RunPair(kSphere, kCapsule); }
TEST(PenetrationOracle, AgreesOnRandomBoxSpherePairs) { RunPair(kBox, kSphere); }
TEST(PenetrationOracle, AgreesOnRandomBoxBoxPairs) { RunPair(kBox, kBox); }
TEST(PenetrationOracle, AgreesOnRandomBoxCapsulePairs) { RunPair(kBox, kCapsule); }
TEST(PenetrationOracle, AgreesOnRandomCapsuleSpherePairs) { RunPair(kCapsule, kSphere); }
TEST(PenetrationOracle, AgreesOnRandomCapsuleBoxPairs) { RunPair(kCapsule, kBox); }
TEST(PenetrationOracle, AgreesOnRandomCapsuleCapsulePairs) { RunPair(kCapsule, kCapsule); }

}  // namespace
}  // namespace collide
