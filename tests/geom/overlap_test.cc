#include "geom/overlap.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "geom/narrow_test_util.h"
#include "geom/penetration.h"

namespace collide {
namespace {

using narrow_test::At;
using narrow_test::Axis;
using narrow_test::Degrees;
using narrow_test::kPlaces;
using narrow_test::Rotations;

constexpr float kSigns[] = {1.0f, -1.0f};
const float kSqrt2 = std::sqrt(2.0f);
const float kSqrt3 = std::sqrt(3.0f);

// How far past touching the "apart" and "overlapping" cases of each table sit. Near the origin
// the shapes are a few units across, so the routines' rounding is a few 1e-7 and 1e-4 is far
// outside it. Near 1e5 one ulp of a coordinate is 2^-7 = 0.0078 and the inputs themselves are
// only that precise, so the margin is six ulps.
float Margin(const narrow_test::Place& place) {
  return place.tol == narrow_test::kTol ? 1e-4f : 0.05f;
}

// Checks Overlap(a, b) and Overlap(b, a), their Shape forms, and that Penetrate agrees.
template <typename A, typename B>
void ExpectOverlap(const A& a, const Pose& pa, const B& b, const Pose& pb, bool expected) {
  EXPECT_EQ(Overlap(a, pa, b, pb), expected) << "A against B";
  EXPECT_EQ(Overlap(b, pb, a, pa), expected) << "B against A";
  EXPECT_EQ(Overlap(Shape(a), pa, Shape(b), pb), expected) << "Shape A against Shape B";
  EXPECT_EQ(Overlap(Shape(b), pb, Shape(a), pa), expected) << "Shape B against Shape A";
  Penetration p;
  EXPECT_EQ(Penetrate(a, pa, b, pb, &p), expected) << "Penetrate A against B";
  EXPECT_EQ(Penetrate(b, pb, a, pa, &p), expected) << "Penetrate B against A";
}

// ---------------------------------------------------------------------------------------------
// Sphere against sphere

TEST(OverlapSphereSphere, TouchingIsTrueAndAnUlpApartIsFalse) {
  const Sphere a{1.0f};
  const Sphere b{0.5f};
  for (int i = 0; i < 3; ++i) {
    for (float s : kSigns) {
      SCOPED_TRACE(testing::Message() << "axis " << i << " sign " << s);
      // 1.5 is exact, and so are the difference and its square: touching is decided exactly.
      ExpectOverlap(a, At({}), b, At(Axis(i, s) * 1.5f), true);
      const float apart = std::nextafter(1.5f, 2.0f);
      ExpectOverlap(a, At({}), b, At(Axis(i, s) * apart), false);
    }
  }
}

TEST(OverlapSphereSphere, SeparatedOverlappingAndCoincident) {
  for (const auto& place : kPlaces) {
    SCOPED_TRACE(place.name);
    const float m = Margin(place);
    const Vec3 c = place.offset;
    const Vec3 dir = Normalize(Vec3{1, 2, -2});
    ExpectOverlap(Sphere{1.0f}, At(c), Sphere{2.0f}, At(c + dir * (3.0f + m)), false);
    ExpectOverlap(Sphere{1.0f}, At(c), Sphere{2.0f}, At(c + dir * (3.0f - m)), true);
    ExpectOverlap(Sphere{1.0f}, At(c), Sphere{2.0f}, At(c), true);
    // Deep containment.
    ExpectOverlap(Sphere{0.25f}, At(c + dir), Sphere{5.0f}, At(c), true);
  }
}

TEST(OverlapSphereSphere, ZeroRadiusIsAPoint) {
  ExpectOverlap(Sphere{0.0f}, At({0, 2, 0}), Sphere{2.0f}, At({}), true);  // on the surface
  ExpectOverlap(Sphere{0.0f}, At({0, 2.001f, 0}), Sphere{2.0f}, At({}), false);
  ExpectOverlap(Sphere{0.0f}, At({1, 1, 1}), Sphere{0.0f}, At({1, 1, 1}), true);
}

// ---------------------------------------------------------------------------------------------
// Sphere against box

TEST(OverlapSphereBox, FaceEdgeAndCornerContactsUnderRotations) {
  const Box box{{1.0f, 2.0f, 0.5f}};
  const float r = 0.75f;
  struct Case {
    Vec3 contact;    // the box point nearest the sphere, box frame
    Vec3 direction;  // unit outward direction from it to the sphere's centre
  };
  const Case cases[] = {
      {{1, 0.5f, 0}, {1, 0, 0}},                               // face
      {{0.2f, -2, 0.1f}, {0, -1, 0}},                          // face
      {{1, 2, 0}, {1 / kSqrt2, 1 / kSqrt2, 0}},                // edge
      {{-1, 0.3f, -0.5f}, {-1 / kSqrt2, 0, -1 / kSqrt2}},      // edge
      {{1, -2, 0.5f}, {1 / kSqrt3, -1 / kSqrt3, 1 / kSqrt3}},  // corner
  };
  int n;
  const Quat* rotations = Rotations(&n);
  for (const auto& place : kPlaces) {
    const float m = Margin(place);
    for (int k = 0; k < n; ++k) {
      const Pose pose = At(place.offset + Vec3{1, -2, 3}, rotations[k]);
      for (const Case& c : cases) {
        SCOPED_TRACE(testing::Message() << place.name << " rotation " << k << " " << c.contact);
        for (float gap : {m, -m}) {
          const Vec3 centre = TransformPoint(pose, c.contact + c.direction * (r + gap));
          SCOPED_TRACE(testing::Message() << "gap " << gap);
          ExpectOverlap(Sphere{r}, At(centre), box, pose, gap < 0.0f);
        }
      }
    }
  }
}

TEST(OverlapSphereBox, TouchingAnAxisAlignedFaceIsTrue) {
  // Identity rotation: the clamp and the squared distance are exact for these values.
  ExpectOverlap(Sphere{0.5f}, At({1.5f, 0.25f, 0}), Box{{1, 1, 1}}, At({}), true);
  ExpectOverlap(Sphere{0.5f}, At({std::nextafter(1.5f, 2.0f), 0.25f, 0}), Box{{1, 1, 1}}, At({}),
                false);
}

TEST(OverlapSphereBox, CentreInsideAndZeroSizes) {
  ExpectOverlap(Sphere{0.1f}, At({0.3f, -0.2f, 0.1f}), Box{{1, 1, 1}},
                At({}, Degrees(Normalize(Vec3{1, 1, 0}), 30)), true);
  // A point against a box, and a ball against a flat box.
  ExpectOverlap(Sphere{0.0f}, At({1, 1, 1}), Box{{1, 1, 1}}, At({}), true);
  ExpectOverlap(Sphere{0.0f}, At({1.001f, 0, 0}), Box{{1, 1, 1}}, At({}), false);
  ExpectOverlap(Sphere{0.5f}, At({0, 0.5f, 0}), Box{{1, 0, 1}}, At({}), true);
  ExpectOverlap(Sphere{0.5f}, At({0, 0.501f, 0}), Box{{1, 0, 1}}, At({}), false);
  ExpectOverlap(Sphere{1.0f}, At({0, 1, 0}), Box{}, At({}), true);
}

// ---------------------------------------------------------------------------------------------
// Sphere against capsule

TEST(OverlapSphereCapsule, BesideTheSegmentAndAtTheCaps) {
  const Capsule cap{0.5f, 1.0f};
  const float r = 0.25f;
  struct Case {
    Vec3 axis_point;  // nearest point of the capsule's segment, capsule frame
    Vec3 direction;
  };
  const Case cases[] = {
      {{0, 0.5f, 0}, {1, 0, 0}},
      {{0, -0.9f, 0}, {0, 0, -1}},
      {{0, 1, 0}, {0, 1, 0}},
      {{0, -1, 0}, Normalize(Vec3{1, -1, 1})},
  };
  int n;
  const Quat* rotations = Rotations(&n);
  for (const auto& place : kPlaces) {
    const float m = Margin(place);
    for (int k = 0; k < n; ++k) {
      const Pose pose = At(place.offset, rotations[k]);
      for (const Case& c : cases) {
        for (float gap : {m, -m}) {
          SCOPED_TRACE(testing::Message()
                       << place.name << " rotation " << k << " " << c.axis_point << " gap " << gap);
          const Vec3 centre = TransformPoint(pose, c.axis_point + c.direction * (0.75f + gap));
          ExpectOverlap(Sphere{r}, At(centre), cap, pose, gap < 0.0f);
        }
      }
    }
  }
  // A centre on the segment.
  ExpectOverlap(Sphere{0.1f}, At({0, 0.3f, 0}), cap, At({}), true);
}

// ---------------------------------------------------------------------------------------------
// Box against box

TEST(OverlapBoxBox, AlignedBoxesTouchingAFaceEdgeOrCornerAreTrue) {
  const Box a{{1.0f, 1.0f, 1.0f}};
  const Box b{{0.5f, 0.5f, 0.5f}};
  for (const Vec3& dir : {Vec3{1, 0, 0}, Vec3{0, -1, 0}, Vec3{0, 0, 1}, Vec3{1, 1, 0},
                          Vec3{-1, 0, 1}, Vec3{1, -1, 1}}) {
    SCOPED_TRACE(testing::Message() << "direction " << dir);
    // ea + eb = 1.5 on each axis: exact centres, exact interval tests.
    ExpectOverlap(a, At({}), b, At(dir * 1.5f), true);
    ExpectOverlap(a, At({}), b, At(dir * std::nextafter(1.5f, 2.0f)), false);
  }
}

TEST(OverlapBoxBox, SameRotationOnBothBehavesLikeAlignedBoxes) {
  const Box a{{1.0f, 2.0f, 0.5f}};
  const Box b{{0.5f, 0.25f, 1.0f}};
  int n;
  const Quat* rotations = Rotations(&n);
  for (const auto& place : kPlaces) {
    const float m = Margin(place);
    for (int k = 0; k < n; ++k) {
      const Pose pa = At(place.offset, rotations[k]);
      for (int i = 0; i < 3; ++i) {
        for (float gap : {m, -m}) {
          SCOPED_TRACE(testing::Message()
                       << place.name << " rotation " << k << " axis " << i << " gap " << gap);
          const float d = a.half_extents[i] + b.half_extents[i] + gap;
          const Pose pb = At(TransformPoint(pa, Axis(i) * d), rotations[k]);
          ExpectOverlap(a, pa, b, pb, gap < 0.0f);
        }
      }
    }
  }
}

// Two unit cubes whose only separating axis is the cross product of an edge of each: A's edge
// along X at y = z = 1 and B's edge along (0, 1, -1) (B turned 45 degrees about its Z, then 45
// degrees about X). Along n = (0, 1, 1)/sqrt(2) A reaches sqrt(2) and B reaches sqrt(2) back
// from its centre, so they touch when B's centre is 2 sqrt(2) along n; every face axis still
// sees overlapping shadows there.
struct CrossedEdges {
  Box a{{1, 1, 1}};
  Box b{{1, 1, 1}};
  Quat rotation = Degrees({1, 0, 0}, 45.0f) * Degrees({0, 0, 1}, 45.0f);
  Vec3 n = Normalize(Vec3{0, 1, 1});
  float touching = 2.0f * std::sqrt(2.0f);
};

TEST(OverlapBoxBox, SeparatedAlongAnEdgeCrossAxisIsFalse) {
  const CrossedEdges e;
  for (const auto& place : kPlaces) {
    SCOPED_TRACE(place.name);
    const float m = Margin(place);
    const Pose pa = At(place.offset);
    ExpectOverlap(e.a, pa, e.b, At(place.offset + e.n * (e.touching + m), e.rotation), false);
    ExpectOverlap(e.a, pa, e.b, At(place.offset + e.n * (e.touching - m), e.rotation), true);
  }
}

TEST(OverlapBoxBox, NearParallelEdgesRotatedByOneMicroradian) {
  const Box a{{1.0f, 1.0f, 1.0f}};
  const Box b{{1.0f, 0.5f, 2.0f}};
  for (const auto& place : kPlaces) {
    const float m = Margin(place);
    for (int r = 0; r < 3; ++r) {
      // B turned by 1e-6 rad about each axis: its edges are parallel to A's to within 1e-6, the
      // regime where cross axes are near zero and the 15-axis test must neither report a false
      // separation nor miss a real one. A tilt of 1e-6 moves B's corners by at most 2e-6.
      const Quat tilt = QuatFromAxisAngle(Axis(r), 1e-6f);
      for (int i = 0; i < 3; ++i) {
        for (float s : kSigns) {
          for (float gap : {m, -m}) {
            SCOPED_TRACE(testing::Message()
                         << place.name << " tilt " << r << " axis " << i << s << " gap " << gap);
            const float d = a.half_extents[i] + b.half_extents[i] + gap;
            // Offset across as well, so that edges and not only faces are near each other.
            Vec3 offset = Axis(i, s) * d;
            offset[(i + 1) % 3] = 0.5f;
            ExpectOverlap(a, At(place.offset), b, At(place.offset + offset, tilt), gap < 0.0f);
          }
        }
      }
    }
  }
}

TEST(OverlapBoxBox, ExactlyParallelEdgesAlongACommonAxis) {
  // B turned about Z only: A_z x B_z = 0 exactly, and the problem is two rectangles in the XY
  // plane. B reaches |bx.x| + |by.x| along X from its centre (its rotated half axes).
  const Box a{{1.0f, 1.0f, 3.0f}};
  const Box b{{0.5f, 0.5f, 0.25f}};
  const Quat qb = Degrees({0, 0, 1}, 30.0f);
  const Vec3 bx = Rotate(qb, {0.5f, 0, 0});
  const Vec3 by = Rotate(qb, {0, 0.5f, 0});
  const float reach = std::fabs(bx.x) + std::fabs(by.x);
  for (float gap : {1e-4f, -1e-4f}) {
    SCOPED_TRACE(testing::Message() << "gap " << gap);
    ExpectOverlap(a, At({}), b, At({1 + reach + gap, 0.3f, 2.0f}, qb), gap < 0.0f);
  }
}

TEST(OverlapBoxBox, DiamondCornerPokingIntoAFace) {
  // B turned 45 degrees about Z stands on an edge; its lowest points are sqrt(2) below centre.
  const Box a{{2.0f, 1.0f, 2.0f}};
  const Box b{{1.0f, 1.0f, 1.0f}};
  for (const auto& place : kPlaces) {
    const float m = Margin(place);
    for (float gap : {m, -m}) {
      SCOPED_TRACE(testing::Message() << place.name << " gap " << gap);
      const Pose pb =
          At(place.offset + Vec3{0.3f, 1 + kSqrt2 + gap, -0.4f}, Degrees({0, 0, 1}, 45.0f));
      ExpectOverlap(a, At(place.offset), b, pb, gap < 0.0f);
    }
  }
}

TEST(OverlapBoxBox, ContainmentAndCoincidentCentres) {
  int n;
  const Quat* rotations = Rotations(&n);
  for (int k = 0; k < n; ++k) {
    SCOPED_TRACE(testing::Message() << "rotation " << k);
    ExpectOverlap(Box{{3, 3, 3}}, At({}), Box{{0.5f, 0.25f, 1}}, At({0.5f, -1, 0.2f}, rotations[k]),
                  true);
    ExpectOverlap(Box{{1, 2, 3}}, At({5, 5, 5}), Box{{1, 2, 3}}, At({5, 5, 5}, rotations[k]), true);
  }
}

TEST(OverlapBoxBox, ZeroExtentBoxes) {
  // Two squares in the plane y = 0, overlapping or not; a square above another; a point box.
  const Box square{{1, 0, 1}};
  ExpectOverlap(square, At({}), square, At({1.5f, 0, 0.5f}, Degrees({0, 1, 0}, 20)), true);
  ExpectOverlap(square, At({}), square, At({3, 0, 3}, Degrees({0, 1, 0}, 20)), false);
  ExpectOverlap(square, At({}), square, At({0.5f, 1e-3f, 0}), false);
  ExpectOverlap(square, At({}), square, At({0.5f, 0, 0}), true);
  ExpectOverlap(Box{}, At({0.5f, 0.5f, 0.5f}), Box{{1, 1, 1}}, At({}, Degrees({1, 0, 0}, 10)),
                true);
  ExpectOverlap(Box{}, At({1, 1, 1.01f}), Box{{1, 1, 1}}, At({}), false);
  // A square standing across another (perpendicular planes): their crossing is a segment.
  ExpectOverlap(square, At({}), square, At({0.5f, 0.5f, 0}, Degrees({1, 0, 0}, 90)), true);
  ExpectOverlap(square, At({}), square, At({0.5f, 1.01f, 0}, Degrees({1, 0, 0}, 90)), false);
}

// ---------------------------------------------------------------------------------------------
// Box against capsule

TEST(OverlapBoxCapsule, CapsuleLyingOnAFaceAndStandingOnIt) {
  const Box box{{1.0f, 1.0f, 2.0f}};
  const float r = 0.5f;
  int n;
  const Quat* rotations = Rotations(&n);
  for (const auto& place : kPlaces) {
    const float m = Margin(place);
    for (int k = 0; k < n; ++k) {
      const Pose pa = At(place.offset, rotations[k]);
      for (float gap : {m, -m}) {
        SCOPED_TRACE(testing::Message() << place.name << " rotation " << k << " gap " << gap);
        // Lying along Z above the +Y face, longer than the face: the side of the capsule.
        const Pose lying = At(TransformPoint(pa, {0.3f, 1 + r + gap, 0}),
                              rotations[k] * Degrees({1, 0, 0}, 90.0f));
        ExpectOverlap(box, pa, Capsule{r, 3.0f}, lying, gap < 0.0f);
        // Standing on the +X face: the bottom cap.
        const Pose standing = At(TransformPoint(pa, {1 + 2.0f + r + gap, 0.2f, -0.7f}),
                                 rotations[k] * Degrees({0, 0, 1}, 90.0f));
        ExpectOverlap(box, pa, Capsule{r, 2.0f}, standing, gap < 0.0f);
      }
    }
  }
}

TEST(OverlapBoxCapsule, CapsuleParallelToAnEdgeAtItsCorner) {
  // A capsule along Z, its axis a distance d from the box's edge x = y = 1 (diagonally out):
  // the segment-box distance is d in the edge region, not a face distance.
  const Box box{{1, 1, 1}};
  const float r = 0.5f;
  for (const auto& place : kPlaces) {
    const float m = Margin(place);
    for (float gap : {m, -m}) {
      SCOPED_TRACE(testing::Message() << place.name << " gap " << gap);
      const float off = (r + gap) / kSqrt2;
      ExpectOverlap(box, At(place.offset), Capsule{r, 0.5f},
                    At(place.offset + Vec3{1 + off, 1 + off, 0.2f}, Degrees({1, 0, 0}, 90.0f)),
                    gap < 0.0f);
    }
  }
}

TEST(OverlapBoxCapsule, SegmentPassingOverACornerDiagonally) {
  // The segment runs along (1, -1, 0)/sqrt(2) through P = c + d (1, 1, 1)/sqrt(3), c the corner:
  // on it |x - c|^2 = d^2 + t^2 with the corner nearest, so dist(segment, box) = d exactly,
  // although both end points are much further away (an interior minimum of the distance).
  const Box box{{1, 1, 1}};
  const float r = 0.25f;
  const Vec3 corner{1, 1, 1};
  const Vec3 diag = Normalize(Vec3{1, 1, 1});
  for (const auto& place : kPlaces) {
    const float m = Margin(place);
    for (float gap : {m, -m}) {
      SCOPED_TRACE(testing::Message() << place.name << " gap " << gap);
      const Pose pb = At(place.offset + corner + diag * (r + gap), Degrees({0, 0, 1}, 45.0f));
      ExpectOverlap(box, At(place.offset), Capsule{r, 2.0f}, pb, gap < 0.0f);
    }
  }
}

TEST(OverlapBoxCapsule, SegmentsThroughOrBesideTheBoxWithRadiusZero) {
  const Box box{{1, 1, 1}};
  // Through the box, slanted, end points both outside.
  ExpectOverlap(box, At({}), Capsule{0.0f, 3.0f},
                At({0.2f, 0, 0}, Degrees(Normalize(Vec3{1, 0, 1}), 50)), true);
  // End point just inside a face, just outside, and exactly on it.
  ExpectOverlap(box, At({}), Capsule{0.0f, 1.0f}, At({0, 1.99f, 0}), true);
  ExpectOverlap(box, At({}), Capsule{0.0f, 1.0f}, At({0, 2.01f, 0}), false);
  ExpectOverlap(box, At({}), Capsule{0.0f, 1.0f}, At({0.5f, 2.0f, 0.5f}), true);
  // Passing beside the box, parallel to an edge.
  ExpectOverlap(box, At({}), Capsule{0.0f, 5.0f}, At({1.01f, 0, 1.0f}), false);
  // A zero-size capsule is a point.
  ExpectOverlap(box, At({}), Capsule{0.0f, 0.0f}, At({0.9f, -0.9f, 1.0f}), true);
  ExpectOverlap(box, At({}), Capsule{0.0f, 0.0f}, At({0.9f, -0.9f, 1.01f}), false);
  // A capsule of half height 0 is a ball.
  ExpectOverlap(box, At({}), Capsule{0.5f, 0.0f}, At({1.4f, 0, 0}), true);
}

TEST(OverlapBoxCapsule, NearParallelCapsuleAlongAFace) {
  // Lying on the +Y face, tilted by 1e-6 rad: a segment almost parallel to the face and to an
  // edge, where a slab clip divides by tiny direction components.
  const Box box{{1, 1, 1}};
  for (const Vec3& tilt_axis : {Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, 1}}) {
    for (float gap : {1e-4f, -1e-4f}) {
      SCOPED_TRACE(testing::Message() << "tilt axis " << tilt_axis << " gap " << gap);
      const Quat q = QuatFromAxisAngle(tilt_axis, 1e-6f) * Degrees({0, 0, 1}, 90.0f);
      ExpectOverlap(box, At({}), Capsule{0.25f, 0.5f}, At({0.2f, 1.25f + gap, 0.3f}, q),
                    gap < 0.0f);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Capsule against capsule

TEST(OverlapCapsuleCapsule, ParallelCrossedAndEndToEnd) {
  const Capsule a{0.5f, 1.0f};
  const Capsule b{0.25f, 2.0f};
  int n;
  const Quat* rotations = Rotations(&n);
  for (const auto& place : kPlaces) {
    const float m = Margin(place);
    for (int k = 0; k < n; ++k) {
      const Pose pa = At(place.offset, rotations[k]);
      auto posed = [&](const Vec3& local, const Quat& q) {
        return At(TransformPoint(pa, local), rotations[k] * q);
      };
      for (float gap : {m, -m}) {
        SCOPED_TRACE(testing::Message() << place.name << " rotation " << k << " gap " << gap);
        const float d = 0.75f + gap;
        // Side by side, parallel and overlapping in Y.
        ExpectOverlap(a, pa, b, posed({d, 0.5f, 0}, Quat::Identity()), gap < 0.0f);
        // Crossed at right angles, one above the other along Z.
        ExpectOverlap(a, pa, b, posed({0, 0.3f, d}, Degrees({0, 0, 1}, 90)), gap < 0.0f);
        // End to end on a common line.
        ExpectOverlap(a, pa, b, posed({0, 3.0f + d, 0}, Quat::Identity()), gap < 0.0f);
        // Skew, nearest at two end points: A's top (0, 1, 0), B's left end (1, 2, 0) - offset.
        const Vec3 diag = Normalize(Vec3{1, 1, 0});
        ExpectOverlap(a, pa, b,
                      posed(Vec3{0, 1, 0} + diag * d + Vec3{2, 0, 0}, Degrees({0, 0, 1}, 90)),
                      gap < 0.0f);
      }
    }
  }
}

TEST(OverlapCapsuleCapsule, NearParallelAndDegenerateSegments) {
  const Capsule a{0.5f, 1.0f};
  for (float gap : {1e-4f, -1e-4f}) {
    SCOPED_TRACE(testing::Message() << "gap " << gap);
    // Tilted by 1e-6 rad: moves the ends by 1e-6, well inside the margin.
    ExpectOverlap(a, At({}), a, At({1 + gap, 0.5f, 0}, QuatFromAxisAngle({1, 0, 0}, 1e-6f)),
                  gap < 0.0f);
    ExpectOverlap(a, At({}), a, At({1 + gap, 0.5f, 0}, QuatFromAxisAngle({0, 0, 1}, 1e-6f)),
                  gap < 0.0f);
  }
  // Half height 0 on both sides is two balls; radius 0 segments that cross exactly.
  ExpectOverlap(Capsule{1, 0}, At({}), Capsule{1, 0}, At({2, 0, 0}), true);
  ExpectOverlap(Capsule{1, 0}, At({}), Capsule{1, 0}, At({2.001f, 0, 0}), false);
  ExpectOverlap(Capsule{0, 1}, At({}), Capsule{0, 1}, At({}, Degrees({0, 0, 1}, 90)), true);
  ExpectOverlap(Capsule{0, 1}, At({}), Capsule{0, 1}, At({0, 0, 0.001f}, Degrees({0, 0, 1}, 90)),
                false);
  // Coincident.
  ExpectOverlap(a, At({3, 3, 3}), a, At({3, 3, 3}), true);
}

}  // namespace
}  // namespace collide
