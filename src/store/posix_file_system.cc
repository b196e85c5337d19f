// The POSIX implementation of FileSystem.

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "store/file_system.h"

namespace collide {
namespace {

absl::Status ErrnoError(absl::string_view op, absl::string_view path, int error) {
  return absl::ErrnoToStatus(error, absl::StrCat(op, " ", path));
}

// Retries a system call interrupted by a signal.
template <typename F>
auto Retry(F&& f) {
  decltype(f()) result;
  do {
    result = f();
  } while (result < 0 && errno == EINTR);
  return result;
}

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  absl::Status Append(absl::string_view data) override {
    if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat("append to closed ", path_));
    const char* p = data.data();
    size_t left = data.size();
    while (left > 0) {
      ssize_t n = Retry([&] { return ::write(fd_, p, left); });
      if (n < 0) return ErrnoError("write", path_, errno);
      p += n;
      left -= static_cast<size_t>(n);
      size_ += static_cast<uint64_t>(n);
    }
    return absl::OkStatus();
  }

  absl::Status Sync() override {
    if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat("sync of closed ", path_));
    if (Retry([&] { return ::fdatasync(fd_); }) != 0) return ErrnoError("fdatasync", path_, errno);
    return absl::OkStatus();
  }

  absl::Status Close() override {
    if (fd_ < 0) return absl::OkStatus();
    int fd = fd_;
    fd_ = -1;
    // close() is not retried on EINTR: on Linux the descriptor is released either way.
    if (::close(fd) != 0) return ErrnoError("close", path_, errno);
    return absl::OkStatus();
  }

  uint64_t Size() const override { return size_; }

 private:
  const std::string path_;
  int fd_;
  uint64_t size_;
};

class PosixDirectoryLock final : public DirectoryLock {
 public:
  explicit PosixDirectoryLock(int fd) : fd_(fd) {}
  ~PosixDirectoryLock() override { ::close(fd_); }  // releases the flock

 private:
  int fd_;
};

class Posix final : public FileSystem {
 public:
  absl::StatusOr<std::unique_ptr<WritableFile>> OpenForAppend(const std::string& path) override {
    return Open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC);
  }

  absl::StatusOr<std::unique_ptr<WritableFile>> Create(const std::string& path) override {
    return Open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC);
  }

  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    int fd = Retry([&] { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC); });
    if (fd < 0) return ErrnoError("open", path, errno);
    std::string data;
    struct stat st;
    if (::fstat(fd, &st) == 0 && st.st_size > 0) data.reserve(static_cast<size_t>(st.st_size));
    char buffer[1 << 16];
    while (true) {
      ssize_t n = Retry([&] { return ::read(fd, buffer, sizeof(buffer)); });
      if (n < 0) {
        int error = errno;
        ::close(fd);
        return ErrnoError("read", path, error);
      }
      if (n == 0) break;
      data.append(buffer, static_cast<size_t>(n));
    }
    ::close(fd);
    return data;
  }

  absl::Status Rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) {
      return ErrnoError("rename", absl::StrCat(from, " to ", to), errno);
    }
    return absl::OkStatus();
  }

  absl::Status SyncDir(const std::string& dir) override {
    int fd = Retry([&] { return ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
    if (fd < 0) return ErrnoError("open", dir, errno);
    int rc = Retry([&] { return ::fsync(fd); });
    int error = errno;
    ::close(fd);
    if (rc != 0) return ErrnoError("fsync", dir, error);
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return ErrnoError("opendir", dir, errno);
    std::vector<std::string> names;
    errno = 0;
    while (struct dirent* entry = ::readdir(d)) {
      absl::string_view name = entry->d_name;
      if (name != "." && name != "..") names.emplace_back(name);
    }
    int error = errno;
    ::closedir(d);
    if (error != 0) return ErrnoError("readdir", dir, error);
    return names;
  }

  absl::Status Delete(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return ErrnoError("unlink", path, errno);
    return absl::OkStatus();
  }

  absl::Status Truncate(const std::string& path, uint64_t size) override {
    int fd = Retry([&] { return ::open(path.c_str(), O_WRONLY | O_CLOEXEC); });
    if (fd < 0) return ErrnoError("open", path, errno);
    absl::Status status;
    if (Retry([&] { return ::ftruncate(fd, static_cast<off_t>(size)); }) != 0) {
      status = ErrnoError("ftruncate", path, errno);
    } else if (Retry([&] { return ::fsync(fd); }) != 0) {
      status = ErrnoError("fsync", path, errno);
    }
    ::close(fd);
    return status;
  }

  absl::Status CreateDir(const std::string& dir) override {
    // Create each missing parent in turn.
    for (size_t i = 1; i <= dir.size(); ++i) {
      if (i < dir.size() && dir[i] != '/') continue;
      std::string prefix = dir.substr(0, i);
      if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
        return ErrnoError("mkdir", prefix, errno);
      }
    }
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0) return ErrnoError("stat", dir, errno);
    if (!S_ISDIR(st.st_mode)) {
      return absl::FailedPreconditionError(absl::StrCat(dir, " is not a directory"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<uint64_t> FileSize(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return ErrnoError("stat", path, errno);
    return static_cast<uint64_t>(st.st_size);
  }

  absl::StatusOr<std::unique_ptr<DirectoryLock>> LockDir(const std::string& dir) override {
    std::string path = JoinPath(dir, "LOCK");
    int fd = Retry([&] { return ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644); });
    if (fd < 0) return ErrnoError("open", path, errno);
    if (Retry([&] { return ::flock(fd, LOCK_EX | LOCK_NB); }) != 0) {
      int error = errno;
      ::close(fd);
      if (error == EWOULDBLOCK) {
        return absl::FailedPreconditionError(
            absl::StrCat("data directory ", dir, " is in use by another process (", path, ")"));
      }
      return ErrnoError("flock", path, error);
    }
    return std::unique_ptr<DirectoryLock>(new PosixDirectoryLock(fd));
  }

 private:
  absl::StatusOr<std::unique_ptr<WritableFile>> Open(const std::string& path, int flags) {
    int fd = Retry([&] { return ::open(path.c_str(), flags, 0644); });
    if (fd < 0) return ErrnoError("open", path, errno);
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      int error = errno;
      ::close(fd);
      return ErrnoError("fstat", path, error);
    }
    return std::unique_ptr<WritableFile>(
        new PosixWritableFile(path, fd, static_cast<uint64_t>(st.st_size)));
  }
};

}  // namespace

FileSystem* PosixFileSystem() {
  static Posix* const fs = new Posix();
  return fs;
}

std::string JoinPath(absl::string_view dir, absl::string_view name) {
  if (dir.empty()) return std::string(name);
  if (dir.back() == '/') return absl::StrCat(dir, name);
  return absl::StrCat(dir, "/", name);
}

}  // namespace collide
