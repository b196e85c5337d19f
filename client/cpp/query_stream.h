#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "client/cpp/stream_end.h"
#include "collide/v1/collide.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/sync_stream.h"

namespace collide::client {

/// One open QueryStream: each QueryBatch sent is answered by one QueryBatchResult, in order,
/// computed against one scene version. A rejected batch or query is an error inside the answer
/// (see BatchStatus / ResultStatus); the stream goes on. One thread may send while another
/// reads; Finish after both are done.
class QueryStreamSession {
 public:
  /// Use Client::OpenQueryStream.
  QueryStreamSession(
      std::unique_ptr<grpc::ClientContext> context,
      std::unique_ptr<grpc::ClientReaderWriter<v1::QueryBatch, v1::QueryBatchResult>> stream);
  QueryStreamSession(const QueryStreamSession&) = delete;
  QueryStreamSession& operator=(const QueryStreamSession&) = delete;
  /// Cancels the stream if Finish was not called.
  ~QueryStreamSession();

  /// Sends one batch. UNAVAILABLE when the stream is broken (Finish tells why).
  absl::Status Send(const v1::QueryBatch& batch);
  /// Blocks for the next answer; when the stream has ended, its status (UNAVAILABLE if it ended
  /// cleanly).
  absl::StatusOr<v1::QueryBatchResult> Read();
  /// Send, then Read, for a session used from one thread.
  absl::StatusOr<v1::QueryBatchResult> Run(const v1::QueryBatch& batch);
  /// Cancels the stream from any thread: blocked sends and reads return, and Finish reports
  /// CANCELLED.
  void Cancel();
  /// Closes the sending side, drops answers still due, and returns the stream's final status.
  absl::Status Finish();

 private:
  // The status of a stream that ended while answers were expected.
  absl::Status StreamEnded();

  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::QueryBatch, v1::QueryBatchResult>> stream_;
  std::atomic<bool> writes_done_{false};
  StreamEnd end_;
};

/// Collects queries for one scene and runs them on a QueryStreamSession in batches of
/// `flush_size`: Add flushes when the batch is full, Flush sends what is left. Each answer goes
/// to `on_result` together with the batch it answers.
class QueryBatcher {
 public:
  /// Receives each batch sent and its answer.
  using ResultCallback =
      std::function<void(const v1::QueryBatch& batch, const v1::QueryBatchResult& result)>;

  /// `session` must outlive the batcher; `flush_size` >= 1.
  QueryBatcher(QueryStreamSession* session, std::string scene, size_t flush_size,
               ResultCallback on_result);

  /// Adds one query; runs the batch when it reaches flush_size. A query with request_id 0 gets
  /// the next id of a counter starting at 1. Returns the request id used.
  absl::StatusOr<uint64_t> Add(v1::Query query);
  /// Runs the queries collected so far, if any.
  absl::Status Flush();
  /// Queries collected and not yet sent.
  size_t size() const { return batch_.queries_size(); }

 private:
  QueryStreamSession* session_;
  size_t flush_size_;
  ResultCallback on_result_;
  v1::QueryBatch batch_;
  uint64_t next_request_id_ = 1;
};

}  // namespace collide::client
