#include "store/store_testing.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "geom/same_shape.h"
#include "store/log_codec.h"
#include "store/record_format.h"
#include "store/store_files.h"

namespace collide {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = absl::StrCat(base != nullptr && *base ? base : "/tmp", "/collide-XXXXXX");
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp " << pattern << ": " << std::strerror(errno);
  }
  path_ = buffer.data();
}

TempDir::~TempDir() {
  // The data directory is flat, except for what a test creates below it.
  std::vector<std::string> stack{path_};
  std::vector<std::string> dirs;
  while (!stack.empty()) {
    std::string dir = stack.back();
    stack.pop_back();
    dirs.push_back(dir);
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) continue;
    while (struct dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      std::string path = dir + "/" + name;
      struct stat st;
      if (::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        stack.push_back(path);
      } else {
        ::unlink(path.c_str());
      }
    }
    ::closedir(d);
  }
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) ::rmdir(it->c_str());
}

uint64_t DirectoryBytes(const std::string& dir) {
  uint64_t total = 0;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return 0;
  while (struct dirent* e = ::readdir(d)) {
    struct stat st;
    std::string path = dir + "/" + e->d_name;
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      total += static_cast<uint64_t>(st.st_size);
    }
  }
  ::closedir(d);
  return total;
}

::testing::AssertionResult SameState(const SceneState& actual, const SceneState& expected) {
  if (actual.version != expected.version) {
    return ::testing::AssertionFailure()
           << "version " << actual.version << ", expected " << expected.version;
  }
  if (!(actual.clients == expected.clients)) {
    return ::testing::AssertionFailure() << "client marks differ";
  }
  if (actual.bodies.size() != expected.bodies.size()) {
    return ::testing::AssertionFailure()
           << actual.bodies.size() << " bodies, expected " << expected.bodies.size();
  }
  for (size_t i = 0; i < actual.bodies.size(); ++i) {
    const BodyState& a = actual.bodies[i];
    const BodyState& e = expected.bodies[i];
    if (a.id != e.id || !testing::SameShape(a.shape, e.shape) || !(a.pose == e.pose) ||
        a.category != e.category || a.mask != e.mask || a.kind != e.kind ||
        a.user_data != e.user_data) {
      return ::testing::AssertionFailure()
             << "body " << i << " (id " << a.id << ", expected id " << e.id << ") differs";
    }
  }
  return ::testing::AssertionSuccess();
}

DatabaseOptions CrashTestOptions(DurabilityPolicy policy) {
  DatabaseOptions options;
  options.durability = policy;
  options.sync_interval = std::chrono::milliseconds(20);
  options.segment_bytes = 16 << 10;
  options.snapshot_min_log_bytes = 8 << 10;
  options.snapshot_log_ratio = 1.0;
  options.max_log_bytes = 64 << 10;
  options.maintenance_interval = std::chrono::milliseconds(5);
  return options;
}

namespace {

UpdateBatch MoveBody1To(float x, std::optional<uint64_t> tick) {
  UpdateBatch batch;
  batch.tick = tick;
  batch.ops.push_back(SetPoseOp(1, Pose{.position = {x, 0, 0}}));
  return batch;
}

}  // namespace

absl::StatusOr<PoisonedLog> WritePoisonedDirectory(const std::string& dir) {
  {
    COLLIDE_ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(dir, DatabaseOptions{}));
    COLLIDE_RETURN_IF_ERROR(db->CreateScene("t", SceneOptions{.history_ticks = 8}));
    UpdateBatch create;
    create.ops.push_back(UpsertOp(BodyDesc{.id = 1, .shape = Sphere{1}}));
    COLLIDE_RETURN_IF_ERROR(db->ApplyAndWait("t", ClientTag{}, create).status());
    COLLIDE_RETURN_IF_ERROR(db->ApplyAndWait("t", ClientTag{}, MoveBody1To(1, 5)).status());
    COLLIDE_RETURN_IF_ERROR(db->Close());
  }
  PoisonedLog log;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    uint64_t first = 0;
    if (ParseSegmentFileName(entry.path().filename().string(), &first)) {
      if (!log.segment.empty()) return absl::InternalError("more than one log segment");
      log.segment = entry.path().string();
    }
  }
  if (log.segment.empty()) return absl::InternalError("no log segment");
  std::string tail;
  AppendRecord(4,
               EncodeUpdateRecord("t", ClientTag{.client_id = 7, .sequence = 1}, 3,
                                  MoveBody1To(2, std::numeric_limits<uint64_t>::max())),
               &tail);
  AppendRecord(5, EncodeUpdateRecord("t", ClientTag{}, 4, MoveBody1To(9, std::nullopt)), &tail);
  log.offset = std::filesystem::file_size(log.segment);
  std::ofstream out(log.segment, std::ios::binary | std::ios::app);
  out << tail;
  if (!out.good()) return absl::InternalError("cannot append to the log segment");
  return log;
}

}  // namespace collide
