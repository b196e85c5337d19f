#include "client/cpp/update_writer.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"

namespace collide::client {

UpdateWriter::UpdateWriter(
    std::unique_ptr<grpc::ClientContext> context,
    std::unique_ptr<grpc::ClientReaderWriter<v1::UpdateBatch, v1::UpdateAck>> stream,
    uint64_t client_id, uint64_t first_sequence)
    : context_(std::move(context)),
      stream_(std::move(stream)),
      client_id_(client_id),
      next_sequence_(first_sequence) {}

UpdateWriter::~UpdateWriter() {
  if (!end_.status().has_value()) {
    context_->TryCancel();
    end_.FinishOnce(stream_.get()).IgnoreError();
  }
}

uint64_t UpdateWriter::next_sequence() const {
  absl::MutexLock lock(&mu_);
  return next_sequence_;
}

size_t UpdateWriter::pending() const {
  absl::MutexLock lock(&mu_);
  return unacknowledged_.size();
}

absl::StatusOr<uint64_t> UpdateWriter::Send(v1::UpdateBatch batch) {
  uint64_t sequence;
  {
    absl::MutexLock lock(&mu_);
    if (writes_done_) return absl::FailedPreconditionError("update stream: already finished");
    sequence = next_sequence_++;
    unacknowledged_.push_back(sequence);
  }
  batch.set_client_id(client_id_);
  batch.set_client_sequence(sequence);
  if (!stream_->Write(batch)) {
    return absl::UnavailableError("update stream: broken (Finish returns the reason)");
  }
  return sequence;
}

absl::Status UpdateWriter::SendAsIs(const v1::UpdateBatch& batch) {
  {
    absl::MutexLock lock(&mu_);
    if (writes_done_) return absl::FailedPreconditionError("update stream: already finished");
    unacknowledged_.push_back(batch.client_sequence());
  }
  if (!stream_->Write(batch)) {
    return absl::UnavailableError("update stream: broken (Finish returns the reason)");
  }
  return absl::OkStatus();
}

absl::Status UpdateWriter::StreamEnded() {
  return end_.Ended(stream_.get(), "update stream: ended with batches unacknowledged");
}

absl::StatusOr<v1::UpdateAck> UpdateWriter::ReadAck() {
  v1::UpdateAck ack;
  if (!stream_->Read(&ack)) return StreamEnded();
  absl::MutexLock lock(&mu_);
  if (unacknowledged_.empty()) {
    return absl::DataLossError(absl::StrCat("update stream: ack for sequence ",
                                            ack.client_sequence(), ", no batch was sent"));
  }
  uint64_t expected = unacknowledged_.front();
  unacknowledged_.pop_front();
  if (ack.client_sequence() != expected) {
    return absl::DataLossError(absl::StrCat("update stream: ack for sequence ",
                                            ack.client_sequence(), ", expected ", expected));
  }
  return ack;
}

absl::StatusOr<v1::UpdateAck> UpdateWriter::Apply(v1::UpdateBatch batch) {
  absl::StatusOr<uint64_t> sent = Send(std::move(batch));
  if (!sent.ok()) {
    // The write failed because the stream ended: drop what is left to read, report why.
    v1::UpdateAck ignored;
    while (stream_->Read(&ignored)) {
    }
    return StreamEnded();
  }
  return ReadAck();
}

void UpdateWriter::Cancel() { context_->TryCancel(); }

absl::Status UpdateWriter::Finish() {
  bool first;
  {
    absl::MutexLock lock(&mu_);
    first = !writes_done_;
    writes_done_ = true;
  }
  if (std::optional<absl::Status> ended = end_.status()) return *ended;
  if (first) stream_->WritesDone();
  v1::UpdateAck ack;
  while (stream_->Read(&ack)) {
  }
  return end_.FinishOnce(stream_.get());
}

}  // namespace collide::client
