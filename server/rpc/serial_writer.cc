#include "server/rpc/serial_writer.h"

#include <utility>

namespace collide {

SerialWriter::SerialWriter(std::unique_ptr<StreamHandle> stream) : stream_(std::move(stream)) {}

void SerialWriter::Pump() {
  size_t bytes = 0;
  Step step = Step::kWait;
  {
    absl::MutexLock lock(&mu_);
    if (writing_ || finished_ || cancelled_) return;
    step = NextMessage(&out_);
    if (step == Step::kWait) return;
    if (step == Step::kWrite) {
      bytes = out_.Length();
      writing_ = true;
    }
  }
  // Outside the lock: gRPC may run reactions inline. out_ is not touched again until the write
  // completes (writing_).
  if (step == Step::kEnd) {
    FinishOnce(EndStatus());
    return;
  }
  if (stream_ != nullptr) stream_->WriteStarted(bytes);
  StartWrite(&out_);
}

void SerialWriter::OnWriteDone(bool ok) {
  if (stream_ != nullptr) stream_->WriteDone();
  Sent();
  bool cancelled = false;
  {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    out_.Clear();  // the sent message's memory
    cancelled = cancelled_;
  }
  // A cancel that came while this write was in flight left the finish to here, whether or not
  // the write itself got through.
  if (!ok || cancelled) {
    FinishOnce(grpc::Status(grpc::StatusCode::CANCELLED, "stream cancelled"));
    return;
  }
  Pump();
}

void SerialWriter::OnCancel() {
  // With a write in flight, OnWriteDone finishes the call (it sees cancelled_, also when the
  // write completed before the cancel reached it); otherwise no write starts after this.
  bool writing = false;
  {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    writing = writing_;
  }
  if (!writing) FinishOnce(grpc::Status(grpc::StatusCode::CANCELLED, "stream cancelled"));
}

void SerialWriter::FinishOnce(const grpc::Status& status) {
  {
    absl::MutexLock lock(&mu_);
    if (finished_) return;
    finished_ = true;
  }
  if (stream_ != nullptr) stream_->Release();
  Finish(status);
}

}  // namespace collide
