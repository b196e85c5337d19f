#pragma once

#include <cstddef>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/cpp/message_iterator.h"
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

  /// An input iterator over the messages (Read): it equals end() once the stream has ended
  /// (Finish then says why).
  using Iterator = MessageIterator<WatchStream, v1::WatchResponse>;

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
