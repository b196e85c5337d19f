#include "geom/overlap.h"

#include <cassert>

#include "geom/internal/box_sat.h"
#include "geom/internal/round_pair.h"
#include "geom/internal/segment.h"
#include "geom/internal/shape_access.h"

namespace collide {
namespace {

using geom_internal::MakeRoundPair;
using geom_internal::RoundOverlap;

// True when the rotation is exactly the identity (either sign of w).
inline bool IsIdentity(const Quat& q) { return q.x == 0.0f && q.y == 0.0f && q.z == 0.0f; }

}  // namespace

bool Overlap(const Sphere& a, const Pose& pa, const Sphere& b, const Pose& pb) {
  assert(geom_internal::IsValid(a) && geom_internal::IsValid(b) && "sizes must be >= 0");
  return RoundOverlap(MakeRoundPair(a, pa, b, pb));
}

bool Overlap(const Sphere& a, const Pose& pa, const Box& b, const Pose& pb) {
  assert(geom_internal::IsValid(a) && geom_internal::IsValid(b) && "sizes must be >= 0");
  return Overlap(b, pb, a, pa);
}

bool Overlap(const Sphere& a, const Pose& pa, const Capsule& b, const Pose& pb) {
  assert(geom_internal::IsValid(a) && geom_internal::IsValid(b) && "sizes must be >= 0");
  return RoundOverlap(MakeRoundPair(a, pa, b, pb));
}

bool Overlap(const Box& a, const Pose& pa, const Sphere& b, const Pose& pb) {
  assert(geom_internal::IsValid(a) && geom_internal::IsValid(b) && "sizes must be >= 0");
  // Seed 000: clamp the centre into the box in the box's frame, compare |q - clamp(q)|^2 with
  // r^2 (no square root).
  const Vec3 q = InverseTransformPoint(pa, pb.position);
  return geom_internal::PointBoxDistanceSquared(q, a.half_extents) <= b.radius * b.radius;
}

bool Overlap(const Box& a, const Pose& pa, const Box& b, const Pose& pb) {
  assert(geom_internal::IsValid(a) && geom_internal::IsValid(b) && "sizes must be >= 0");
  if (IsIdentity(pa.rotation) && IsIdentity(pb.rotation)) {
    // Two AABBs: they meet when |cb - ca| <= ea + eb on every axis (Ericson 4.2). The SAT below
    // reduces to exactly these comparisons for identity rotations, so both paths agree.
    const Vec3 d = Abs(pb.position - pa.position);
    const Vec3 r = a.half_extents + b.half_extents;
    return d.x <= r.x && d.y <= r.y && d.z <= r.z;
  }
  return geom_internal::BoxBoxOverlap(
      geom_internal::MakeBoxPair(a.half_extents, pa, b.half_extents, pb));
}

bool Overlap(const Box& a, const Pose& pa, const Capsule& b, const Pose& pb) {
  assert(geom_internal::IsValid(a) && geom_internal::IsValid(b) && "sizes must be >= 0");
  // The capsule's segment in the box's frame; they meet when dist(segment, box) <= r.
  const Vec3 c = InverseTransformPoint(pa, pb.position);
  const Vec3 u = Rotate(Conjugate(pa.rotation) * pb.rotation, Vec3{0.0f, b.half_height, 0.0f});
  const auto closest = geom_internal::SegmentBoxClosest(c, u, a.half_extents);
  return closest.intersects || closest.distance_squared <= b.radius * b.radius;
}

bool Overlap(const Capsule& a, const Pose& pa, const Sphere& b, const Pose& pb) {
  assert(geom_internal::IsValid(a) && geom_internal::IsValid(b) && "sizes must be >= 0");
  return Overlap(b, pb, a, pa);
}

bool Overlap(const Capsule& a, const Pose& pa, const Box& b, const Pose& pb) {
  assert(geom_internal::IsValid(a) && geom_internal::IsValid(b) && "sizes must be >= 0");
  return Overlap(b, pb, a, pa);
}

bool Overlap(const Capsule& a, const Pose& pa, const Capsule& b, const Pose& pb) {
  assert(geom_internal::IsValid(a) && geom_internal::IsValid(b) && "sizes must be >= 0");
  return RoundOverlap(MakeRoundPair(a, pa, b, pb));
}

namespace {

using OverlapFn = bool (*)(const Shape&, const Pose&, const Shape&, const Pose&);

template <typename A, typename B>
bool OverlapPair(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb) {
  return Overlap(geom_internal::ShapeAs<A>(a), pa, geom_internal::ShapeAs<B>(b), pb);
}

// Indexed by [ShapeType of a][ShapeType of b], in the enum's order: sphere, box, capsule.
constexpr OverlapFn kOverlapTable[kShapeTypeCount][kShapeTypeCount] = {
    {OverlapPair<Sphere, Sphere>, OverlapPair<Sphere, Box>, OverlapPair<Sphere, Capsule>},
    {OverlapPair<Box, Sphere>, OverlapPair<Box, Box>, OverlapPair<Box, Capsule>},
    {OverlapPair<Capsule, Sphere>, OverlapPair<Capsule, Box>, OverlapPair<Capsule, Capsule>},
};

}  // namespace

bool Overlap(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb) {
  const int i = static_cast<int>(a.type);
  const int j = static_cast<int>(b.type);
  assert(i >= 0 && i < kShapeTypeCount && j >= 0 && j < kShapeTypeCount && "bad shape type");
  return kOverlapTable[i][j](a, pa, b, pb);
}

}  // namespace collide
