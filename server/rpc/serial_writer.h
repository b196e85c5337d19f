#pragma once

#include <memory>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "grpcpp/support/status.h"
#include "server/infra/stream_registry.h"
#include "server/rpc/stream_lifecycle.h"

namespace collide {

/// The write side of the server-streaming reactors (Watch, ExportScene): messages pulled one at
/// a time from the derived reactor (NextMessage), the next one taken only once the previous
/// write completed, in the call's order (StreamCall: no write after a cancel, the call finished
/// exactly once, the registry told of every write).
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

  /// Starts the next write when none is in flight and the call is not ending, or ends the call
  /// once NextMessage says kEnd. Thread-safe; never call it holding a lock NextMessage takes.
  void Pump() ABSL_LOCKS_EXCLUDED(mu_);
  /// Ends the call with `status` (a refused start).
  void End(const grpc::Status& status) { call_.End(status); }

  /// The next message, encoded into `*out` (empty when called), or kWait / kEnd. Called with the
  /// writer's lock held, never while a write is in flight.
  virtual Step NextMessage(grpc::ByteBuffer* out) = 0;
  /// The status the call ends with after NextMessage said kEnd.
  virtual grpc::Status EndStatus() = 0;
  /// Called when a write completed (before the next one is taken). Default: nothing.
  virtual void Sent() {}

 private:
  StreamCall<grpc::ServerWriteReactor<grpc::ByteBuffer>> call_;
  Mutex mu_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  // The encoding of the message being written (changed only while no write is in flight).
  grpc::ByteBuffer out_;
};

}  // namespace collide
