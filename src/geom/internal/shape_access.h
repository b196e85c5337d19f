#pragma once

// Typed access to the member of a Shape, for the pair tables of overlap.cc and penetration.cc.
// Not part of the public API.

#include <type_traits>

#include "geom/shapes.h"

namespace collide::geom_internal {

/// The `T` held by `s`; the caller has checked s.type.
template <typename T>
constexpr const T& ShapeAs(const Shape& s) {
  if constexpr (std::is_same_v<T, Sphere>) {
    return s.sphere;
  } else if constexpr (std::is_same_v<T, Box>) {
    return s.box;
  } else {
    static_assert(std::is_same_v<T, Capsule>);
    return s.capsule;
  }
}

/// The preconditions of every narrow-phase routine, for debug asserts: non-negative sizes.
constexpr bool IsValid(const Sphere& s) { return s.radius >= 0.0f; }
constexpr bool IsValid(const Box& b) {
  return b.half_extents.x >= 0.0f && b.half_extents.y >= 0.0f && b.half_extents.z >= 0.0f;
}
constexpr bool IsValid(const Capsule& c) { return c.radius >= 0.0f && c.half_height >= 0.0f; }

}  // namespace collide::geom_internal
