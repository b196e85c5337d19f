#pragma once

#include <cmath>
#include <cstdint>

#include "geom/pose.h"
#include "geom/vec3.h"
#include "query/body.h"
#include "watch/body_grid.h"
#include "watch/interest_types.h"

namespace collide {

// The rules that decide whether a body may be relevant to an observer, shared by the interest
// sets (interest_set.h) and any brute force that checks them: one definition of each test, in
// float where the sets compare distances (InterestDistance2) and in double for the cone.
//
// A body b may be relevant to observer o after a batch ("eligible") when o is active (fixed, or
// its host exists), b is not o's host, o's filter accepts b ((o.mask & b.category) != 0 &&
// (b.mask & o.category) != 0), and, with d2 = InterestDistance2(o's position, b's position):
// - d2 <= enter_radius^2 and b is within the cone's half_angle (when o has a cone), or
// - b was relevant to o before the batch, d2 <= leave_radius^2 and b is within the cone's
//   leave_half_angle.
// o's set is then its max_relevant eligible bodies with the smallest (d2, id).

/// An observer's tests, prepared once from its (validated) spec.
struct ObserverRules {
  /// enter_radius^2 and leave_radius^2, in float.
  float enter2 = 0.0f;
  float leave2 = 0.0f;
  /// Whether there is a cone, and whether each of its angles covers every direction (>= pi).
  bool cone = false;
  bool enter_everywhere = false;
  bool leave_everywhere = false;
  /// cos of the cone's half-angles.
  double cos_enter = 1.0;
  double cos_leave = 1.0;
  /// The cone's axis in the frame the observer's pose is given in (the host's, or the world).
  Vec3 axis{1.0f, 0.0f, 0.0f};
};

/// Where an observer is after a batch.
struct ObserverFrame {
  /// False while an attached observer's host does not exist (its set is empty).
  bool active = false;
  /// The observer's position and cone axis in the world.
  Vec3 position{};
  Vec3 axis{1.0f, 0.0f, 0.0f};
};

/// The tests of `spec`.
inline ObserverRules RulesOf(const ObserverSpec& spec) {
  ObserverRules rules;
  rules.enter2 = spec.enter_radius * spec.enter_radius;
  rules.leave2 = spec.leave_radius * spec.leave_radius;
  if (spec.cone.has_value()) {
    const double pi = std::acos(-1.0);
    rules.cone = true;
    rules.enter_everywhere = spec.cone->half_angle >= pi;
    rules.leave_everywhere = spec.cone->leave_half_angle >= pi;
    rules.cos_enter = std::cos(static_cast<double>(spec.cone->half_angle));
    rules.cos_leave = std::cos(static_cast<double>(spec.cone->leave_half_angle));
    rules.axis = Rotate(spec.pose.rotation, spec.cone->direction);
  }
  return rules;
}

/// Where the observer of `spec` is, given its host (null: none exists; ignored for a fixed
/// observer).
inline ObserverFrame FrameOf(const ObserverSpec& spec, const ObserverRules& rules,
                             const Body* host) {
  if (!spec.attached_to.has_value()) {
    return ObserverFrame{.active = true, .position = spec.pose.position, .axis = rules.axis};
  }
  if (host == nullptr) return ObserverFrame{};
  return ObserverFrame{.active = true,
                       .position = TransformPoint(host->pose, spec.pose.position),
                       .axis = Rotate(host->pose.rotation, rules.axis)};
}

/// Whether the direction from the observer to a body at offset (dx, dy, dz) (the float
/// differences of InterestDistance2) lies within the cone of cosine `cos_half` about `axis`
/// (in double; a body at the observer's own position is within every cone).
inline bool WithinCone(float dx, float dy, float dz, const Vec3& axis, double cos_half) {
  const double x = dx, y = dy, z = dz;
  const double length = std::sqrt(x * x + y * y + z * z);
  if (length == 0.0) return true;
  const double dot = x * axis.x + y * axis.y + z * axis.z;
  return dot >= length * cos_half;
}

/// Whether o's filter accepts a body of `category` and `mask`.
inline bool Accepts(const ObserverSpec& spec, uint32_t category, uint32_t mask) {
  return (spec.mask & category) != 0 && (mask & spec.category) != 0;
}

/// Whether a body at `position` with squared distance `d2` (InterestDistance2 from
/// frame.position), accepted by the filter and not the host, is eligible; `member`: it was
/// relevant before the batch. `member` is asked only when it matters.
template <typename Member>
bool Eligible(const ObserverRules& rules, const ObserverFrame& frame, const Vec3& position,
              float d2, Member&& member) {
  if (d2 > rules.leave2) return false;
  if (!rules.cone) return d2 <= rules.enter2 || member();
  const float dx = position.x - frame.position.x;
  const float dy = position.y - frame.position.y;
  const float dz = position.z - frame.position.z;
  if (d2 <= rules.enter2 &&
      (rules.enter_everywhere || WithinCone(dx, dy, dz, frame.axis, rules.cos_enter))) {
    return true;
  }
  return member() &&
         (rules.leave_everywhere || WithinCone(dx, dy, dz, frame.axis, rules.cos_leave));
}

}  // namespace collide
