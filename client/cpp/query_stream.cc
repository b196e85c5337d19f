#include "client/cpp/query_stream.h"

#include <optional>
#include <utility>

namespace collide::client {

QueryStreamSession::QueryStreamSession(
    std::unique_ptr<grpc::ClientContext> context,
    std::unique_ptr<grpc::ClientReaderWriter<v1::QueryBatch, v1::QueryBatchResult>> stream)
    : context_(std::move(context)), stream_(std::move(stream)) {}

QueryStreamSession::~QueryStreamSession() {
  if (!end_.status().has_value()) {
    context_->TryCancel();
    end_.FinishOnce(stream_.get()).IgnoreError();
  }
}

absl::Status QueryStreamSession::Send(const v1::QueryBatch& batch) {
  if (writes_done_.load()) return absl::FailedPreconditionError("query stream: already finished");
  if (!stream_->Write(batch)) {
    return absl::UnavailableError("query stream: broken (Finish returns the reason)");
  }
  return absl::OkStatus();
}

absl::Status QueryStreamSession::StreamEnded() {
  return end_.Ended(stream_.get(), "query stream: ended with batches unanswered");
}

absl::StatusOr<v1::QueryBatchResult> QueryStreamSession::Read() {
  if (end_.status().has_value()) return StreamEnded();
  v1::QueryBatchResult result;
  if (!stream_->Read(&result)) return StreamEnded();
  return result;
}

absl::StatusOr<v1::QueryBatchResult> QueryStreamSession::Run(const v1::QueryBatch& batch) {
  if (!Send(batch).ok()) {
    // The write failed because the stream ended: drop what is left to read, report why.
    v1::QueryBatchResult ignored;
    while (stream_->Read(&ignored)) {
    }
    return StreamEnded();
  }
  return Read();
}

void QueryStreamSession::Cancel() { context_->TryCancel(); }

absl::Status QueryStreamSession::Finish() {
  bool first = !writes_done_.exchange(true);
  if (std::optional<absl::Status> ended = end_.status()) return *ended;
  if (first) stream_->WritesDone();
  v1::QueryBatchResult result;
  while (stream_->Read(&result)) {
  }
  return end_.FinishOnce(stream_.get());
}

QueryBatcher::QueryBatcher(QueryStreamSession* session, std::string scene, size_t flush_size,
                           ResultCallback on_result)
    : session_(session),
      flush_size_(flush_size < 1 ? 1 : flush_size),
      on_result_(std::move(on_result)) {
  batch_.set_scene(std::move(scene));
}

absl::StatusOr<uint64_t> QueryBatcher::Add(v1::Query query) {
  if (query.request_id() == 0) query.set_request_id(next_request_id_++);
  uint64_t request_id = query.request_id();
  *batch_.add_queries() = std::move(query);
  if (static_cast<size_t>(batch_.queries_size()) >= flush_size_) {
    absl::Status flushed = Flush();
    if (!flushed.ok()) return flushed;
  }
  return request_id;
}

absl::Status QueryBatcher::Flush() {
  if (batch_.queries_size() == 0) return absl::OkStatus();
  absl::StatusOr<v1::QueryBatchResult> result = session_->Run(batch_);
  if (!result.ok()) return result.status();
  if (on_result_) on_result_(batch_, *result);
  batch_.clear_queries();
  return absl::OkStatus();
}

}  // namespace collide::client
