#include "scene/scene_name.h"

#include "absl/strings/str_cat.h"
#include "base/field_error.h"

namespace collide {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

}  // namespace

absl::Status ValidateSceneName(absl::string_view name) {
  if (name.empty() || name.size() > kMaxSceneNameLength) {
    return InvalidFieldError("scene", absl::StrCat("a name has 1 to ", kMaxSceneNameLength,
                                                   " characters, got ", name.size()));
  }
  if (!IsAlnum(name[0])) {
    return InvalidFieldError("scene", "a name starts with a letter or a digit");
  }
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (!IsAlnum(c) && c != '_' && c != '-' && c != '.') {
      return InvalidFieldError(
          "scene", absl::StrCat("character ", i, " of the name is not one of [A-Za-z0-9_.-]"));
    }
  }
  return absl::OkStatus();
}

}  // namespace collide
