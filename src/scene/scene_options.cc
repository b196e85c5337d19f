#include "scene/scene_options.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace collide {

absl::string_view DurabilityPolicyName(DurabilityPolicy policy) {
  switch (policy) {
    case DurabilityPolicy::kDefault:
      return "default";
    case DurabilityPolicy::kNone:
      return "none";
    case DurabilityPolicy::kPeriodic:
      return "periodic";
    case DurabilityPolicy::kAlways:
      return "always";
  }
  return "unknown";
}

absl::StatusOr<DurabilityPolicy> ParseDurabilityPolicy(absl::string_view name) {
  for (DurabilityPolicy p : {DurabilityPolicy::kDefault, DurabilityPolicy::kNone,
                             DurabilityPolicy::kPeriodic, DurabilityPolicy::kAlways}) {
    if (name == DurabilityPolicyName(p)) return p;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("durability: \"", name, "\" is not one of default, none, periodic, always"));
}

absl::Status ValidateSceneOptions(const SceneOptions& options) {
  if (!std::isfinite(options.fat_margin) || options.fat_margin < 0.0f ||
      options.fat_margin > 1e6f) {
    return absl::InvalidArgumentError(absl::StrCat(
        "options.fat_margin: must be finite and in [0, 1e6], got ", options.fat_margin));
  }
  if (options.max_bodies < 1 || options.max_bodies > kMaxBodiesLimit) {
    return absl::InvalidArgumentError(absl::StrCat("options.max_bodies: must be in [1, ",
                                                   kMaxBodiesLimit, "], got ", options.max_bodies));
  }
  if (options.history_ticks > kMaxHistoryTicks) {
    return absl::InvalidArgumentError(absl::StrCat("options.history_ticks: must be in [0, ",
                                                   kMaxHistoryTicks, "], got ",
                                                   options.history_ticks));
  }
  switch (options.durability) {
    case DurabilityPolicy::kDefault:
    case DurabilityPolicy::kNone:
    case DurabilityPolicy::kPeriodic:
    case DurabilityPolicy::kAlways:
      return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("options.durability: unknown policy ", static_cast<int>(options.durability)));
}

}  // namespace collide
