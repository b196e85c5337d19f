#include "client/cpp/scene_move.h"

#include <deque>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"

namespace collide::client {
namespace {

// The export's messages on their way to the import: the export's thread pushes, the import's
// pulls; at most kCapacity wait, so the move holds a few chunks in memory whatever the scene's
// size.
class MessageQueue {
 public:
  static constexpr size_t kCapacity = 8;

  // Waits for room; CANCELLED once the importer stopped (the export is then cancelled).
  absl::Status Push(const v1::SceneExportMessage& message) {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(this, &MessageQueue::CanPush));
    if (closed_) return absl::CancelledError("the import ended");
    messages_.push_back(message);
    return absl::OkStatus();
  }
  // The export ended with `status` (OK: after its trailer).
  void Finish(absl::Status status) {
    absl::MutexLock lock(&mu_);
    finished_ = true;
    export_status_ = std::move(status);
  }
  // The next message: true, false after the last one, or the export's error.
  absl::StatusOr<bool> Pop(v1::SceneExportMessage* message) {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(this, &MessageQueue::CanPop));
    if (!messages_.empty()) {
      *message = std::move(messages_.front());
      messages_.pop_front();
      return true;
    }
    if (!export_status_.ok()) return export_status_;
    return false;
  }
  // The importer is done: a waiting or later Push fails.
  void Close() {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }

 private:
  bool CanPush() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return closed_ || messages_.size() < kCapacity;
  }
  bool CanPop() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return finished_ || !messages_.empty(); }

  absl::Mutex mu_;
  std::deque<v1::SceneExportMessage> messages_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status export_status_ ABSL_GUARDED_BY(mu_);
};

// What an export's header and trailer said.
struct ExportSummary {
  uint64_t version = 0;
  uint64_t tick = 0;
  uint64_t bodies = 0;
  uint64_t chunks = 0;
  uint32_t crc32c = 0;
};

void NoteMessage(const v1::SceneExportMessage& message, ExportSummary* summary) {
  if (message.has_header()) {
    summary->version = message.header().version();
    summary->tick = message.header().tick();
  } else if (message.has_trailer()) {
    summary->bodies = message.trailer().body_count();
    summary->chunks = message.trailer().chunk_count();
    summary->crc32c = message.trailer().crc32c();
  }
}

absl::Status Annotate(const absl::Status& status, absl::string_view prefix) {
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

class Stopwatch {
 public:
  absl::Duration Lap() {
    const absl::Time now = absl::Now();
    const absl::Duration lap = now - last_;
    last_ = now;
    return lap;
  }

 private:
  absl::Time last_ = absl::Now();
};

}  // namespace

absl::StatusOr<MoveReport> MoveScene(Client& source, Client& destination,
                                     std::string_view scene_view, std::string_view destination_view,
                                     const MoveOptions& options) {
  const std::string scene(scene_view);
  const std::string destination_address(destination_view);
  MoveReport report;
  report.scene = std::string(scene);
  report.destination = std::string(destination_address);
  const absl::Time started = absl::Now();
  Stopwatch watch;

  // 1. Checks that change nothing.
  absl::StatusOr<v1::SceneInfo> at_source = source.GetScene(scene, options.call);
  if (!at_source.ok()) return Annotate(at_source.status(), "source: ");
  if (!at_source->moved_to().empty() && at_source->moved_to() != destination_address) {
    return absl::FailedPreconditionError(
        absl::StrCat("source: scene \"", scene, "\" is already moving to ", at_source->moved_to(),
                     " (a failed move? clear the mark with `collide scene move SCENE --clear`)"));
  }
  absl::StatusOr<v1::SceneInfo> at_destination = destination.GetScene(scene, options.call);
  if (at_destination.ok() && !options.replace) {
    return absl::AlreadyExistsError(absl::StrCat(
        "destination: scene \"", scene, "\" already exists there (replace it with --replace)"));
  }
  if (!at_destination.ok() && !absl::IsNotFound(at_destination.status())) {
    return Annotate(at_destination.status(), "destination: ");
  }
  report.steps.push_back(MoveStep{
      .name = "check",
      .duration = watch.Lap(),
      .detail = absl::StrCat("source holds version ", at_source->stats().version(), ", ",
                             at_source->stats().body_count(), " bodies; destination ",
                             at_destination.ok() ? "holds one (to be replaced)" : "holds none")});

  // 2. Read-only at the source, durably.
  const absl::Time pause_started = absl::Now();
  absl::StatusOr<v1::SceneInfo> marked =
      source.SetSceneMoving(scene, destination_address, options.call);
  if (!marked.ok()) return Annotate(marked.status(), "source: marking the scene: ");
  report.steps.push_back(MoveStep{
      .name = "mark",
      .duration = watch.Lap(),
      .detail = absl::StrCat("source refuses writes from version ", marked->stats().version(),
                             " on, naming ", destination_address)});

  bool imported = false;
  // Steps 3 and 4; an error is rolled back below.
  const absl::Status moved = [&]() -> absl::Status {
    // 3. Export streamed into import.
    ExportSummary exported;
    MessageQueue queue;
    std::thread exporter([&] {
      queue.Finish(source.ExportScene(
          scene,
          [&](const v1::SceneExportMessage& message) {
            NoteMessage(message, &exported);
            return queue.Push(message);
          },
          options.max_bodies_per_chunk, options.call));
    });
    absl::StatusOr<v1::SceneInfo> result =
        destination.ImportScene([&](v1::SceneExportMessage* message) { return queue.Pop(message); },
                                scene, options.replace, options.call);
    queue.Close();
    exporter.join();
    if (!result.ok()) return Annotate(result.status(), "transfer: ");
    imported = true;
    report.version = exported.version;
    report.tick = exported.tick;
    report.bodies = exported.bodies;
    report.chunks = exported.chunks;
    report.crc32c = exported.crc32c;
    const absl::Duration transfer = watch.Lap();
    report.bodies_per_second =
        transfer > absl::ZeroDuration()
            ? static_cast<double>(exported.bodies) / absl::ToDoubleSeconds(transfer)
            : 0;
    report.steps.push_back(MoveStep{
        .name = "transfer",
        .duration = transfer,
        .detail = absl::StrFormat("exported version %d (%d bodies, %d chunks, crc32c %08x) into "
                                  "the destination: %.0f bodies/s",
                                  exported.version, exported.bodies, exported.chunks,
                                  exported.crc32c, report.bodies_per_second)});

    // 4. The destination holds what was exported.
    if (result->stats().version() != exported.version ||
        static_cast<uint64_t>(result->stats().body_count()) != exported.bodies) {
      return absl::DataLossError(
          absl::StrCat("verify: the destination holds version ", result->stats().version(),
                       " with ", result->stats().body_count(), " bodies; the export was version ",
                       exported.version, " with ", exported.bodies));
    }
    std::string detail = absl::StrCat("destination holds version ", exported.version, ", ",
                                      exported.bodies, " bodies");
    if (options.verify) {
      ExportSummary again;
      absl::Status status = destination.ExportScene(
          scene,
          [&](const v1::SceneExportMessage& message) {
            NoteMessage(message, &again);
            return absl::OkStatus();
          },
          options.max_bodies_per_chunk, options.call);
      if (!status.ok()) return Annotate(status, "verify: exporting from the destination: ");
      if (again.version != exported.version || again.bodies != exported.bodies ||
          again.crc32c != exported.crc32c) {
        return absl::DataLossError(absl::StrFormat(
            "verify: the destination exports version %d, %d bodies, crc32c %08x; the source "
            "exported version %d, %d bodies, crc32c %08x",
            again.version, again.bodies, again.crc32c, exported.version, exported.bodies,
            exported.crc32c));
      }
      absl::StrAppend(&detail, absl::StrFormat(", crc32c %08x as exported", again.crc32c));
    }
    report.steps.push_back(MoveStep{.name = "verify", .duration = watch.Lap(), .detail = detail});
    return absl::OkStatus();
  }();

  if (!moved.ok()) {
    // The source stays authoritative: drop the copy (if the import made one), then accept
    // writes again.
    std::string detail;
    if (imported) {
      absl::Status dropped = destination.DeleteScene(scene, options.call);
      absl::StrAppend(&detail, "destination copy ",
                      dropped.ok() ? "deleted" : absl::StrCat("NOT deleted: ", dropped.ToString()),
                      "; ");
    }
    absl::StatusOr<v1::SceneInfo> cleared = source.ClearSceneMoving(scene, options.call);
    absl::StrAppend(&detail, "source mark ",
                    cleared.ok() ? "cleared: it accepts writes again"
                                 : absl::StrCat("NOT cleared: ", cleared.status().ToString()));
    report.steps.push_back(MoveStep{.name = "rollback", .duration = watch.Lap(), .detail = detail});
    return absl::Status(moved.code(), absl::StrCat("move of scene \"", scene, "\" failed at ",
                                                   moved.message(), "; rolled back: ", detail));
  }
  report.pause = absl::Now() - pause_started;

  // 5. The destination is the owner now.
  if (absl::Status status = source.DeleteScene(scene, options.call); !status.ok()) {
    return Annotate(status, absl::StrCat("delete: the destination holds scene \"", scene,
                                         "\" at version ", report.version,
                                         " but the source could not delete its copy (it stays "
                                         "read-only; delete it again): "));
  }
  report.steps.push_back(MoveStep{
      .name = "delete",
      .duration = watch.Lap(),
      .detail =
          absl::StrCat("source deleted its copy; its writers are told ", destination_address)});
  report.total = absl::Now() - started;
  return report;
}

std::string MoveTranscript(const MoveReport& report) {
  std::string text = absl::StrCat("moving scene ", report.scene, " to ", report.destination, "\n");
  for (const MoveStep& step : report.steps) {
    absl::StrAppend(&text, absl::StrFormat("  %-8s %9.1f ms  %s\n", step.name,
                                           absl::ToDoubleMilliseconds(step.duration), step.detail));
  }
  absl::StrAppend(
      &text, absl::StrFormat("moved scene %s (version %d, %d bodies) to %s: writes paused "
                             "%.1f ms, %.0f bodies/s, %.1f ms in all",
                             report.scene, report.version, report.bodies, report.destination,
                             absl::ToDoubleMilliseconds(report.pause), report.bodies_per_second,
                             absl::ToDoubleMilliseconds(report.total)));
  return text;
}

}  // namespace collide::client
