#include "store/fault_file_system.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace collide {

// A handle on an inode. Keeps writing into the inode even after the entry was renamed or
// deleted, like a POSIX descriptor.
class FaultFileSystem::File final : public WritableFile {
 public:
  File(FaultFileSystem* fs, std::string path, std::shared_ptr<Inode> inode)
      : fs_(fs), path_(std::move(path)), inode_(std::move(inode)) {}

  absl::Status Append(absl::string_view data) override {
    if (closed_) return absl::FailedPreconditionError(absl::StrCat("append to closed ", path_));
    return fs_->AppendTo(inode_, path_, std::string(data));
  }
  absl::Status Sync() override {
    if (closed_) return absl::FailedPreconditionError(absl::StrCat("sync of closed ", path_));
    return fs_->SyncInode(inode_, path_);
  }
  absl::Status Close() override {
    closed_ = true;
    return absl::OkStatus();
  }
  uint64_t Size() const override {
    MutexLock lock(&fs_->mu_);
    return inode_->data.size();
  }

 private:
  FaultFileSystem* const fs_;
  const std::string path_;
  const std::shared_ptr<Inode> inode_;
  bool closed_ = false;
};

class FaultFileSystem::Lock final : public DirectoryLock {
 public:
  Lock(FaultFileSystem* fs, std::string dir) : fs_(fs), dir_(std::move(dir)) {}
  ~Lock() override {
    MutexLock lock(&fs_->mu_);
    fs_->locked_dirs_.erase(dir_);
  }

 private:
  FaultFileSystem* const fs_;
  const std::string dir_;
};

std::string FaultFileSystem::Parent(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

absl::StatusOr<std::unique_ptr<WritableFile>> FaultFileSystem::OpenForAppend(
    const std::string& path) {
  MutexLock lock(&mu_);
  if (!dirs_.contains(Parent(path))) return absl::NotFoundError(absl::StrCat("open ", path));
  std::shared_ptr<Inode>& inode = live_[path];
  if (inode == nullptr) inode = std::make_shared<Inode>();
  return std::unique_ptr<WritableFile>(new File(this, path, inode));
}

absl::StatusOr<std::unique_ptr<WritableFile>> FaultFileSystem::Create(const std::string& path) {
  MutexLock lock(&mu_);
  if (!dirs_.contains(Parent(path))) return absl::NotFoundError(absl::StrCat("open ", path));
  // O_TRUNC of an existing file changes that inode; a fresh inode models a new file.
  std::shared_ptr<Inode>& inode = live_[path];
  if (inode == nullptr) {
    inode = std::make_shared<Inode>();
  } else {
    inode->data.clear();
    inode->synced = 0;
  }
  return std::unique_ptr<WritableFile>(new File(this, path, inode));
}

absl::StatusOr<std::string> FaultFileSystem::ReadFile(const std::string& path) {
  MutexLock lock(&mu_);
  auto it = live_.find(path);
  if (it == live_.end()) return absl::NotFoundError(absl::StrCat("open ", path));
  return it->second->data;
}

absl::Status FaultFileSystem::Rename(const std::string& from, const std::string& to) {
  MutexLock lock(&mu_);
  auto it = live_.find(from);
  if (it == live_.end()) return absl::NotFoundError(absl::StrCat("rename ", from));
  std::shared_ptr<Inode> inode = it->second;
  live_.erase(it);
  live_[to] = std::move(inode);
  return absl::OkStatus();
}

absl::Status FaultFileSystem::SyncDir(const std::string& dir) {
  MutexLock lock(&mu_);
  if (failing_syncs_ > 0) {
    --failing_syncs_;
    return absl::InternalError(absl::StrCat("fsync ", dir, ": Input/output error (injected)"));
  }
  for (auto it = durable_.begin(); it != durable_.end();) {
    it = Parent(it->first) == dir ? durable_.erase(it) : std::next(it);
  }
  for (const auto& [path, inode] : live_) {
    if (Parent(path) == dir) durable_[path] = inode;
  }
  CountArmedSyncLocked();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> FaultFileSystem::ListDir(const std::string& dir) {
  MutexLock lock(&mu_);
  if (!dirs_.contains(dir)) return absl::NotFoundError(absl::StrCat("opendir ", dir));
  std::vector<std::string> names;
  for (const auto& [path, inode] : live_) {
    if (Parent(path) == dir) names.push_back(path.substr(dir.size() + 1));
  }
  return names;
}

absl::Status FaultFileSystem::Delete(const std::string& path) {
  MutexLock lock(&mu_);
  if (live_.erase(path) == 0) return absl::NotFoundError(absl::StrCat("unlink ", path));
  return absl::OkStatus();
}

absl::Status FaultFileSystem::Truncate(const std::string& path, uint64_t size) {
  MutexLock lock(&mu_);
  auto it = live_.find(path);
  if (it == live_.end()) return absl::NotFoundError(absl::StrCat("open ", path));
  Inode& inode = *it->second;
  if (size < inode.data.size()) inode.data.resize(size);
  // Truncate fsyncs the file.
  inode.synced = inode.data.size();
  return absl::OkStatus();
}

absl::Status FaultFileSystem::CreateDir(const std::string& dir) {
  MutexLock lock(&mu_);
  // Directories are created durably, with their parents (tests use one data directory).
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') dirs_.insert(dir.substr(0, i));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> FaultFileSystem::FileSize(const std::string& path) {
  MutexLock lock(&mu_);
  auto it = live_.find(path);
  if (it == live_.end()) return absl::NotFoundError(absl::StrCat("stat ", path));
  return it->second->data.size();
}

absl::StatusOr<std::unique_ptr<DirectoryLock>> FaultFileSystem::LockDir(const std::string& dir) {
  MutexLock lock(&mu_);
  if (!locked_dirs_.insert(dir).second) {
    return absl::FailedPreconditionError(absl::StrCat("data directory ", dir, " is in use"));
  }
  return std::unique_ptr<DirectoryLock>(new Lock(this, dir));
}

absl::Status FaultFileSystem::AppendTo(const std::shared_ptr<Inode>& inode, const std::string& path,
                                       const std::string& data) {
  MutexLock lock(&mu_);
  const uint64_t total = TotalBytesLocked();
  const uint64_t room = total >= space_limit_ ? 0 : space_limit_ - total;
  const size_t n = static_cast<size_t>(std::min<uint64_t>(room, data.size()));
  inode->data.append(data, 0, n);
  last_appended_ = inode;
  if (n < data.size()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("write ", path, ": No space left on device (injected)"));
  }
  return absl::OkStatus();
}

absl::Status FaultFileSystem::SyncInode(const std::shared_ptr<Inode>& inode,
                                        const std::string& path) {
  MutexLock lock(&mu_);
  if (failing_syncs_ > 0) {
    --failing_syncs_;
    return absl::InternalError(absl::StrCat("fdatasync ", path, ": Input/output error (injected)"));
  }
  inode->synced = inode->data.size();
  ++sync_count_;
  CountArmedSyncLocked();
  return absl::OkStatus();
}

uint64_t FaultFileSystem::TotalBytesLocked() const {
  uint64_t total = 0;
  for (const auto& [path, inode] : live_) total += inode->data.size();
  return total;
}

std::unique_ptr<FaultFileSystem> FaultFileSystem::CrashImage(const CrashOptions& options) const {
  MutexLock lock(&mu_);
  return CrashImageLocked(options);
}

void FaultFileSystem::CrashAfterSyncs(int count) {
  MutexLock lock(&mu_);
  armed_image_.reset();
  armed_syncs_left_ = count;
  if (count <= 0) {
    armed_syncs_left_ = -1;
    armed_image_ = CrashImageLocked(CrashOptions{});
  }
}

std::unique_ptr<FaultFileSystem> FaultFileSystem::TakeArmedCrashImage() {
  MutexLock lock(&mu_);
  return std::move(armed_image_);
}

void FaultFileSystem::CountArmedSyncLocked() {
  if (armed_syncs_left_ <= 0 || --armed_syncs_left_ > 0) return;
  armed_syncs_left_ = -1;
  armed_image_ = CrashImageLocked(CrashOptions{});
}

std::unique_ptr<FaultFileSystem> FaultFileSystem::CrashImageLocked(
    const CrashOptions& options) const {
  auto image = std::make_unique<FaultFileSystem>();
  image->dirs_ = dirs_;
  // One inode may have two durable names (renamed but only one directory synced); copies keep
  // them apart, which is what a crash leaves too.
  for (const auto& [path, inode] : durable_) {
    auto copy = std::make_shared<Inode>();
    uint64_t keep = inode->synced;
    if (inode == last_appended_) {
      keep = std::min<uint64_t>(inode->data.size(), keep + options.torn_tail_bytes);
    }
    copy->data = inode->data.substr(0, keep);
    copy->synced = copy->data.size();
    image->live_[path] = copy;
    image->durable_[path] = copy;
  }
  return image;
}

std::unique_ptr<FaultFileSystem> FaultFileSystem::Clone() const {
  MutexLock lock(&mu_);
  auto image = std::make_unique<FaultFileSystem>();
  image->dirs_ = dirs_;
  for (const auto& [path, inode] : live_) {
    auto copy = std::make_shared<Inode>();
    copy->data = inode->data;
    copy->synced = copy->data.size();
    image->live_[path] = copy;
    image->durable_[path] = copy;
  }
  return image;
}

void FaultFileSystem::FailSyncs(int count) {
  MutexLock lock(&mu_);
  failing_syncs_ = count;
}

void FaultFileSystem::SetSpaceLimit(uint64_t bytes) {
  MutexLock lock(&mu_);
  space_limit_ = bytes;
}

absl::Status FaultFileSystem::FlipBit(const std::string& path, uint64_t offset, int bit) {
  MutexLock lock(&mu_);
  auto it = live_.find(path);
  if (it == live_.end() || offset >= it->second->data.size() || bit < 0 || bit > 7) {
    return absl::OutOfRangeError(absl::StrCat("no byte ", offset, " in ", path));
  }
  it->second->data[offset] = static_cast<char>(it->second->data[offset] ^ (1 << bit));
  return absl::OkStatus();
}

std::string FaultFileSystem::Contents(const std::string& path) const {
  MutexLock lock(&mu_);
  auto it = live_.find(path);
  return it == live_.end() ? std::string() : it->second->data;
}

uint64_t FaultFileSystem::TotalBytes() const {
  MutexLock lock(&mu_);
  return TotalBytesLocked();
}

int FaultFileSystem::sync_count() const {
  MutexLock lock(&mu_);
  return sync_count_;
}

}  // namespace collide
