// Randomised tests of Bounds (src/geom/bounds.h) against the exact AABB of the oracle
// (tests/geom/oracle.h): each face from the support function in double, max_i = h(e_i) and
// min_i = -h(-e_i), never from the box's corners or Arvo's formula.
//
// 100,000 cases per shape type (300,000 for Bounds), each from its own std::mt19937 stream
// (CaseRng(kSeed, case)), printed with every failure: sizes 0.01..100 with zero half extents,
// zero radii and capsule half height 0, identity / axis-aligned quarter and half turns / random
// rotations, positions up to +-1e5 (where sizes start at MinSizeAt, 2 at 1e5, so that a shape
// is many tolerances large). Tolerance per face, from float32 precision:
//   tol = PositionTolerance(|centre| + size, size) = 1 ulp(magnitude) + 32 eps * size:
// the centre and a face are one float addition apart (half an ulp at the world magnitude, 0.0039
// at 1e5), and the half extent |R| e sums three products of float rotation entries (each within
// a few eps, the quaternion itself being unit only to a few eps) with the extents.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "geom/bounds.h"
#include "geom/oracle.h"
#include "geom/oracle_test_util.h"

namespace collide {
namespace {

using oracle::DVec3;
using oracle::ErrorStats;
using oracle::Failures;
using oracle::PosedShape;
using oracle::Str;
using oracle::ToDouble;

constexpr uint32_t kSeed = 0xB0DD0003;
constexpr int kCasesPerShape = 100000;

struct Totals {
  int64_t cases = 0;
  int64_t not_containing = 0;
  ErrorStats face;
};

Totals& GlobalTotals() {
  static Totals totals;
  return totals;
}

[[maybe_unused]] ::testing::Environment* const kSummary =
    ::testing::AddGlobalTestEnvironment(new oracle::SummaryEnvironment([] {
      const Totals& t = GlobalTotals();
      oracle::PrintSummary("bounds", t.cases, t.face);
      std::printf("oracle-detail bounds faces_inside_the_exact_box_by_rounding=%lld\n",
                  static_cast<long long>(t.not_containing));
    }));

void CheckCase(uint64_t index, const Shape& shape, const Pose& pose, Failures* failures,
               Totals* totals) {
  const PosedShape s = oracle::MakePosed(shape, pose);
  const oracle::DAabb exact = oracle::ExactBounds(s);
  const double size = oracle::BoundingRadius(s);
  const double tol = oracle::PositionTolerance(oracle::MaxAbs(s.position) + size, size);
  const Aabb got = Bounds(shape, pose);
  ++totals->cases;

  auto fail = [&](const std::string& what) {
    failures->Add(what, "seed=" + std::to_string(kSeed) + " case=" + std::to_string(index) +
                            " shape=" + Str(shape) + " pose=" + Str(pose) + " | got min " +
                            Str(got.min) + " max " + Str(got.max) + " | exact min " +
                            Str(exact.min) + " max " + Str(exact.max) + " tol=" + Str(tol));
  };

  if (index % 8 == 0) {
    const Aabb typed = Visit(shape, [&](const auto& concrete) { return Bounds(concrete, pose); });
    if (!(typed == got)) fail("typed overload differs from Bounds(Shape)");
  }
  if (!(got.min.x <= got.max.x && got.min.y <= got.max.y && got.min.z <= got.max.z)) {
    fail("min > max");
  }
  double worst = 0.0;
  bool contains = true;
  for (int i = 0; i < 3; ++i) {
    worst = std::max(worst, std::fabs(got.min[i] - exact.min[i]));
    worst = std::max(worst, std::fabs(got.max[i] - exact.max[i]));
    contains = contains && got.min[i] <= exact.min[i] && got.max[i] >= exact.max[i];
  }
  totals->face.Add(worst, tol);
  if (!contains) ++totals->not_containing;
  if (worst > tol) fail("a face differs from the exact bounds by " + Str(worst));
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
    CheckCase(index, shape, pose, &failures, &totals);
  }
  EXPECT_EQ(failures.count(), 0) << "failing cases of " << oracle::ShapeName(type) << " (seed "
                                 << kSeed << "; the first " << oracle::MaxReports()
                                 << " are listed above)";
}

TEST(BoundsOracle, MatchesTheSupportFunctionOnRandomSpheres) { RunShape(ShapeType::kSphere); }

TEST(BoundsOracle, MatchesTheSupportFunctionOnRandomBoxes) { RunShape(ShapeType::kBox); }

TEST(BoundsOracle, MatchesTheSupportFunctionOnRandomCapsules) { RunShape(ShapeType::kCapsule); }

}  // namespace
}  // namespace collide
