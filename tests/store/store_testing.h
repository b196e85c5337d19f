#pragma once

#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "scene/scene.h"
#include "store/database.h"

namespace collide {

/// A fresh directory under $TMPDIR (or /tmp), removed with its files on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// The total size in bytes of the regular files directly in `dir` (POSIX).
uint64_t DirectoryBytes(const std::string& dir);

/// Whether two scene states hold the same version, client marks and bodies, bit for bit.
::testing::AssertionResult SameState(const SceneState& actual, const SceneState& expected);

/// The database settings of the crash test, shared by the child process and the test: small
/// segments and snapshot thresholds, so that kills land in segment rotations, snapshots and
/// segment deletions too.
DatabaseOptions CrashTestOptions(DurabilityPolicy policy);

/// The scene and client id the crash test's child writes with.
inline constexpr char kCrashScene[] = "arena";
inline constexpr uint64_t kCrashClient = 1;

}  // namespace collide
