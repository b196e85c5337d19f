#include "geom/penetration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "geom/narrow_test_util.h"
#include "geom/overlap.h"

namespace collide {
namespace {

using narrow_test::At;
using narrow_test::Axis;
using narrow_test::Degrees;
using narrow_test::HoldsContract;
using narrow_test::kPlaces;
using narrow_test::kTol;
using narrow_test::PenetrationSentinel;
using narrow_test::Place;
using narrow_test::Rotations;
using narrow_test::SamePenetration;
using narrow_test::VecNear;

const float kSqrt2 = std::sqrt(2.0f);

// Normals are unit vectors. Near the origin they come from a few roundings of values of size
// ~1 (error ~1e-7). Far away, a normal taken from the offset between two points inherits the
// 2^-7 ulp of their coordinates: over an offset of ~0.5 that is a direction error of ~0.03.
float NormalTol(const Place& place) { return place.tol == kTol ? 1e-5f : 0.03f; }

// A pose given in the local frame of `frame` (a position and a rotation relative to it).
Pose In(const Pose& frame, const Vec3& position, const Quat& rotation = Quat::Identity()) {
  return Pose{frame.rotation * rotation, TransformPoint(frame, position)};
}

// The expected result, given in the local frame of `frame`.
struct Expected {
  float depth;
  Vec3 normal;
  Vec3 point;
};

// Runs Penetrate(a, b) and checks it against `e` (in `frame`'s coordinates) and the contract,
// then Penetrate(b, a), which must report the same depth, the reversed normal and the point
// moved onto the other surface.
template <typename A, typename B>
void ExpectPenetration(const A& a, const Pose& pa, const B& b, const Pose& pb, const Pose& frame,
                       const Expected& e, const Place& place, bool check_point = true) {
  Penetration p;
  ASSERT_TRUE(Penetrate(a, pa, b, pb, &p));
  EXPECT_NEAR(p.depth, e.depth, place.tol);
  EXPECT_TRUE(VecNear(p.normal, TransformVector(frame, e.normal), NormalTol(place)));
  if (check_point) {
    EXPECT_TRUE(VecNear(p.point, TransformPoint(frame, e.point), place.tol));
  }
  EXPECT_TRUE(HoldsContract(a, pa, b, pb, p, place.tol));

  Penetration q;
  ASSERT_TRUE(Penetrate(b, pb, a, pa, &q)) << "reversed";
  EXPECT_NEAR(q.depth, e.depth, place.tol) << "reversed";
  EXPECT_TRUE(VecNear(q.normal, -TransformVector(frame, e.normal), NormalTol(place))) << "reversed";
  EXPECT_TRUE(HoldsContract(b, pb, a, pa, q, place.tol)) << "reversed";

  Penetration s;
  ASSERT_TRUE(Penetrate(Shape(a), pa, Shape(b), pb, &s));
  EXPECT_TRUE(SamePenetration(s, p)) << "the Shape overload must dispatch to the same routine";
}

// Runs the table case `f(frame, place)` in every frame: at the origin and far away, under each
// rotation of the shared table.
template <typename F>
void InEveryFrame(F&& f) {
  int n;
  const Quat* rotations = Rotations(&n);
  for (const Place& place : kPlaces) {
    for (int k = 0; k < n; ++k) {
      SCOPED_TRACE(testing::Message() << place.name << " rotation " << k);
      f(At(place.offset + Vec3{0.5f, -1.0f, 2.0f}, rotations[k]), place);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Misses and touching

TEST(PenetrateAnyPair, SeparatedShapesReturnFalseAndLeaveTheResultUntouched) {
  const Shape shapes[] = {Sphere{1.0f}, Box{{1, 1, 1}}, Capsule{0.5f, 1.0f}};
  for (const Shape& a : shapes) {
    for (const Shape& b : shapes) {
      SCOPED_TRACE(testing::Message()
                   << "types " << static_cast<int>(a.type) << " " << static_cast<int>(b.type));
      Penetration p = PenetrationSentinel();
      EXPECT_FALSE(Penetrate(a, At({}), b, At({5, 0.5f, 0}, Degrees({0, 0, 1}, 30)), &p));
      EXPECT_TRUE(SamePenetration(p, PenetrationSentinel()));
    }
  }
}

TEST(PenetrateAnyPair, TouchingShapesReturnTrueWithDepthZero) {
  // Axis-aligned contacts whose arithmetic is exact: sphere-sphere, box faces, a capsule's
  // side on a box face, two capsule caps.
  Penetration p;
  ASSERT_TRUE(Penetrate(Sphere{1.0f}, At({}), Sphere{0.5f}, At({1.5f, 0, 0}), &p));
  EXPECT_EQ(p.depth, 0.0f);
  EXPECT_TRUE(VecNear(p.point, {1, 0, 0}, 0.0f));
  ASSERT_TRUE(Penetrate(Box{{1, 1, 1}}, At({}), Box{{0.5f, 0.5f, 0.5f}}, At({0, 1.5f, 0}), &p));
  EXPECT_EQ(p.depth, 0.0f);
  EXPECT_TRUE(VecNear(p.normal, {0, 1, 0}, 0.0f));
  ASSERT_TRUE(Penetrate(Box{{1, 1, 1}}, At({}), Capsule{0.5f, 1}, At({1.5f, 0, 0}), &p));
  EXPECT_EQ(p.depth, 0.0f);
  EXPECT_TRUE(VecNear(p.normal, {1, 0, 0}, 0.0f));
  ASSERT_TRUE(Penetrate(Capsule{0.5f, 1}, At({}), Capsule{0.5f, 1}, At({0, 3, 0}), &p));
  EXPECT_EQ(p.depth, 0.0f);
  EXPECT_TRUE(VecNear(p.point, {0, 1.5f, 0}, 0.0f));
  ASSERT_TRUE(Penetrate(Box{{1, 1, 1}}, At({}), Sphere{0.5f}, At({1.5f, 0.25f, 0}), &p));
  EXPECT_EQ(p.depth, 0.0f);
}

// ---------------------------------------------------------------------------------------------
// Spheres and capsules

TEST(PenetrateSphereSphere, DepthIsTheSumOfTheRadiiMinusTheDistance) {
  InEveryFrame([](const Pose& f, const Place& place) {
    const Vec3 dir = Normalize(Vec3{2, -1, 2});
    ExpectPenetration(Sphere{1.0f}, In(f, {}), Sphere{0.5f}, In(f, dir * 1.25f), f,
                      {0.25f, dir, dir}, place);
  });
}

TEST(PenetrateSphereSphere, CoincidentCentresGoOutAlongSomeDirectionByBothRadii) {
  for (const Place& place : kPlaces) {
    SCOPED_TRACE(place.name);
    Penetration p;
    const Pose pose = At(place.offset);
    ASSERT_TRUE(Penetrate(Sphere{1.0f}, pose, Sphere{0.5f}, pose, &p));
    EXPECT_NEAR(p.depth, 1.5f, place.tol);
    EXPECT_TRUE(HoldsContract(Sphere{1.0f}, pose, Sphere{0.5f}, pose, p, place.tol));
  }
}

TEST(PenetrateSphereCapsule, BesideTheSegmentAtTheCapAndOnTheAxis) {
  const Capsule cap{0.5f, 1.0f};
  InEveryFrame([&](const Pose& f, const Place& place) {
    // Beside: centre 0.6 off the axis, radius 0.25: depth 0.15 along -X from the sphere.
    ExpectPenetration(Sphere{0.25f}, In(f, {0.6f, 0.3f, 0}), cap, In(f, {}), f,
                      {0.15f, {-1, 0, 0}, {0.35f, 0.3f, 0}}, place);
    // Below the bottom cap, off axis.
    const Vec3 dir = Normalize(Vec3{1, -2, 2});
    ExpectPenetration(cap, In(f, {}), Sphere{0.25f}, In(f, Vec3{0, -1, 0} + dir * 0.5f), f,
                      {0.25f, dir, Vec3{0, -1, 0} + dir * 0.5f}, place);
  });
  // A centre on the segment: out across the axis by both radii.
  for (const Place& place : kPlaces) {
    SCOPED_TRACE(place.name);
    const Pose pc = At(place.offset, Degrees({0, 0, 1}, 90));
    const Pose ps = At(TransformPoint(pc, {0, 0.4f, 0}));
    Penetration p;
    ASSERT_TRUE(Penetrate(Sphere{0.25f}, ps, cap, pc, &p));
    EXPECT_NEAR(p.depth, 0.75f, place.tol);
    EXPECT_NEAR(Dot(p.normal, TransformVector(pc, {0, 1, 0})), 0.0f, NormalTol(place));
    EXPECT_TRUE(HoldsContract(Sphere{0.25f}, ps, cap, pc, p, place.tol));
  }
}

TEST(PenetrateCapsuleCapsule, ParallelCrossedAndEndToEnd) {
  const Capsule a{0.5f, 1.0f};
  const Capsule b{0.25f, 2.0f};
  InEveryFrame([&](const Pose& f, const Place& place) {
    // Crossed at right angles, B 0.6 above A along Z: the closest points are unique.
    ExpectPenetration(a, In(f, {}), b, In(f, {0, 0.3f, 0.6f}, Degrees({0, 0, 1}, 90)), f,
                      {0.15f, {0, 0, 1}, {0, 0.3f, 0.5f}}, place);
    // End to end on the Y line: A's top (0, 1, 0) and B's bottom (0, 1.6, 0).
    ExpectPenetration(a, In(f, {}), b, In(f, {0, 3.6f, 0}), f, {0.15f, {0, 1, 0}, {0, 1.5f, 0}},
                      place);
    // Side by side: any point of the overlap [-1, 1] in Y is a valid contact.
    ExpectPenetration(a, In(f, {}), b, In(f, {0.6f, 0.5f, 0}), f, {0.15f, {1, 0, 0}, {0.5f, 0, 0}},
                      place, /*check_point=*/false);
  });
}

TEST(PenetrateCapsuleCapsule, IntersectingSegmentsGoOutAcrossBothByBothRadii) {
  const Capsule a{0.5f, 1.0f};
  const Capsule b{0.25f, 2.0f};
  for (const Place& place : kPlaces) {
    SCOPED_TRACE(place.name);
    // Crossing segments: the normal must be perpendicular to both (along +-Z here).
    const Pose pa = At(place.offset);
    const Pose pb = At(place.offset + Vec3{0, 0.3f, 0}, Degrees({0, 0, 1}, 90));
    Penetration p;
    ASSERT_TRUE(Penetrate(a, pa, b, pb, &p));
    EXPECT_NEAR(p.depth, 0.75f, place.tol);
    EXPECT_NEAR(std::fabs(p.normal.z), 1.0f, NormalTol(place));
    EXPECT_TRUE(HoldsContract(a, pa, b, pb, p, place.tol));
    // Coincident capsules: out across the common axis by both radii.
    ASSERT_TRUE(Penetrate(a, pa, a, pa, &p));
    EXPECT_NEAR(p.depth, 1.0f, place.tol);
    EXPECT_NEAR(p.normal.y, 0.0f, NormalTol(place));
    EXPECT_TRUE(HoldsContract(a, pa, a, pa, p, place.tol));
    // Parallel, overlapping segments 1e-6 rad apart.
    const Pose tilted = At(place.offset + Vec3{0.5f, 0, 0}, QuatFromAxisAngle({0, 0, 1}, 1e-6f));
    ASSERT_TRUE(Penetrate(a, pa, a, tilted, &p));
    EXPECT_NEAR(p.depth, 0.5f, place.tol);
    EXPECT_TRUE(VecNear(p.normal, {1, 0, 0}, NormalTol(place)));
    EXPECT_TRUE(HoldsContract(a, pa, a, tilted, p, place.tol));
  }
}

TEST(PenetrateCapsuleCapsule, ZeroHalfHeightsAreSpheres) {
  const Pose pa = At({1, 2, 3});
  const Pose pb = At({1.6f, 2.8f, 3});
  Penetration c;
  Penetration s;
  ASSERT_TRUE(Penetrate(Capsule{0.75f, 0.0f}, pa, Capsule{0.5f, 0.0f}, pb, &c));
  ASSERT_TRUE(Penetrate(Sphere{0.75f}, pa, Sphere{0.5f}, pb, &s));
  EXPECT_NEAR(c.depth, s.depth, kTol);
  EXPECT_NEAR(c.depth, 0.25f, kTol);
  EXPECT_TRUE(VecNear(c.normal, s.normal, kTol));
  EXPECT_TRUE(VecNear(c.point, s.point, kTol));
}

// ---------------------------------------------------------------------------------------------
// Box against sphere

TEST(PenetrateBoxSphere, CentreOutsideGoesAlongTheNearestPointDirection) {
  const Box box{{1.0f, 2.0f, 0.5f}};
  InEveryFrame([&](const Pose& f, const Place& place) {
    // Face region: 0.2 outside +X, radius 0.5.
    ExpectPenetration(box, In(f, {}), Sphere{0.5f}, In(f, {1.2f, 0.5f, 0}), f,
                      {0.3f, {1, 0, 0}, {1, 0.5f, 0}}, place);
    // Edge region at the +X+Y edge.
    const Vec3 dir = Normalize(Vec3{1, 1, 0});
    ExpectPenetration(box, In(f, {}), Sphere{0.5f}, In(f, Vec3{1, 2, 0.1f} + dir * 0.3f), f,
                      {0.2f, dir, {1, 2, 0.1f}}, place);
    // Corner region.
    const Vec3 diag = Normalize(Vec3{-1, 1, -1});
    ExpectPenetration(box, In(f, {}), Sphere{0.5f}, In(f, Vec3{-1, 2, -0.5f} + diag * 0.1f), f,
                      {0.4f, diag, {-1, 2, -0.5f}}, place);
  });
}

TEST(PenetrateBoxSphere, CentreInsideGoesOutThroughTheNearestFace) {
  const Box box{{1.0f, 2.0f, 0.5f}};
  InEveryFrame([&](const Pose& f, const Place& place) {
    // Gaps to the faces: x 0.2, y 2, z 0.5: out through +X, depth 0.2 + r.
    ExpectPenetration(box, In(f, {}), Sphere{0.5f}, In(f, {0.8f, 0, 0}), f,
                      {0.7f, {1, 0, 0}, {1, 0, 0}}, place);
    // At the centre the least gap is z (0.5): out through +Z (q_z = 0 goes to +).
    ExpectPenetration(box, In(f, {}), Sphere{0.25f}, In(f, {}), f, {0.75f, {0, 0, 1}, {0, 0, 0.5f}},
                      place);
  });
}

TEST(PenetrateBoxSphere, SphereFirstIsTheSameContactSeenFromTheSphere) {
  const Box box{{1.0f, 1.0f, 1.0f}};
  const Pose pb = At({0.5f, 0.5f, 0.5f}, Degrees({0, 1, 0}, 30.0f));
  const Pose ps = At(TransformPoint(pb, {1.2f, 0.3f, 0.1f}));
  Penetration bs;
  Penetration sb;
  ASSERT_TRUE(Penetrate(box, pb, Sphere{0.5f}, ps, &bs));
  ASSERT_TRUE(Penetrate(Sphere{0.5f}, ps, box, pb, &sb));
  // Same depth, reversed normal, and the contact moved from the box's surface to the sphere's.
  EXPECT_EQ(sb.depth, bs.depth);
  EXPECT_EQ(sb.normal, -bs.normal);
  EXPECT_TRUE(VecNear(sb.point, bs.point - bs.depth * bs.normal, 0.0f));
  EXPECT_TRUE(VecNear(sb.point, ps.position - 0.5f * bs.normal, kTol));
}

TEST(PenetrateBoxSphere, ZeroSizes) {
  Penetration p;
  // A point just inside a face; a ball on a flat box; a ball around a point box.
  ASSERT_TRUE(Penetrate(Box{{1, 1, 1}}, At({}), Sphere{0.0f}, At({0, 0, 0.9f}), &p));
  EXPECT_NEAR(p.depth, 0.1f, kTol);
  EXPECT_TRUE(VecNear(p.normal, {0, 0, 1}, kTol));
  ASSERT_TRUE(Penetrate(Box{{1, 0, 1}}, At({}), Sphere{0.5f}, At({0.2f, -0.3f, 0}), &p));
  EXPECT_NEAR(p.depth, 0.2f, kTol);
  EXPECT_TRUE(VecNear(p.normal, {0, -1, 0}, kTol));
  EXPECT_TRUE(VecNear(p.point, {0.2f, 0, 0}, kTol));
  ASSERT_TRUE(Penetrate(Box{}, At({1, 1, 1}), Sphere{0.5f}, At({1, 1.25f, 1}), &p));
  EXPECT_NEAR(p.depth, 0.25f, kTol);
  EXPECT_TRUE(VecNear(p.normal, {0, 1, 0}, kTol));
}

// ---------------------------------------------------------------------------------------------
// Box against box

TEST(PenetrateBoxBox, AlignedBoxesGoOutAlongTheLeastOverlap) {
  const Box a{{1, 1, 1}};
  const Box b{{0.5f, 0.5f, 0.5f}};
  InEveryFrame([&](const Pose& f, const Place& place) {
    // Overlaps: x 0.25, y 1.2, z 1.3. B's -X face lands on A's +X face over
    // y in [-0.2, 0.8], z in [-0.7, 0.3]: the middle of that square is the contact.
    ExpectPenetration(a, In(f, {}), b, In(f, {1.25f, 0.3f, -0.2f}), f,
                      {0.25f, {1, 0, 0}, {1, 0.3f, -0.2f}}, place);
    // The same along -Z, B a quarter turn about Z (the same box).
    ExpectPenetration(a, In(f, {}), b, In(f, {0.1f, 0.2f, -1.4f}, Degrees({0, 0, 1}, 90)), f,
                      {0.1f, {0, 0, -1}, {0.1f, 0.2f, -1}}, place);
  });
}

TEST(PenetrateBoxBox, EdgeAgainstEdgeGoesAlongTheCrossAxis) {
  // The two crossed unit cubes of overlap_test.cc, 0.05 closer than touching: the least overlap
  // is along n = (0, 1, 1)/sqrt(2) (A_x x B_z), and the edges meet at (0, 1, 1).
  const Quat rotation = Degrees({1, 0, 0}, 45.0f) * Degrees({0, 0, 1}, 45.0f);
  const Vec3 n = Normalize(Vec3{0, 1, 1});
  InEveryFrame([&](const Pose& f, const Place& place) {
    ExpectPenetration(Box{{1, 1, 1}}, In(f, {}), Box{{1, 1, 1}},
                      In(f, n * (2.0f * kSqrt2 - 0.05f), rotation), f, {0.05f, n, {0, 1, 1}},
                      place);
  });
}

TEST(PenetrateBoxBox, DiamondEdgeInAFace) {
  // B turned 45 degrees about Z stands on its lowest edge (along Z, sqrt(2) below its centre),
  // which sinks 0.1 into A's top face; the contact is the middle of that edge's part on A.
  const Box a{{2.0f, 1.0f, 2.0f}};
  const Box b{{1.0f, 1.0f, 1.0f}};
  InEveryFrame([&](const Pose& f, const Place& place) {
    ExpectPenetration(a, In(f, {}), b,
                      In(f, {0.3f, 1 + kSqrt2 - 0.1f, -0.4f}, Degrees({0, 0, 1}, 45.0f)), f,
                      {0.1f, {0, 1, 0}, {0.3f, 1, -0.4f}}, place);
    // Shifted so the edge hangs over A's +Z side: only z in [-1.4 + 1.2, 2] touches.
    ExpectPenetration(a, In(f, {}), b,
                      In(f, {0.3f, 1 + kSqrt2 - 0.1f, 1.8f}, Degrees({0, 0, 1}, 45.0f)), f,
                      {0.1f, {0, 1, 0}, {0.3f, 1, 1.4f}}, place);
  });
}

TEST(PenetrateBoxBox, DeepContainmentAndCoincidentCentres) {
  InEveryFrame([&](const Pose& f, const Place& place) {
    // A small cube inside: out through +X by 1 - 0.5 + 0.25.
    ExpectPenetration(Box{{1, 2, 3}}, In(f, {}), Box{{0.25f, 0.25f, 0.25f}}, In(f, {0.5f, 0, 0}), f,
                      {0.75f, {1, 0, 0}, {1, 0, 0}}, place);
  });
  for (const Place& place : kPlaces) {
    SCOPED_TRACE(place.name);
    // Equal boxes at the same place: out along the thinnest axis by its full width.
    const Box b{{1, 2, 3}};
    const Pose pose = At(place.offset, Degrees({0, 1, 0}, 30));
    Penetration p;
    ASSERT_TRUE(Penetrate(b, pose, b, pose, &p));
    EXPECT_NEAR(p.depth, 2.0f, place.tol);
    EXPECT_NEAR(std::fabs(Dot(p.normal, TransformVector(pose, {1, 0, 0}))), 1.0f, NormalTol(place));
    EXPECT_TRUE(HoldsContract(b, pose, b, pose, p, place.tol));
  }
}

TEST(PenetrateBoxBox, NearParallelBoxesTurnedByOneMicroradian) {
  // B tilted by 1e-6 rad about each axis, overlapping A's +Y face by 0.25: the depth and
  // normal move by at most ~2e-6 (the tilt times the boxes' size), within the tolerance. The
  // contact is the middle of the faces' overlap, x in [-0.5, 1] and z in [-1, 1].
  const Box a{{1, 1, 1}};
  const Box b{{1, 0.5f, 2}};
  for (int r = 0; r < 3; ++r) {
    const Quat tilt = QuatFromAxisAngle(Axis(r), 1e-6f);
    InEveryFrame([&](const Pose& f, const Place& place) {
      SCOPED_TRACE(testing::Message() << "tilt axis " << r);
      ExpectPenetration(a, In(f, {}), b, In(f, {0.5f, 1.25f, 0}, tilt), f,
                        {0.25f, {0, 1, 0}, {0.25f, 1, 0}}, place);
    });
  }
}

TEST(PenetrateBoxBox, FlatBoxes) {
  // A square (zero height) under a cube: out along +Y by what the cube reaches below y = 0.
  InEveryFrame([&](const Pose& f, const Place& place) {
    ExpectPenetration(Box{{1, 0, 1}}, In(f, {}), Box{{0.5f, 0.5f, 0.5f}}, In(f, {0.2f, 0.3f, 0}), f,
                      {0.2f, {0, 1, 0}, {0.2f, 0, 0}}, place);
  });
  // Two squares crossing at right angles: their crossing is a segment, and either square's
  // normal separates them by the other's half width.
  const Box square{{1, 0, 1}};
  Penetration p;
  const Pose pb = At({0.5f, 0.25f, 0}, Degrees({1, 0, 0}, 90));
  ASSERT_TRUE(Penetrate(square, At({}), square, pb, &p));
  EXPECT_NEAR(p.depth, 0.75f, kTol);
  EXPECT_TRUE(HoldsContract(square, At({}), square, pb, p, kTol));
}

TEST(PenetrateBoxBox, ContractHoldsUnderRandomRotations) {
  std::mt19937 rng(4242);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_real_distribution<float> size(0.0f, 1.5f);
  int hits = 0;
  for (const Place& place : kPlaces) {
    for (int it = 0; it < 300; ++it) {
      const Box a{{size(rng), size(rng), size(rng)}};
      const Box b{{size(rng), size(rng), size(rng)}};
      const Pose pa = At(place.offset, Normalize(Quat{unit(rng), unit(rng), unit(rng), unit(rng)}));
      const Pose pb = At(place.offset + Vec3{unit(rng), unit(rng), unit(rng)} * 1.5f,
                         Normalize(Quat{unit(rng), unit(rng), unit(rng), unit(rng)}));
      Penetration p;
      if (!Penetrate(a, pa, b, pb, &p)) continue;
      ++hits;
      SCOPED_TRACE(testing::Message() << place.name << " case " << it);
      EXPECT_TRUE(HoldsContract(a, pa, b, pb, p, place.tol));
      // The depth is the least overlap: B moved by slightly less still overlaps.
      Pose short_of = pb;
      short_of.position = pb.position + (p.depth - 4.0f * place.tol) * p.normal;
      if (p.depth > 4.0f * place.tol) {
        EXPECT_TRUE(Overlap(a, pa, b, short_of));
      }
    }
  }
  EXPECT_GT(hits, 100) << "the table should mostly overlap";
}

// ---------------------------------------------------------------------------------------------
// Box against capsule

TEST(PenetrateBoxCapsule, SegmentOutsideTheBox) {
  const Box box{{1, 1, 2}};
  InEveryFrame([&](const Pose& f, const Place& place) {
    // Lying along Z over the +Y face, 0.3 above it, radius 0.5: the segment's nearest points
    // span the face, and any of them is a valid contact (the contract is still checked).
    ExpectPenetration(box, In(f, {}), Capsule{0.5f, 3.0f},
                      In(f, {0.3f, 1.3f, 0}, Degrees({1, 0, 0}, 90)), f,
                      {0.2f, {0, 1, 0}, {0.3f, 1, 0}}, place, /*check_point=*/false);
    // Along Z beside the +X+Y edge, 0.3 from it.
    const Vec3 dir = Normalize(Vec3{1, 1, 0});
    ExpectPenetration(box, In(f, {}), Capsule{0.5f, 0.5f},
                      In(f, Vec3{1, 1, 0.2f} + dir * 0.3f, Degrees({1, 0, 0}, 90)), f,
                      {0.2f, dir, {1, 1, 0.2f}}, place, /*check_point=*/false);
  });
}

TEST(PenetrateBoxCapsule, SegmentThroughTheBoxGoesOutAlongTheLeastOfSixAxes) {
  const Box box{{1, 1, 1}};
  InEveryFrame([&](const Pose& f, const Place& place) {
    // Standing with its lower end inside: the segment's own exit is up by 0.5 (to y = 1),
    // plus the radius.
    ExpectPenetration(box, In(f, {}), Capsule{0.25f, 1.0f}, In(f, {0.2f, 1.5f, 0.3f}), f,
                      {0.75f, {0, 1, 0}, {0.2f, 1, 0.3f}}, place);
    // A long segment along (1, 1, 0)/sqrt(2) 0.1 above the centre: out along +Z by 0.9 (the
    // cross axis (1, -1, 0)/sqrt(2) would take sqrt(2)), plus the radius. The segment then lies
    // in the top face, so any point of it over the face is a valid contact.
    ExpectPenetration(box, In(f, {}), Capsule{0.5f, 5.0f},
                      In(f, {0, 0, 0.1f}, Degrees({0, 0, 1}, -45)), f, {1.4f, {0, 0, 1}, {0, 0, 1}},
                      place, /*check_point=*/false);
  });
}

TEST(PenetrateBoxCapsule, SegmentAcrossAnEdgeGoesAlongTheCrossAxis) {
  // A long segment (radius 0) along (-1, 1, 0)/sqrt(2) in the plane z = 0, sunk 0.1 diagonally
  // into the box's x = y = 1 edge. The box and the segment's Minkowski difference has a face
  // with normal u x e_z = (1, 1, 0)/sqrt(2) (the box edge swept along the segment): the least
  // way out is 0.1 along it, where every face axis needs about 1 or more.
  const Box box{{1, 1, 1}};
  const Vec3 dir = Normalize(Vec3{1, 1, 0});
  InEveryFrame([&](const Pose& f, const Place& place) {
    ExpectPenetration(box, In(f, {}), Capsule{0.0f, 3.0f},
                      In(f, Vec3{1, 1, 0} - dir * 0.1f, Degrees({0, 0, 1}, 45)), f,
                      {0.1f, dir, {1, 1, 0}}, place);
  });
}

TEST(PenetrateBoxCapsule, CapsuleFirstIsTheSameContactSeenFromTheCapsule) {
  const Box box{{1, 1, 1}};
  const Capsule cap{0.5f, 1.0f};
  const Pose pb = At({1, 2, 3}, Degrees({0, 1, 0}, 20.0f));
  const Pose pc = At(TransformPoint(pb, {1.3f, 0.4f, 0}), Degrees({0, 0, 1}, 70.0f));
  Penetration bc;
  Penetration cb;
  ASSERT_TRUE(Penetrate(box, pb, cap, pc, &bc));
  ASSERT_TRUE(Penetrate(cap, pc, box, pb, &cb));
  EXPECT_EQ(cb.depth, bc.depth);
  EXPECT_EQ(cb.normal, -bc.normal);
  EXPECT_TRUE(VecNear(cb.point, bc.point - bc.depth * bc.normal, 0.0f));
  EXPECT_TRUE(HoldsContract(cap, pc, box, pb, cb, kTol));
}

TEST(PenetrateBoxCapsule, NearParallelCapsuleOnAFace) {
  // Lying across the +Y face, tilted by 1e-6 rad, 0.25 deep.
  const Box box{{1, 1, 1}};
  for (const Vec3& tilt_axis : {Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, 1}}) {
    SCOPED_TRACE(testing::Message() << "tilt axis " << tilt_axis);
    const Quat q = QuatFromAxisAngle(tilt_axis, 1e-6f) * Degrees({0, 0, 1}, 90.0f);
    const Pose pc = At({0.2f, 1.25f, 0.3f}, q);
    Penetration p;
    ASSERT_TRUE(Penetrate(box, At({}), Capsule{0.5f, 0.5f}, pc, &p));
    EXPECT_NEAR(p.depth, 0.25f, kTol);
    EXPECT_TRUE(VecNear(p.normal, {0, 1, 0}, kTol));
    EXPECT_TRUE(HoldsContract(box, At({}), Capsule{0.5f, 0.5f}, pc, p, kTol));
  }
}

}  // namespace
}  // namespace collide
