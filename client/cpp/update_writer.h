#pragma once

#include <cstdint>
#include <deque>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "client/cpp/stream_end.h"
#include "collide/v1/collide.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/sync_stream.h"

namespace collide::client {

/// One open UpdateStream: sends update batches stamped with the writer's client id and an
/// increasing client_sequence, and reads their acknowledgements, which arrive in the order the
/// batches were sent. A rejected batch is an ack with an error (see AckStatus); the stream goes
/// on. One thread may send while another reads acks; Finish after both are done.
class UpdateWriter {
 public:
  /// Use Client::OpenUpdateStream.
  UpdateWriter(std::unique_ptr<grpc::ClientContext> context,
               std::unique_ptr<grpc::ClientReaderWriter<v1::UpdateBatch, v1::UpdateAck>> stream,
               uint64_t client_id, uint64_t first_sequence);
  UpdateWriter(const UpdateWriter&) = delete;
  UpdateWriter& operator=(const UpdateWriter&) = delete;
  /// Cancels the stream if Finish was not called.
  ~UpdateWriter();

  /// Stamps `batch` with the writer's client id and its next sequence, sends it, and returns the
  /// sequence used. UNAVAILABLE when the stream is broken (Finish tells why).
  absl::StatusOr<uint64_t> Send(v1::UpdateBatch batch);
  /// Sends `batch` exactly as given (its own client_id and client_sequence), for resending a
  /// batch or testing deduplication. Does not advance the writer's sequence.
  absl::Status SendAsIs(const v1::UpdateBatch& batch);
  /// Blocks for the next acknowledgement (so some batch must be on its way: a sender thread may
  /// still be about to send it). The ack's client_sequence must be the oldest unacknowledged
  /// batch's (DATA_LOSS otherwise); when the stream has ended, the stream's status (or
  /// UNAVAILABLE if it ended cleanly with batches unanswered).
  absl::StatusOr<v1::UpdateAck> ReadAck();
  /// Send, then ReadAck: one batch, one answer, for a writer used from one thread. The ack may
  /// still carry an error; when the stream has ended, its status.
  absl::StatusOr<v1::UpdateAck> Apply(v1::UpdateBatch batch);
  /// Cancels the stream from any thread: blocked sends and reads return, and Finish reports
  /// CANCELLED.
  void Cancel();
  /// Closes the sending side, reads (and drops) any acks still due, and returns the stream's
  /// final status.
  absl::Status Finish();

  /// The writer's client id (0: no deduplication).
  uint64_t client_id() const { return client_id_; }
  /// The sequence the next Send will use.
  uint64_t next_sequence() const;
  /// Batches sent and not yet acknowledged.
  size_t pending() const;

 private:
  // The status of a stream that ended while answers were expected.
  absl::Status StreamEnded();

  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::UpdateBatch, v1::UpdateAck>> stream_;
  const uint64_t client_id_;
  mutable absl::Mutex mu_;
  uint64_t next_sequence_ ABSL_GUARDED_BY(mu_);
  std::deque<uint64_t> unacknowledged_ ABSL_GUARDED_BY(mu_);
  bool writes_done_ ABSL_GUARDED_BY(mu_) = false;
  StreamEnd end_;
};

}  // namespace collide::client
