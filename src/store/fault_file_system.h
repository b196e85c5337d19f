#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "store/file_system.h"

namespace collide {

/// What a simulated machine crash keeps.
struct CrashOptions {
  /// Bytes of the unsynced tail kept in the file appended to last (a torn write: the first part
  /// of the pending data reached the disk); every other file keeps only its synced bytes.
  uint64_t torn_tail_bytes = 0;
};

/// An in-memory FileSystem for tests that models what survives a crash and injects faults.
///
/// Model: a file's bytes are durable up to its last Sync (or Truncate); a directory entry that
/// was created, renamed or deleted is durable after SyncDir of its directory. CrashImage()
/// returns a new file system holding only what a machine crash would leave; Clone() what a
/// crash of the process would leave (everything written). Faults: failing fsyncs, a space limit
/// (ENOSPC), bit flips. Thread-safe.
class FaultFileSystem final : public FileSystem {
 public:
  FaultFileSystem() = default;

  // FileSystem.
  absl::StatusOr<std::unique_ptr<WritableFile>> OpenForAppend(const std::string& path) override;
  absl::StatusOr<std::unique_ptr<WritableFile>> Create(const std::string& path) override;
  absl::StatusOr<std::string> ReadFile(const std::string& path) override;
  absl::Status Rename(const std::string& from, const std::string& to) override;
  absl::Status SyncDir(const std::string& dir) override;
  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) override;
  absl::Status Delete(const std::string& path) override;
  absl::Status Truncate(const std::string& path, uint64_t size) override;
  absl::Status CreateDir(const std::string& dir) override;
  absl::StatusOr<uint64_t> FileSize(const std::string& path) override;
  absl::StatusOr<std::unique_ptr<DirectoryLock>> LockDir(const std::string& dir) override;

  /// A file system holding what survives a machine crash now: files cut to their synced bytes
  /// (see CrashOptions for a torn write), directory entries as of their last SyncDir. This one
  /// is left as it is (the crashed process may go on writing into it unseen).
  std::unique_ptr<FaultFileSystem> CrashImage(const CrashOptions& options = {}) const;
  /// Arms a crash at a chosen step: the machine crash image is taken, under the same lock, right
  /// after the `count`th successful file Sync or SyncDir from now (0: at once), so no later call
  /// can slip in between. TakeArmedCrashImage() hands it over.
  void CrashAfterSyncs(int count);
  /// The image armed by CrashAfterSyncs, or null while that many syncs have not happened.
  std::unique_ptr<FaultFileSystem> TakeArmedCrashImage();
  /// A file system holding everything written so far (what a killed process leaves: the OS
  /// still has its page cache), as durable.
  std::unique_ptr<FaultFileSystem> Clone() const;

  /// Makes the next `count` file Syncs and SyncDirs fail with an I/O error.
  void FailSyncs(int count);
  /// Appends fail with "No space left on device" (RESOURCE_EXHAUSTED) once all files together
  /// would exceed `bytes`; the part that fits is written (a short write).
  void SetSpaceLimit(uint64_t bytes);
  /// Flips bit `bit` (0-7) of byte `offset` of `path` (in what is written and what is durable).
  absl::Status FlipBit(const std::string& path, uint64_t offset, int bit);

  /// The whole content of `path` as written (empty if absent).
  std::string Contents(const std::string& path) const;
  /// The bytes of all files.
  uint64_t TotalBytes() const;
  /// Successful file Syncs so far.
  int sync_count() const;

 private:
  struct Inode {
    std::string data;
    uint64_t synced = 0;
  };
  class File;
  class Lock;

  static std::string Parent(const std::string& path);
  absl::Status AppendTo(const std::shared_ptr<Inode>& inode, const std::string& path,
                        const std::string& data);
  absl::Status SyncInode(const std::shared_ptr<Inode>& inode, const std::string& path);
  uint64_t TotalBytesLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::unique_ptr<FaultFileSystem> CrashImageLocked(const CrashOptions& options) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts a successful sync towards an armed crash.
  void CountArmedSyncLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  // What the directories hold now and what they held at their last SyncDir.
  std::map<std::string, std::shared_ptr<Inode>> live_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<Inode>> durable_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> dirs_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> locked_dirs_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<Inode> last_appended_ ABSL_GUARDED_BY(mu_);
  int failing_syncs_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t space_limit_ ABSL_GUARDED_BY(mu_) = UINT64_MAX;
  int sync_count_ ABSL_GUARDED_BY(mu_) = 0;
  // Syncs still to come before the armed crash image is taken (-1: none armed).
  int armed_syncs_left_ ABSL_GUARDED_BY(mu_) = -1;
  std::unique_ptr<FaultFileSystem> armed_image_ ABSL_GUARDED_BY(mu_);
};

}  // namespace collide
