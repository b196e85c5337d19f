#include "watch/watch_queue.h"

#include <utility>

namespace collide {

WatchQueue::WatchQueue(size_t max_events, Allowance* queued_bytes)
    : max_events_(max_events > 0 ? max_events : 1), pool_(queued_bytes) {}

WatchQueue::~WatchQueue() {
  WriterLock lock(&mu_);
  if (pool_ != nullptr) pool_->Give(queued_bytes_ + sending_bytes_);
}

size_t WatchQueue::UpdateBytes(const WatchUpdate& update) {
  // The deque's slot, the events' array, and a malloc header for it.
  return sizeof(WatchMessage) + update.events.capacity() * sizeof(WatchEvent) + 16;
}

void WatchQueue::SetListener(std::function<void()> listener) {
  MutexLock lock(&listener_mu_);
  listener_ = std::move(listener);
}

void WatchQueue::ClearListener() {
  MutexLock lock(&listener_mu_);
  listener_ = nullptr;
}

void WatchQueue::Notify() {
  MutexLock lock(&listener_mu_);
  if (listener_) listener_();
}

void WatchQueue::Push(WatchSnapshot snapshot) {
  {
    WriterLock lock(&mu_);
    if (closed_) return;
    messages_.push_back(std::move(snapshot));
  }
  Notify();
}

bool WatchQueue::TryPush(WatchUpdate&& update) {
  {
    WriterLock lock(&mu_);
    if (closed_) return true;  // nothing more is delivered: as good as queued
    const size_t n = update.events.size();
    if (queued_events_ > 0 && queued_events_ + n > max_events_) return false;
    if (queued_events_ == 0 && n > max_events_ && !messages_.empty()) return false;
    const size_t bytes = UpdateBytes(update);
    if (pool_ != nullptr && !pool_->TryTake(bytes)) return false;
    queued_events_ += n;
    queued_bytes_ += bytes;
    messages_.push_back(std::move(update));
  }
  Notify();
  return true;
}

void WatchQueue::Replace(WatchSnapshot snapshot) {
  {
    WriterLock lock(&mu_);
    if (closed_) return;
    messages_.clear();
    queued_events_ = 0;
    if (pool_ != nullptr) pool_->Give(queued_bytes_);
    queued_bytes_ = 0;
    ++overflows_;
    snapshot.resync = true;
    messages_.push_back(std::move(snapshot));
  }
  Notify();
}

void WatchQueue::Close(WatchEnd why) {
  {
    WriterLock lock(&mu_);
    if (closed_) return;
    closed_ = true;
    end_reason_ = why;
    if (why != WatchEnd::kSceneDeleted) {
      // The watch is over: what it queued would only delay the error.
      messages_.clear();
      queued_events_ = 0;
      if (pool_ != nullptr) pool_->Give(queued_bytes_);
      queued_bytes_ = 0;
    }
  }
  Notify();
}

void WatchQueue::SentLocked() {
  if (pool_ != nullptr) pool_->Give(sending_bytes_);
  sending_bytes_ = 0;
}

void WatchQueue::Sent() {
  WriterLock lock(&mu_);
  SentLocked();
}

bool WatchQueue::Pop(WatchMessage* out) {
  WriterLock lock(&mu_);
  SentLocked();
  if (messages_.empty()) return false;
  *out = std::move(messages_.front());
  messages_.pop_front();
  if (const auto* update = std::get_if<WatchUpdate>(out)) {
    queued_events_ -= update->events.size();
    const size_t bytes = UpdateBytes(*update);
    queued_bytes_ -= bytes;
    // Still held while the consumer sends it.
    sending_bytes_ = bytes;
  }
  return true;
}

bool WatchQueue::Finished() const {
  WriterLock lock(&mu_);
  return closed_ && messages_.empty();
}

WatchEnd WatchQueue::end_reason() const {
  WriterLock lock(&mu_);
  return end_reason_;
}

uint64_t WatchQueue::overflows() const {
  WriterLock lock(&mu_);
  return overflows_;
}

size_t WatchQueue::queued_bytes() const {
  WriterLock lock(&mu_);
  return queued_bytes_ + sending_bytes_;
}

}  // namespace collide
