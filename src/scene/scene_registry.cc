#include "scene/scene_registry.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace collide {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

absl::Status NoScene(absl::string_view name) {
  return absl::NotFoundError(absl::StrCat("scene: no scene \"", name, "\""));
}

}  // namespace

absl::Status ValidateSceneName(absl::string_view name) {
  if (name.empty() || name.size() > kMaxSceneNameLength) {
    return absl::InvalidArgumentError(absl::StrCat("scene: a name has 1 to ", kMaxSceneNameLength,
                                                   " characters, got ", name.size()));
  }
  if (!IsAlnum(name[0])) {
    return absl::InvalidArgumentError("scene: a name starts with a letter or a digit");
  }
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (!IsAlnum(c) && c != '_' && c != '-' && c != '.') {
      return absl::InvalidArgumentError(
          absl::StrCat("scene: character ", i, " of the name is not one of [A-Za-z0-9_.-]"));
    }
  }
  return absl::OkStatus();
}

SceneRegistry::SceneRegistry(const SceneRegistryOptions& options) : options_(options) {}

absl::StatusOr<std::shared_ptr<Scene>> SceneRegistry::Create(absl::string_view name,
                                                             const SceneOptions& options) {
  return Create(name, options, []() -> absl::StatusOr<uint64_t> { return 0; });
}

absl::StatusOr<std::shared_ptr<Scene>> SceneRegistry::Create(absl::string_view name,
                                                             const SceneOptions& options,
                                                             CreateCommitFn commit) {
  COLLIDE_RETURN_IF_ERROR(ValidateSceneName(name));
  COLLIDE_RETURN_IF_ERROR(ValidateSceneOptions(options));
  WriterLock lock(&mu_);
  if (scenes_.contains(name)) {
    return absl::AlreadyExistsError(absl::StrCat("scene: scene \"", name, "\" already exists"));
  }
  if (scenes_.size() >= options_.max_scenes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("scene: the server holds its limit of ", options_.max_scenes, " scenes"));
  }
  COLLIDE_ASSIGN_OR_RETURN(const uint64_t position, commit());
  auto scene = std::make_shared<Scene>(std::string(name), options, position);
  scenes_.emplace(name, scene);
  return scene;
}

absl::Status SceneRegistry::Adopt(std::shared_ptr<Scene> scene) {
  WriterLock lock(&mu_);
  if (!scenes_.try_emplace(scene->name(), scene).second) {
    return absl::AlreadyExistsError(
        absl::StrCat("scene: scene \"", scene->name(), "\" already exists"));
  }
  return absl::OkStatus();
}

absl::Status SceneRegistry::Delete(absl::string_view name) {
  return Delete(name, [] { return absl::OkStatus(); });
}

absl::Status SceneRegistry::Delete(absl::string_view name, DeleteCommitFn commit) {
  WriterLock lock(&mu_);
  auto it = scenes_.find(name);
  if (it == scenes_.end()) return NoScene(name);
  COLLIDE_RETURN_IF_ERROR(it->second->MarkDeleted(commit));
  scenes_.erase(it);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Scene>> SceneRegistry::Get(absl::string_view name) const {
  ReaderLock lock(&mu_);
  auto it = scenes_.find(name);
  if (it == scenes_.end()) return NoScene(name);
  return it->second;
}

std::vector<std::string> SceneRegistry::List() const {
  std::vector<std::string> names;
  {
    ReaderLock lock(&mu_);
    names.reserve(scenes_.size());
    for (const auto& [name, scene] : scenes_) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<SceneStats> SceneRegistry::Stats(absl::string_view name) const {
  COLLIDE_ASSIGN_OR_RETURN(std::shared_ptr<Scene> scene, Get(name));
  return scene->Stats();
}

size_t SceneRegistry::size() const {
  ReaderLock lock(&mu_);
  return scenes_.size();
}

}  // namespace collide
