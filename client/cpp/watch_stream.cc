#include "client/cpp/watch_stream.h"

#include <utility>

namespace collide::client {

WatchStream::WatchStream(std::unique_ptr<grpc::ClientContext> context,
                         std::unique_ptr<grpc::ClientReader<v1::WatchResponse>> stream)
    : context_(std::move(context)), stream_(std::move(stream)) {}

WatchStream::~WatchStream() {
  if (!end_.status().has_value()) Finish().IgnoreError();
}

absl::StatusOr<v1::WatchResponse> WatchStream::Read() {
  v1::WatchResponse message;
  if (!end_.status().has_value() && stream_->Read(&message)) return message;
  return end_.Ended(stream_.get(), "watch: the stream ended");
}

void WatchStream::Cancel() { context_->TryCancel(); }

absl::Status WatchStream::Finish() {
  if (!end_.status().has_value()) {
    // A watch never ends by itself: cancel, then drain what is in flight.
    context_->TryCancel();
    v1::WatchResponse ignored;
    while (stream_->Read(&ignored)) {
    }
  }
  return end_.FinishOnce(stream_.get());
}

}  // namespace collide::client
