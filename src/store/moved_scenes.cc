#include "store/moved_scenes.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "collide/v1/storage.pb.h"
#include "scene/move_destination.h"
#include "scene/scene_name.h"
#include "store/record_file.h"
#include "store/record_format.h"
#include "store/store_files.h"

namespace collide {

namespace pb = ::collide::storage::v1;

MovedScenes::MovedScenes(FileSystem* fs, std::string dir) : fs_(fs), dir_(std::move(dir)) {
  const std::string path = JoinPath(dir_, kFileName);
  absl::StatusOr<std::string> data = fs_->ReadFile(path);
  if (!data.ok()) {
    if (!absl::IsNotFound(data.status())) problem_ = std::string(data.status().message());
    return;
  }
  absl::StatusOr<RecordView> record = ReadSingleRecord(*data, path);
  pb::MovedScenes message;
  if (!record.ok()) {
    problem_ = std::string(record.status().message());
    return;
  }
  if (!message.ParseFromArray(record->payload.data(), static_cast<int>(record->payload.size()))) {
    problem_ = absl::StrCat(path, ": not a list of moved scenes");
    return;
  }
  MutexLock lock(&mu_);
  for (const pb::MovedScenes::Entry& entry : message.scenes()) {
    // Names and destinations were checked when they were written; a file that passed its
    // checksum but holds what no server writes is dropped whole, like a damaged one.
    if (!ValidateSceneName(entry.scene()).ok() ||
        !ValidateMoveDestination(entry.destination()).ok() ||
        destinations_.size() >= kMaxMovedScenes) {
      destinations_.clear();
      order_.clear();
      problem_ = absl::StrCat(path, ": holds an entry no server writes (scene \"",
                              entry.scene().substr(0, 128), "\")");
      return;
    }
    auto [place, inserted] = destinations_.insert_or_assign(entry.scene(), entry.destination());
    if (inserted) order_.push_back(entry.scene());
  }
}

std::string MovedScenes::Find(absl::string_view scene) const {
  MutexLock lock(&mu_);
  auto it = destinations_.find(scene);
  return it == destinations_.end() ? std::string() : it->second;
}

size_t MovedScenes::size() const {
  MutexLock lock(&mu_);
  return destinations_.size();
}

absl::Status MovedScenes::Add(absl::string_view scene, absl::string_view destination) {
  MutexLock lock(&mu_);
  auto [place, inserted] =
      destinations_.insert_or_assign(std::string(scene), std::string(destination));
  if (inserted) order_.push_back(std::string(scene));
  while (order_.size() > kMaxMovedScenes) {
    destinations_.erase(order_.front());
    order_.pop_front();
  }
  return WriteLocked();
}

absl::Status MovedScenes::Forget(absl::string_view scene) {
  MutexLock lock(&mu_);
  auto it = destinations_.find(scene);
  if (it == destinations_.end()) return absl::OkStatus();
  destinations_.erase(it);
  order_.erase(std::find(order_.begin(), order_.end(), scene));
  return WriteLocked();
}

absl::Status MovedScenes::WriteLocked() {
  pb::MovedScenes message;
  for (const std::string& scene : order_) {
    pb::MovedScenes::Entry* entry = message.add_scenes();
    entry->set_scene(scene);
    entry->set_destination(destinations_.at(scene));
  }
  const std::string path = JoinPath(dir_, kFileName);
  if (order_.empty()) {
    // Nothing to remember: no file (a record's payload must not be empty).
    absl::Status deleted = fs_->Delete(path);
    if (!deleted.ok() && !absl::IsNotFound(deleted)) return deleted;
    return fs_->SyncDir(dir_);
  }
  return WriteRecordFile(fs_, dir_, kFileName, 0, message.SerializeAsString()).status();
}

}  // namespace collide
