#include "geom/sweep_oracle.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "geom/oracle.h"
#include "geom/overlap.h"

namespace collide::testing {
namespace {

template <typename... Args>
std::string Format(const char* format, Args... args) {
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), format, args...);
  return buffer;
}

Pose At(const Pose& start, const Vec3& translation, float f) {
  return Pose{start.rotation, start.position + translation * f};
}

}  // namespace

Shape Inflated(const Shape& shape, float by) {
  switch (shape.type) {
    case ShapeType::kBox: {
      const Vec3 e = shape.box.half_extents;
      return Box{{std::max(0.0f, e.x + by), std::max(0.0f, e.y + by), std::max(0.0f, e.z + by)}};
    }
    case ShapeType::kCapsule:
      return Capsule{std::max(0.0f, shape.capsule.radius + by), shape.capsule.half_height};
    case ShapeType::kSphere:
    default:
      return Sphere{std::max(0.0f, shape.sphere.radius + by)};
  }
}

SweepVerdict SampledSweep(const Shape& moving, const Pose& start, const Vec3& translation,
                          const Shape& target, const Pose& target_pose, float eps) {
  const Shape shrunk = Inflated(target, -eps);
  const Shape grown = Inflated(target, eps);
  const int samples = static_cast<int>(std::ceil(Length(translation) / (0.5f * eps))) + 1;
  bool shrunk_hit = false;
  bool grown_hit = false;
  int first = -1;
  for (int i = 0; i <= samples; ++i) {
    const Pose pose = At(start, translation, static_cast<float>(i) / samples);
    if (!Overlap(moving, pose, grown, target_pose)) continue;
    grown_hit = true;
    if (first < 0 && Overlap(moving, pose, target, target_pose)) first = i;
    if (Overlap(moving, pose, shrunk, target_pose)) {
      shrunk_hit = true;
      break;
    }
  }
  SweepVerdict verdict;
  verdict.ambiguous = shrunk_hit != grown_hit;
  verdict.hits = shrunk_hit;
  if (!shrunk_hit || first < 0) return verdict;
  if (first == 0) return verdict;  // touching at the start: fraction 0
  // Bisection between the last sample apart and the first one touching.
  float lo = static_cast<float>(first - 1) / samples;
  float hi = static_cast<float>(first) / samples;
  for (int i = 0; i < 40 && hi - lo > 1e-7f; ++i) {
    const float mid = 0.5f * (lo + hi);
    if (Overlap(moving, At(start, translation, mid), target, target_pose)) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  verdict.fraction = hi;
  return verdict;
}

SweepVerdict RestingOverlap(const Shape& moving, const Pose& pose, const Shape& target,
                            const Pose& target_pose, float eps) {
  const bool shrunk = Overlap(moving, pose, Inflated(target, -eps), target_pose);
  const bool grown = Overlap(moving, pose, Inflated(target, eps), target_pose);
  return SweepVerdict{.ambiguous = shrunk != grown, .hits = shrunk, .fraction = 0.0f};
}

std::string CheckContact(const Shape& moving, const Pose& pose, const Shape& target,
                         const Pose& target_pose, const Vec3& point, const Vec3& normal,
                         double tolerance) {
  using oracle::DVec3;
  const oracle::PosedShape m = oracle::MakePosed(moving, pose);
  const oracle::PosedShape t = oracle::MakePosed(target, target_pose);
  const DVec3 p = oracle::ToDouble(point);
  const DVec3 n = oracle::ToDouble(normal);
  if (std::fabs(oracle::Length(n) - 1.0) > 1e-3) {
    return Format("normal (%g, %g, %g) is not unit", normal.x, normal.y, normal.z);
  }
  const double on_target = oracle::Sdf(t, p);
  const double on_moving = oracle::Sdf(m, p);
  // The plane n.x = n.p through the point: the target behind it, the moving shape in front.
  const double target_past = oracle::SupportValue(t, n) - oracle::Dot(n, p);
  const double moving_past = oracle::SupportValue(m, -n) + oracle::Dot(n, p);
  if (std::fabs(on_target) > tolerance || std::fabs(on_moving) > tolerance ||
      std::fabs(target_past) > tolerance || std::fabs(moving_past) > tolerance) {
    return Format(
        "contact (%g, %g, %g) normal (%g, %g, %g): sdf target %g moving %g, support past the "
        "plane: target %g moving %g (tolerance %g)",
        point.x, point.y, point.z, normal.x, normal.y, normal.z, on_target, on_moving, target_past,
        moving_past, tolerance);
  }
  return "";
}

}  // namespace collide::testing
