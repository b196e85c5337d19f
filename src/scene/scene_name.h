#pragma once

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace collide {

/// The longest scene name, in bytes.
inline constexpr size_t kMaxSceneNameLength = 128;

/// OK when `name` can name a scene: 1 to kMaxSceneNameLength characters of [A-Za-z0-9_.-],
/// starting with a letter or a digit (so names are also safe as parts of file names).
/// INVALID_ARGUMENT with the field path `scene` otherwise.
absl::Status ValidateSceneName(absl::string_view name);

}  // namespace collide
