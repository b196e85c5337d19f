#pragma once

#include <cstdint>

#include "geom/vec3.h"

namespace collide {

/// A ball of `radius` about the origin of its pose.
struct Sphere {
  float radius = 0.0f;
};

/// A rectangular box of `half_extents` about the origin of its pose, edges along the pose's local
/// axes: an AABB under an identity rotation, an OBB otherwise. A zero half extent is a flat box.
struct Box {
  Vec3 half_extents{};
};

/// The points within `radius` of the segment from (0, -half_height, 0) to (0, half_height, 0) of
/// its pose (the segment lies along local Y). half_height 0 is a sphere.
struct Capsule {
  float radius = 0.0f;
  float half_height = 0.0f;
};

/// Which shape a `Shape` holds.
enum class ShapeType : uint8_t { kSphere = 0, kBox = 1, kCapsule = 2 };
inline constexpr int kShapeTypeCount = 3;

/// Any one of the shapes, by value (a tagged union: no allocation, no virtual dispatch).
struct Shape {
  ShapeType type = ShapeType::kSphere;
  union {
    Sphere sphere;
    Box box;
    Capsule capsule;
  };

  constexpr Shape() : sphere{} {}
  constexpr Shape(const Sphere& s) : type(ShapeType::kSphere), sphere(s) {}    // NOLINT
  constexpr Shape(const Box& b) : type(ShapeType::kBox), box(b) {}             // NOLINT
  constexpr Shape(const Capsule& c) : type(ShapeType::kCapsule), capsule(c) {}  // NOLINT
};

/// Calls `f` with the concrete shape held by `s` and returns its result.
template <typename F>
constexpr decltype(auto) Visit(const Shape& s, F&& f) {
  switch (s.type) {
    case ShapeType::kBox:
      return f(s.box);
    case ShapeType::kCapsule:
      return f(s.capsule);
    case ShapeType::kSphere:
    default:
      return f(s.sphere);
  }
}

}  // namespace collide
