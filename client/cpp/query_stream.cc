#include "client/cpp/query_stream.h"

#include <utility>

#include "client/cpp/grpc_status.h"

namespace collide::client {

QueryStreamSession::QueryStreamSession(
    std::unique_ptr<grpc::ClientContext> context,
    std::unique_ptr<grpc::ClientReaderWriter<v1::QueryBatch, v1::QueryBatchResult>> stream)
    : context_(std::move(context)), stream_(std::move(stream)) {}

QueryStreamSession::~QueryStreamSession() {
  bool finished;
  {
    absl::MutexLock lock(&finish_mu_);
    finished = finished_;
  }
  if (!finished) {
    context_->TryCancel();
    FinishOnce().IgnoreError();
  }
}

absl::Status QueryStreamSession::Send(const v1::QueryBatch& batch) {
  if (writes_done_.load()) return absl::FailedPreconditionError("query stream: already finished");
  if (!stream_->Write(batch)) {
    return absl::UnavailableError("query stream: broken (Finish returns the reason)");
  }
  return absl::OkStatus();
}

absl::Status QueryStreamSession::FinishOnce() {
  absl::MutexLock lock(&finish_mu_);
  if (!finished_) {
    final_status_ = FromGrpcStatus(stream_->Finish());
    finished_ = true;
  }
  return final_status_;
}

absl::Status QueryStreamSession::StreamEnded() {
  absl::Status status = FinishOnce();
  if (!status.ok()) return status;
  return absl::UnavailableError("query stream: ended with batches unanswered");
}

absl::StatusOr<v1::QueryBatchResult> QueryStreamSession::Read() {
  {
    absl::MutexLock lock(&finish_mu_);
    if (finished_) {
      if (!final_status_.ok()) return final_status_;
      return absl::UnavailableError("query stream: ended with batches unanswered");
    }
  }
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
  {
    absl::MutexLock lock(&finish_mu_);
    if (finished_) return final_status_;
  }
  if (first) stream_->WritesDone();
  v1::QueryBatchResult result;
  while (stream_->Read(&result)) {
  }
  return FinishOnce();
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
