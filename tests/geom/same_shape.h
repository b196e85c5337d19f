#pragma once

// Exact shape equality for tests that compare a copy of a scene's bodies with the original
// (the store's recovered state, the watch layer's mirror).

#include "geom/shapes.h"

namespace collide::testing {

/// True when `a` and `b` hold the same kind of shape with exactly the same dimensions.
inline bool SameShape(const Shape& a, const Shape& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case ShapeType::kSphere:
      return a.sphere.radius == b.sphere.radius;
    case ShapeType::kBox:
      return a.box.half_extents == b.box.half_extents;
    case ShapeType::kCapsule:
      return a.capsule.radius == b.capsule.radius && a.capsule.half_height == b.capsule.half_height;
  }
  return false;
}

}  // namespace collide::testing
