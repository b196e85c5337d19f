#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collide/v1/collide.pb.h"
#include "google/protobuf/arena.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "query/batch.h"
#include "query/hit.h"
#include "server/convert/query_answer.h"
#include "server/infra/auth.h"
#include "server/infra/stream_registry.h"
#include "server/rpc/stream_lifecycle.h"
#include "server/service_context.h"

namespace collide {

/// The reactor of one QueryStream call: read a batch, answer it, write the answer, and read the
/// next only once the write completed (one message in each direction at a time: the outbound
/// queue is bounded and HTTP/2 flow control pushes back on the client).
///
/// Each batch: the scene is looked up, every query validated (a bad query gets its own error;
/// the others are answered), and all valid queries run under one Scene::Read, so the answer is
/// computed against the one version it is tagged with. A batch whose largest possible answer
/// (MaxAnswer) fits limits.max_answer_bytes runs whole and is encoded after the read; a larger
/// one runs in segments whose hits take at most about max_answer_bytes in memory
/// (AnswerQueriesInSegments), each encoded as it comes, and is refused with RESOURCE_EXHAUSTED
/// `queries` only once the answer it really has passes the limit: no batch is refused for a
/// size it does not have.
///
/// Memory: the answer is encoded result by result (QueryAnswerWriter), and before it is written
/// the request is freed and scratch vectors grown past kKeptScratchBytes are released, so that
/// while the client reads the answer (or does not) the stream holds its bytes and at most a few
/// small vectors; once written, the bytes are dropped too. Query, result and hit vectors are
/// reused from batch to batch within that bound. The queries are converted as soon as the batch
/// is read, so a batch waiting for its min_version holds its request and its converted queries
/// (room for hits is reserved only once the wait is over).
///
/// A message that is not a valid QueryBatch ends the call with INVALID_ARGUMENT
/// (`messages[i]: not a valid collide.v1.QueryBatch message`).
class QueryStreamReactor final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  /// Starts reading. `principal` (already checked for the reader role) and `context` outlive
  /// the call.
  /// `scene_header` is the call's x-collide-scene metadata: a batch naming another scene gets
  /// an INVALID_ARGUMENT batch error (CheckSceneHeader) and the stream goes on.
  /// A batch with a min_version waits (VersionWait, holding no thread) at most until
  /// `call_deadline` and limits.max_version_wait_ms; then it gets a DEADLINE_EXCEEDED batch
  /// error and the stream goes on.
  /// `stream` (null when the server keeps no registry) is told about every answer written.
  QueryStreamReactor(const ServiceContext& context, const Principal* principal,
                     std::optional<std::string> scene_header = std::nullopt,
                     std::chrono::system_clock::time_point call_deadline =
                         std::chrono::system_clock::time_point::max(),
                     std::unique_ptr<StreamHandle> stream = nullptr);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // Answers request_ into out_ (once its min_version is reached), then writes it.
  void AnswerAndWrite();
  // The scene request_ may read (scene header, auth, batch size, answer size, lookup), or why
  // the batch is rejected.
  absl::StatusOr<std::shared_ptr<const Scene>> SceneFor(const v1::QueryBatch& batch) const;
  // Converts request_'s queries into queries_ (slots_; errors_ for those rejected). Needs no
  // scene: done before a batch waits for its version.
  void Convert();
  // Answers request_ (converted by Convert when `scene` is found) into out_ against `scene`, or
  // with the batch's error.
  void Answer(const absl::StatusOr<std::shared_ptr<const Scene>>& scene);
  // Adds to `writer` the results of the requests not encoded yet (from encoded_requests_) up to
  // the one of queries_[slot_end] (excluded; all of them when slot_end is past the last): for
  // the queries run, their results (results_, hits_, tick_errors_, which hold the segment of
  // queries from `first`), for the others the errors of their conversion (errors_). Returns
  // false, leaving the rest, once the answer passes `max_bytes`. `result` is scratch.
  bool EncodeThrough(QueryAnswerWriter* writer, v1::QueryResult* result, size_t slot_end,
                     size_t first, uint64_t max_bytes);
  // Encodes into out_ an answer that is only `status` (the batch's error).
  void EncodeBatchError(const absl::Status& status);
  // Frees the request and the scratch grown large, then starts writing out_.
  void WriteAnswer();
  // Makes a fresh request_ on the arena (created at the first batch; reset for each batch).
  void NewRequest();

  const ServiceContext& context_;
  const Principal* const principal_;
  // The call's x-collide-scene metadata, checked against every batch's scene.
  const std::optional<std::string> scene_header_;
  const std::chrono::system_clock::time_point call_deadline_;
  // The order of reads, writes, the wait for a version, cancel and finish.
  StreamCall<grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>> call_;
  // Each batch is parsed into an arena whose first block is reused from batch to batch: no
  // allocation per query (outside an arena, clearing a Query frees its Raycast and Vec3s).
  // Reset frees any further blocks a large batch needed.
  std::unique_ptr<char[]> arena_block_;
  std::optional<google::protobuf::Arena> arena_;
  grpc::ByteBuffer in_;
  uint64_t messages_read_ = 0;
  v1::QueryBatch* request_ = nullptr;
  // The answer being written, encoded.
  grpc::ByteBuffer out_;
  // Per-batch scratch, reused (ReleaseIfLarger).
  std::vector<Query> queries_;
  std::vector<size_t> slots_;              // the request index of each entry of queries_
  std::vector<absl::Status> errors_;       // per request index: why the query was rejected
  std::vector<absl::Status> tick_errors_;  // per entry of queries_: its tick's check
  std::vector<QueryResult> results_;
  std::vector<QueryHit> hits_;
  // Encode's progress through the batch: the next request and the next entry of slots_.
  size_t encoded_requests_ = 0;
  size_t encoded_slots_ = 0;
  // How long Convert took (for the slow-query log, which times conversion and run).
  std::chrono::steady_clock::duration convert_elapsed_{};
};

}  // namespace collide
