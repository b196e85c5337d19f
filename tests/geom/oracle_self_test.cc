// Checks of the oracle itself (tests/geom/oracle.h): hand-worked values, and its generic
// algorithms against closed forms written in double here, on random cases. These references
// exist only to show that the oracle's sampling, refinement and root finding converge; the
// implementation is never used.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "geom/oracle.h"

namespace collide::oracle {
namespace {

constexpr uint32_t kSeed = 20240611;

PosedShape At(const Shape& shape, const Vec3& position, const Quat& rotation = Quat::Identity()) {
  return MakePosed(shape, Pose{rotation, position});
}

Quat AxisAngle(const Vec3& axis, double degrees) {
  return QuatFromAxisAngle(axis, static_cast<float>(degrees * std::numbers::pi / 180.0));
}

// ---------------------------------------------------------------------------------------------
// Hand-worked values.

TEST(OracleSelfTest, SignedDistancesMatchHandWorkedValues) {
  const PosedShape box = At(Box{{1, 2, 3}}, {10, 0, 0});
  EXPECT_DOUBLE_EQ(Sdf(box, {12, 0, 0}), 1.0);
  EXPECT_DOUBLE_EQ(Sdf(box, {10, 0, 0}), -1.0);
  EXPECT_DOUBLE_EQ(Sdf(box, {10, 0, 2.5}), -0.5);
  EXPECT_DOUBLE_EQ(Sdf(box, {12, 3, 0}), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(Sdf(box, {12, 3, 5}), std::sqrt(6.0));

  const PosedShape capsule = At(Capsule{1, 2}, {0, 0, 0});
  EXPECT_DOUBLE_EQ(Sdf(capsule, {0, 5, 0}), 2.0);
  EXPECT_DOUBLE_EQ(Sdf(capsule, {3, 1, 0}), 2.0);
  EXPECT_DOUBLE_EQ(Sdf(capsule, {0, 0, 0}), -1.0);

  const PosedShape sphere = At(Sphere{2}, {1, 1, 1});
  EXPECT_DOUBLE_EQ(Sdf(sphere, {1, 1, 5}), 2.0);
  EXPECT_DOUBLE_EQ(Sdf(sphere, {1, 1, 1}), -2.0);

  // A quarter turn about Z maps local X to world Y: the box's long local Y axis lies along X.
  const PosedShape turned = At(Box{{1, 2, 3}}, {0, 0, 0}, AxisAngle({0, 0, 1}, 90));
  EXPECT_NEAR(Sdf(turned, {3, 0, 0}), 1.0, 1e-6);
  EXPECT_NEAR(Sdf(turned, {0, 2, 0}), 1.0, 1e-6);
}

TEST(OracleSelfTest, SupportFunctionsAndBoundsMatchHandWorkedValues) {
  const PosedShape box = At(Box{{1, 2, 3}}, {10, 0, 0});
  EXPECT_DOUBLE_EQ(SupportValue(box, {1, 0, 0}), 11.0);
  EXPECT_DOUBLE_EQ(SupportValue(box, {-1, 0, 0}), -9.0);
  const DVec3 diag = Normalized({1, 1, 1});
  EXPECT_NEAR(SupportValue(box, diag), (10.0 + 6.0) / std::sqrt(3.0), 1e-12);

  const PosedShape capsule = At(Capsule{1, 2}, {0, 0, 0}, AxisAngle({0, 0, 1}, 90));
  // The segment now lies along world X.
  EXPECT_NEAR(SupportValue(capsule, {1, 0, 0}), 3.0, 1e-6);
  EXPECT_NEAR(SupportValue(capsule, {0, 1, 0}), 1.0, 1e-6);
  const DAabb b = ExactBounds(capsule);
  EXPECT_NEAR(b.min.x, -3.0, 1e-6);
  EXPECT_NEAR(b.max.y, 1.0, 1e-6);
  EXPECT_NEAR(b.max.z, 1.0, 1e-6);

  // A box turned 45 degrees about Z: the x extent is (1 + 2) / sqrt(2).
  const PosedShape turned = At(Box{{1, 2, 3}}, {0, 0, 0}, AxisAngle({0, 0, 1}, 45));
  EXPECT_NEAR(ExactBounds(turned).max.x, 3.0 / std::sqrt(2.0), 1e-6);
  EXPECT_NEAR(ExactBounds(turned).max.z, 3.0, 1e-6);

  const DVec3 s = SupportPoint(box, {1, -1, 1});
  EXPECT_DOUBLE_EQ(s.x, 11.0);
  EXPECT_DOUBLE_EQ(s.y, -2.0);
  EXPECT_DOUBLE_EQ(s.z, 3.0);
}

TEST(OracleSelfTest, NormalsAreTheSdfGradient) {
  const PosedShape sphere = At(Sphere{2}, {1e5f, -1e5f, 0});
  const DVec3 n = SdfNormal(sphere, DVec3{1e5, -1e5, 0} + DVec3{0, 2, 0});
  EXPECT_NEAR(n.y, 1.0, 1e-6);
  const PosedShape box = At(Box{{1, 2, 3}}, {0, 0, 0}, AxisAngle({1, 0, 0}, 90));
  // Local +Y maps to world +Z under a quarter turn about X.
  const DVec3 nb = SdfNormal(box, {0.3, 0.1, 2.0});
  EXPECT_NEAR(nb.z, 1.0, 1e-6);
  // At a face's edge the spread covers both faces' normals.
  const PosedShape cube = At(Box{{1, 1, 1}}, {0, 0, 0});
  EXPECT_GT(NormalSpread(cube, {1, 1, 0}, 1e-3), 1.0);
  EXPECT_LT(NormalSpread(cube, {1, 0.5, 0}, 1e-3), 1e-6);
}

TEST(OracleSelfTest, FloatUlpMatchesFloatSpacing) {
  EXPECT_EQ(FloatUlp(1e5), 0.0078125);
  EXPECT_EQ(FloatUlp(1.0), std::ldexp(1.0, -23));
  EXPECT_EQ(FloatUlp(100.0), std::nextafter(100.0f, 1e9f) - 100.0f);
}

TEST(OracleSelfTest, CaseStreamsAreReproducible) {
  std::mt19937 a = CaseRng(kSeed, 12345);
  std::mt19937 b = CaseRng(kSeed, 12345);
  std::mt19937 c = CaseRng(kSeed, 12346);
  EXPECT_EQ(a(), b());
  EXPECT_NE(CaseRng(kSeed, 12345)(), c());
}

// ---------------------------------------------------------------------------------------------
// Random checks of the generic algorithms against closed forms.

// Closest point by support planes against the SDF (two independent definitions of the same
// signed distance): they must agree to double precision on every shape, inside and outside.
TEST(OracleSelfTest, SupportPlaneDistanceEqualsTheSdfOnRandomPoints) {
  constexpr int kCases = 20000;
  double worst = 0.0;
  for (int i = 0; i < kCases; ++i) {
    std::mt19937 rng = CaseRng(kSeed, i);
    const ShapeType type = static_cast<ShapeType>(i % kShapeTypeCount);
    const Shape shape = RandomShape(rng, type);
    const PosedShape s = At(shape, RandomSceneOffset(rng), RandomRotation(rng));
    const double r = BoundingRadius(s);
    const DVec3 p = s.position + Uniform(rng, 0.0, 1.5 * r + 1.0) * ToDouble(RandomUnit(rng));
    const ClosestPointOracle c = ClosestPointBySupport(s, p);
    const double sdf = Sdf(s, p);
    const double tol = 1e-9 * (r + 1.0);
    worst = std::max(worst, std::fabs(c.signed_distance - sdf) / tol);
    ASSERT_NEAR(c.signed_distance, sdf, tol)
        << "seed " << kSeed << " case " << i << " " << Str(shape) << " at " << Str(s.position)
        << " p " << Str(p);
    // The minimising direction of a smooth minimum is only determined to ~sqrt(double eps) of
    // the distance (the value is flat to rounding around it), hence a looser point tolerance.
    ASSERT_NEAR(Sdf(s, c.point), 0.0, 1e-7 * (r + std::fabs(sdf) + 1.0)) << "case " << i;
  }
  std::printf("oracle-self closest_point worst/tol=%.3g\n", worst);
}

// Reference for box-box penetration in double: the 15 separating axes. Used only here, to show
// that the direction sampling of SupportGapMinimum finds the true minimum.
double BoxBoxDepthBySat(const PosedShape& a, const PosedShape& b) {
  DVec3 axes[15];
  int n = 0;
  for (int i = 0; i < 3; ++i) axes[n++] = a.axis[i];
  for (int i = 0; i < 3; ++i) axes[n++] = b.axis[i];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      DVec3 c = Cross(a.axis[i], b.axis[j]);
      if (Length(c) > 1e-9) axes[n++] = Normalized(c);
    }
  }
  double depth = 1e300;
  for (int k = 0; k < n; ++k) {
    depth = std::min(depth, SupportGap(a, b, axes[k]));
    depth = std::min(depth, SupportGap(a, b, -axes[k]));
  }
  return depth;
}

TEST(OracleSelfTest, DirectionSamplingFindsTheBoxBoxDepthOfTheSeparatingAxes) {
  constexpr int kCases = 40000;
  int overlapping = 0;
  double worst = 0.0;
  for (int i = 0; i < kCases; ++i) {
    std::mt19937 rng = CaseRng(kSeed + 1, i);
    const Shape sa = RandomShape(rng, ShapeType::kBox);
    const Shape sb = RandomShape(rng, ShapeType::kBox);
    const PosedShape a = At(sa, {0, 0, 0}, RandomRotation(rng));
    const double reach = BoundingRadius(a) + Length(ToDouble(sb.box.half_extents));
    const Vec3 pb = ToFloat(Uniform(rng, 0.0, 0.6 * reach) * ToDouble(RandomUnit(rng)));
    const PosedShape b = At(sb, pb, RandomRotation(rng));
    const double sat = BoxBoxDepthBySat(a, b);
    if (sat <= 0.0) continue;
    ++overlapping;
    const DirectionMinimum m = SupportGapMinimum(a, b);
    const double tol = 1e-9 * (reach + 1.0);
    worst = std::max(worst, std::fabs(m.value - sat) / tol);
    ASSERT_NEAR(m.value, sat, tol)
        << "case " << i << " A " << Str(sa) << " B " << Str(sb) << " at " << Str(pb);
  }
  EXPECT_GT(overlapping, kCases / 10);
  std::printf("oracle-self box_box_depth overlapping=%d worst/tol=%.3g\n", overlapping, worst);
}

// Sphere against box, in double: the centre clamped to the box (outside) or the nearest face
// (inside).
TEST(OracleSelfTest, DirectionSamplingFindsTheSphereBoxDepth) {
  constexpr int kCases = 20000;
  double worst = 0.0;
  for (int i = 0; i < kCases; ++i) {
    std::mt19937 rng = CaseRng(kSeed + 2, i);
    const Shape sa = RandomShape(rng, ShapeType::kSphere);
    const Shape sb = RandomShape(rng, ShapeType::kBox);
    const PosedShape b = At(sb, {0, 0, 0}, RandomRotation(rng));
    const double reach = BoundingRadius(b) + sa.sphere.radius;
    const PosedShape a = At(sa, ToFloat(Uniform(rng, 0.0, reach) * ToDouble(RandomUnit(rng))));
    // Depth of the sphere A against box B: r - signed distance of A's centre to B.
    const double expected = a.radius - Sdf(b, a.position);
    const DirectionMinimum m = SupportGapMinimum(a, b);
    const double tol = 1e-9 * (reach + 1.0);
    worst = std::max(worst, std::fabs(m.value - expected) / tol);
    ASSERT_NEAR(m.value, expected, tol) << "case " << i;
  }
  std::printf("oracle-self sphere_box_depth worst/tol=%.3g\n", worst);
}

// Two capsules whose segments do not intersect: depth (or minus the distance) is
// r_a + r_b - distance between the segments, the latter by nested golden-section searches.
double SegmentDistance(const DVec3& a0, const DVec3& a1, const DVec3& b0, const DVec3& b1) {
  auto point_to_b = [&](const DVec3& p) {
    DVec3 d = b1 - b0;
    double dd = Dot(d, d);
    double t = dd > 0.0 ? std::clamp(Dot(p - b0, d) / dd, 0.0, 1.0) : 0.0;
    return Length(p - (b0 + t * d));
  };
  double lo = 0.0, hi = 1.0;
  const double g = (std::sqrt(5.0) - 1.0) / 2.0;
  for (int i = 0; i < 200; ++i) {
    double c = hi - g * (hi - lo), d = lo + g * (hi - lo);
    if (point_to_b(a0 + c * (a1 - a0)) < point_to_b(a0 + d * (a1 - a0))) {
      hi = d;
    } else {
      lo = c;
    }
  }
  return point_to_b(a0 + 0.5 * (lo + hi) * (a1 - a0));
}

TEST(OracleSelfTest, DirectionSamplingFindsTheCapsuleCapsuleDepth) {
  constexpr int kCases = 10000;
  double worst = 0.0;
  for (int i = 0; i < kCases; ++i) {
    std::mt19937 rng = CaseRng(kSeed + 3, i);
    const Shape sa = RandomShape(rng, ShapeType::kCapsule);
    const Shape sb = RandomShape(rng, ShapeType::kCapsule);
    const PosedShape a = At(sa, {0, 0, 0}, RandomRotation(rng));
    const double reach = BoundingRadius(a) + sb.capsule.radius + sb.capsule.half_height;
    const PosedShape b =
        At(sb, ToFloat(Uniform(rng, 0.0, reach) * ToDouble(RandomUnit(rng))), RandomRotation(rng));
    const DVec3 a0 = a.position - a.half_height * a.axis[1];
    const DVec3 a1 = a.position + a.half_height * a.axis[1];
    const DVec3 b0 = b.position - b.half_height * b.axis[1];
    const DVec3 b1 = b.position + b.half_height * b.axis[1];
    const double dist = SegmentDistance(a0, a1, b0, b1);
    if (dist < 1e-6 * (reach + 1.0)) continue;  // crossing segments: the formula needs dist > 0
    const double expected = a.radius + b.radius - dist;
    const DirectionMinimum m = SupportGapMinimum(a, b);
    const double tol = 1e-8 * (reach + 1.0);
    worst = std::max(worst, std::fabs(m.value - expected) / tol);
    ASSERT_NEAR(m.value, expected, tol) << "case " << i;
  }
  std::printf("oracle-self capsule_capsule_depth worst/tol=%.3g\n", worst);
}

TEST(OracleSelfTest, SdfSumMinimumBracketsTheSphereSphereGap) {
  constexpr int kCases = 5000;
  for (int i = 0; i < kCases; ++i) {
    std::mt19937 rng = CaseRng(kSeed + 4, i);
    const PosedShape a = At(RandomShape(rng, ShapeType::kSphere), RandomSceneOffset(rng));
    const double reach = a.radius + 10.0;
    const PosedShape b =
        At(RandomShape(rng, ShapeType::kSphere),
           ToFloat(a.position + Uniform(rng, 0.0, reach) * ToDouble(RandomUnit(rng))));
    // min |x - a| + |x - b| - ra - rb = |a - b| - ra - rb.
    const double expected = Length(a.position - b.position) - a.radius - b.radius;
    const CertifiedMinimum m = MinSdfSum(a, b, 1e300, 1e-9 * (reach + 1.0));
    const double slack = 1e-9 * (reach + 1.0) + 1e-10 * MaxAbs(a.position);
    ASSERT_LE(m.lower, expected + slack) << "case " << i;
    ASSERT_GE(m.upper, expected - slack) << "case " << i;
    ASSERT_LE(m.upper - m.lower, 2e-9 * (reach + 1.0)) << "case " << i;
  }
}

// Two independent oracles of the distance between separated shapes: minus the direction
// minimum of the support gap, and the minimum of the SDF sum. Every pair of shape types.
TEST(OracleSelfTest, SupportGapAndSdfSumAgreeOnTheDistanceOfSeparatedShapes) {
  constexpr int kCases = 9000;
  int separated = 0;
  for (int i = 0; i < kCases; ++i) {
    std::mt19937 rng = CaseRng(kSeed + 6, i);
    const Shape sa = RandomShape(rng, static_cast<ShapeType>(i % 3));
    const Shape sb = RandomShape(rng, static_cast<ShapeType>((i / 3) % 3));
    const PosedShape a = At(sa, RandomSceneOffset(rng), RandomRotation(rng));
    const PosedShape b0 = At(sb, {0, 0, 0});
    const double reach = BoundingRadius(a) + BoundingRadius(b0);
    const PosedShape b = At(
        sb, ToFloat(a.position + Uniform(rng, 0.0, 1.5 * reach + 1.0) * ToDouble(RandomUnit(rng))),
        RandomRotation(rng));
    const DirectionMinimum gap = SupportGapMinimum(a, b);
    if (gap.value > -1e-6 * (reach + 1.0)) continue;
    ++separated;
    const double tol = 1e-9 * (reach + 1.0) + 1e-12 * MaxAbs(a.position);
    const CertifiedMinimum m = MinSdfSum(a, b, 1e300, tol);
    ASSERT_LE(m.lower, -gap.value + tol) << "case " << i << " " << Str(sa) << " " << Str(sb);
    ASSERT_GE(m.upper, -gap.value - tol) << "case " << i << " " << Str(sa) << " " << Str(sb);
  }
  EXPECT_GT(separated, kCases / 4);
}

TEST(OracleSelfTest, SdfSumMinimumIsTheDistanceOfSeparatedBoxes) {
  // Two unit cubes 3 apart along X, the second turned 45 degrees about X: its edges stay at
  // x = 2 and 4, so the gap is 1.
  const PosedShape a = At(Box{{1, 1, 1}}, {0, 0, 0});
  const PosedShape b = At(Box{{1, 1, 1}}, {3, 0, 0}, AxisAngle({1, 0, 0}, 45));
  const CertifiedMinimum m = MinSdfSum(a, b, 1e300, 1e-10);
  EXPECT_NEAR(m.lower, 1.0, 1e-6);
  EXPECT_NEAR(m.upper, 1.0, 1e-6);
  // A flat box through a ball: min Sdf sum = -radius (the ball's centre on the plate).
  const PosedShape plate = At(Box{{5, 0, 5}}, {0, 0, 0});
  const PosedShape ball = At(Sphere{0.5f}, {1, 0, 1});
  const CertifiedMinimum mp = MinSdfSum(plate, ball, 1e300, 1e-10);
  EXPECT_NEAR(mp.upper, -0.5, 1e-6);
}

TEST(OracleSelfTest, CastRootsMatchTheSphereFormula) {
  constexpr int kCases = 20000;
  int hits = 0;
  for (int i = 0; i < kCases; ++i) {
    std::mt19937 rng = CaseRng(kSeed + 5, i);
    const PosedShape s = At(RandomShape(rng, ShapeType::kSphere), RandomSceneOffset(rng));
    const double cast_radius = Chance(rng, 0.5) ? 0.0 : LogUniform(rng, 0.01, 10);
    const double reach = s.radius + cast_radius;
    CastPath path;
    path.origin = s.position + (reach + Uniform(rng, 0.0, 50.0)) * ToDouble(RandomUnit(rng));
    // Aim at a point within 1.2 reach of the centre.
    const DVec3 target = s.position + Uniform(rng, 0.0, 1.2 * reach) * ToDouble(RandomUnit(rng));
    path.direction = Normalized(target - path.origin);
    path.max_distance = 100.0;
    path.radius = cast_radius;
    const CastOracle c = CastBySdf(s, path);
    // solve |m + t d|^2 = R^2, m = origin - centre.
    const DVec3 m = path.origin - s.position;
    const double b = Dot(m, path.direction);
    const double disc = b * b - (Dot(m, m) - reach * reach);
    const bool expect_hit = disc >= 0.0 && b <= 0.0 && -b - std::sqrt(disc) <= 100.0;
    const double scale = 1e-9 * (100.0 + MaxAbs(path.origin));
    const double approach = Length(m - b * path.direction);
    if (std::fabs(approach - reach) < 1e-6 * (reach + 1.0)) continue;  // grazing: either answer
    ASSERT_EQ(c.hits, expect_hit) << "case " << i;
    if (expect_hit) {
      ++hits;
      ASSERT_NEAR(c.t_hit, -b - std::sqrt(disc), scale + 1e-6 * reach) << "case " << i;
    } else {
      ASSERT_NEAR(c.min_gap, approach - reach,
                  (b < 0.0 && -b <= 100.0) ? scale + 1e-6 * reach : 1e300)
          << "case " << i;
    }
  }
  EXPECT_GT(hits, kCases / 4);
}

TEST(OracleSelfTest, CastRootsMatchTheSlabsOfAnAxisAlignedBox) {
  const PosedShape box = At(Box{{1, 2, 3}}, {0, 0, 0});
  CastPath path{{-5, 0.5, 0.5}, {1, 0, 0}, 10.0, 0.0};
  CastOracle c = CastBySdf(box, path);
  EXPECT_TRUE(c.hits);
  EXPECT_NEAR(c.t_hit, 4.0, 1e-12);
  // Grazing along the face y = 2 touches (closed box), one 1e-6 beyond it misses by 1e-6.
  path.origin = {-5, 2, 0};
  c = CastBySdf(box, path);
  EXPECT_TRUE(c.hits);
  path.origin = {-5, 2 + 1e-6, 0};
  c = CastBySdf(box, path);
  EXPECT_FALSE(c.hits);
  EXPECT_NEAR(c.min_gap, 1e-6, 1e-12);
  // A ball of radius 0.5 aimed at the edge x = 1, y = 2 along the diagonal.
  path = {{3, 4, 0}, Normalized({-1, -1, 0}), 10.0, 0.5};
  c = CastBySdf(box, path);
  EXPECT_TRUE(c.hits);
  EXPECT_NEAR(c.t_hit, 2.0 * std::sqrt(2.0) - 0.5, 1e-12);
  // Starting inside.
  path = {{0, 0, 0}, {0, 1, 0}, 10.0, 0.0};
  c = CastBySdf(box, path);
  EXPECT_TRUE(c.hits);
  EXPECT_EQ(c.t_hit, 0.0);
  EXPECT_LT(c.start_gap, 0.0);
}

}  // namespace
}  // namespace collide::oracle
