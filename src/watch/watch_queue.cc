#include "watch/watch_queue.h"

#include <utility>

namespace collide {

WatchQueue::WatchQueue(size_t max_events) : max_events_(max_events > 0 ? max_events : 1) {}

void WatchQueue::SetListener(std::function<void()> listener) { listener_ = std::move(listener); }

void WatchQueue::Notify() {
  if (listener_) listener_();
}

void WatchQueue::Push(WatchSnapshot snapshot) {
  {
    WriterLock lock(&mu_);
    messages_.push_back(std::move(snapshot));
  }
  Notify();
}

bool WatchQueue::TryPush(WatchUpdate&& update) {
  {
    WriterLock lock(&mu_);
    const size_t n = update.events.size();
    if (queued_events_ > 0 && queued_events_ + n > max_events_) return false;
    if (queued_events_ == 0 && n > max_events_ && !messages_.empty()) return false;
    queued_events_ += n;
    messages_.push_back(std::move(update));
  }
  Notify();
  return true;
}

void WatchQueue::Replace(WatchSnapshot snapshot) {
  {
    WriterLock lock(&mu_);
    messages_.clear();
    queued_events_ = 0;
    ++overflows_;
    snapshot.resync = true;
    messages_.push_back(std::move(snapshot));
  }
  Notify();
}

void WatchQueue::Close() {
  {
    WriterLock lock(&mu_);
    closed_ = true;
  }
  Notify();
}

bool WatchQueue::Pop(WatchMessage* out) {
  WriterLock lock(&mu_);
  if (messages_.empty()) return false;
  *out = std::move(messages_.front());
  messages_.pop_front();
  if (const auto* update = std::get_if<WatchUpdate>(out)) queued_events_ -= update->events.size();
  return true;
}

bool WatchQueue::Finished() const {
  WriterLock lock(&mu_);
  return closed_ && messages_.empty();
}

uint64_t WatchQueue::overflows() const {
  WriterLock lock(&mu_);
  return overflows_;
}

}  // namespace collide
