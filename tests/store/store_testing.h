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

/// Where WritePoisonedDirectory put the record that no longer applies.
struct PoisonedLog {
  /// The log segment's path and the record's offset in it.
  std::string segment;
  uint64_t offset = 0;
};

/// Writes, in the empty data directory `dir`, a log holding: scene "t" (history_ticks 8) created,
/// body 1 (a unit sphere) upserted (version 1) and moved to x = 1 at tick 5 (version 2); then,
/// as an older server would have logged them, a move to x = 2 tagged with tick 2^64 - 1 by
/// client 7 (sequence 1; version 3, log sequence 4: the record that no longer applies) and a
/// move to x = 9 (version 4).
absl::StatusOr<PoisonedLog> WritePoisonedDirectory(const std::string& dir);

/// The scene and client id the crash test's child writes with.
inline constexpr char kCrashScene[] = "arena";
inline constexpr uint64_t kCrashClient = 1;

}  // namespace collide
