#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "watch/interest_types.h"

namespace collide {

/// The limits an interest stream's observers are checked against (the server's flags).
struct InterestLimits {
  /// The largest ObserverSpec::max_relevant, and what 0 stands for.
  uint32_t max_relevant = 1024;
};

/// Checks one message's observer changes, as the scene checks a body (scene/validate.h), and
/// puts them into canonical form: each observer's pose (`observers[i].pose.position`,
/// `observers[i].pose.rotation`, renormalised), its radii (`observers[i].enter_radius`: finite,
/// 0 to kMaxCoordinate; `observers[i].leave_radius`: the same and at least enter_radius), its
/// cone (`observers[i].cone.direction`: finite and non-zero, normalised in double;
/// `observers[i].cone.half_angle`: in (0, pi]; `observers[i].cone.leave_half_angle`: in
/// [half_angle, pi]), its max_relevant (`observers[i].max_relevant`: at most
/// limits.max_relevant; 0 becomes limits.max_relevant); observer ids unique among the upserts
/// (`observers[i].id: observer 7 appears twice (first by observers[2])`) and not removed by the
/// same message (`removes[k]: observer 7 is also upserted (by observers[2])`). Whether an
/// observer's host exists is not checked: an observer of a missing host holds nothing until a
/// body with that id exists. INVALID_ARGUMENT with a FieldError.
absl::Status ValidateObserverChanges(ObserverChanges* changes, const InterestLimits& limits);

}  // namespace collide
