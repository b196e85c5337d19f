#include "scene/scene_options.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/field_error.h"

namespace collide {
namespace {

// A float as the shortest text that reads back as the same float32 (0.1, not 0.100000001).
std::string FloatText(float v) {
  for (int digits = 6; digits < 9; ++digits) {
    std::string text = absl::StrFormat("%.*g", digits, v);
    if (std::strtof(text.c_str(), nullptr) == v) return text;
  }
  return absl::StrFormat("%.9g", v);
}

}  // namespace

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
    case DurabilityPolicy::kReplicated:
      return "replicated";
  }
  return "unknown";
}

absl::StatusOr<DurabilityPolicy> ParseDurabilityPolicy(absl::string_view name) {
  for (DurabilityPolicy p :
       {DurabilityPolicy::kDefault, DurabilityPolicy::kNone, DurabilityPolicy::kPeriodic,
        DurabilityPolicy::kAlways, DurabilityPolicy::kReplicated}) {
    if (name == DurabilityPolicyName(p)) return p;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "durability: \"", name, "\" is not one of default, none, periodic, always, replicated"));
}

absl::Status ValidateSceneOptions(const SceneOptions& options, uint32_t max_bodies_cap) {
  if (!std::isfinite(options.fat_margin) || options.fat_margin < 0.0f ||
      options.fat_margin > kMaxFatMargin) {
    return InvalidFieldError(
        "options.fat_margin",
        absl::StrCat("must be finite and in [0, 1e6], got ", FloatText(options.fat_margin)));
  }
  const uint32_t cap = std::min(max_bodies_cap, kMaxBodiesLimit);
  if (options.max_bodies < 1 || options.max_bodies > cap) {
    return InvalidFieldError("options.max_bodies",
                             absl::StrCat("must be in [1, ", cap, "], got ", options.max_bodies));
  }
  if (options.history_ticks > kMaxHistoryTicks) {
    return InvalidFieldError(
        "options.history_ticks",
        absl::StrCat("must be in [0, ", kMaxHistoryTicks, "], got ", options.history_ticks));
  }
  switch (options.durability) {
    case DurabilityPolicy::kDefault:
    case DurabilityPolicy::kNone:
    case DurabilityPolicy::kPeriodic:
    case DurabilityPolicy::kAlways:
    case DurabilityPolicy::kReplicated:
      return absl::OkStatus();
  }
  return InvalidFieldError("options.durability",
                           absl::StrCat("unknown policy ", static_cast<int>(options.durability)));
}

}  // namespace collide
