#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace collide {

/// A file open for appending. Not thread-safe: one owner at a time.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  /// Appends `data` at the end of the file (to the OS; not yet durable). On error the file may
  /// hold a prefix of `data`.
  virtual absl::Status Append(absl::string_view data) = 0;
  /// Makes everything appended so far durable (fdatasync). After an error, nothing is known
  /// about which appended bytes are durable.
  virtual absl::Status Sync() = 0;
  /// Closes the file; further calls are errors. Does not sync.
  virtual absl::Status Close() = 0;
  /// The file's size in bytes, including everything appended.
  virtual uint64_t Size() const = 0;
};

/// Holds an exclusive lock on a data directory until destroyed.
class DirectoryLock {
 public:
  virtual ~DirectoryLock() = default;
};

/// The file operations the store needs, behind an interface so tests can inject faults
/// (FaultFileSystem). Paths are plain strings joined with '/'. Thread-safe.
///
/// Durability model (POSIX): appended bytes are durable after WritableFile::Sync; a created,
/// renamed or deleted directory entry is durable after SyncDir of its directory.
class FileSystem {
 public:
  virtual ~FileSystem() = default;

  /// Opens `path` for appending at its end, creating it (empty) when missing.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> OpenForAppend(const std::string& path) = 0;
  /// Creates `path` empty (truncating an existing file) and opens it for appending.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> Create(const std::string& path) = 0;
  /// The whole content of `path`. NOT_FOUND if it does not exist.
  virtual absl::StatusOr<std::string> ReadFile(const std::string& path) = 0;
  /// Atomically replaces `to` with `from`.
  virtual absl::Status Rename(const std::string& from, const std::string& to) = 0;
  /// Makes the directory's entries (creations, renames, deletions) durable.
  virtual absl::Status SyncDir(const std::string& dir) = 0;
  /// The names (not paths) of the entries of `dir`, without "." and "..", in no order.
  virtual absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) = 0;
  /// Removes the file `path`.
  virtual absl::Status Delete(const std::string& path) = 0;
  /// Cuts `path` to `size` bytes and makes the new size durable.
  virtual absl::Status Truncate(const std::string& path, uint64_t size) = 0;
  /// Creates the directory `dir` (and missing parents); OK if it exists.
  virtual absl::Status CreateDir(const std::string& dir) = 0;
  /// The size of `path` in bytes.
  virtual absl::StatusOr<uint64_t> FileSize(const std::string& path) = 0;
  /// Takes an exclusive lock on `dir` (a lock file inside it), so that two processes never open
  /// one data directory. FAILED_PRECONDITION when another holder has it.
  virtual absl::StatusOr<std::unique_ptr<DirectoryLock>> LockDir(const std::string& dir) = 0;
};

/// The real file system (POSIX calls). Never destroyed.
FileSystem* PosixFileSystem();

/// `dir` + "/" + `name`.
std::string JoinPath(absl::string_view dir, absl::string_view name);

}  // namespace collide
