#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "base/mutex.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/status.h"
#include "server/convert/status_convert.h"
#include "server/infra/stream_registry.h"

namespace collide {

/// The order of one stream call's operations, shared by every stream rpc (UpdateStream,
/// QueryStream, Watch, ExportScene, ImportScene): at most one read and one write in flight, no
/// read started once the call is ending and no write once it is cancelled (a reactor that ends
/// the call may still write what it owes, such as the acks before a bad message: the call waits
/// for that write), and the call finished exactly once, when
/// nothing is in flight and no asynchronous work holds it (a wait for a version, the store's
/// callbacks, an import being logged). The call's registration in the StreamRegistry is told of
/// every write (and of every read its client is expected to answer), which the stall watchdog
/// reads, and released just before the call finishes.
///
/// A call ends when its reactor asks (End: a half-close answered, a message that does not
/// parse, the last message written), when a write fails, or when gRPC cancels it (Cancelled: the
/// client went away, a deadline, the watchdog); then it finishes as soon as it is idle. After a
/// cancel or a failed write the status is CANCELLED whatever End asked for. Thread-safe: reads,
/// writes, completions and the asynchronous work's callbacks may run on any thread.
///
/// The state machine; StreamCall (below) drives a reactor with it.
class StreamState {
 public:
  explicit StreamState(std::unique_ptr<StreamHandle> stream) : stream_(std::move(stream)) {}
  StreamState(const StreamState&) = delete;
  StreamState& operator=(const StreamState&) = delete;

  /// Whether a read may start (none in flight, the call not ending); marks it in flight.
  /// `awaited`: the client is expected to send (an import): the watchdog ends a call whose read
  /// waits past the stall timeout.
  bool BeginRead(bool awaited) ABSL_LOCKS_EXCLUDED(mu_);
  /// Whether a write of `bytes` may start; marks it in flight.
  bool BeginWrite(size_t bytes) ABSL_LOCKS_EXCLUDED(mu_);
  /// The read in flight completed. Returns whether the reactor should act on it (false once the
  /// call is ending: the read's message, if any, is dropped).
  bool EndRead() ABSL_LOCKS_EXCLUDED(mu_);
  /// The write in flight completed (`ok` false: it failed, and the call ends). Returns whether
  /// the reactor should go on (false once the call is ending).
  bool EndWrite(bool ok) ABSL_LOCKS_EXCLUDED(mu_);
  /// gRPC cancelled the call.
  void Cancel() ABSL_LOCKS_EXCLUDED(mu_);
  /// Asynchronous work keeps the call open until Release.
  void Hold() ABSL_LOCKS_EXCLUDED(mu_);
  void Release() ABSL_LOCKS_EXCLUDED(mu_);
  /// Ends the call with `status` (the first End wins). A read in flight is waited for: end a
  /// call from a read's completion, or when none is in flight.
  void End(const grpc::Status& status) ABSL_LOCKS_EXCLUDED(mu_);
  /// As End, without waiting for a read in flight: the call may finish while it is pending, and
  /// gRPC completes it with ok false afterwards (before OnDone). For a bidirectional stream that
  /// keeps a read open for its client's next message at any time (Interest), ended by its server.
  void EndWithReadOpen(const grpc::Status& status) ABSL_LOCKS_EXCLUDED(mu_);
  /// Whether the call is ending (End, Cancel or a failed write came).
  bool ending() const ABSL_LOCKS_EXCLUDED(mu_);
  /// The status to finish the call with, once: when it is ending and idle. The registration is
  /// released first.
  std::optional<grpc::Status> TakeFinish() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const std::unique_ptr<StreamHandle> stream_;
  mutable Mutex mu_;
  bool reading_ ABSL_GUARDED_BY(mu_) = false;
  bool awaited_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  int holds_ ABSL_GUARDED_BY(mu_) = 0;
  // Cancelled, or a write failed: the client cannot be answered any more.
  bool broken_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<grpc::Status> end_ ABSL_GUARDED_BY(mu_);
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  // EndWithReadOpen: the read in flight is not waited for.
  bool read_open_ ABSL_GUARDED_BY(mu_) = false;
};

/// A reactor's StreamState, and the gRPC operations it allows. `Reactor` is the reactor's gRPC
/// base (grpc::ServerBidiReactor, ServerWriteReactor or ServerReadReactor of ByteBuffers); the
/// reactor calls the On* forwards from its own OnReadDone, OnWriteDone and OnCancel, and uses
/// Read, Write, Hold/Release and End instead of StartRead, StartWrite and Finish.
///
/// Any of OnReadDone, OnWriteDone, OnCancel, Release and End may finish the call, after which
/// gRPC may delete the reactor on another thread: a callback that goes on touching the reactor
/// after one of them holds the call for its duration (Hold first, Release as its last line). A
/// reactor that keeps its own "writing" flag (to pull its next message) clears it only after
/// OnWriteDone: another thread's Write between the two would be refused as a second write.
template <typename Reactor>
class StreamCall {
 public:
  StreamCall(Reactor* reactor, std::unique_ptr<StreamHandle> stream)
      : reactor_(reactor), state_(std::move(stream)) {}

  /// Starts reading into `*in` unless a read is in flight or the call is ending; returns whether
  /// it started.
  bool Read(grpc::ByteBuffer* in, bool awaited = false) {
    if (!state_.BeginRead(awaited)) return false;
    reactor_->StartRead(in);
    return true;
  }
  /// Starts writing `*out` unless the call is ending; returns whether it started. `*out` stays
  /// gRPC's until the write completes.
  bool Write(grpc::ByteBuffer* out) {
    if (!state_.BeginWrite(out->Length())) return false;
    reactor_->StartWrite(out);
    return true;
  }
  /// Keeps the call open for asynchronous work until Release.
  void Hold() { state_.Hold(); }
  /// Ends a Hold; finishes the call if it was waiting for it.
  void Release() {
    state_.Release();
    MaybeFinish();
  }
  /// Ends the call with `status` as soon as it is idle.
  void End(const grpc::Status& status) {
    state_.End(status);
    MaybeFinish();
  }
  /// Ends the call with `status` as soon as no write or hold is in flight, a read in flight
  /// notwithstanding (StreamState::EndWithReadOpen).
  void EndWithReadOpen(const grpc::Status& status) {
    state_.EndWithReadOpen(status);
    MaybeFinish();
  }
  /// Whether the call is ending.
  bool ending() const { return state_.ending(); }

  /// From OnReadDone: whether the reactor should act on the read.
  bool OnReadDone() {
    const bool go_on = state_.EndRead();
    MaybeFinish();
    return go_on;
  }
  /// From OnWriteDone: whether the reactor should go on.
  bool OnWriteDone(bool ok) {
    const bool go_on = state_.EndWrite(ok);
    MaybeFinish();
    return go_on;
  }
  /// From OnCancel.
  void OnCancel() {
    state_.Cancel();
    MaybeFinish();
  }

 private:
  void MaybeFinish() {
    if (std::optional<grpc::Status> status = state_.TakeFinish(); status.has_value()) {
      reactor_->Finish(*status);
    }
  }

  Reactor* const reactor_;
  StreamState state_;
};

/// A stream refused before it starts (authentication, limits, a request that does not parse):
/// finishes at once with `status`. `Reactor` is the rpc's gRPC reactor type.
template <typename Reactor>
class Refused final : public Reactor {
 public:
  explicit Refused(const absl::Status& status) { this->Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

}  // namespace collide
