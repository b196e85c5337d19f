#include "server/replication/replication_names.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/field_error.h"
#include "scene/scene_name.h"

namespace collide {

std::string SceneToken(absl::string_view scene) {
  std::string token(scene);
  std::replace(token.begin(), token.end(), '.', '=');
  return token;
}

absl::StatusOr<std::string> SceneOfToken(absl::string_view token) {
  std::string scene(token);
  if (absl::StrContains(scene, '.')) {
    return InvalidFieldError("scene", "a scene token holds no '.'");
  }
  std::replace(scene.begin(), scene.end(), '=', '.');
  if (absl::Status status = ValidateSceneName(scene); !status.ok()) return status;
  return scene;
}

StreamNames NamesOf(absl::string_view scene) {
  const std::string token = SceneToken(scene);
  const std::string prefix = absl::StrCat("collide.", token, ".");
  return StreamNames{.stream = absl::StrCat("COLLIDE_", token),
                     .subjects = absl::StrCat(prefix, ">"),
                     .log = absl::StrCat(prefix, "log"),
                     .part = absl::StrCat(prefix, "part"),
                     .snapshot = absl::StrCat(prefix, "snapshot"),
                     .owner_key = token};
}

absl::StatusOr<std::string> SceneOfSubject(absl::string_view subject) {
  if (!absl::ConsumePrefix(&subject, "collide.")) {
    return InvalidFieldError("subject", "not a collide stream subject");
  }
  const size_t dot = subject.find('.');
  if (dot == absl::string_view::npos) {
    return InvalidFieldError("subject", "not a collide stream subject");
  }
  return SceneOfToken(subject.substr(0, dot));
}

std::string MessageId(uint64_t incarnation, uint64_t epoch, uint64_t sequence) {
  return absl::StrFormat("%016x-%d-%d", incarnation, epoch, sequence);
}

}  // namespace collide
