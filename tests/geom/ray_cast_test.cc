#include "geom/ray_cast.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "geom/cast_test_util.h"

namespace collide {
namespace {

using cast_test::At;
using cast_test::Axis;
using cast_test::Degrees;
using cast_test::kFarTol;
using cast_test::kTol;
using cast_test::MakeRay;
using cast_test::SameHit;
using cast_test::Sentinel;
using cast_test::VecNear;

// The sign pairs every axis test loops over: a ray travelling along +axis and along -axis.
constexpr float kSigns[] = {1.0f, -1.0f};

// ---------------------------------------------------------------------------------------------
// Sphere

TEST(RayCastSphere, HitsFromOutsideAlongEachAxis) {
  const Vec3 centre{1, 2, 3};
  const Sphere sphere{2.0f};
  for (int i = 0; i < 3; ++i) {
    for (float s : kSigns) {
      SCOPED_TRACE(testing::Message() << "axis " << i << " sign " << s);
      // Start 10 before the centre, travelling towards it: the surface is 8 away.
      Ray ray = MakeRay(centre - Axis(i, s) * 10.0f, Axis(i, s), 100.0f);
      CastHit hit;
      ASSERT_TRUE(Raycast(sphere, At(centre), ray, &hit));
      EXPECT_NEAR(hit.distance, 8.0f, kTol);
      EXPECT_TRUE(VecNear(hit.point, centre - Axis(i, s) * 2.0f, kTol));
      EXPECT_TRUE(VecNear(hit.normal, Axis(i, -s), kTol));
      EXPECT_FALSE(hit.start_overlapping);
    }
  }
}

TEST(RayCastSphere, MissesWhenPointingAwayOrPassingBeside) {
  const Sphere sphere{1.0f};
  for (int i = 0; i < 3; ++i) {
    for (float s : kSigns) {
      CastHit hit = Sentinel();
      // Pointing away.
      EXPECT_FALSE(Raycast(sphere, At({}), MakeRay(Axis(i, s) * 5.0f, Axis(i, s), 100.0f), &hit));
      // Passing beside, 1.5 off the axis.
      Vec3 side = Axis((i + 1) % 3, 1.5f);
      EXPECT_FALSE(
          Raycast(sphere, At({}), MakeRay(side - Axis(i, s) * 5.0f, Axis(i, s), 100.0f), &hit));
      EXPECT_TRUE(SameHit(hit, Sentinel())) << "a miss must leave the hit untouched";
    }
  }
}

TEST(RayCastSphere, TangentRayHitsAtTheTouchingPoint) {
  const Vec3 centre{-3, 4, 0.5f};
  const Sphere sphere{1.5f};
  for (int i = 0; i < 3; ++i) {
    for (int k = 1; k <= 2; ++k) {
      for (float s : kSigns) {
        // Travel along axis i, offset exactly R along another axis: the ray touches the sphere.
        Vec3 offset = Axis((i + k) % 3, 1.5f);
        Ray ray = MakeRay(centre + offset - Axis(i, s) * 6.0f, Axis(i, s), 100.0f);
        CastHit hit;
        ASSERT_TRUE(Raycast(sphere, At(centre), ray, &hit)) << "axis " << i << " k " << k;
        EXPECT_NEAR(hit.distance, 6.0f, kTol);
        EXPECT_TRUE(VecNear(hit.point, centre + offset, kTol));
        EXPECT_TRUE(VecNear(hit.normal, Normalize(offset), kTol));
      }
    }
  }
}

TEST(RayCastSphere, RayJustOutsideTheTangentMisses) {
  const Sphere sphere{1.5f};
  for (int i = 0; i < 3; ++i) {
    // 1e-5 beyond the radius: far above the float error of the closest approach (~1e-7 at 1.5).
    Vec3 offset = Axis((i + 1) % 3, 1.5f + 1e-5f);
    CastHit hit;
    EXPECT_FALSE(Raycast(sphere, At({}), MakeRay(offset - Axis(i) * 6.0f, Axis(i), 100.0f), &hit));
  }
}

TEST(RayCastSphere, StartingInsideHitsAtZeroWithNormalAgainstTheRay) {
  const Vec3 centre{1, 1, 1};
  const Sphere sphere{2.0f};
  const Vec3 starts[] = {centre, centre + Vec3{0.5f, -0.3f, 1.0f}};
  for (const Vec3& origin : starts) {
    for (int i = 0; i < 3; ++i) {
      for (float s : kSigns) {
        Ray ray = MakeRay(origin, Axis(i, s), 10.0f);
        CastHit hit;
        ASSERT_TRUE(Raycast(sphere, At(centre), ray, &hit));
        EXPECT_EQ(hit.distance, 0.0f);
        EXPECT_EQ(hit.point, origin);
        EXPECT_EQ(hit.normal, -ray.direction);
        EXPECT_TRUE(hit.start_overlapping);
      }
    }
  }
}

TEST(RayCastSphere, StartingOnTheSurfaceCountsAsInside) {
  const Sphere sphere{2.0f};
  for (int i = 0; i < 3; ++i) {
    for (float s : kSigns) {
      // On the surface and pointing outwards: still a start inside (the shape is closed).
      Ray ray = MakeRay(Axis(i, 2.0f * s), Axis(i, s), 10.0f);
      CastHit hit;
      ASSERT_TRUE(Raycast(sphere, At({}), ray, &hit));
      EXPECT_TRUE(hit.start_overlapping);
      EXPECT_EQ(hit.distance, 0.0f);
    }
  }
}

TEST(RayCastSphere, MaxDistanceJustShortMissesAndExactlyAtTheSurfaceHits) {
  const Sphere sphere{2.0f};
  for (int i = 0; i < 3; ++i) {
    // Axis-aligned: the entry distance 10 - 2 = 8 is computed exactly.
    Ray ray = MakeRay(Axis(i, -10.0f), Axis(i), 8.0f);
    CastHit hit;
    ASSERT_TRUE(Raycast(sphere, At({}), ray, &hit));
    EXPECT_EQ(hit.distance, 8.0f);
    ray.max_distance = std::nextafter(8.0f, 0.0f);
    EXPECT_FALSE(Raycast(sphere, At({}), ray, &hit));
  }
}

TEST(RayCastSphere, ZeroMaxDistanceHitsOnlyWhatContainsTheOrigin) {
  const Sphere sphere{1.0f};
  CastHit hit;
  EXPECT_FALSE(Raycast(sphere, At({}), MakeRay({-3, 0, 0}, {1, 0, 0}, 0.0f), &hit));
  ASSERT_TRUE(Raycast(sphere, At({}), MakeRay({-1, 0, 0}, {1, 0, 0}, 0.0f), &hit));
  EXPECT_TRUE(hit.start_overlapping);
}

TEST(RayCastSphere, ZeroRadiusIsHitOnlyThroughItsCentre) {
  const Sphere point{0.0f};
  const Vec3 centre{2, 3, 4};
  for (int i = 0; i < 3; ++i) {
    CastHit hit;
    ASSERT_TRUE(Raycast(point, At(centre), MakeRay(centre - Axis(i) * 5.0f, Axis(i), 10.0f), &hit));
    EXPECT_EQ(hit.distance, 5.0f);
    EXPECT_EQ(hit.point, centre);
    EXPECT_NEAR(Length(hit.normal), 1.0f, kTol);
    Vec3 beside = centre + Axis((i + 1) % 3, 1e-3f);
    EXPECT_FALSE(
        Raycast(point, At(centre), MakeRay(beside - Axis(i) * 5.0f, Axis(i), 10.0f), &hit));
  }
}

TEST(RayCastSphere, ObliqueRayEntersHalfAChordBeforeTheClosestApproach) {
  // A ray at 45 degrees in the xy plane passing 1 from the centre of a sphere of radius 2: the
  // chord half-length is sqrt(3), so it enters sqrt(3) before the closest approach.
  const Sphere sphere{2.0f};
  const Vec3 d = Normalize(Vec3{1, 1, 0});
  const Vec3 closest{0, 0, 1};
  Ray ray = MakeRay(closest - d * 10.0f, d, 100.0f);
  CastHit hit;
  ASSERT_TRUE(Raycast(sphere, At({}), ray, &hit));
  EXPECT_NEAR(hit.distance, 10.0f - std::sqrt(3.0f), kTol);
  Vec3 p = closest - d * std::sqrt(3.0f);
  EXPECT_TRUE(VecNear(hit.point, p, kTol));
  EXPECT_TRUE(VecNear(hit.normal, p * 0.5f, kTol));
}

TEST(RayCastSphere, FarFromTheOriginKeepsItsPrecision) {
  for (float far : {1e5f, -1e5f}) {
    const Vec3 centre{far, -far, far + 0.5f};
    const Sphere sphere{1.25f};
    for (int i = 0; i < 3; ++i) {
      // Integer offsets are exact at 1e5 (one ulp is 2^-7), so the exact answer is 10 - 1.25.
      Ray ray = MakeRay(centre - Axis(i) * 10.0f, Axis(i), 100.0f);
      CastHit hit;
      ASSERT_TRUE(Raycast(sphere, At(centre), ray, &hit));
      // The distance comes from the local offset (exact here), so it is as precise as near 0.
      EXPECT_NEAR(hit.distance, 8.75f, kTol);
      EXPECT_TRUE(VecNear(hit.point, centre - Axis(i) * 1.25f, kFarTol));
      EXPECT_TRUE(VecNear(hit.normal, Axis(i, -1.0f), kTol));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Box

TEST(RayCastBox, HitsFromOutsideAlongEachAxis) {
  const Vec3 centre{4, 5, 6};
  const Box box{{1, 2, 3}};
  for (int i = 0; i < 3; ++i) {
    for (float s : kSigns) {
      SCOPED_TRACE(testing::Message() << "axis " << i << " sign " << s);
      // Start 10 before the face, off the face's centre but within it.
      Vec3 along = Axis((i + 1) % 3, 0.5f) + Axis((i + 2) % 3, -0.25f);
      Vec3 face = centre + along - Axis(i, s) * box.half_extents[i];
      Ray ray = MakeRay(face - Axis(i, s) * 10.0f, Axis(i, s), 100.0f);
      CastHit hit;
      ASSERT_TRUE(Raycast(box, At(centre), ray, &hit));
      EXPECT_NEAR(hit.distance, 10.0f, kTol);
      EXPECT_TRUE(VecNear(hit.point, face, kTol));
      EXPECT_EQ(hit.normal, Axis(i, -s));
      EXPECT_FALSE(hit.start_overlapping);
    }
  }
}

TEST(RayCastBox, MissesWhenPointingAwayOrPassingBeside) {
  const Box box{{1, 2, 3}};
  for (int i = 0; i < 3; ++i) {
    for (float s : kSigns) {
      CastHit hit = Sentinel();
      EXPECT_FALSE(Raycast(box, At({}), MakeRay(Axis(i, 5.0f * s), Axis(i, s), 100.0f), &hit));
      int j = (i + 1) % 3;
      Vec3 beside = Axis(j, box.half_extents[j] + 0.1f);
      EXPECT_FALSE(
          Raycast(box, At({}), MakeRay(beside - Axis(i, 10.0f * s), Axis(i, s), 100.0f), &hit));
      EXPECT_TRUE(SameHit(hit, Sentinel()));
    }
  }
}

TEST(RayCastBox, RayParallelToAFaceHitsInsideTheSlabAndMissesJustOutside) {
  const Box box{{1, 2, 3}};
  for (int i = 0; i < 3; ++i) {     // travel axis
    for (int k = 1; k <= 2; ++k) {  // the axis of the face the ray runs along
      for (float s : kSigns) {      // which of the two parallel faces
        int j = (i + k) % 3;
        float e = box.half_extents[j];
        // Exactly in the face's plane: the closed box is touched, entering through the face of
        // axis i (its edge with the face of axis j).
        Vec3 origin = Axis(j, s * e) - Axis(i, 10.0f);
        CastHit hit;
        ASSERT_TRUE(Raycast(box, At({}), MakeRay(origin, Axis(i), 100.0f), &hit))
            << "i " << i << " j " << j;
        EXPECT_NEAR(hit.distance, 10.0f - box.half_extents[i], kTol);
        EXPECT_EQ(hit.normal, Axis(i, -1.0f));
        // One float step outside the plane: a miss.
        Vec3 outside = Axis(j, s * std::nextafter(e, 2.0f * e)) - Axis(i, 10.0f);
        EXPECT_FALSE(Raycast(box, At({}), MakeRay(outside, Axis(i), 100.0f), &hit));
      }
    }
  }
}

TEST(RayCastBox, RayAlongAnEdgeHitsTheEndFace) {
  const Box box{{1, 2, 3}};
  const Vec3& e = box.half_extents;
  for (int i = 0; i < 3; ++i) {
    int a = (i + 1) % 3, b = (i + 2) % 3;
    for (float sa : kSigns) {
      for (float sb : kSigns) {
        Vec3 edge = Axis(a, sa * e[a]) + Axis(b, sb * e[b]);
        Ray ray = MakeRay(edge + Axis(i, 20.0f), Axis(i, -1.0f), 100.0f);
        CastHit hit;
        ASSERT_TRUE(Raycast(box, At({}), ray, &hit));
        EXPECT_NEAR(hit.distance, 20.0f - e[i], kTol);
        EXPECT_EQ(hit.normal, Axis(i));
        EXPECT_TRUE(VecNear(hit.point, edge + Axis(i, e[i]), kTol));
      }
    }
  }
}

TEST(RayCastBox, EnteringExactlyThroughAnEdgeOrCornerPicksTheLowestAxisFace) {
  const Box cube{{1, 1, 1}};
  // Through the corner (1, 1, 1) along the diagonal: every slab is entered at the same t.
  const Vec3 d = Normalize(Vec3{-1, -1, -1});
  CastHit hit;
  ASSERT_TRUE(Raycast(cube, At({}), MakeRay(Vec3{5, 5, 5}, d, 100.0f), &hit));
  EXPECT_NEAR(hit.distance, 4.0f * std::sqrt(3.0f), kTol);
  EXPECT_TRUE(VecNear(hit.point, {1, 1, 1}, kTol));
  EXPECT_EQ(hit.normal, Axis(0));
  // Through the edge x = y = 1 in the z = 0 plane: faces +x and +y tie, +x is reported.
  const Vec3 d2 = Normalize(Vec3{-1, -1, 0});
  ASSERT_TRUE(Raycast(cube, At({}), MakeRay(Vec3{4, 4, 0}, d2, 100.0f), &hit));
  EXPECT_EQ(hit.normal, Axis(0));
  // The same edge entered along y = z = 1 in x: +y wins over +z.
  const Vec3 d3 = Normalize(Vec3{0, -1, -1});
  ASSERT_TRUE(Raycast(cube, At({}), MakeRay(Vec3{0, 4, 4}, d3, 100.0f), &hit));
  EXPECT_EQ(hit.normal, Axis(1));
}

TEST(RayCastBox, StartingInsideOrOnTheSurfaceHitsAtZero) {
  const Vec3 centre{-2, 0, 7};
  const Box box{{1, 2, 3}};
  const Vec3 starts[] = {
      centre,                             // centre
      centre + Vec3{0.5f, -1.0f, 2.0f},   // inside
      centre + Vec3{1.0f, 0.0f, 0.0f},    // on a face
      centre + Vec3{1.0f, 2.0f, 0.0f},    // on an edge
      centre + Vec3{-1.0f, 2.0f, -3.0f},  // on a corner
  };
  for (const Vec3& origin : starts) {
    for (int i = 0; i < 3; ++i) {
      for (float s : kSigns) {
        Ray ray = MakeRay(origin, Axis(i, s), 10.0f);
        CastHit hit;
        ASSERT_TRUE(Raycast(box, At(centre), ray, &hit)) << origin;
        EXPECT_EQ(hit.distance, 0.0f);
        EXPECT_EQ(hit.point, origin);
        EXPECT_EQ(hit.normal, -ray.direction);
        EXPECT_TRUE(hit.start_overlapping);
      }
    }
  }
}

TEST(RayCastBox, MaxDistanceJustShortMissesAndExactlyAtTheFaceHits) {
  const Box box{{1, 2, 3}};
  for (int i = 0; i < 3; ++i) {
    for (float s : kSigns) {
      // Slab distances of integers are exact: the face is exactly 7 away.
      Ray ray = MakeRay(Axis(i, -s * (box.half_extents[i] + 7.0f)), Axis(i, s), 7.0f);
      CastHit hit;
      ASSERT_TRUE(Raycast(box, At({}), ray, &hit));
      EXPECT_EQ(hit.distance, 7.0f);
      ray.max_distance = std::nextafter(7.0f, 0.0f);
      EXPECT_FALSE(Raycast(box, At({}), ray, &hit));
    }
  }
}

TEST(RayCastBox, FlatBoxIsHitThroughItsFaceAndItsRim) {
  for (int i = 0; i < 3; ++i) {
    // Flat across axis i.
    Vec3 e{2, 2, 2};
    e[i] = 0.0f;
    const Box flat{e};
    int j = (i + 1) % 3;
    for (float s : kSigns) {
      // Across the plane, inside the rectangle.
      CastHit hit;
      Vec3 origin = Axis(i, -5.0f * s) + Axis(j, 0.5f);
      ASSERT_TRUE(Raycast(flat, At({}), MakeRay(origin, Axis(i, s), 10.0f), &hit));
      EXPECT_EQ(hit.distance, 5.0f);
      EXPECT_EQ(hit.normal, Axis(i, -s));
      EXPECT_TRUE(VecNear(hit.point, Axis(j, 0.5f), kTol));
      // Across the plane, outside the rectangle.
      Vec3 outside = Axis(i, -5.0f * s) + Axis(j, 2.5f);
      EXPECT_FALSE(Raycast(flat, At({}), MakeRay(outside, Axis(i, s), 10.0f), &hit));
      // In the plane, towards the rectangle: enters through its rim.
      ASSERT_TRUE(Raycast(flat, At({}), MakeRay(Axis(j, -5.0f * s), Axis(j, s), 10.0f), &hit));
      EXPECT_EQ(hit.distance, 3.0f);
      EXPECT_EQ(hit.normal, Axis(j, -s));
      // Starting in the rectangle: inside.
      ASSERT_TRUE(Raycast(flat, At({}), MakeRay(Axis(j, 0.5f), Axis(i, s), 10.0f), &hit));
      EXPECT_TRUE(hit.start_overlapping);
    }
  }
}

TEST(RayCastBox, PointBoxIsHitOnlyThroughItsCentre) {
  const Box point{{0, 0, 0}};
  for (int i = 0; i < 3; ++i) {
    CastHit hit;
    ASSERT_TRUE(
        Raycast(point, At({1, 1, 1}), MakeRay(Vec3{1, 1, 1} - Axis(i, 3.0f), Axis(i), 5.0f), &hit));
    EXPECT_EQ(hit.distance, 3.0f);
    EXPECT_EQ(hit.point, (Vec3{1, 1, 1}));
  }
}

struct RotatedBoxCase {
  const char* name;
  Quat rotation;
  // Expected world half extents along x, y, z after the rotation.
  Vec3 world_half_extents;
};

TEST(RayCastBox, RotationsOf0And90And180DegreesMoveTheFaces) {
  const Box box{{1, 2, 3}};
  const RotatedBoxCase cases[] = {
      {"identity", Quat::Identity(), {1, 2, 3}},
      {"90 about x", Degrees({1, 0, 0}, 90), {1, 3, 2}},
      {"90 about y", Degrees({0, 1, 0}, 90), {3, 2, 1}},
      {"90 about z", Degrees({0, 0, 1}, 90), {2, 1, 3}},
      {"180 about x", Degrees({1, 0, 0}, 180), {1, 2, 3}},
      {"-90 about z", Degrees({0, 0, 1}, -90), {2, 1, 3}},
  };
  const Vec3 centre{10, -20, 30};
  for (const RotatedBoxCase& c : cases) {
    for (int i = 0; i < 3; ++i) {
      for (float s : kSigns) {
        SCOPED_TRACE(testing::Message() << c.name << " axis " << i << " sign " << s);
        Ray ray = MakeRay(centre - Axis(i, 10.0f * s), Axis(i, s), 100.0f);
        CastHit hit;
        ASSERT_TRUE(Raycast(box, At(centre, c.rotation), ray, &hit));
        // The rotated axes carry float rounding of sin/cos(90 degrees) (~1e-7 relative).
        EXPECT_NEAR(hit.distance, 10.0f - c.world_half_extents[i], kTol);
        EXPECT_TRUE(VecNear(hit.normal, Axis(i, -s), kTol));
        EXPECT_TRUE(VecNear(hit.point, centre - Axis(i, s * c.world_half_extents[i]), kTol));
      }
    }
  }
}

TEST(RayCastBox, RotatedByFortyFiveDegreesIsHitOnTheSlantedFace) {
  // A unit cube turned 45 degrees about z is a diamond in xy with corners at +-sqrt(2). A ray
  // along +x at y = 0.2 meets the upper-left face x - y = -sqrt(2), whose normal is (-1, 1)/sqrt2.
  const Box cube{{1, 1, 1}};
  const Pose pose = At({}, Degrees({0, 0, 1}, 45));
  const float root2 = std::sqrt(2.0f);
  CastHit hit;
  ASSERT_TRUE(Raycast(cube, pose, MakeRay({-10, 0.2f, 0.3f}, {1, 0, 0}, 100.0f), &hit));
  EXPECT_NEAR(hit.distance, 10.0f + 0.2f - root2, kTol);
  EXPECT_TRUE(VecNear(hit.point, {0.2f - root2, 0.2f, 0.3f}, kTol));
  EXPECT_TRUE(VecNear(hit.normal, Vec3{-1, 1, 0} / root2, kTol));
}

TEST(RayCastBox, RandomRotationsHitTheConstructedFacePoint) {
  // For a random pose, pick a point on a random face and a direction entering that face, and
  // start the ray 7 before it: the hit must be exactly there, whatever the rotation.
  const unsigned seed = 20240611;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const Box box{{0.5f, 1.5f, 2.5f}};
  for (int n = 0; n < 500; ++n) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " case " << n);
    Quat q = Normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
    Pose pose = At({3 * u(rng), 3 * u(rng), 3 * u(rng)}, q);
    int i = n % 3;
    float s = (n / 3) % 2 ? 1.0f : -1.0f;
    // A point in the face's interior (kept 5% from its rim so the entry is unambiguous).
    Vec3 local_point = Mul(box.half_extents, Vec3{0.95f * u(rng), 0.95f * u(rng), 0.95f * u(rng)});
    local_point[i] = s * box.half_extents[i];
    // A direction entering that face: its component along the outward normal is negative.
    Vec3 local_dir = Normalize(Vec3{u(rng), u(rng), u(rng)});
    local_dir[i] = -s * (0.5f + std::fabs(local_dir[i]));
    local_dir = Normalize(local_dir);
    Vec3 point = TransformPoint(pose, local_point);
    Vec3 dir = TransformVector(pose, local_dir);
    CastHit hit;
    ASSERT_TRUE(Raycast(box, pose, MakeRay(point - 7.0f * dir, dir, 20.0f), &hit));
    EXPECT_NEAR(hit.distance, 7.0f, kTol);
    EXPECT_TRUE(VecNear(hit.point, point, kTol));
    EXPECT_TRUE(VecNear(hit.normal, TransformVector(pose, Axis(i, s)), kTol));
  }
}

TEST(RayCastBox, FarFromTheOriginKeepsItsPrecision) {
  const Box box{{1, 2, 3}};
  for (float far : {1e5f, -1e5f}) {
    for (const Quat& q : {Quat::Identity(), Degrees({0, 0, 1}, 90)}) {
      const Vec3 centre{far, far, -far};
      const Pose pose = At(centre, q);
      Vec3 world_e = q == Quat::Identity() ? Vec3{1, 2, 3} : Vec3{2, 1, 3};
      for (int i = 0; i < 3; ++i) {
        for (float s : kSigns) {
          Ray ray = MakeRay(centre - Axis(i, 20.0f * s), Axis(i, s), 100.0f);
          CastHit hit;
          ASSERT_TRUE(Raycast(box, pose, ray, &hit));
          // The local offset (20) is exact, so the distance keeps near-origin precision.
          EXPECT_NEAR(hit.distance, 20.0f - world_e[i], kTol);
          EXPECT_TRUE(VecNear(hit.point, centre - Axis(i, s * world_e[i]), kFarTol));
          EXPECT_TRUE(VecNear(hit.normal, Axis(i, -s), kTol));
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Capsule

TEST(RayCastCapsule, HitsFromOutsideAlongEachAxis) {
  const Vec3 centre{1, -2, 3};
  const Capsule capsule{0.5f, 2.0f};  // along local y
  for (int i = 0; i < 3; ++i) {
    for (float s : kSigns) {
      SCOPED_TRACE(testing::Message() << "axis " << i << " sign " << s);
      Ray ray = MakeRay(centre - Axis(i, 10.0f * s), Axis(i, s), 100.0f);
      CastHit hit;
      ASSERT_TRUE(Raycast(capsule, At(centre), ray, &hit));
      // Along y it meets a cap at half_height + radius; across, the side at radius.
      float reach = i == 1 ? 2.5f : 0.5f;
      EXPECT_NEAR(hit.distance, 10.0f - reach, kTol);
      EXPECT_TRUE(VecNear(hit.point, centre - Axis(i, s * reach), kTol));
      EXPECT_TRUE(VecNear(hit.normal, Axis(i, -s), kTol));
      EXPECT_FALSE(hit.start_overlapping);
    }
  }
}

TEST(RayCastCapsule, HitsTheSideAwayFromTheMiddle) {
  const Capsule capsule{1.0f, 2.0f};
  for (float y : {-2.0f, -1.0f, 0.0f, 1.5f, 2.0f}) {
    for (int i : {0, 2}) {
      for (float s : kSigns) {
        Ray ray = MakeRay(Axis(i, -6.0f * s) + Axis(1, y), Axis(i, s), 10.0f);
        CastHit hit;
        ASSERT_TRUE(Raycast(capsule, At({}), ray, &hit)) << "y " << y;
        EXPECT_NEAR(hit.distance, 5.0f, kTol);
        EXPECT_TRUE(VecNear(hit.normal, Axis(i, -s), kTol));
      }
    }
  }
}

TEST(RayCastCapsule, HitsACapAboveTheSegment) {
  // Across the capsule at height h + 0.6 (radius 1): the cap sphere's chord is at x = -0.8.
  const Capsule capsule{1.0f, 2.0f};
  for (float s : kSigns) {
    Ray ray = MakeRay({-5, s * 2.6f, 0}, {1, 0, 0}, 10.0f);
    CastHit hit;
    ASSERT_TRUE(Raycast(capsule, At({}), ray, &hit));
    EXPECT_NEAR(hit.distance, 5.0f - 0.8f, kTol);
    EXPECT_TRUE(VecNear(hit.point, {-0.8f, s * 2.6f, 0}, kTol));
    EXPECT_TRUE(VecNear(hit.normal, {-0.8f, s * 0.6f, 0}, kTol));
  }
}

TEST(RayCastCapsule, TangentToTheSideHits) {
  const Capsule capsule{1.0f, 2.0f};
  for (float s : kSigns) {
    // Along x, offset exactly R along z: touches the side at (0, 0.5, R).
    Ray ray = MakeRay({-5, 0.5f, s}, {1, 0, 0}, 10.0f);
    CastHit hit;
    ASSERT_TRUE(Raycast(capsule, At({}), ray, &hit));
    EXPECT_NEAR(hit.distance, 5.0f, kTol);
    EXPECT_TRUE(VecNear(hit.point, {0, 0.5f, s}, kTol));
    EXPECT_TRUE(VecNear(hit.normal, {0, 0, s}, kTol));
    // 1e-5 further out: a miss (the offset is ~100 ulps of R).
    ray.origin.z = s * (1.0f + 1e-5f);
    EXPECT_FALSE(Raycast(capsule, At({}), ray, &hit));
  }
}

TEST(RayCastCapsule, RaysParallelToTheAxisHitTheCapOrMiss) {
  const Capsule capsule{1.0f, 2.0f};
  for (float s : kSigns) {
    for (int i : {0, 2}) {
      CastHit hit;
      // Offset 0.6 from the axis: meets the cap sphere at height h + 0.8.
      Ray ray = MakeRay(Axis(i, 0.6f) + Axis(1, -10.0f * s), Axis(1, s), 20.0f);
      ASSERT_TRUE(Raycast(capsule, At({}), ray, &hit));
      EXPECT_NEAR(hit.distance, 10.0f - 2.8f, kTol);
      EXPECT_TRUE(VecNear(hit.normal, Axis(i, 0.6f) + Axis(1, -0.8f * s), kTol));
      // Offset exactly R: grazes the cylinder; the first contact is the cap's equator at h.
      ray.origin = Axis(i, 1.0f) + Axis(1, -10.0f * s);
      ASSERT_TRUE(Raycast(capsule, At({}), ray, &hit));
      EXPECT_NEAR(hit.distance, 10.0f - 2.0f, kTol);
      EXPECT_TRUE(VecNear(hit.point, Axis(i, 1.0f) + Axis(1, -2.0f * s), kTol));
      EXPECT_TRUE(VecNear(hit.normal, Axis(i), kTol));
      // Just outside R: a miss.
      ray.origin = Axis(i, 1.0f + 1e-5f) + Axis(1, -10.0f * s);
      EXPECT_FALSE(Raycast(capsule, At({}), ray, &hit));
    }
  }
}

TEST(RayCastCapsule, ZeroHalfHeightIsASphere) {
  const Capsule ball{1.5f, 0.0f};
  const Sphere sphere{1.5f};
  const unsigned seed = 7;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  int hits = 0;
  for (int n = 0; n < 300; ++n) {
    Vec3 origin{4 * u(rng), 4 * u(rng), 4 * u(rng)};
    Vec3 dir = Normalize(Vec3{u(rng), u(rng), u(rng)} * 0.5f - origin * 0.25f);
    Ray ray = MakeRay(origin, dir, 10.0f);
    CastHit a, b;
    bool ha = Raycast(ball, At({}), ray, &a);
    bool hb = Raycast(sphere, At({}), ray, &b);
    ASSERT_EQ(ha, hb) << "seed " << seed << " case " << n;
    if (!ha) continue;
    ++hits;
    EXPECT_NEAR(a.distance, b.distance, kTol);
    EXPECT_TRUE(VecNear(a.point, b.point, kTol));
    EXPECT_TRUE(VecNear(a.normal, b.normal, kTol));
  }
  EXPECT_GT(hits, 50);
}

TEST(RayCastCapsule, ZeroRadiusIsHitOnlyWhereTheRayCrossesItsSegment) {
  const Capsule segment{0.0f, 1.0f};
  CastHit hit;
  ASSERT_TRUE(Raycast(segment, At({}), MakeRay({-3, 0.5f, 0}, {1, 0, 0}, 10.0f), &hit));
  EXPECT_EQ(hit.distance, 3.0f);
  EXPECT_EQ(hit.point, (Vec3{0, 0.5f, 0}));
  EXPECT_NEAR(Length(hit.normal), 1.0f, kTol);
  EXPECT_FALSE(Raycast(segment, At({}), MakeRay({-3, 1.5f, 0}, {1, 0, 0}, 10.0f), &hit));
  EXPECT_FALSE(Raycast(segment, At({}), MakeRay({-3, 0.5f, 1e-4f}, {1, 0, 0}, 10.0f), &hit));
  // Along the segment's own line: hits its end.
  ASSERT_TRUE(Raycast(segment, At({}), MakeRay({0, 4, 0}, {0, -1, 0}, 10.0f), &hit));
  EXPECT_EQ(hit.distance, 3.0f);
}

TEST(RayCastCapsule, StartingInsideOrOnTheSurfaceHitsAtZero) {
  const Capsule capsule{1.0f, 2.0f};
  const Vec3 starts[] = {{0, 0, 0}, {0.5f, 2.5f, 0}, {1, 0, 0}, {0, -3, 0}, {0, 1, -1}};
  for (const Vec3& origin : starts) {
    for (int i = 0; i < 3; ++i) {
      for (float s : kSigns) {
        Ray ray = MakeRay(origin, Axis(i, s), 10.0f);
        CastHit hit;
        ASSERT_TRUE(Raycast(capsule, At({}), ray, &hit)) << origin;
        EXPECT_EQ(hit.distance, 0.0f);
        EXPECT_EQ(hit.point, origin);
        EXPECT_EQ(hit.normal, -ray.direction);
        EXPECT_TRUE(hit.start_overlapping);
      }
    }
  }
}

TEST(RayCastCapsule, MaxDistanceJustShortMissesAndExactlyAtTheSurfaceHits) {
  const Capsule capsule{1.0f, 2.0f};
  for (int i = 0; i < 3; ++i) {
    float reach = i == 1 ? 3.0f : 1.0f;
    Ray ray = MakeRay(Axis(i, -(reach + 6.0f)), Axis(i), 6.0f);
    CastHit hit;
    ASSERT_TRUE(Raycast(capsule, At({}), ray, &hit));
    EXPECT_EQ(hit.distance, 6.0f);
    ray.max_distance = std::nextafter(6.0f, 0.0f);
    EXPECT_FALSE(Raycast(capsule, At({}), ray, &hit));
  }
}

TEST(RayCastCapsule, RotationsTurnTheAxis) {
  const Capsule capsule{0.5f, 2.0f};
  struct Case {
    Quat rotation;
    int world_axis;  // where local y ends up (up to sign)
  };
  const Case cases[] = {{Quat::Identity(), 1},
                        {Degrees({0, 0, 1}, 90), 0},
                        {Degrees({1, 0, 0}, 90), 2},
                        {Degrees({1, 0, 0}, 180), 1}};
  for (const Case& c : cases) {
    for (int i = 0; i < 3; ++i) {
      for (float s : kSigns) {
        Ray ray = MakeRay(Axis(i, -10.0f * s), Axis(i, s), 100.0f);
        CastHit hit;
        ASSERT_TRUE(Raycast(capsule, At({}, c.rotation), ray, &hit));
        float reach = i == c.world_axis ? 2.5f : 0.5f;
        EXPECT_NEAR(hit.distance, 10.0f - reach, kTol);
        EXPECT_TRUE(VecNear(hit.normal, Axis(i, -s), kTol));
      }
    }
  }
}

TEST(RayCastCapsule, RandomRotationsHitTheConstructedSidePoint) {
  // Pick a point on the cylindrical side and a direction entering there; the hit must be it.
  const unsigned seed = 99;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const Capsule capsule{0.75f, 1.5f};
  for (int n = 0; n < 500; ++n) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " case " << n);
    Quat q = Normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
    Pose pose = At({5 * u(rng), 5 * u(rng), 5 * u(rng)}, q);
    Vec3 radial = Normalize(Vec3{u(rng), 0.0f, u(rng)});
    Vec3 local_point = radial * capsule.radius + Axis(1, 0.9f * capsule.half_height * u(rng));
    Vec3 local_dir = Normalize(Vec3{u(rng), u(rng), u(rng)});
    local_dir = local_dir - radial * (Dot(local_dir, radial) + 0.6f);  // into the side
    local_dir = Normalize(local_dir);
    Vec3 point = TransformPoint(pose, local_point);
    Vec3 dir = TransformVector(pose, local_dir);
    CastHit hit;
    ASSERT_TRUE(Raycast(capsule, pose, MakeRay(point - 4.0f * dir, dir, 10.0f), &hit));
    EXPECT_NEAR(hit.distance, 4.0f, kTol);
    EXPECT_TRUE(VecNear(hit.point, point, kTol));
    EXPECT_TRUE(VecNear(hit.normal, TransformVector(pose, radial), kTol));
  }
}

TEST(RayCastCapsule, FarFromTheOriginKeepsItsPrecision) {
  const Capsule capsule{0.5f, 2.0f};
  for (float far : {1e5f, -1e5f}) {
    const Vec3 centre{-far, far, far};
    const Pose pose = At(centre, Degrees({1, 0, 0}, 90));  // axis along world z
    for (int i = 0; i < 3; ++i) {
      for (float s : kSigns) {
        Ray ray = MakeRay(centre - Axis(i, 10.0f * s), Axis(i, s), 100.0f);
        CastHit hit;
        ASSERT_TRUE(Raycast(capsule, pose, ray, &hit));
        float reach = i == 2 ? 2.5f : 0.5f;
        EXPECT_NEAR(hit.distance, 10.0f - reach, kTol);
        EXPECT_TRUE(VecNear(hit.point, centre - Axis(i, s * reach), kFarTol));
        EXPECT_TRUE(VecNear(hit.normal, Axis(i, -s), kTol));
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Shape

TEST(RayCastShape, DispatchesToTheConcreteShape) {
  const Pose pose = At({1, 2, 3}, Degrees(Normalize(Vec3{1, 2, 3}), 30));
  const Shape shapes[] = {Sphere{1.0f}, Box{{1, 0.5f, 2}}, Capsule{0.5f, 1.0f}};
  const Ray rays[] = {MakeRay({-5, 2, 3}, {1, 0, 0}, 10.0f), MakeRay({1, 2, 3}, {0, 1, 0}, 1.0f),
                      MakeRay({1, 9, 3.2f}, {0, -1, 0}, 10.0f),
                      MakeRay({1, 9, 30}, {0, -1, 0}, 10.0f)};
  for (const Shape& shape : shapes) {
    for (const Ray& ray : rays) {
      CastHit a = Sentinel(), b = Sentinel();
      bool ha = Raycast(shape, pose, ray, &a);
      bool hb = Visit(shape, [&](const auto& s) { return Raycast(s, pose, ray, &b); });
      EXPECT_EQ(ha, hb);
      EXPECT_TRUE(SameHit(a, b));
    }
  }
}

}  // namespace
}  // namespace collide
