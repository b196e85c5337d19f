#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "base/mutex.h"
#include "grpcpp/alarm.h"
#include "scene/scene.h"

namespace collide {

/// Waits, without blocking any thread, until a scene's version reaches `min_version`, then runs
/// `done(OkStatus())`; once `deadline` passes first, runs `done` with DEADLINE_EXCEEDED
/// (`min_version: scene "arena" is at version 7, not 9, after waiting 250 ms`).
///
/// How: a gRPC callback alarm checks the version, so a waiting query holds no thread and no lock
/// between checks. The wait registers with the scene's VersionSignal: after each applied batch
/// the writer cancels the alarm, which runs the check at once on a gRPC thread (the writer does
/// nothing more, and nothing at all when no query waits). The alarm also fires on its own every
/// poll interval (0.25 ms at first, doubling to at most 2 ms), for versions reached other than
/// by an applied batch and for the deadline. `done` runs on a gRPC thread (or at once, on the
/// calling thread, when the version is already there). The wait deletes itself after `done`.
class VersionWait {
 public:
  /// Starts a wait (or runs `done` at once when the scene is already at `min_version`).
  static void Start(std::shared_ptr<const Scene> scene, uint64_t min_version,
                    std::chrono::system_clock::time_point deadline,
                    std::function<void(absl::Status)> done);

 private:
  VersionWait(std::shared_ptr<const Scene> scene, uint64_t min_version,
              std::chrono::system_clock::time_point deadline,
              std::function<void(absl::Status)> done);
  // Checks the version; finishes or schedules the next check.
  void Check();
  // From the scene's VersionSignal (the writer's thread): runs the check now.
  void Wake();

  std::shared_ptr<const Scene> scene_;
  const uint64_t min_version_;
  const std::chrono::system_clock::time_point started_;
  const std::chrono::system_clock::time_point deadline_;
  std::function<void(absl::Status)> done_;
  std::chrono::microseconds interval_{250};
  // The registration with the scene's VersionSignal.
  uint64_t signal_id_ = 0;
  // Between Wake (the writer's thread) and Check (a gRPC thread).
  Mutex mu_;
  // A fresh alarm per check (an alarm is not re-armed from inside its own callback).
  std::unique_ptr<grpc::Alarm> alarm_ ABSL_GUARDED_BY(mu_);
  // Woken since the check began: the next check is at once.
  bool woken_ ABSL_GUARDED_BY(mu_) = false;
};

/// The time a query asking for a minimum version may wait until: the call's deadline, at most
/// `max_wait_ms` from now.
std::chrono::system_clock::time_point VersionWaitDeadline(
    std::chrono::system_clock::time_point call_deadline, uint32_t max_wait_ms);

}  // namespace collide
