#include "watch/watch_queue.h"

#include <utility>

namespace collide {

size_t QueuedEvents(const WatchUpdate& update) { return update.events.size(); }

size_t QueuedBytes(const WatchUpdate& update) {
  // The deque's slot, the events' array, and a malloc header for it.
  return sizeof(WatchMessage) + update.events.capacity() * sizeof(WatchEvent) + 16;
}

template <typename S, typename U>
StandingQueue<S, U>::StandingQueue(size_t max_events, Allowance* queued_bytes)
    : max_events_(max_events > 0 ? max_events : 1), pool_(queued_bytes) {}

template <typename S, typename U>
StandingQueue<S, U>::~StandingQueue() {
  WriterLock lock(&mu_);
  if (pool_ != nullptr) pool_->Give(queued_bytes_ + sending_bytes_);
}

template <typename S, typename U>
size_t StandingQueue<S, U>::UpdateBytes(const U& update) {
  return QueuedBytes(update);
}

template <typename S, typename U>
void StandingQueue<S, U>::SetListener(std::function<void()> listener) {
  MutexLock lock(&listener_mu_);
  listener_ = std::move(listener);
}

template <typename S, typename U>
void StandingQueue<S, U>::ClearListener() {
  MutexLock lock(&listener_mu_);
  listener_ = nullptr;
}

template <typename S, typename U>
void StandingQueue<S, U>::Notify() {
  MutexLock lock(&listener_mu_);
  if (listener_) listener_();
}

template <typename S, typename U>
void StandingQueue<S, U>::Push(S snapshot) {
  {
    WriterLock lock(&mu_);
    if (closed_) return;
    messages_.push_back(std::move(snapshot));
  }
  Notify();
}

template <typename S, typename U>
bool StandingQueue<S, U>::TryPush(U&& update) {
  {
    WriterLock lock(&mu_);
    if (closed_) return true;  // nothing more is delivered: as good as queued
    const size_t n = QueuedEvents(update);
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

template <typename S, typename U>
void StandingQueue<S, U>::Replace(S snapshot) {
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

template <typename S, typename U>
void StandingQueue<S, U>::Close(WatchEnd why) {
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

template <typename S, typename U>
void StandingQueue<S, U>::SentLocked() {
  if (pool_ != nullptr) pool_->Give(sending_bytes_);
  sending_bytes_ = 0;
}

template <typename S, typename U>
void StandingQueue<S, U>::Sent() {
  WriterLock lock(&mu_);
  SentLocked();
}

template <typename S, typename U>
bool StandingQueue<S, U>::Pop(Message* out) {
  WriterLock lock(&mu_);
  SentLocked();
  if (messages_.empty()) return false;
  *out = std::move(messages_.front());
  messages_.pop_front();
  if (const auto* update = std::get_if<U>(out)) {
    queued_events_ -= QueuedEvents(*update);
    const size_t bytes = UpdateBytes(*update);
    queued_bytes_ -= bytes;
    // Still held while the consumer sends it.
    sending_bytes_ = bytes;
  }
  return true;
}

template <typename S, typename U>
bool StandingQueue<S, U>::Finished() const {
  WriterLock lock(&mu_);
  return closed_ && messages_.empty();
}

template <typename S, typename U>
WatchEnd StandingQueue<S, U>::end_reason() const {
  WriterLock lock(&mu_);
  return end_reason_;
}

template <typename S, typename U>
uint64_t StandingQueue<S, U>::overflows() const {
  WriterLock lock(&mu_);
  return overflows_;
}

template <typename S, typename U>
size_t StandingQueue<S, U>::queued_bytes() const {
  WriterLock lock(&mu_);
  return queued_bytes_ + sending_bytes_;
}

template class StandingQueue<WatchSnapshot, WatchUpdate>;
template class StandingQueue<InterestSnapshot, InterestUpdate>;

}  // namespace collide
