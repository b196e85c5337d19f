#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/cpp/stream_end.h"
#include "collide/v1/collide.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/sync_stream.h"

namespace collide::client {

/// One open Watch (standing queries on one scene): first a WatchSnapshot, then one WatchUpdate
/// per applied batch that changed something the watch sees, and a WatchSnapshot with resync set
/// whenever the client fell so far behind that the server replaced the updates it had queued.
/// Read blocks for the next message; the messages can also be iterated:
///
///     for (const v1::WatchResponse& message : *watch) { ... }
///     absl::Status why = watch->Finish();   // why the iteration ended
///
/// Cancel may be called from any thread (a blocked Read then returns).
class WatchStream {
 public:
  /// Use Client::Watch.
  WatchStream(std::unique_ptr<grpc::ClientContext> context,
              std::unique_ptr<grpc::ClientReader<v1::WatchResponse>> stream);
  WatchStream(const WatchStream&) = delete;
  WatchStream& operator=(const WatchStream&) = delete;
  /// Cancels the stream if it is still open.
  ~WatchStream();

  /// Blocks for the next message; once the stream has ended, its final status (NOT_FOUND when
  /// the scene was deleted, CANCELLED after Cancel, UNAVAILABLE if it ended cleanly).
  absl::StatusOr<v1::WatchResponse> Read();
  /// Cancels the stream from any thread.
  void Cancel();
  /// The stream's final status (cancelling it first if it is still open).
  absl::Status Finish();

  /// An input iterator over the messages: advancing reads the next one; it equals end() once
  /// the stream has ended (Finish then says why).
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = v1::WatchResponse;
    using difference_type = std::ptrdiff_t;
    using pointer = const v1::WatchResponse*;
    using reference = const v1::WatchResponse&;

    /// The end iterator.
    Iterator() = default;
    /// Reads the first message of `stream`.
    explicit Iterator(WatchStream* stream) : stream_(stream) { Advance(); }
    /// The current message.
    reference operator*() const { return message_; }
    /// The current message's members.
    pointer operator->() const { return &message_; }
    /// Reads the next message.
    Iterator& operator++() {
      Advance();
      return *this;
    }
    /// Iterators are equal when both are at the end (or are the same position).
    friend bool operator==(const Iterator& a, const Iterator& b) { return a.stream_ == b.stream_; }

   private:
    void Advance();
    WatchStream* stream_ = nullptr;
    v1::WatchResponse message_;
  };

  /// Starts iterating (reads the first message).
  Iterator begin() { return Iterator(this); }
  /// The end of the messages.
  Iterator end() { return Iterator(); }

 private:
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::ClientReader<v1::WatchResponse>> stream_;
  StreamEnd end_;
};

}  // namespace collide::client
