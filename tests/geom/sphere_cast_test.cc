#include "geom/sphere_cast.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "geom/cast_test_util.h"
#include "geom/ray_cast.h"

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

constexpr float kSigns[] = {1.0f, -1.0f};

// A random unit quaternion (normalised 4-vector of uniform components; fine for coverage).
Quat RandomRotation(std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  return Normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
}

// ---------------------------------------------------------------------------------------------
// Sphere

TEST(SphereCastSphere, HitsFromOutsideAlongEachAxis) {
  const Vec3 centre{1, 2, 3};
  const Sphere sphere{2.0f};
  for (int i = 0; i < 3; ++i) {
    for (float s : kSigns) {
      SCOPED_TRACE(testing::Message() << "axis " << i << " sign " << s);
      Ray path = MakeRay(centre - Axis(i, 10.0f * s), Axis(i, s), 100.0f);
      CastHit hit;
      ASSERT_TRUE(SphereCast(sphere, At(centre), path, 0.5f, &hit));
      // The centres are R + r = 2.5 apart at contact.
      EXPECT_NEAR(hit.distance, 7.5f, kTol);
      EXPECT_TRUE(VecNear(hit.point, centre - Axis(i, 2.0f * s), kTol));
      EXPECT_TRUE(VecNear(hit.normal, Axis(i, -s), kTol));
      EXPECT_FALSE(hit.start_overlapping);
    }
  }
}

TEST(SphereCastSphere, GrazingCastTouchesAtTheClosestApproach) {
  const Vec3 centre{-1, 0.5f, 2};
  const Sphere sphere{2.0f};
  for (int i = 0; i < 3; ++i) {
    for (int k = 1; k <= 2; ++k) {
      for (float s : kSigns) {
        // Offset exactly R + r = 2.5 across the path: the balls just touch at the closest
        // approach, 6 along the path.
        Vec3 across = Axis((i + k) % 3);
        Ray path = MakeRay(centre + across * 2.5f - Axis(i, 6.0f * s), Axis(i, s), 100.0f);
        CastHit hit;
        ASSERT_TRUE(SphereCast(sphere, At(centre), path, 0.5f, &hit));
        EXPECT_NEAR(hit.distance, 6.0f, kTol);
        EXPECT_TRUE(VecNear(hit.point, centre + across * 2.0f, kTol));
        EXPECT_TRUE(VecNear(hit.normal, across, kTol));
        // 1e-5 further (about 80 ulps of 2.5): a miss.
        path.origin = path.origin + across * 1e-5f;
        CastHit untouched = Sentinel();
        EXPECT_FALSE(SphereCast(sphere, At(centre), path, 0.5f, &untouched));
        EXPECT_TRUE(SameHit(untouched, Sentinel()));
      }
    }
  }
}

TEST(SphereCastSphere, MaxDistanceJustShortMissesAndExactlyAtContactHits) {
  const Sphere sphere{2.0f};
  for (int i = 0; i < 3; ++i) {
    // Axis aligned with dyadic radii: contact at exactly 10 - 2.5.
    Ray path = MakeRay(Axis(i, -10.0f), Axis(i), 7.5f);
    CastHit hit;
    ASSERT_TRUE(SphereCast(sphere, At({}), path, 0.5f, &hit));
    EXPECT_EQ(hit.distance, 7.5f);
    path.max_distance = std::nextafter(7.5f, 0.0f);
    EXPECT_FALSE(SphereCast(sphere, At({}), path, 0.5f, &hit));
  }
}

TEST(SphereCastSphere, StartingOverlappingReportsTheSeparatingDirection) {
  const Vec3 centre{3, -1, 2};
  const Sphere sphere{2.0f};
  for (int i = 0; i < 3; ++i) {
    for (float s : kSigns) {
      // Ball centre outside the sphere but within r, inside the sphere, and exactly touching.
      for (float gap : {2.25f, 1.0f, 2.5f}) {
        SCOPED_TRACE(testing::Message() << "axis " << i << " sign " << s << " gap " << gap);
        Vec3 out = Axis(i, s);
        Ray path = MakeRay(centre + out * gap, Axis((i + 1) % 3), 10.0f);
        CastHit hit;
        ASSERT_TRUE(SphereCast(sphere, At(centre), path, 0.5f, &hit));
        EXPECT_TRUE(hit.start_overlapping);
        EXPECT_EQ(hit.distance, 0.0f);
        EXPECT_TRUE(VecNear(hit.point, centre + out * 2.0f, kTol));
        EXPECT_TRUE(VecNear(hit.normal, out, kTol));
      }
    }
  }
}

TEST(SphereCastSphere, FarFromTheOriginKeepsItsPrecision) {
  const Sphere sphere{1.25f};
  for (float far : {1e5f, -1e5f}) {
    const Vec3 centre{far, far, -far};
    for (int i = 0; i < 3; ++i) {
      Ray path = MakeRay(centre - Axis(i, 10.0f), Axis(i), 100.0f);
      CastHit hit;
      ASSERT_TRUE(SphereCast(sphere, At(centre), path, 0.25f, &hit));
      EXPECT_NEAR(hit.distance, 8.5f, kTol);
      EXPECT_TRUE(VecNear(hit.point, centre - Axis(i, 1.25f), kFarTol));
      EXPECT_TRUE(VecNear(hit.normal, Axis(i, -1.0f), kTol));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Box

TEST(SphereCastBox, HitsAFaceAlongEachAxis) {
  const Vec3 centre{4, 5, 6};
  const Box box{{1, 2, 3}};
  for (int i = 0; i < 3; ++i) {
    for (float s : kSigns) {
      SCOPED_TRACE(testing::Message() << "axis " << i << " sign " << s);
      Vec3 along = Axis((i + 1) % 3, 0.5f) + Axis((i + 2) % 3, -0.25f);
      Vec3 face = centre + along - Axis(i, s * box.half_extents[i]);
      Ray path = MakeRay(face - Axis(i, 10.0f * s), Axis(i, s), 100.0f);
      CastHit hit;
      ASSERT_TRUE(SphereCast(box, At(centre), path, 0.5f, &hit));
      EXPECT_NEAR(hit.distance, 9.5f, kTol);
      EXPECT_TRUE(VecNear(hit.point, face, kTol));
      EXPECT_EQ(hit.normal, Axis(i, -s));
      EXPECT_FALSE(hit.start_overlapping);
    }
  }
}

TEST(SphereCastBox, HitsEachEdgeFromItsEdgeRegion) {
  // Ball of radius 0.5 moving across axis b towards the box, its centre 0.3 beyond the face of
  // axis a: it first touches the edge (a, b) when the centre is 0.4 beyond face b (a 3-4-5
  // triangle scaled by 0.1), with normal (0.6 on a, 0.8 on b).
  const Box box{{1, 2, 3}};
  const Vec3& e = box.half_extents;
  const Vec3 centre{-1, 2, 0.5f};
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) {
      if (a == b) continue;
      int c = 3 - a - b;
      for (float sa : kSigns) {
        for (float sb : kSigns) {
          SCOPED_TRACE(testing::Message() << "a " << a << " b " << b << " signs " << sa << sb);
          Vec3 start =
              Axis(a, sa * (e[a] + 0.3f)) + Axis(b, sb * (e[b] + 5.0f)) + Axis(c, 0.5f * e[c]);
          Ray path = MakeRay(centre + start, Axis(b, -sb), 10.0f);
          CastHit hit;
          ASSERT_TRUE(SphereCast(box, At(centre), path, 0.5f, &hit));
          EXPECT_NEAR(hit.distance, 4.6f, kTol);
          Vec3 edge_point = Axis(a, sa * e[a]) + Axis(b, sb * e[b]) + Axis(c, 0.5f * e[c]);
          EXPECT_TRUE(VecNear(hit.point, centre + edge_point, kTol));
          EXPECT_TRUE(VecNear(hit.normal, Axis(a, 0.6f * sa) + Axis(b, 0.8f * sb), kTol));
          EXPECT_FALSE(hit.start_overlapping);
        }
      }
    }
  }
}

TEST(SphereCastBox, HitsEachCornerFromItsCornerRegion) {
  // Ball of radius 0.5 moving along -k, 0.2 beyond the corner on both other axes: it touches
  // the corner when 0.5^2 = 0.2^2 + 0.2^2 + z^2, z = sqrt(0.17) beyond the face of axis k.
  const Box box{{1, 2, 3}};
  const Vec3& e = box.half_extents;
  const float z = std::sqrt(0.17f);
  for (int k = 0; k < 3; ++k) {
    for (int corner = 0; corner < 8; ++corner) {
      Vec3 sign{corner & 1 ? 1.0f : -1.0f, corner & 2 ? 1.0f : -1.0f, corner & 4 ? 1.0f : -1.0f};
      SCOPED_TRACE(testing::Message() << "k " << k << " corner " << sign);
      Vec3 offset = Mul(sign, Vec3{0.2f, 0.2f, 0.2f});
      offset[k] = sign[k] * 5.0f;
      Vec3 corner_point = Mul(sign, e);
      Ray path = MakeRay(corner_point + offset, Axis(k, -sign[k]), 10.0f);
      CastHit hit;
      ASSERT_TRUE(SphereCast(box, At({}), path, 0.5f, &hit));
      EXPECT_NEAR(hit.distance, 5.0f - z, kTol);
      EXPECT_TRUE(VecNear(hit.point, corner_point, kTol));
      Vec3 normal = Mul(sign, Vec3{0.4f, 0.4f, 0.4f});
      normal[k] = sign[k] * 2.0f * z;
      EXPECT_TRUE(VecNear(hit.normal, normal, kTol));
    }
  }
}

TEST(SphereCastBox, DiagonalCastHitsTheCornerBall) {
  const Box box{{1, 2, 3}};
  for (int corner = 0; corner < 8; ++corner) {
    Vec3 sign{corner & 1 ? 1.0f : -1.0f, corner & 2 ? 1.0f : -1.0f, corner & 4 ? 1.0f : -1.0f};
    Vec3 corner_point = Mul(sign, box.half_extents);
    Vec3 out = sign / std::sqrt(3.0f);
    Ray path = MakeRay(corner_point + out * 6.0f, -out, 10.0f);
    CastHit hit;
    ASSERT_TRUE(SphereCast(box, At({}), path, 0.5f, &hit)) << sign;
    EXPECT_NEAR(hit.distance, 5.5f, kTol);
    EXPECT_TRUE(VecNear(hit.point, corner_point, kTol));
    EXPECT_TRUE(VecNear(hit.normal, out, kTol));
  }
}

TEST(SphereCastBox, SlidingAlongAFaceTouchesTheLeadingEdge) {
  // The ball's centre runs exactly r above face b, along axis a: it first touches the edge where
  // face b meets the face of axis a it comes from, with the normal of face b.
  const Box box{{1, 2, 3}};
  const Vec3& e = box.half_extents;
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) {
      if (a == b) continue;
      for (float sb : kSigns) {
        Ray path = MakeRay(Axis(a, -(e[a] + 4.0f)) + Axis(b, sb * (e[b] + 0.5f)), Axis(a), 20.0f);
        CastHit hit;
        ASSERT_TRUE(SphereCast(box, At({}), path, 0.5f, &hit)) << "a " << a << " b " << b;
        EXPECT_NEAR(hit.distance, 4.0f, kTol);
        EXPECT_TRUE(VecNear(hit.point, Axis(a, -e[a]) + Axis(b, sb * e[b]), kTol));
        EXPECT_TRUE(VecNear(hit.normal, Axis(b, sb), kTol));
        // Raised by 1e-5 (dozens of ulps at these magnitudes): a miss.
        path.origin = path.origin + Axis(b, sb * 1e-5f);
        EXPECT_FALSE(SphereCast(box, At({}), path, 0.5f, &hit));
      }
    }
  }
}

TEST(SphereCastBox, EdgeContactNextToACornerIsReportedOnTheEdge) {
  // A ball entering the grown box in a corner region, then touching an edge a hair from the
  // corner. The edge's side and the corner ball are entered at t equal within float rounding;
  // the contact must still be the edge point with the edge's normal, not the corner.
  const Box box{{2.0f, 0.5f, 1.5f}};
  const Vec3& e = box.half_extents;
  const Vec3 normal{0.0f, -0.6f, -0.8f};
  for (float r : {0.5f, 1.0f, 2.5f, 6.5f}) {
    for (float offset : {0.001f, 0.002f, 0.005f, 0.02f}) {
      for (float sx : kSigns) {
        for (float tilt : {0.1f, 0.2f, 0.5f}) {
          for (float lead : {1.0f, 3.0f, 7.0f}) {
            SCOPED_TRACE(testing::Message() << "r " << r << " offset " << offset << " sx " << sx
                                            << " tilt " << tilt << " lead " << lead);
            const Vec3 edge_point{sx * (offset - e.x), -e.y, -e.z};
            const Vec3 dir = Normalize(-normal + Vec3{sx * tilt, 0, 0});
            const Vec3 origin = edge_point + normal * r - dir * lead;
            CastHit hit;
            ASSERT_TRUE(SphereCast(box, At({}), MakeRay(origin, dir, 20.0f), r, &hit));
            // Magnitudes up to ~15 give errors of a few 1e-6.
            EXPECT_NEAR(hit.distance, lead, kTol);
            EXPECT_TRUE(VecNear(hit.point, edge_point, kTol));
            EXPECT_TRUE(VecNear(hit.normal, normal, kTol));
          }
        }
      }
    }
  }
}

TEST(SphereCastBox, PassingAnEdgeRegionBeyondTheRadiusMisses) {
  const Box box{{1, 2, 3}};
  const Vec3& e = box.half_extents;
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) {
      if (a == b) continue;
      int c = 3 - a - b;
      CastHit hit = Sentinel();
      // Across b, 0.5 + 1e-4 beyond face a: in the edge region of the grown box, but never
      // within r of the edge.
      Ray path = MakeRay(Axis(a, e[a] + 0.5001f) + Axis(b, e[b] + 5.0f), Axis(b, -1.0f), 20.0f);
      EXPECT_FALSE(SphereCast(box, At({}), path, 0.5f, &hit));
      // Along the edge, 0.4 beyond both faces (0.57 from the edge).
      path = MakeRay(Axis(a, e[a] + 0.4f) + Axis(b, e[b] + 0.4f) + Axis(c, -10.0f), Axis(c), 20.0f);
      EXPECT_FALSE(SphereCast(box, At({}), path, 0.5f, &hit));
      EXPECT_TRUE(SameHit(hit, Sentinel()));
    }
  }
}

TEST(SphereCastBox, StartingOverlappingReportsTheClosestPointAndSeparatingDirection) {
  const Vec3 centre{2, -3, 1};
  const Box box{{1, 2, 3}};
  struct Case {
    const char* name;
    Vec3 start;   // relative to the box centre
    Vec3 point;   // expected closest surface point, relative to the box centre
    Vec3 normal;  // expected separating direction
  };
  const Case cases[] = {
      {"within r of the +x face", {1.25f, 0.5f, 0.5f}, {1, 0.5f, 0.5f}, {1, 0, 0}},
      {"touching the -y face", {0.2f, -2.5f, -1}, {0.2f, -2, -1}, {0, -1, 0}},
      {"within r of the (+x, +z) edge", {1.24f, 0, 3.32f}, {1, 0, 3}, {0.6f, 0, 0.8f}},
      {"inside, nearest the -x face", {-0.75f, 0.1f, 0.2f}, {-1, 0.1f, 0.2f}, {-1, 0, 0}},
      {"inside, nearest the +z face", {0.1f, 0.2f, 2.8f}, {0.1f, 0.2f, 3}, {0, 0, 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    for (int i = 0; i < 3; ++i) {
      Ray path = MakeRay(centre + c.start, Axis(i), 10.0f);
      CastHit hit;
      ASSERT_TRUE(SphereCast(box, At(centre), path, 0.5f, &hit));
      EXPECT_TRUE(hit.start_overlapping);
      EXPECT_EQ(hit.distance, 0.0f);
      EXPECT_TRUE(VecNear(hit.point, centre + c.point, kTol));
      EXPECT_TRUE(VecNear(hit.normal, c.normal, kTol));
    }
  }
}

TEST(SphereCastBox, FlatBoxIsHitThroughItsFaceAndItsRim) {
  const Box flat{{2, 0, 2}};
  CastHit hit;
  ASSERT_TRUE(SphereCast(flat, At({}), MakeRay({0.5f, 5, 0.25f}, {0, -1, 0}, 10.0f), 0.5f, &hit));
  EXPECT_EQ(hit.distance, 4.5f);
  EXPECT_TRUE(VecNear(hit.point, {0.5f, 0, 0.25f}, kTol));
  EXPECT_EQ(hit.normal, (Vec3{0, 1, 0}));
  // In its plane: the rim is a face of zero height, met when the centre is r from it.
  ASSERT_TRUE(SphereCast(flat, At({}), MakeRay({-5, 0, 1}, {1, 0, 0}, 10.0f), 0.5f, &hit));
  EXPECT_EQ(hit.distance, 2.5f);
  EXPECT_TRUE(VecNear(hit.point, {-2, 0, 1}, kTol));
  EXPECT_EQ(hit.normal, (Vec3{-1, 0, 0}));
  // Over the rim's edge: the edge cylinder of the zero-height face, a 3-4-5 contact.
  ASSERT_TRUE(SphereCast(flat, At({}), MakeRay({-2.3f, 5, 1}, {0, -1, 0}, 10.0f), 0.5f, &hit));
  EXPECT_NEAR(hit.distance, 4.6f, kTol);
  EXPECT_TRUE(VecNear(hit.point, {-2, 0, 1}, kTol));
  EXPECT_TRUE(VecNear(hit.normal, {-0.6f, 0.8f, 0}, kTol));
}

TEST(SphereCastBox, RotationsOf0And90And180DegreesMoveTheFaces) {
  const Box box{{1, 2, 3}};
  struct Case {
    Quat rotation;
    Vec3 world_half_extents;
  };
  const Case cases[] = {{Quat::Identity(), {1, 2, 3}},
                        {Degrees({1, 0, 0}, 90), {1, 3, 2}},
                        {Degrees({0, 1, 0}, 90), {3, 2, 1}},
                        {Degrees({0, 0, 1}, 90), {2, 1, 3}},
                        {Degrees({0, 1, 0}, 180), {1, 2, 3}}};
  const Vec3 centre{-10, 20, 5};
  for (const Case& c : cases) {
    for (int i = 0; i < 3; ++i) {
      for (float s : kSigns) {
        Ray path = MakeRay(centre - Axis(i, 10.0f * s), Axis(i, s), 100.0f);
        CastHit hit;
        ASSERT_TRUE(SphereCast(box, At(centre, c.rotation), path, 0.25f, &hit));
        // sin/cos of the float angle round at ~1e-7 relative.
        EXPECT_NEAR(hit.distance, 10.0f - c.world_half_extents[i] - 0.25f, kTol);
        EXPECT_TRUE(VecNear(hit.point, centre - Axis(i, s * c.world_half_extents[i]), kTol));
        EXPECT_TRUE(VecNear(hit.normal, Axis(i, -s), kTol));
      }
    }
  }
}

TEST(SphereCastBox, RandomRotationsTouchTheConstructedFaceEdgeOrCornerPoint) {
  // Pick a random point of the box's surface and an outward normal of the rounded box there:
  // the ball's centre at contact is point + r n, and any path with a negative component along
  // n reaches it first there (the rounded box is convex). This covers faces, edges and corners
  // under arbitrary rotations.
  const unsigned seed = 4242;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_real_distribution<float> u01(0.0f, 1.0f);
  const Box box{{0.5f, 1.5f, 1.0f}};
  const Vec3& e = box.half_extents;
  const float r = 0.4f;
  // On an edge or corner the normal turns by (position error) / r. Positions of magnitude ~8
  // carry ~1e-6 of rounding, both in the constructed contact and in the cast, amplified up to 3x
  // by the oblique approach: up to ~1e-5 each over r = 0.4. Faces are flat and meet kTol.
  const float kCurvedNormalTol = 5e-5f;
  for (int n = 0; n < 900; ++n) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " case " << n);
    const Quat rotation = RandomRotation(rng);
    const Pose pose = At({4 * u(rng), 4 * u(rng), 4 * u(rng)}, rotation);
    // Which axes the contact lies beyond: one (face), two (edge) or three (corner).
    const int kind = n % 3;
    Vec3 sign{u(rng) < 0 ? -1.0f : 1.0f, u(rng) < 0 ? -1.0f : 1.0f, u(rng) < 0 ? -1.0f : 1.0f};
    Vec3 local_point = Mul(e, Vec3{0.9f * u(rng), 0.9f * u(rng), 0.9f * u(rng)});
    Vec3 local_normal{};
    const int first = n / 3 % 3;
    for (int k = 0; k <= kind; ++k) {
      int i = (first + k) % 3;
      local_point[i] = sign[i] * e[i];
      // Keep each component clearly non-zero so the contact is inside its region.
      local_normal[i] = sign[i] * (0.2f + u01(rng));
    }
    local_normal = Normalize(local_normal);
    Vec3 local_dir = Normalize(Vec3{u(rng), u(rng), u(rng)});
    local_dir = Normalize(local_dir - local_normal * (Dot(local_dir, local_normal) + 0.5f));
    const Vec3 contact_centre = TransformPoint(pose, local_point + local_normal * r);
    const Vec3 dir = TransformVector(pose, local_dir);
    CastHit hit;
    ASSERT_TRUE(SphereCast(box, pose, MakeRay(contact_centre - 3.0f * dir, dir, 10.0f), r, &hit));
    EXPECT_NEAR(hit.distance, 3.0f, kTol);
    EXPECT_TRUE(VecNear(hit.point, TransformPoint(pose, local_point), kTol));
    EXPECT_TRUE(VecNear(hit.normal, TransformVector(pose, local_normal),
                        kind == 0 ? kTol : kCurvedNormalTol));
  }
}

TEST(SphereCastBox, FarFromTheOriginKeepsItsPrecision) {
  const Box box{{1, 2, 3}};
  for (float far : {1e5f, -1e5f}) {
    const Vec3 centre{far, -far, far};
    const Pose pose = At(centre, Degrees({0, 1, 0}, 90));  // world half extents (3, 2, 1)
    const Vec3 world_e{3, 2, 1};
    for (int i = 0; i < 3; ++i) {
      for (float s : kSigns) {
        Ray path = MakeRay(centre - Axis(i, 20.0f * s), Axis(i, s), 100.0f);
        CastHit hit;
        ASSERT_TRUE(SphereCast(box, pose, path, 0.5f, &hit));
        EXPECT_NEAR(hit.distance, 20.0f - world_e[i] - 0.5f, kTol);
        EXPECT_TRUE(VecNear(hit.point, centre - Axis(i, s * world_e[i]), kFarTol));
        EXPECT_TRUE(VecNear(hit.normal, Axis(i, -s), kTol));
      }
    }
    // An edge contact far away: the 3-4-5 case across world y near world x's face.
    Ray path = MakeRay(centre + Vec3{3.3f, 7.0f, 0.0f}, {0, -1, 0}, 100.0f);
    CastHit hit;
    ASSERT_TRUE(SphereCast(box, pose, path, 0.5f, &hit));
    // The start's 3.3 offset is rounded to the 2^-7 grid at 1e5, which moves the contact.
    EXPECT_NEAR(hit.distance, 7.0f - 2.4f, kFarTol);
    EXPECT_TRUE(VecNear(hit.point, centre + Vec3{3, 2, 0}, kFarTol));
    EXPECT_TRUE(VecNear(hit.normal, {0.6f, 0.8f, 0}, 0.05f));
  }
}

// ---------------------------------------------------------------------------------------------
// Capsule

TEST(SphereCastCapsule, HitsFromOutsideAlongEachAxis) {
  const Vec3 centre{1, -2, 3};
  const Capsule capsule{0.5f, 2.0f};
  for (int i = 0; i < 3; ++i) {
    for (float s : kSigns) {
      SCOPED_TRACE(testing::Message() << "axis " << i << " sign " << s);
      Ray path = MakeRay(centre - Axis(i, 10.0f * s), Axis(i, s), 100.0f);
      CastHit hit;
      ASSERT_TRUE(SphereCast(capsule, At(centre), path, 0.25f, &hit));
      float reach = i == 1 ? 2.5f : 0.5f;
      EXPECT_NEAR(hit.distance, 10.0f - reach - 0.25f, kTol);
      EXPECT_TRUE(VecNear(hit.point, centre - Axis(i, s * reach), kTol));
      EXPECT_TRUE(VecNear(hit.normal, Axis(i, -s), kTol));
      EXPECT_FALSE(hit.start_overlapping);
    }
  }
}

TEST(SphereCastCapsule, GrazingTheSideTouchesAtTheClosestApproach) {
  const Capsule capsule{0.5f, 2.0f};
  for (float s : kSigns) {
    // Along x, R + r = 0.75 off the axis along z: touches the side at (0, 1, 0.5 s).
    Ray path = MakeRay({-5, 1, 0.75f * s}, {1, 0, 0}, 10.0f);
    CastHit hit;
    ASSERT_TRUE(SphereCast(capsule, At({}), path, 0.25f, &hit));
    EXPECT_NEAR(hit.distance, 5.0f, kTol);
    EXPECT_TRUE(VecNear(hit.point, {0, 1, 0.5f * s}, kTol));
    EXPECT_TRUE(VecNear(hit.normal, {0, 0, s}, kTol));
    path.origin.z = s * (0.75f + 1e-5f);
    EXPECT_FALSE(SphereCast(capsule, At({}), path, 0.25f, &hit));
  }
}

TEST(SphereCastCapsule, PathsParallelToTheAxisHitTheCap) {
  const Capsule capsule{0.5f, 2.0f};
  for (float s : kSigns) {
    // 0.45 off the axis with R + r = 0.75: the cap contact is 0.6 beyond the segment's end
    // (0.45-0.6-0.75 is a 3-4-5 triangle), normal (0.6, -0.8 s, 0).
    Ray path = MakeRay({0.45f, -10.0f * s, 0}, {0, s, 0}, 20.0f);
    CastHit hit;
    ASSERT_TRUE(SphereCast(capsule, At({}), path, 0.25f, &hit));
    EXPECT_NEAR(hit.distance, 10.0f - 2.6f, kTol);
    EXPECT_TRUE(VecNear(hit.normal, {0.6f, -0.8f * s, 0}, kTol));
    EXPECT_TRUE(VecNear(hit.point, Vec3{0, -2.0f * s, 0} + Vec3{0.3f, -0.4f * s, 0}, kTol));
    // Exactly R + r off the axis: first touches the cap's equator.
    path.origin.x = 0.75f;
    ASSERT_TRUE(SphereCast(capsule, At({}), path, 0.25f, &hit));
    EXPECT_NEAR(hit.distance, 8.0f, kTol);
    EXPECT_TRUE(VecNear(hit.point, {0.5f, -2.0f * s, 0}, kTol));
    EXPECT_TRUE(VecNear(hit.normal, {1, 0, 0}, kTol));
  }
}

TEST(SphereCastCapsule, StartingOverlappingReportsTheClosestPointAndSeparatingDirection) {
  const Vec3 centre{-1, 4, 2};
  const Capsule capsule{0.5f, 2.0f};
  struct Case {
    const char* name;
    Vec3 start, point, normal;  // start and point relative to the capsule's centre
  };
  const Case cases[] = {
      {"beside the side", {0.6f, 1, 0}, {0.5f, 1, 0}, {1, 0, 0}},
      {"inside, off the axis", {0, -0.5f, 0.25f}, {0, -0.5f, 0.5f}, {0, 0, 1}},
      {"above the top cap", {0, 2.75f, 0}, {0, 2.5f, 0}, {0, 1, 0}},
      {"touching the bottom cap", {0, -2.75f, 0}, {0, -2.5f, 0}, {0, -1, 0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Ray path = MakeRay(centre + c.start, {0, 0, -1}, 10.0f);
    CastHit hit;
    ASSERT_TRUE(SphereCast(capsule, At(centre), path, 0.25f, &hit));
    EXPECT_TRUE(hit.start_overlapping);
    EXPECT_EQ(hit.distance, 0.0f);
    EXPECT_TRUE(VecNear(hit.point, centre + c.point, kTol));
    EXPECT_TRUE(VecNear(hit.normal, c.normal, kTol));
  }
}

TEST(SphereCastCapsule, RandomRotationsTouchTheConstructedSideOrCapPoint) {
  const unsigned seed = 1234;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const Capsule capsule{0.5f, 1.0f};
  const float r = 0.3f;
  for (int n = 0; n < 600; ++n) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " case " << n);
    const Quat rotation = RandomRotation(rng);
    const Pose pose = At({4 * u(rng), 4 * u(rng), 4 * u(rng)}, rotation);
    Vec3 axis_point{0, capsule.half_height * u(rng), 0};
    Vec3 local_normal = Normalize(Vec3{u(rng), 0, u(rng)});
    if (n % 2) {
      // A cap: the normal leans beyond the segment's end.
      float s = u(rng) < 0 ? -1.0f : 1.0f;
      axis_point.y = s * capsule.half_height;
      local_normal = Normalize(local_normal + Vec3{0, s * (0.2f + std::fabs(u(rng))), 0});
    }
    Vec3 local_dir = Normalize(Vec3{u(rng), u(rng), u(rng)});
    local_dir = Normalize(local_dir - local_normal * (Dot(local_dir, local_normal) + 0.5f));
    const Vec3 point = TransformPoint(pose, axis_point + local_normal * capsule.radius);
    const Vec3 contact_centre =
        TransformPoint(pose, axis_point + local_normal * (capsule.radius + r));
    const Vec3 dir = TransformVector(pose, local_dir);
    CastHit hit;
    ASSERT_TRUE(
        SphereCast(capsule, pose, MakeRay(contact_centre - 3.0f * dir, dir, 10.0f), r, &hit));
    EXPECT_NEAR(hit.distance, 3.0f, kTol);
    EXPECT_TRUE(VecNear(hit.point, point, kTol));
    EXPECT_TRUE(VecNear(hit.normal, TransformVector(pose, local_normal), kTol));
  }
}

TEST(SphereCastCapsule, FarFromTheOriginKeepsItsPrecision) {
  const Capsule capsule{0.5f, 2.0f};
  for (float far : {1e5f, -1e5f}) {
    const Vec3 centre{far, far, far};
    const Pose pose = At(centre, Degrees({0, 0, 1}, 90));  // axis along world x
    for (int i = 0; i < 3; ++i) {
      Ray path = MakeRay(centre + Axis(i, 10.0f), Axis(i, -1.0f), 100.0f);
      CastHit hit;
      ASSERT_TRUE(SphereCast(capsule, pose, path, 0.25f, &hit));
      float reach = i == 0 ? 2.5f : 0.5f;
      EXPECT_NEAR(hit.distance, 10.0f - reach - 0.25f, kTol);
      EXPECT_TRUE(VecNear(hit.point, centre + Axis(i, reach), kFarTol));
      EXPECT_TRUE(VecNear(hit.normal, Axis(i), kTol));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Every shape

// Rays from a fixed-seed generator, aimed near a shape at the origin so that about half hit.
std::vector<Ray> AimedRays(unsigned seed, int count) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<Ray> rays;
  for (int n = 0; n < count; ++n) {
    Vec3 origin{5 * u(rng), 5 * u(rng), 5 * u(rng)};
    Vec3 target{2 * u(rng), 2 * u(rng), 2 * u(rng)};
    if (n % 4 == 0) {
      // Axis-aligned rays exercise the zero-direction-component paths.
      int i = n / 4 % 3;
      Vec3 d = Axis(i, origin[i] > 0 ? -1.0f : 1.0f);
      rays.push_back(MakeRay(origin, d, 10.0f * (0.2f + std::fabs(u(rng)))));
    } else {
      rays.push_back(MakeRay(origin, Normalize(target - origin), 10.0f * std::fabs(u(rng))));
    }
  }
  return rays;
}

TEST(SphereCastShape, RadiusZeroGivesExactlyTheRayCastFromOutsideAndInside) {
  const unsigned seed = 31337;
  const Shape shapes[] = {Sphere{1.5f},       Sphere{0.0f},        Box{{1, 0.5f, 2}},
                          Box{{1.5f, 0, 1}},  Capsule{0.5f, 1.5f}, Capsule{1.0f, 0.0f},
                          Capsule{0.0f, 1.0f}};
  std::mt19937 rng(seed);
  const std::vector<Ray> rays = AimedRays(seed, 2000);
  int compared_hits = 0;
  int compared_inside = 0;
  for (const Shape& shape : shapes) {
    for (int p = 0; p < 3; ++p) {
      Pose pose = p == 0 ? At({}) : At({0.5f, -0.25f, 0.1f}, RandomRotation(rng));
      if (p == 2) pose.position = pose.position + Vec3{1e5f, -1e5f, 1e5f};
      for (size_t n = 0; n < rays.size(); ++n) {
        Ray ray = rays[n];
        ray.origin = ray.origin + pose.position;
        CastHit by_ray = Sentinel(), by_sphere = Sentinel();
        bool ray_hit = Raycast(shape, pose, ray, &by_ray);
        bool sphere_hit = SphereCast(shape, pose, ray, 0.0f, &by_sphere);
        ASSERT_EQ(ray_hit, sphere_hit)
            << "seed " << seed << " shape " << int(shape.type) << " pose " << p << " ray " << n;
        EXPECT_TRUE(SameHit(by_ray, by_sphere)) << "seed " << seed << " ray " << n;
        compared_hits += ray_hit;
        compared_inside += ray_hit && by_ray.start_overlapping;
      }
    }
  }
  EXPECT_GT(compared_hits, 2000);
  EXPECT_GT(compared_inside, 100);
}

// One rule for a cast that starts inside: a ball of radius 0 is a ray, so it reports the
// origin and -direction; any ball of radius > 0 reports the nearest surface point and the
// separating direction (SphereCastBox.StartingOverlapping... covers those).
TEST(SphereCastShape, RadiusZeroStartingInsideReportsTheOriginAndMinusTheDirection) {
  const Box box{{1, 2, 3}};
  const Ray path = MakeRay({0.75f, 0, 0}, {0, 0, 1}, 10.0f);
  CastHit hit;
  ASSERT_TRUE(SphereCast(box, At({}), path, 0.0f, &hit));
  EXPECT_TRUE(hit.start_overlapping);
  EXPECT_EQ(hit.distance, 0.0f);
  EXPECT_EQ(hit.point, path.origin);
  EXPECT_EQ(hit.normal, -path.direction);
  // A ball of any positive radius from the same start reports the separating direction.
  ASSERT_TRUE(SphereCast(box, At({}), path, 1e-6f, &hit));
  EXPECT_TRUE(hit.start_overlapping);
  EXPECT_TRUE(VecNear(hit.point, {1, 0, 0}, kTol));
  EXPECT_TRUE(VecNear(hit.normal, {1, 0, 0}, kTol));
}

TEST(SphereCastShape, DispatchesToTheConcreteShape) {
  const Pose pose = At({1, 2, 3}, Degrees(Normalize(Vec3{1, 2, 3}), 30));
  const Shape shapes[] = {Sphere{1.0f}, Box{{1, 0.5f, 2}}, Capsule{0.5f, 1.0f}};
  const Ray rays[] = {MakeRay({-5, 2, 3}, {1, 0, 0}, 10.0f),
                      MakeRay({1, 9, 3.2f}, {0, -1, 0}, 10.0f),
                      MakeRay({1, 9, 30}, {0, -1, 0}, 10.0f)};
  for (const Shape& shape : shapes) {
    for (const Ray& ray : rays) {
      CastHit a = Sentinel(), b = Sentinel();
      bool ha = SphereCast(shape, pose, ray, 0.3f, &a);
      bool hb = Visit(shape, [&](const auto& s) { return SphereCast(s, pose, ray, 0.3f, &b); });
      EXPECT_EQ(ha, hb);
      EXPECT_TRUE(SameHit(a, b));
    }
  }
}

}  // namespace
}  // namespace collide
