#pragma once

#include "geom/vec3.h"

namespace collide {

/// A ray or the path of a cast: the points origin + t * direction for t in [0, max_distance].
/// `direction` is unit length and `max_distance` finite and >= 0 (the service normalises the
/// direction and requires > 0; the query engine passes 0 once a closest hit at distance 0 is
/// known, and a ray of length 0 hits only what contains or touches its origin).
struct Ray {
  Vec3 origin{};
  Vec3 direction{1, 0, 0};
  float max_distance = 0.0f;
};

/// Where a ray or a cast first touches a shape.
struct CastHit {
  /// Distance along the unit direction to the first contact, in [0, max_distance].
  float distance = 0.0f;
  /// The contact point on the hit shape's surface, world frame. A ray (or a sphere cast of
  /// radius 0) starting inside: its origin. A ball of radius > 0 starting overlapping: the hit
  /// shape's surface point nearest the ball's centre.
  Vec3 point{};
  /// Unit normal out of the hit shape at `point`, world frame. A ray (or a sphere cast of radius
  /// 0) starting inside reports -direction; a ball of radius > 0 starting overlapping reports the
  /// separating (MTV) direction.
  Vec3 normal{};
  /// True when the cast started inside or overlapping the shape (then distance is 0).
  bool start_overlapping = false;
};

}  // namespace collide
