#include "server/rpc/version_wait.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"

namespace collide {

void VersionWait::Start(std::shared_ptr<const Scene> scene, uint64_t min_version,
                        std::chrono::system_clock::time_point deadline,
                        std::function<void(absl::Status)> done) {
  if (scene->version() >= min_version) {
    done(absl::OkStatus());
    return;
  }
  // Owned by its own alarm callbacks from here on. Registered before its first check reads the
  // version: a batch applied after that read wakes it.
  auto* wait = new VersionWait(std::move(scene), min_version, deadline, std::move(done));
  wait->signal_id_ = wait->scene_->version_signal().Add([wait] { wait->Wake(); });
  wait->Check();
}

void VersionWait::Wake() {
  MutexLock lock(&mu_);
  woken_ = true;
  // Runs the pending alarm's callback now (with ok = false; Check ignores it). gRPC hands a
  // callback alarm's function to its executor, never to the thread that cancels, so Check does
  // not run here (under mu_ and the signal's lock). An alarm that already fired is left as it
  // is: its check sees woken_.
  if (alarm_ != nullptr) alarm_->Cancel();
}

VersionWait::VersionWait(std::shared_ptr<const Scene> scene, uint64_t min_version,
                         std::chrono::system_clock::time_point deadline,
                         std::function<void(absl::Status)> done)
    : scene_(std::move(scene)),
      min_version_(min_version),
      started_(std::chrono::system_clock::now()),
      deadline_(deadline),
      done_(std::move(done)) {}

void VersionWait::Check() {
  {
    MutexLock lock(&mu_);
    woken_ = false;
  }
  const uint64_t version = scene_->version();
  const auto now = std::chrono::system_clock::now();
  if (version >= min_version_ || now >= deadline_) {
    absl::Status status;
    if (version < min_version_) {
      status = absl::DeadlineExceededError(absl::StrFormat(
          "min_version: scene \"%s\" is at version %d, not %d, after waiting %d ms", scene_->name(),
          version, min_version_,
          std::chrono::duration_cast<std::chrono::milliseconds>(now - started_).count()));
    }
    // No wake runs or will run once Remove returns.
    scene_->version_signal().Remove(signal_id_);
    std::function<void(absl::Status)> done = std::move(done_);
    // The alarm's callback is running (or none is set): deleting is safe, and done may free
    // what the wait points into.
    delete this;
    done(status);
    return;
  }
  auto next = std::min<std::chrono::system_clock::time_point>(now + interval_, deadline_);
  interval_ = std::min<std::chrono::microseconds>(interval_ * 2, std::chrono::milliseconds(2));
  MutexLock lock(&mu_);
  // A batch applied since the version was read: check again at once.
  if (woken_) next = now;
  // Releases the previous alarm, whose callback may be the one running now (gRPC keeps it alive
  // until the callback returns).
  alarm_ = std::make_unique<grpc::Alarm>();
  // The callback may run on another thread as soon as Set is called; it begins with taking mu_,
  // which this thread releases last.
  alarm_->Set(next, [this](bool) { Check(); });
}

std::chrono::system_clock::time_point VersionWaitDeadline(
    std::chrono::system_clock::time_point call_deadline, uint32_t max_wait_ms) {
  return std::min(call_deadline,
                  std::chrono::system_clock::now() + std::chrono::milliseconds(max_wait_ms));
}

}  // namespace collide
