#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
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
  /// Blocks for the next answer and parses it into `*result` (replacing what it held). A result
  /// made on a google::protobuf::Arena is parsed into that arena: a loop that resets the arena
  /// between answers allocates no hit on the heap. Errors as Read's.
  absl::Status Read(v1::QueryBatchResult* result);
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

}  // namespace collide::client
