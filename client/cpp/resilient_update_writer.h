#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collide/v1/collide.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/sync_stream.h"

namespace collide::client {

class Client;

/// A batch the server rejected (its ack carried an error): nothing of it was applied, and the
/// writer does not send it again.
struct RejectedBatch {
  /// The batch's client_sequence.
  uint64_t sequence = 0;
  /// The server's error: its code and `<field path>: <reason>`.
  absl::Status status;
  /// The batch as sent.
  v1::UpdateBatch batch;
};

/// How a ResilientUpdateWriter numbers, bounds and resends its batches.
struct ResilientUpdateWriterOptions {
  /// The id that deduplicates the writer's batches on the server (per scene). 0: a random
  /// non-zero id. A process that restarts and wants its old batches recognised passes the old
  /// id and a first_sequence above the last one it sent.
  uint64_t client_id = 0;
  /// The sequence of the first batch (>= 1); each Send uses the next.
  uint64_t first_sequence = 1;
  /// The most batches kept unacknowledged; Send waits for room past it (see send_timeout).
  size_t max_pending = 1024;
  /// How long Send waits for room when max_pending batches are unacknowledged, then fails with
  /// RESOURCE_EXHAUSTED. Zero: fail at once; infinite: wait as long as it takes.
  absl::Duration send_timeout = absl::InfiniteDuration();
  /// The wait before the first reconnection attempt after the stream broke; each failed
  /// attempt multiplies it by backoff_multiplier, up to max_backoff.
  absl::Duration initial_backoff = absl::Milliseconds(20);
  /// The longest wait between two reconnection attempts.
  absl::Duration max_backoff = absl::Seconds(1);
  /// The growth of the wait per failed attempt (>= 1).
  double backoff_multiplier = 2.0;
  /// How long the writer keeps trying to reconnect before it gives up: then every call fails
  /// with UNAVAILABLE and the unacknowledged batches stay readable through TakeUnacknowledged.
  absl::Duration give_up_after = absl::Seconds(30);
  /// When set, called on the writer's reader thread for each rejected batch, instead of
  /// queueing it for TakeRejected. It must not call back into the writer.
  std::function<void(const RejectedBatch&)> on_rejected;
};

/// Counters of a ResilientUpdateWriter since it was opened.
struct ResilientUpdateWriterStats {
  /// Batches handed to Send.
  uint64_t sent = 0;
  /// Batches acknowledged (applied, duplicate or rejected).
  uint64_t acknowledged = 0;
  /// Acks marked duplicate: the batch had been applied before a reconnect and was not applied
  /// again.
  uint64_t duplicates = 0;
  /// Acks carrying an error.
  uint64_t rejected = 0;
  /// Batches answered by a server that does not write the scene (Error.moved_to) and resent.
  uint64_t redirected = 0;
  /// Batches answered UNAVAILABLE (the owner cannot write the scene just now: its lease is being
  /// renewed, its replicated log is not answering, the server is stopping) and resent.
  uint64_t unavailable = 0;
  /// Batches written again on a new stream after a reconnect.
  uint64_t resent = 0;
  /// Streams opened after the first.
  uint64_t reconnects = 0;
};

/// An update writer for one scene that survives broken streams and server restarts, for a game
/// server that streams pose updates every tick.
///
/// Each batch gets the writer's client id and the next sequence and is kept until the server
/// acknowledges it. A reader thread consumes the acks. When the stream breaks with a retryable
/// status (UNAVAILABLE, the server going away or closing the stream, a stream deadline), the
/// writer reconnects with exponential backoff, writes every unacknowledged batch again, in
/// order, with the same client id and sequences, and goes on; the server deduplicates by
/// (client id, sequence), so a batch applied before the break is acknowledged `duplicate` and
/// never applied twice. A rejected batch (ack with an error) is reported (TakeRejected, or the
/// on_rejected callback) and not sent again, except an error naming the server that writes the
/// scene (Error.moved_to: a follower of a replicated scene, a scene moving away) or UNAVAILABLE
/// (the owner cannot write it just now: its lease is being renewed, its replicated log is not
/// answering, the server is stopping): nothing of the batch was applied, and the server answers
/// the stream's later batches the same way, so the writer ends the stream and resends them all
/// on the next one (after the backoff; through a router that follows the owner it reaches the
/// writing server), bounded by give_up_after like any reconnection. A non-retryable stream status
/// (UNAUTHENTICATED, PERMISSION_DENIED, ...) or giving up ends the writer for good.
///
/// How a final failure is reported. The reader thread finds it, asynchronously; from that moment
/// status() returns it and so does every Send, Flush, WaitAcknowledged (for a batch not
/// acknowledged) and Close. A Send that runs before the reader thread has found it succeeds:
/// its batch is numbered and kept, never written, and handed back by TakeUnacknowledged. So a
/// Send's success means "kept", never "applied": whether batches were applied is what Flush and
/// WaitAcknowledged answer, and they always report the failure for any batch it left
/// unacknowledged. (A stream refused at once, such as a reader's token, may fail the writer
/// before its first Send or after it: either way Flush reports it.)
///
/// Thread-safe: any number of threads may Send; batches are numbered in the order their Send
/// calls take the writer's lock. Nothing polls: waits are on condition variables.
class ResilientUpdateWriter {
 public:
  /// Opens the writer for `scene` on `client` (which must outlive it). The stream connects in
  /// the background: Open does not wait for the server, and batches sent before it is reachable
  /// are kept and written once it is. INVALID_ARGUMENT for an empty scene or bad options.
  static absl::StatusOr<std::unique_ptr<ResilientUpdateWriter>> Open(
      Client* client, std::string_view scene, ResilientUpdateWriterOptions options = {});
  ResilientUpdateWriter(const ResilientUpdateWriter&) = delete;
  ResilientUpdateWriter& operator=(const ResilientUpdateWriter&) = delete;
  /// Cancels the stream and stops the reader thread; unacknowledged batches are dropped (call
  /// Close first to wait for them).
  ~ResilientUpdateWriter();

  /// Stamps `batch` with the writer's scene (when empty), client id and next sequence, keeps it
  /// and writes it when the stream is up. Returns the sequence. Waits while max_pending batches
  /// are unacknowledged (RESOURCE_EXHAUSTED after options.send_timeout). INVALID_ARGUMENT for a
  /// batch naming another scene; FAILED_PRECONDITION after Close; the writer's final status
  /// once it has failed.
  absl::StatusOr<uint64_t> Send(v1::UpdateBatch batch);
  /// Waits until the batch with `sequence` (and every earlier one) is acknowledged, at most
  /// until `deadline`. OK for an applied or duplicate batch and for a rejected one (reported
  /// through TakeRejected / on_rejected); DEADLINE_EXCEEDED; the writer's final status once it
  /// has failed. The version of the latest ack is latest_version().
  absl::Status WaitAcknowledged(uint64_t sequence, absl::Time deadline);
  /// Waits until every batch sent so far is acknowledged, at most until `deadline`. OK when they
  /// are; DEADLINE_EXCEEDED; the writer's final status once it has failed (even with nothing
  /// left pending).
  absl::Status Flush(absl::Time deadline);
  /// Flush(deadline), then closes the stream and stops the reader thread. Later Sends fail.
  /// Returns the Flush status (the stream is closed either way).
  absl::Status Close(absl::Time deadline);

  /// The rejected batches not taken yet, oldest first (empty when on_rejected is set).
  std::vector<RejectedBatch> TakeRejected();
  /// The unacknowledged batches, oldest first, removed from the writer; for a writer that has
  /// failed (gave up), so that the caller may keep them.
  std::vector<v1::UpdateBatch> TakeUnacknowledged();

  /// The scene the writer updates.
  const std::string& scene() const { return scene_; }
  /// The writer's client id (never 0).
  uint64_t client_id() const { return client_id_; }
  /// The sequence the next Send will use.
  uint64_t next_sequence() const;
  /// Batches sent and not acknowledged yet.
  size_t pending() const;
  /// The scene version of the latest ack without an error (0 before any): the version that
  /// holds every batch acknowledged so far, e.g. for QueryBatch.min_version.
  uint64_t latest_version() const;
  /// OK while the writer works; its final status once it failed.
  absl::Status status() const;
  /// The counters so far.
  ResilientUpdateWriterStats stats() const;

 private:
  using Stream = grpc::ClientReaderWriter<v1::UpdateBatch, v1::UpdateAck>;
  struct Pending {
    uint64_t sequence;
    // Shared with a Send or a resend that is writing it, so that an ack popping it cannot free
    // it under the write.
    std::shared_ptr<const v1::UpdateBatch> batch;
  };

  ResilientUpdateWriter(Client* client, std::string scene, ResilientUpdateWriterOptions options,
                        uint64_t client_id);

  // The reader thread: connect, resend, read acks; reconnect after retryable breaks.
  void Run();
  // Opens a stream and writes every pending batch on it; null when the writer is done.
  Stream* Connect(bool reconnect);
  // Reads acks from `stream` until it ends, then closes it; returns its final status and sets
  // `healthy` when it acknowledged anything.
  absl::Status ReadAcks(Stream* stream, bool* healthy);
  // True when the reader thread should stop: shut down, failed, or closing with nothing left.
  bool Done() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Handles one ack; false when it refuses the oldest pending batch unapplied (`refused` set,
  // the batch kept for the next stream) or does not answer it (failed_ set).
  bool HandleAck(const v1::UpdateAck& ack, bool* refused);
  // Waits `wait` or until shutdown; true when shutting down.
  bool SleepOrShutdown(absl::Duration wait);
  // Ends the writer with `status` and wakes every waiter.
  void Fail(absl::Status status);

  Client* const client_;
  const std::unique_ptr<v1::Collide::Stub> stub_;
  const std::string scene_;
  const ResilientUpdateWriterOptions options_;
  const uint64_t client_id_;

  // Held while writing to the stream and while (re)placing it, so that batches go out in
  // sequence order and a resend is not interleaved with new sends. Taken before mu_.
  absl::Mutex write_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  // The current stream; written only by the reader thread, with write_mu_ held.
  std::unique_ptr<grpc::ClientContext> context_ ABSL_GUARDED_BY(write_mu_);
  std::unique_ptr<Stream> stream_ ABSL_GUARDED_BY(write_mu_);
  bool stream_broken_ ABSL_GUARDED_BY(write_mu_) = false;

  mutable absl::Mutex mu_;
  // The current stream's context, for Cancel from other threads (owned by context_).
  grpc::ClientContext* live_context_ ABSL_GUARDED_BY(mu_) = nullptr;
  uint64_t next_sequence_ ABSL_GUARDED_BY(mu_);
  // Unacknowledged batches in sequence order; `reserved_` Sends have room and no sequence yet.
  std::deque<Pending> pending_ ABSL_GUARDED_BY(mu_);
  size_t reserved_ ABSL_GUARDED_BY(mu_) = 0;
  // The highest sequence acknowledged (first_sequence - 1 before any).
  uint64_t acknowledged_through_ ABSL_GUARDED_BY(mu_);
  uint64_t latest_version_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<RejectedBatch> rejected_ ABSL_GUARDED_BY(mu_);
  // All but `sent`, which stats() derives from next_sequence_.
  ResilientUpdateWriterStats stats_ ABSL_GUARDED_BY(mu_);
  absl::Status failed_ ABSL_GUARDED_BY(mu_);
  // The answer of the last batch refused unapplied (by a server that does not write the scene,
  // or UNAVAILABLE from its owner), until the reader thread takes it.
  absl::Status refusal_ ABSL_GUARDED_BY(mu_);
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  bool reader_done_ ABSL_GUARDED_BY(mu_) = false;

  std::thread reader_;
};

}  // namespace collide::client
