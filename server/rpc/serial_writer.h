#pragma once

#include <cstddef>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "grpcpp/support/status.h"
#include "server/infra/stream_registry.h"

namespace collide {

/// The write side shared by the server-streaming reactors (Watch, ExportScene): one message in
/// flight at a time, the next one taken only once the previous write completed, each write
/// reported to the stream's StreamHandle (so the registry's watchdog ends a stream whose client
/// reads nothing), and the call finished exactly once: after a cancel, no write starts, and a
/// write in flight when the cancel came finishes the call from OnWriteDone (whether or not it
/// got through).
///
/// A derived reactor supplies its messages (NextMessage, called under the writer's lock, so
/// that Pump may be called from any thread), the status its call ends with once they are
/// exhausted (EndStatus), and its OnDone (which deletes it).
class SerialWriter : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  void OnWriteDone(bool ok) final;
  void OnCancel() final;

 protected:
  /// What NextMessage did.
  enum class Step {
    kWrite,  ///< Encoded a message into `*out`: it is written now.
    kWait,   ///< Nothing to write yet: a later Pump writes it.
    kEnd,    ///< Nothing more: the call finishes with EndStatus().
  };

  /// `stream` is the call's registration (null when streams are not tracked).
  explicit SerialWriter(std::unique_ptr<StreamHandle> stream);
  ~SerialWriter() override = default;

  /// Starts the next write when none is in flight (and the call is neither finished nor
  /// cancelled), or finishes the call once NextMessage says kEnd. Thread-safe; never call it
  /// holding a lock NextMessage takes.
  void Pump() ABSL_LOCKS_EXCLUDED(mu_);
  /// Finishes the call once (later calls do nothing).
  void FinishOnce(const grpc::Status& status) ABSL_LOCKS_EXCLUDED(mu_);

  /// The next message, encoded into `*out` (empty when called), or kWait / kEnd. Called with the
  /// writer's lock held, never while a write is in flight.
  virtual Step NextMessage(grpc::ByteBuffer* out) = 0;
  /// The status the call ends with after NextMessage said kEnd.
  virtual grpc::Status EndStatus() = 0;
  /// Called when a write completed (before the next one is taken). Default: nothing.
  virtual void Sent() {}

 private:
  const std::unique_ptr<StreamHandle> stream_;
  absl::Mutex mu_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;  // OnCancel ran: no write starts after it
  // The encoding of the message being written (changed only while no write is in flight).
  grpc::ByteBuffer out_;
};

}  // namespace collide
