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

/// What a serial writer's NextMessage did.
enum class WriteStep {
  kWrite,  ///< Encoded a message into `*out`: it is written now.
  kWait,   ///< Nothing to write yet: a later Pump writes it.
  kEnd,    ///< Nothing more: the call finishes with EndStatus().
};

/// The write side of the reactors that stream what a producer queues (Watch, ExportScene, and
/// the bidirectional Interest): messages pulled one at a time from the derived reactor
/// (NextMessage), the next one taken only once the previous write completed, in the call's order
/// (StreamCall: no write after a cancel, the call finished exactly once, the registry told of
/// every write). `Base` is the reactor's gRPC base: grpc::ServerWriteReactor<ByteBuffer>
/// (SerialWriter) or grpc::ServerBidiReactor<ByteBuffer, ByteBuffer> (BidiSerialWriter, whose
/// derived reactor also reads through call()).
///
/// A derived reactor supplies its messages (NextMessage, called under the writer's lock, so
/// that Pump may be called from any thread), the status its call ends with once they are
/// exhausted (EndStatus), and its OnDone (which deletes it).
template <typename Base>
class SerialWriterOf : public Base {
 public:
  void OnWriteDone(bool ok) final;
  void OnCancel() final;

 protected:
  using Step = WriteStep;

  /// `stream` is the call's registration (null when streams are not tracked).
  explicit SerialWriterOf(std::unique_ptr<StreamHandle> stream);
  ~SerialWriterOf() override = default;

  /// Starts the next write when none is in flight and the call is not ending, or ends the call
  /// once NextMessage says kEnd. Thread-safe; never call it holding a lock NextMessage takes.
  void Pump() ABSL_LOCKS_EXCLUDED(mu_);
  /// Ends the call with `status` (a refused start, a bad message).
  void End(const grpc::Status& status) { call_.End(status); }
  /// The call's order of operations (reads of a bidirectional reactor).
  StreamCall<Base>& call() { return call_; }

  /// The next message, encoded into `*out` (empty when called), or kWait / kEnd. Called with the
  /// writer's lock held, never while a write is in flight.
  virtual Step NextMessage(grpc::ByteBuffer* out) = 0;
  /// The status the call ends with after NextMessage said kEnd.
  virtual grpc::Status EndStatus() = 0;
  /// Called when a write completed (before the next one is taken). Default: nothing.
  virtual void Sent() {}

 private:
  StreamCall<Base> call_;
  Mutex mu_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  // The encoding of the message being written (changed only while no write is in flight).
  grpc::ByteBuffer out_;
};

/// The server-streaming form (Watch, ExportScene).
using SerialWriter = SerialWriterOf<grpc::ServerWriteReactor<grpc::ByteBuffer>>;
/// The bidirectional form (Interest).
using BidiSerialWriter =
    SerialWriterOf<grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>>;

extern template class SerialWriterOf<grpc::ServerWriteReactor<grpc::ByteBuffer>>;
extern template class SerialWriterOf<grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>>;

}  // namespace collide
