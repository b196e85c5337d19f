#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "geom/vec3.h"

namespace collide {

// What the queries on triangle assets (meshes, heightfields) report: every result names the
// triangle (the feature) besides what the shapes' queries report. World frame throughout.

/// A ray or sphere cast's contact with one triangle of an asset.
struct MeshHit {
  /// Distance along the cast's unit direction to the contact (world units).
  float distance = 0.0f;
  /// The contact point on the triangle. A ball of radius > 0 that starts overlapping: the
  /// asset's point nearest the ball's centre.
  Vec3 point{};
  /// Unit normal. Rays: the triangle's face normal on the side the ray came from (opposite the
  /// ray's direction: both sides count). Sphere casts: out of the triangle towards the ball's
  /// centre at contact (a face contact's is the face normal on the ball's side; an edge's or a
  /// vertex's points from that feature to the centre). A ball that starts overlapping: the
  /// direction from the nearest point to the centre (the separating direction), or the face
  /// normal towards the centre's side when the centre lies on the triangle.
  Vec3 normal{};
  /// The triangle's index in the asset (a mesh: its position in the index list / 3; a
  /// heightfield: HeightfieldShape::TriangleIndex).
  uint32_t triangle = 0;
  /// True when the cast started touching the asset (then distance is 0).
  bool start_overlapping = false;
  /// Rays: true when the ray hit the triangle's back (it sees the triangle clockwise).
  bool back_face = false;
};

/// The overlap of a posed shape with one triangle of an asset.
struct MeshContact {
  uint32_t triangle = 0;
  /// The penetration depth: the shortest move of the shape that separates it from this
  /// triangle (0 when touching).
  float depth = 0.0f;
  /// Unit direction of that move, out of the triangle towards the shape.
  Vec3 normal{};
  /// A point of the triangle where the two touch after the move.
  Vec3 point{};
};

/// The point of an asset nearest a query point.
struct MeshPoint {
  uint32_t triangle = 0;
  /// Distance from the query point to `point` (0 on the triangle).
  float distance = 0.0f;
  /// The nearest point of the asset.
  Vec3 point{};
  /// Unit direction from `point` to the query point; the triangle's front normal when the
  /// query point lies on it.
  Vec3 normal{};
};

/// A non-owning reference to a callable `R(Args...)`, for the sinks of the queries that report
/// every triangle: cheap to pass, valid only while the callable lives.
template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F&& f)  // NOLINT: implicit, like absl::FunctionRef
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

/// Receives each hit of a cast that reports every triangle, in no particular order; returns the
/// distance the cast may still look to (its current limit to go on, a smaller value to clip it,
/// a negative one to stop).
using MeshHitSink = FunctionRef<float(const MeshHit&)>;

/// Receives each triangle an overlap, region or radius query finds; returns false to stop.
using MeshContactSink = FunctionRef<bool(const MeshContact&)>;
using MeshPointSink = FunctionRef<bool(const MeshPoint&)>;

}  // namespace collide
