#pragma once

#include <cstddef>
#include <deque>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/mutex.h"
#include "store/file_system.h"

namespace collide {

/// The most scenes a server remembers as moved away (the oldest is forgotten first).
inline constexpr size_t kMaxMovedScenes = 1024;

/// The scenes a data directory's server deleted after moving them to another server
/// (`collide scene move`), each with its destination, so that a writer still sent here is told
/// where the scene went, before and after a restart. Kept in the file `moved-scenes` of the data
/// directory (one framed record, rewritten whole through a temporary file and a rename on each
/// change; changes are rare: one per move). Thread-safe.
class MovedScenes {
 public:
  /// The file's name inside the data directory.
  static constexpr absl::string_view kFileName = "moved-scenes";

  /// Reads `dir`'s file: none is an empty list. A damaged file never stops a start-up: the list
  /// starts empty and `problem()` says what was wrong (the next change rewrites the file).
  MovedScenes(FileSystem* fs, std::string dir);

  /// Where `scene` went, or empty when it is not known as moved away.
  std::string Find(absl::string_view scene) const;
  /// Records that `scene` went to `destination` (replacing an earlier entry; past
  /// kMaxMovedScenes the oldest is dropped) and writes the file durably. On a write error the
  /// entry is still remembered until the process ends.
  absl::Status Add(absl::string_view scene, absl::string_view destination);
  /// Forgets `scene` (a scene of that name exists here again); writes the file only when it
  /// had the scene.
  absl::Status Forget(absl::string_view scene);
  /// The number of scenes remembered.
  size_t size() const;
  /// Empty, or what was wrong with the file read at start-up.
  const std::string& problem() const { return problem_; }

 private:
  absl::Status WriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  FileSystem* const fs_;
  const std::string dir_;
  std::string problem_;
  // Held across the file's rewrite, so that writes land in the order of the changes.
  mutable Mutex mu_;
  absl::flat_hash_map<std::string, std::string> destinations_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> order_ ABSL_GUARDED_BY(mu_);  // oldest first
};

}  // namespace collide
