#pragma once

#include <span>

#include "absl/status/status.h"
#include "watch/watch_types.h"

namespace collide {

/// Checks a watch's standing queries, as the scene checks a body (scene/validate.h), and puts
/// them in canonical form: each fence's shape and pose (`fences[i].shape.sphere.radius`,
/// `fences[i].pose.rotation`; the rotation then normalised, as a body's), fence ids unique among
/// the fences (`fences[i].id: fence 7 appears twice (first by fences[2])`) and contact watch ids
/// among the contact watches (`contacts[i].id`). INVALID_ARGUMENT with a FieldError.
absl::Status PrepareWatch(std::span<FenceSpec> fences, std::span<const ContactWatchSpec> contacts);

}  // namespace collide
