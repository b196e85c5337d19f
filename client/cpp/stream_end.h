#pragma once

#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "client/cpp/grpc_status.h"

namespace collide::client {

/// The end of a gRPC stream: its Finish is called exactly once, by whichever thread gets there
/// first, and every later caller gets the same final status.
class StreamEnd {
 public:
  /// The final status, once Finish has run.
  std::optional<absl::Status> status() const {
    absl::MutexLock lock(&mu_);
    if (!finished_) return std::nullopt;
    return status_;
  }

  /// Calls `stream->Finish()` the first time; returns the status it gave.
  template <typename Stream>
  absl::Status FinishOnce(Stream* stream) {
    absl::MutexLock lock(&mu_);
    if (!finished_) {
      status_ = FromGrpcStatus(stream->Finish());
      finished_ = true;
    }
    return status_;
  }

  /// The status of a stream that ended while answers were expected: its final status, or
  /// UNAVAILABLE `message` when it ended cleanly.
  template <typename Stream>
  absl::Status Ended(Stream* stream, absl::string_view message) {
    absl::Status status = FinishOnce(stream);
    if (!status.ok()) return status;
    return absl::UnavailableError(message);
  }

 private:
  mutable absl::Mutex mu_;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace collide::client
