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

absl::Status QueryStreamSession::Read(v1::QueryBatchResult* result) {
  if (end_.status().has_value()) return StreamEnded();
  if (!stream_->Read(result)) return StreamEnded();
  return absl::OkStatus();
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

}  // namespace collide::client
