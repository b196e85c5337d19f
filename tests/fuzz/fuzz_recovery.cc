// Fuzz target: the store's recovery reader over an arbitrary data directory
// (tests/fuzz/CMakeLists.txt). The input is a list of records (fuzz_input.h), one per file:
// `<name length: 1 byte><name><contents>`. The files are written into an in-memory file system
// (FaultFileSystem) and RecoverDirectory runs over it; each file's contents also go straight to
// the segment scanner and the record and snapshot decoders. Any outcome is fine but a crash, a
// sanitizer report, or a recovered scene that breaks its own invariants (a snapshot of it must
// decode and restore to the same state).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz/fuzz_input.h"
#include "store/fault_file_system.h"
#include "store/log_codec.h"
#include "store/record_format.h"
#include "store/recovery.h"

namespace collide::fuzz {
namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

void DecodeDirectly(absl::string_view contents) {
  SegmentScan scan = ScanSegment(contents, 1);
  Check(scan.valid_bytes <= contents.size());
  for (const RecordView& record : scan.records) {
    (void)DecodeLogRecord(record.payload);
    (void)DecodeSnapshot(record.payload);
  }
  (void)ReadSingleRecord(contents, "fuzz");
  (void)DecodeLogRecord(contents);
  (void)DecodeSnapshot(contents);
}

}  // namespace
}  // namespace collide::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace collide;
  const std::string dir = "/data";
  FaultFileSystem fs;
  fuzz::Check(fs.CreateDir(dir).ok());
  fuzz::RecordReader reader(absl::string_view(reinterpret_cast<const char*>(data), size));
  for (int i = 0; i < 8; ++i) {
    auto record = reader.Next();
    if (!record) break;
    absl::string_view bytes = record->second;
    if (bytes.empty()) continue;
    const size_t name_length = static_cast<uint8_t>(bytes[0]);
    bytes.remove_prefix(1);
    if (name_length == 0 || name_length > bytes.size()) continue;
    const std::string name(bytes.substr(0, name_length));
    if (name.find('/') != std::string::npos || name == "." || name == "..") continue;
    const absl::string_view contents = bytes.substr(name_length);
    fuzz::DecodeDirectly(contents);
    auto file = fs.Create(JoinPath(dir, name));
    if (!file.ok()) continue;
    (void)(*file)->Append(contents);
    (void)(*file)->Sync();
    (void)(*file)->Close();
  }
  (void)fs.SyncDir(dir);
  absl::StatusOr<RecoveredState> state = RecoverDirectory(&fs, dir);
  if (!state.ok()) return 0;
  for (const RecoveredScene& recovered : state->scenes) {
    fuzz::Check(recovered.scene != nullptr);
    const Scene& scene = *recovered.scene;
    const SceneState snapshot = scene.CaptureState();
    const std::string encoded =
        EncodeSnapshot(scene.name(), scene.options(), recovered.create_sequence, snapshot);
    absl::StatusOr<DecodedSnapshot> decoded = DecodeSnapshot(encoded);
    fuzz::Check(decoded.ok());
    absl::StatusOr<std::unique_ptr<Scene>> restored =
        Scene::Restore(scene.name(), decoded->options, decoded->state);
    fuzz::Check(restored.ok());
    fuzz::Check((*restored)->version() == scene.version());
    fuzz::Check((*restored)->Stats().body_count == scene.Stats().body_count);
  }
  return 0;
}
