// ShapeCast (translational continuous contact) against the sampled oracle of sweep_oracle.h,
// for every pair of shape types, plus directed cases: tunnelling through a thin plate, a
// start overlap, a clean miss and a face contact.

#include "geom/shape_cast.h"

#include <cmath>
#include <random>

#include "geom/sweep_oracle.h"
#include "gtest/gtest.h"

namespace collide {
namespace {

using testing::CheckContact;
using testing::SampledSweep;

constexpr float kEps = 0.01f;

Shape RandomShape(std::mt19937& rng, ShapeType type) {
  std::uniform_real_distribution<float> size(0.05f, 1.5f);
  switch (type) {
    case ShapeType::kBox:
      return Box{{size(rng), size(rng), size(rng)}};
    case ShapeType::kCapsule:
      return Capsule{size(rng), size(rng)};
    case ShapeType::kSphere:
    default:
      return Sphere{size(rng)};
  }
}

Pose RandomPose(std::mt19937& rng, float reach) {
  std::uniform_real_distribution<float> coord(-reach, reach);
  std::normal_distribution<float> gauss;
  Quat q{gauss(rng), gauss(rng), gauss(rng), gauss(rng)};
  return Pose{Normalize(q), Vec3{coord(rng), coord(rng), coord(rng)}};
}

TEST(ShapeCast, AgreesWithTheSampledOracleForEveryPair) {
  for (int a = 0; a < kShapeTypeCount; ++a) {
    for (int b = 0; b < kShapeTypeCount; ++b) {
      const uint32_t seed = 100 + 10 * a + b;
      std::mt19937 rng(seed);
      int hits = 0;
      int misses = 0;
      for (int trial = 0; trial < 400; ++trial) {
        const Shape moving = RandomShape(rng, static_cast<ShapeType>(a));
        const Shape target = RandomShape(rng, static_cast<ShapeType>(b));
        const Pose start = RandomPose(rng, 4.0f);
        const Pose target_pose = RandomPose(rng, 1.0f);
        // Aim roughly at the target so that about half the casts hit.
        std::uniform_real_distribution<float> jitter(-2.0f, 2.0f);
        const Vec3 aim = target_pose.position + Vec3{jitter(rng), jitter(rng), jitter(rng)};
        const Vec3 translation = (aim - start.position) * 2.0f;
        const testing::SweepVerdict expected =
            SampledSweep(moving, start, translation, target, target_pose, kEps);
        if (expected.ambiguous) continue;
        ShapeCastHit hit;
        const bool got = ShapeCast(moving, start, translation, target, target_pose, &hit);
        ASSERT_EQ(got, expected.hits) << "seed " << seed << " trial " << trial;
        if (!got) {
          ++misses;
          continue;
        }
        ++hits;
        const float length = Length(translation);
        EXPECT_NEAR(hit.fraction * length, expected.fraction * length, 1e-3f)
            << "seed " << seed << " trial " << trial;
        if (expected.fraction == 0.0f) continue;  // start overlap: the MTV, checked elsewhere
        const Pose at{start.rotation, start.position + translation * expected.fraction};
        EXPECT_EQ(CheckContact(moving, at, target, target_pose, hit.point, hit.normal, 2e-3), "")
            << "seed " << seed << " trial " << trial;
      }
      EXPECT_GT(hits, 50) << "seed " << seed;
      EXPECT_GT(misses, 50) << "seed " << seed;
    }
  }
}

TEST(ShapeCast, FindsASmallFastBallCrossingAThinPlate) {
  const Shape ball = Sphere{0.05f};
  const Shape plate = Box{{0.01f, 5.0f, 5.0f}};
  const Pose start{Quat::Identity(), {-50.0f, 0.3f, 0.0f}};
  ShapeCastHit hit;
  ASSERT_TRUE(ShapeCast(ball, start, {100.0f, 0.0f, 0.0f}, plate, Pose{}, &hit));
  EXPECT_NEAR(hit.fraction * 100.0f, 50.0f - 0.06f, 1e-3f);
  EXPECT_NEAR(hit.point.x, -0.01f, 1e-4f);
  EXPECT_NEAR(hit.normal.x, -1.0f, 1e-5f);
  EXPECT_FALSE(hit.start_overlapping);
}

TEST(ShapeCast, FindsAThinBoxCrossingAThinBoxEdgeOn) {
  const Shape blade = Box{{0.005f, 0.5f, 0.5f}};
  const Shape plate = Box{{0.01f, 5.0f, 5.0f}};
  const Pose start{Quat::Identity(), {-30.0f, 0.0f, 0.0f}};
  ShapeCastHit hit;
  ASSERT_TRUE(ShapeCast(blade, start, {60.0f, 0.0f, 0.0f}, plate, Pose{}, &hit));
  EXPECT_NEAR(hit.fraction * 60.0f, 30.0f - 0.015f, 1e-3f);
  EXPECT_NEAR(hit.normal.x, -1.0f, 1e-5f);
}

TEST(ShapeCast, MissesWhatItPassesBeside) {
  const Shape capsule = Capsule{0.2f, 1.0f};
  const Shape ball = Sphere{1.0f};
  ShapeCastHit hit;
  EXPECT_FALSE(ShapeCast(capsule, Pose{Quat::Identity(), {-10.0f, 0.0f, 1.25f}},
                         {20.0f, 0.0f, 0.0f}, ball, Pose{}, &hit));
  EXPECT_TRUE(ShapeCast(capsule, Pose{Quat::Identity(), {-10.0f, 0.0f, 1.15f}}, {20.0f, 0.0f, 0.0f},
                        ball, Pose{}, &hit));
}

TEST(ShapeCast, ReportsAStartOverlapAtFractionZero) {
  ShapeCastHit hit;
  ASSERT_TRUE(ShapeCast(Sphere{1.0f}, Pose{Quat::Identity(), {0.5f, 0.0f, 0.0f}},
                        {10.0f, 0.0f, 0.0f}, Box{{1.0f, 1.0f, 1.0f}}, Pose{}, &hit));
  EXPECT_TRUE(hit.start_overlapping);
  EXPECT_EQ(hit.fraction, 0.0f);
  ASSERT_TRUE(ShapeCast(Box{{0.5f, 0.5f, 0.5f}}, Pose{Quat::Identity(), {0.5f, 0.0f, 0.0f}},
                        {10.0f, 0.0f, 0.0f}, Box{{1.0f, 1.0f, 1.0f}}, Pose{}, &hit));
  EXPECT_TRUE(hit.start_overlapping);
  EXPECT_NEAR(hit.normal.x, 1.0f, 1e-5f);
}

TEST(ShapeCast, ReportsAPointOnTheTouchingFacesOfTwoBoxes) {
  ShapeCastHit hit;
  ASSERT_TRUE(ShapeCast(Box{{0.5f, 0.5f, 0.5f}}, Pose{Quat::Identity(), {0.0f, 0.0f, 5.0f}},
                        {0.0f, 0.0f, -10.0f}, Box{{2.0f, 2.0f, 1.0f}}, Pose{}, &hit));
  EXPECT_NEAR(hit.fraction * 10.0f, 3.5f, 1e-4f);
  EXPECT_NEAR(hit.point.z, 1.0f, 1e-4f);
  EXPECT_LE(std::fabs(hit.point.x), 0.5f + 1e-4f);
  EXPECT_LE(std::fabs(hit.point.y), 0.5f + 1e-4f);
  EXPECT_NEAR(hit.normal.z, 1.0f, 1e-6f);
}

}  // namespace
}  // namespace collide
