#pragma once

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "collide/v1/collide.pb.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "server/infra/auth.h"
#include "server/infra/stream_registry.h"
#include "server/rpc/serial_writer.h"
#include "server/service_context.h"
#include "watch/watch_dispatcher.h"
#include "watch/watch_types.h"
#include "watch/watcher.h"

namespace collide {

/// The reactor of one Watch call. It validates the request, takes its fences from the server's
/// watch budget (--max_watch_fences), attaches a Watcher to the scene through the server's
/// WatchDispatcher and then writes what the watcher's bounded queue holds, one message at a
/// time (SerialWriter): the next write starts when the previous one completed (so a slow client
/// leaves messages in the queue, where overflow turns them into a resync). The queue's listener,
/// called on a watch worker after each message queued, only starts a write when none is in
/// flight. Each write is reported to the stream's StreamHandle, so that the registry's stall
/// watchdog ends a stream whose client reads nothing. The call ends with NOT_FOUND when the
/// scene is deleted, RESOURCE_EXHAUSTED when the watch outgrows --max_watch_contents, or when
/// the client cancels.
class WatchReactor final : public SerialWriter {
 public:
  /// Starts the watch (or finishes the call with the request's error). `principal` (already
  /// checked for the reader role) and `context` outlive the call; `stream` is the call's
  /// registration (null when streams are not tracked).
  WatchReactor(const ServiceContext& context, const Principal* principal,
               const v1::WatchRequest& request, std::unique_ptr<StreamHandle> stream);

  void OnDone() override;

 private:
  absl::Status Start(const v1::WatchRequest& request);
  // The next queued message, or kEnd once the queue is closed and empty.
  Step NextMessage(grpc::ByteBuffer* out) override;
  // The status the call ends with once the watcher's queue is finished.
  grpc::Status EndStatus() override;
  void Sent() override;

  const ServiceContext& context_;
  const Principal* const principal_;
  std::shared_ptr<Watcher> watcher_;
  std::unique_ptr<WatchDispatcher::Attachment> attachment_;
};

}  // namespace collide
