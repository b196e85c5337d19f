#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/rw_mutex.h"
#include "scene/scene.h"
#include "scene/scene_options.h"

namespace collide {

/// The longest scene name, in bytes.
inline constexpr size_t kMaxSceneNameLength = 128;

/// OK when `name` can name a scene: 1 to kMaxSceneNameLength characters of [A-Za-z0-9_.-],
/// starting with a letter or a digit (so names are also safe as parts of file names).
/// INVALID_ARGUMENT with the field path `scene` otherwise.
absl::Status ValidateSceneName(absl::string_view name);

/// Limits of a registry.
struct SceneRegistryOptions {
  /// The most scenes that may exist at once; a create beyond it is RESOURCE_EXHAUSTED.
  size_t max_scenes = 1024;
};

/// The scenes of a server, by name (the id clients use). Thread-safe: lookups take a shared lock,
/// create and delete an exclusive one. Scenes are handed out as shared pointers, so a reader may
/// finish with a scene that is deleted meanwhile.
class SceneRegistry {
 public:
  explicit SceneRegistry(const SceneRegistryOptions& options = {});
  SceneRegistry(const SceneRegistry&) = delete;
  SceneRegistry& operator=(const SceneRegistry&) = delete;

  /// Runs while a create holds the registry lock, after the name and options were checked and
  /// before the scene becomes visible; returns the caller's position of the creation (the store's
  /// log sequence, see SceneState::log_position). An error cancels the create.
  using CreateCommitFn = absl::FunctionRef<absl::StatusOr<uint64_t>()>;
  /// Runs while a delete holds the registry lock and the scene's writer serialisation, before
  /// the scene disappears; an error cancels the delete.
  using DeleteCommitFn = absl::FunctionRef<absl::Status()>;

  /// Creates an empty scene. INVALID_ARGUMENT (name or options), ALREADY_EXISTS,
  /// RESOURCE_EXHAUSTED (max_scenes).
  absl::StatusOr<std::shared_ptr<Scene>> Create(absl::string_view name,
                                                const SceneOptions& options);
  /// As above; `commit` runs before the scene becomes visible.
  absl::StatusOr<std::shared_ptr<Scene>> Create(absl::string_view name, const SceneOptions& options,
                                                CreateCommitFn commit);
  /// Adds an existing scene (recovery). ALREADY_EXISTS if the name is taken; the scene limit is
  /// not applied (the scene existed before).
  absl::Status Adopt(std::shared_ptr<Scene> scene);
  /// Deletes a scene: later lookups fail and its writers get NOT_FOUND. NOT_FOUND if absent.
  absl::Status Delete(absl::string_view name);
  /// As above; `commit` runs first (see DeleteCommitFn).
  absl::Status Delete(absl::string_view name, DeleteCommitFn commit);

  /// The scene named `name`; NOT_FOUND `scene: no scene "x"` if absent.
  absl::StatusOr<std::shared_ptr<Scene>> Get(absl::string_view name) const;
  /// Every scene's name, sorted.
  std::vector<std::string> List() const;
  /// The counters of one scene; NOT_FOUND if absent.
  absl::StatusOr<SceneStats> Stats(absl::string_view name) const;
  /// How many scenes exist.
  size_t size() const;

 private:
  const SceneRegistryOptions options_;
  mutable RwMutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Scene>> scenes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace collide
