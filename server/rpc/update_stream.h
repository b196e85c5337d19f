#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "collide/v1/collide.pb.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "scene/update_batch.h"
#include "server/infra/auth.h"
#include "server/infra/stream_registry.h"
#include "server/rpc/stream_lifecycle.h"
#include "server/service_context.h"
#include "store/database.h"

namespace collide {

/// The reactor of one UpdateStream call. Each batch read is validated and handed to
/// Database::Apply; its ack is written when the store acknowledges it, in the order the batches
/// were read (store callbacks may complete out of order: acks wait in an ordered queue). At most
/// limits.max_inflight_per_stream batches are read but unanswered; then reading pauses until
/// an ack is written (HTTP/2 flow control pushes back on the client). One write is outstanding
/// at a time.
///
/// A message that is not a valid UpdateBatch ends the call with INVALID_ARGUMENT once the acks of
/// the batches read before it are written; nothing after it is read.
///
/// Memory: at most max_inflight_per_stream acks wait (each a few dozen bytes, or an Error of at
/// most about 1 KiB); the message being applied, as parsed, is kept for the next one when it and
/// its ops take at most kKeptUpdateBytes (2 MiB), and freed once the store has it otherwise.
///
/// Store callbacks may come after the client went away: each holds the call open (StreamCall)
/// until it ran, so the reactor outlives them.
class UpdateStreamReactor final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  /// Starts reading. `principal` (already checked for the writer role) and `context` outlive
  /// the call. `scene_header` is the call's x-collide-scene metadata: a batch naming another
  /// scene is acknowledged with an INVALID_ARGUMENT error (CheckSceneHeader) and not applied.
  /// `stream` (null when the server keeps no registry) is told about every ack written.
  UpdateStreamReactor(const ServiceContext& context, const Principal* principal,
                      std::optional<std::string> scene_header = std::nullopt,
                      std::unique_ptr<StreamHandle> stream = nullptr);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // An ack waiting for its turn.
  struct Pending {
    bool ready = false;
    v1::UpdateAck ack;
  };

  // Starts what may start now: the next ordered write, the next read (fewer than
  // max_inflight_per_stream unanswered batches), or the end of the call once the client
  // half-closed and every ack was written.
  void Pump() ABSL_LOCKS_EXCLUDED(mu_);
  // Stores the ack of batch `index` and pumps.
  void Complete(uint64_t index, uint64_t client_sequence, absl::StatusOr<ApplyAck> result)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Converts and applies the batch just read as the `index`-th of the stream. With the
  // slow-update log on, `arrived` is when its message was read and `parse` the time its parse
  // took.
  void Process(uint64_t index, std::chrono::steady_clock::time_point arrived,
               std::chrono::nanoseconds parse);
  // Empties request_ for the next message, keeping the capacity of its moves columns.
  void ClearRequest();
  // What request_ and batch_ hold allocated (kept for the next batch up to kKeptUpdateBytes).
  size_t KeptBytes() const;

  const ServiceContext& context_;
  const Principal* const principal_;
  // The call's x-collide-scene metadata, checked against every batch's scene.
  const std::optional<std::string> scene_header_;
  // The order of reads, writes, the store's callbacks, cancel and finish.
  StreamCall<grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>> call_;
  Mutex mu_;
  // Acks of batches read and not yet written, in read order; pending_.front() is batch
  // first_index_.
  std::deque<Pending> pending_ ABSL_GUARDED_BY(mu_);
  uint64_t first_index_ ABSL_GUARDED_BY(mu_) = 0;
  bool reading_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  // The read side is converting and applying a batch (request_ and batch_ are in use).
  bool processing_ ABSL_GUARDED_BY(mu_) = false;
  // The client half-closed, or a message did not parse (read_error_ then).
  bool read_done_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status read_error_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  // By scene, the first refusal of this stream that a writer answers by resending: one naming
  // another server (Error.moved_to: the scene moved away, or this server follows it) or
  // UNAVAILABLE (the owner cannot write the scene just now: its lease is being renewed, its
  // replicated log is not answering, the server is stopping). Every later batch of the stream
  // for that scene gets the same answer, unapplied. A writer resends from the refused batch on a
  // new stream, and a later batch applied here (the mark cleared, a takeover, the lease renewed)
  // would make the resent one a duplicate by its client_sequence: it would never be applied.
  absl::flat_hash_map<std::string, absl::Status> refused_ ABSL_GUARDED_BY(mu_);
  // The ack being written, encoded (gRPC's while writing_).
  grpc::ByteBuffer out_;
  // Touched only by the read side (one read at a time): the message as read, then parsed.
  grpc::ByteBuffer in_;
  v1::UpdateBatch request_;
  uint64_t messages_read_ = 0;
  UpdateBatch batch_;
};

}  // namespace collide
