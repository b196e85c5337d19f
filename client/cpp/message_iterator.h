#pragma once

#include <cstddef>
#include <iterator>
#include <utility>

#include "absl/status/statusor.h"

namespace collide::client {

/// An input iterator over a server stream's messages, for any `Stream` whose
/// `absl::StatusOr<Message> Read()` returns the next message or why there is none: advancing
/// reads the next one; the iterator equals the end iterator once the stream has ended (the
/// stream's Finish then says why). WatchStream and InterestStream iterate with it.
template <typename Stream, typename Message>
class MessageIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = Message;
  using difference_type = std::ptrdiff_t;
  using pointer = const Message*;
  using reference = const Message&;

  /// The end iterator.
  MessageIterator() = default;
  /// Reads the first message of `stream`.
  explicit MessageIterator(Stream* stream) : stream_(stream) { Advance(); }
  /// The current message.
  reference operator*() const { return message_; }
  /// The current message's members.
  pointer operator->() const { return &message_; }
  /// Reads the next message.
  MessageIterator& operator++() {
    Advance();
    return *this;
  }
  /// Iterators are equal when both are at the end (or are the same position).
  friend bool operator==(const MessageIterator& a, const MessageIterator& b) {
    return a.stream_ == b.stream_;
  }

 private:
  void Advance() {
    absl::StatusOr<Message> next = stream_->Read();
    if (next.ok()) {
      message_ = *std::move(next);
    } else {
      stream_ = nullptr;
    }
  }

  Stream* stream_ = nullptr;
  Message message_;
};

}  // namespace collide::client
