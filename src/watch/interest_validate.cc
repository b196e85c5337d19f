#include "watch/interest_validate.h"

#include <cmath>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/field_error.h"
#include "base/status_macros.h"
#include "scene/update_batch.h"
#include "scene/validate.h"

namespace collide {
namespace {

constexpr absl::string_view kObservers = "observers";

absl::Status CheckRadius(float v, absl::string_view field) {
  if (IsDimension(v)) return absl::OkStatus();
  return InvalidFieldError(
      field, absl::StrFormat("must be finite, >= 0 and <= %g, got %g", kMaxCoordinate, v));
}

// The cone's fields, under `cone`.
absl::Status PrepareCone(ViewCone* cone) {
  const double x = cone->direction.x, y = cone->direction.y, z = cone->direction.z;
  const double length = std::sqrt(x * x + y * y + z * z);
  if (!std::isfinite(length) || length == 0.0) {
    return InvalidFieldError("direction", "must be finite and non-zero");
  }
  cone->direction = Vec3{static_cast<float>(x / length), static_cast<float>(y / length),
                         static_cast<float>(z / length)};
  const float pi = static_cast<float>(std::acos(-1.0));
  if (!std::isfinite(cone->half_angle) || !(cone->half_angle > 0.0f) || cone->half_angle > pi) {
    return InvalidFieldError(
        "half_angle", absl::StrFormat("must be in (0, pi] radians, got %g", cone->half_angle));
  }
  if (!std::isfinite(cone->leave_half_angle) || cone->leave_half_angle < cone->half_angle ||
      cone->leave_half_angle > pi) {
    return InvalidFieldError(
        "leave_half_angle",
        absl::StrFormat("must be in [half_angle, pi] radians ([%g, %g]), got %g", cone->half_angle,
                        pi, cone->leave_half_angle));
  }
  return absl::OkStatus();
}

// One observer's values, errors named within it (`enter_radius`, `cone.half_angle`).
absl::Status PrepareObserver(ObserverSpec* spec, const InterestLimits& limits) {
  COLLIDE_RETURN_IF_ERROR(UnderField(ValidatePose(spec->pose), "pose"));
  spec->pose = NormalizedPose(spec->pose);
  COLLIDE_RETURN_IF_ERROR(CheckRadius(spec->enter_radius, "enter_radius"));
  COLLIDE_RETURN_IF_ERROR(CheckRadius(spec->leave_radius, "leave_radius"));
  if (spec->leave_radius < spec->enter_radius) {
    return InvalidFieldError(
        "leave_radius", absl::StrFormat("must be >= enter_radius (%g), got %g", spec->enter_radius,
                                        spec->leave_radius));
  }
  if (spec->cone.has_value()) {
    COLLIDE_RETURN_IF_ERROR(UnderField(PrepareCone(&*spec->cone), "cone"));
  }
  if (spec->max_relevant > limits.max_relevant) {
    return InvalidFieldError(
        "max_relevant",
        absl::StrCat("must be at most ", limits.max_relevant,
                     " (the server's --max_relevant_per_observer), got ", spec->max_relevant));
  }
  if (spec->max_relevant == 0) spec->max_relevant = std::max<uint32_t>(limits.max_relevant, 1);
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateObserverChanges(ObserverChanges* changes, const InterestLimits& limits) {
  absl::flat_hash_map<uint64_t, size_t> first;
  first.reserve(changes->upserts.size());
  for (size_t i = 0; i < changes->upserts.size(); ++i) {
    ObserverSpec& spec = changes->upserts[i];
    COLLIDE_RETURN_IF_ERROR(AtElement(PrepareObserver(&spec, limits), kObservers, i));
    if (auto [it, added] = first.try_emplace(spec.id, i); !added) {
      return FieldErrorStatus(
          absl::StatusCode::kInvalidArgument,
          FieldError{.list = std::string(kObservers),
                     .index = i,
                     .field = "id",
                     .reason = absl::StrCat("observer ", spec.id, " appears twice"),
                     .relation = "first by",
                     .related = it->second});
    }
  }
  for (size_t k = 0; k < changes->removes.size(); ++k) {
    const uint64_t id = changes->removes[k];
    if (auto it = first.find(id); it != first.end()) {
      return FieldErrorStatus(
          absl::StatusCode::kInvalidArgument,
          FieldError{.list = "removes",
                     .index = k,
                     .reason = absl::StrCat("observer ", id, " is also upserted"),
                     .relation = "by",
                     .related = it->second,
                     .related_list = std::string(kObservers)});
    }
  }
  return absl::OkStatus();
}

}  // namespace collide
