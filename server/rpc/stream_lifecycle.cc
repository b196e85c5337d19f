#include "server/rpc/stream_lifecycle.h"

namespace collide {

bool StreamState::BeginRead(bool awaited) {
  {
    MutexLock lock(&mu_);
    if (reading_ || finished_ || broken_ || end_.has_value()) return false;
    reading_ = true;
    awaited_ = awaited;
  }
  if (awaited && stream_ != nullptr) stream_->ReadStarted();
  return true;
}

bool StreamState::BeginWrite(size_t bytes) {
  {
    MutexLock lock(&mu_);
    if (writing_ || finished_ || broken_) return false;
    writing_ = true;
  }
  // Reported before StartWrite: the watchdog times the write from here.
  if (stream_ != nullptr) stream_->WriteStarted(bytes);
  return true;
}

bool StreamState::EndRead() {
  bool awaited = false;
  bool go_on = false;
  {
    MutexLock lock(&mu_);
    reading_ = false;
    awaited = awaited_;
    awaited_ = false;
    go_on = !broken_ && !end_.has_value();
  }
  if (awaited && stream_ != nullptr) stream_->ReadDone();
  return go_on;
}

bool StreamState::EndWrite(bool ok) {
  if (stream_ != nullptr) stream_->WriteDone();
  MutexLock lock(&mu_);
  writing_ = false;
  if (!ok) broken_ = true;
  return !broken_;
}

void StreamState::Cancel() {
  MutexLock lock(&mu_);
  broken_ = true;
}

void StreamState::Hold() {
  MutexLock lock(&mu_);
  ++holds_;
}

void StreamState::Release() {
  MutexLock lock(&mu_);
  --holds_;
}

void StreamState::End(const grpc::Status& status) {
  MutexLock lock(&mu_);
  if (!end_.has_value()) end_ = status;
}

void StreamState::EndWithReadOpen(const grpc::Status& status) {
  MutexLock lock(&mu_);
  if (!end_.has_value()) end_ = status;
  read_open_ = true;
}

bool StreamState::ending() const {
  MutexLock lock(&mu_);
  return broken_ || end_.has_value();
}

std::optional<grpc::Status> StreamState::TakeFinish() {
  grpc::Status status;
  {
    MutexLock lock(&mu_);
    if (finished_ || (reading_ && !read_open_) || writing_ || holds_ > 0) return std::nullopt;
    if (!broken_ && !end_.has_value()) return std::nullopt;
    finished_ = true;
    status = broken_ ? grpc::Status(grpc::StatusCode::CANCELLED, "stream cancelled") : *end_;
  }
  // Free the slot before the client sees the end: it may open another stream at once.
  if (stream_ != nullptr) stream_->Release();
  return status;
}

}  // namespace collide
