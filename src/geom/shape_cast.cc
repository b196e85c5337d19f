#include "geom/shape_cast.h"

#include <algorithm>
#include <cmath>

#include "geom/internal/box_sat.h"
#include "geom/closest_point.h"
#include "geom/penetration.h"
#include "geom/internal/round_pair.h"
#include "geom/internal/segment.h"

namespace collide {
namespace {

using geom_internal::BoxPair;
using geom_internal::ClosestSegmentSegment;
using geom_internal::ForEachBoxBoxAxis;
using geom_internal::MakeBoxPair;
using geom_internal::ProjectionOverlap;
using geom_internal::RoundShape;
using geom_internal::SegmentBoxClosest;

// Newton steps of the conservative advancement before a near-graze is called a miss.
constexpr int kMaxAdvanceSteps = 48;
// Contact tolerance of the advancement, relative to the size of the configuration.
constexpr float kRelativeTolerance = 1e-6f;

// The gap between the moving shape (somewhere on its path) and the target: the signed distance
// of the closed shapes, the unit normal out of the target towards the moving shape, and the
// contact point on the target's surface (world frame). `cores_meet` when the shapes overlap so
// deeply that no normal is defined by closest points (the caller asks Penetrate).
struct Gap {
  float distance = 0.0f;
  Vec3 normal{};
  Vec3 point{};
  bool cores_meet = false;
};

// A round shape as its core segment in world axes, relative to `origin`.
RoundShape RoundOf(const Shape& s, const Pose& pose, const Vec3& origin) {
  if (s.type == ShapeType::kCapsule) {
    return {pose.position - origin, Rotate(pose.rotation, Vec3{0.0f, s.capsule.half_height, 0.0f}),
            s.capsule.radius};
  }
  return {pose.position - origin, Vec3{}, s.sphere.radius};
}

// Round moving shape against a round target.
Gap RoundRoundGap(const Shape& moving, const Pose& pose, const Shape& target, const Pose& tp) {
  const RoundShape m = RoundOf(moving, pose, tp.position);
  const RoundShape t = RoundOf(target, tp, tp.position);
  const auto closest = ClosestSegmentSegment(m.c, m.u, t.c, t.u);
  Gap gap;
  const float core = std::sqrt(closest.distance_squared);
  gap.distance = core - m.radius - t.radius;
  if (core <= 0.0f) {
    gap.cores_meet = true;
    return gap;
  }
  gap.normal = (closest.p1 - closest.p2) / core;
  gap.point = tp.position + closest.p2 + gap.normal * t.radius;
  return gap;
}

// A round shape at `round_pose` against a box at `box_pose`, in the box's frame: the signed
// distance, and unless the cores meet the unit normal out of the box towards the round shape,
// the box's nearest point and the core's nearest point.
struct RoundBoxSeparation {
  float distance = 0.0f;
  bool cores_meet = false;
  float radius = 0.0f;
  Vec3 normal{};
  Vec3 box_point{};
  Vec3 core_point{};
};

RoundBoxSeparation SeparateRoundBox(const Shape& round, const Pose& round_pose, const Box& box,
                                    const Pose& box_pose) {
  const RoundShape r = RoundOf(round, round_pose, box_pose.position);
  const Vec3 c = InverseRotate(box_pose.rotation, r.c);
  const Vec3 u = InverseRotate(box_pose.rotation, r.u);
  const auto closest = SegmentBoxClosest(c, u, box.half_extents);
  RoundBoxSeparation s;
  s.radius = r.radius;
  if (closest.intersects) {
    s.distance = -r.radius;
    s.cores_meet = true;
    return s;
  }
  const float core = std::sqrt(closest.distance_squared);
  s.distance = core - r.radius;
  s.normal = (closest.segment_point - closest.box_point) / core;
  s.box_point = closest.box_point;
  s.core_point = closest.segment_point;
  return s;
}

// Round moving shape against a box target.
Gap RoundBoxGap(const Shape& moving, const Pose& pose, const Box& target, const Pose& tp) {
  const RoundBoxSeparation s = SeparateRoundBox(moving, pose, target, tp);
  Gap gap{.distance = s.distance, .cores_meet = s.cores_meet};
  if (s.cores_meet) return gap;
  gap.normal = Rotate(tp.rotation, s.normal);
  gap.point = TransformPoint(tp, s.box_point);
  return gap;
}

// Box moving shape against a round target: the same separation seen from the other side.
Gap BoxRoundGap(const Box& moving, const Pose& pose, const Shape& target, const Pose& tp) {
  const RoundBoxSeparation s = SeparateRoundBox(target, tp, moving, pose);
  Gap gap{.distance = s.distance, .cores_meet = s.cores_meet};
  if (s.cores_meet) return gap;
  // Out of the target (its core point) towards the moving box (its nearest point).
  const Vec3 n = -s.normal;
  gap.normal = Rotate(pose.rotation, n);
  gap.point = TransformPoint(pose, s.core_point + n * s.radius);
  return gap;
}

Gap GapOf(const Shape& moving, const Pose& pose, const Shape& target, const Pose& tp) {
  if (moving.type == ShapeType::kBox) return BoxRoundGap(moving.box, pose, target, tp);
  if (target.type == ShapeType::kBox) return RoundBoxGap(moving, pose, target.box, tp);
  return RoundRoundGap(moving, pose, target, tp);
}

// A rough size of the configuration, for tolerances: the shapes' extents plus their offset.
float SizeOf(const Shape& s) {
  switch (s.type) {
    case ShapeType::kBox:
      return s.box.half_extents.x + s.box.half_extents.y + s.box.half_extents.z;
    case ShapeType::kCapsule:
      return s.capsule.radius + s.capsule.half_height;
    case ShapeType::kSphere:
    default:
      return s.sphere.radius;
  }
}

Pose Translated(const Pose& pose, const Vec3& by) {
  return Pose{pose.rotation, pose.position + by};
}

// The contact of shapes that overlap at `pose`: Penetrate's point and separating direction.
bool OverlapHit(const Shape& moving, const Pose& pose, const Shape& target, const Pose& tp,
                float fraction, ShapeCastHit* hit) {
  Penetration p;
  if (!Penetrate(target, tp, moving, pose, &p)) return false;
  *hit = ShapeCastHit{
      .fraction = fraction, .point = p.point, .normal = p.normal, .start_overlapping = true};
  return true;
}

// Conservative advancement for pairs with at least one round shape.
bool AdvanceCast(const Shape& moving, const Pose& start, const Vec3& translation,
                 const Shape& target, const Pose& tp, ShapeCastHit* hit) {
  const float tolerance =
      kRelativeTolerance * (SizeOf(moving) + SizeOf(target) + Length(translation) +
                            Length(start.position - tp.position));
  float f = 0.0f;
  for (int step = 0; step < kMaxAdvanceSteps; ++step) {
    const Pose pose = Translated(start, translation * f);
    const Gap gap = GapOf(moving, pose, target, tp);
    if (gap.cores_meet || (f == 0.0f && gap.distance <= 0.0f)) {
      if (OverlapHit(moving, pose, target, tp, f, hit)) {
        hit->start_overlapping = f == 0.0f;
        return true;
      }
      return false;
    }
    if (gap.distance <= tolerance) {
      *hit = ShapeCastHit{
          .fraction = f, .point = gap.point, .normal = gap.normal, .start_overlapping = false};
      return true;
    }
    // d(f) is convex with slope translation . (-normal): once it stops falling it never falls
    // again; otherwise its tangent's zero is a safe lower bound of the first contact.
    const float closing = -Dot(translation, gap.normal);
    if (closing <= 0.0f) return false;
    f += gap.distance / closing;
    if (f > 1.0f) return false;
  }
  return false;
}

// Box against box by the separating axes: the intersection of the per-axis overlap intervals.
bool BoxBoxCast(const Box& moving, const Pose& start, const Vec3& translation, const Box& target,
                const Pose& tp, ShapeCastHit* hit) {
  const BoxPair pair = MakeBoxPair(target.half_extents, tp, moving.half_extents, start);
  const Vec3 w = InverseRotate(tp.rotation, translation);
  float enter = 0.0f;
  float exit = 1.0f;
  Vec3 enter_normal{};
  bool entered = false;
  const bool touching = ForEachBoxBoxAxis(pair, [&](const Vec3& axis, int) {
    const Vec3 l = Normalize(axis);
    float proj;
    const float reach = ProjectionOverlap(pair, l, &proj) + std::fabs(proj);
    const float speed = Dot(w, l);
    // solve: |proj + f * speed| <= reach
    if (speed == 0.0f) return std::fabs(proj) <= reach;
    float lo = (-reach - proj) / speed;
    float hi = (reach - proj) / speed;
    if (lo > hi) std::swap(lo, hi);
    if (lo > enter) {
      enter = lo;
      entered = true;
      // The side of the target the moving box touches from.
      enter_normal = proj + lo * speed >= 0.0f ? l : -l;
    }
    exit = std::min(exit, hi);
    return enter <= exit;
  });
  if (!touching) return false;
  if (!entered) return OverlapHit(moving, start, target, tp, 0.0f, hit);
  const Vec3 normal = Rotate(tp.rotation, enter_normal);
  const Pose at = Translated(start, translation * enter);
  // The contact point: Penetrate's on the shapes pushed together by a hair, else the target's
  // surface point nearest the moving box's centre.
  const float hair = kRelativeTolerance * (SizeOf(moving) + SizeOf(target) + 1.0f);
  Penetration p;
  Vec3 point;
  if (Penetrate(Shape(target), tp, Shape(moving), Translated(at, normal * -hair), &p)) {
    point = p.point;
  } else {
    point = ClosestPoint(target, tp, at.position).point;
  }
  *hit = ShapeCastHit{.fraction = enter, .point = point, .normal = normal};
  return true;
}

}  // namespace

bool ShapeCast(const Shape& moving, const Pose& start, const Vec3& translation, const Shape& target,
               const Pose& target_pose, ShapeCastHit* hit) {
  if (moving.type == ShapeType::kBox && target.type == ShapeType::kBox) {
    return BoxBoxCast(moving.box, start, translation, target.box, target_pose, hit);
  }
  return AdvanceCast(moving, start, translation, target, target_pose, hit);
}

}  // namespace collide
