#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "collide/v1/collide.pb.h"
#include "grpcpp/support/byte_buffer.h"
#include "server/infra/auth.h"
#include "server/infra/stream_registry.h"
#include "server/rpc/serial_writer.h"
#include "server/service_context.h"
#include "watch/interest_validate.h"
#include "watch/interest_watcher.h"
#include "watch/watch_dispatcher.h"

namespace collide {

/// The reactor of one Interest call (bidirectional). Its first message names the scene: the
/// reactor then attaches an InterestWatcher to it through the server's WatchDispatcher (as a
/// Watch does) and writes what the watcher's bounded queue holds, one message at a time
/// (BidiSerialWriter): the next write starts when the previous one completed, so a slow client
/// leaves messages in the queue, where overflow turns them into a resync; each write is reported
/// to the stream's StreamHandle for the stall watchdog. Meanwhile it keeps one read open for the
/// client's next message: each is converted (interest_convert.h), checked
/// (ValidateObserverChanges), counted against the stream's and the server's observer limits
/// (--max_observers_per_stream, --max_interest_observers: the reactor keeps the ids the stream
/// declared), and submitted to the watcher, whose worker applies it at its next step.
///
/// The call ends with the first message's error (INVALID_ARGUMENT, PERMISSION_DENIED,
/// NOT_FOUND for an unknown scene), any later message's (INVALID_ARGUMENT or RESOURCE_EXHAUSTED
/// with its path, `messages[3].observers[0].enter_radius`), NOT_FOUND when the scene is deleted,
/// RESOURCE_EXHAUSTED when the sets outgrow --max_watch_contents, or when the client cancels. A
/// half-close only stops the reading: the sets keep coming.
class InterestReactor final : public BidiSerialWriter {
 public:
  /// Starts reading. `principal` (already checked for the reader role) and `context` outlive
  /// the call; `scene_header` is the call's x-collide-scene metadata; `stream` is the call's
  /// registration (null when streams are not tracked).
  InterestReactor(const ServiceContext& context, const Principal* principal,
                  std::optional<std::string> scene_header, std::unique_ptr<StreamHandle> stream);

  void OnReadDone(bool ok) override;
  void OnDone() override;

 private:
  // The message just read, as the stream's `index`-th.
  absl::Status Process(uint64_t index);
  // The first message: the scene and the watcher (attached once its changes are submitted).
  absl::Status Open(uint64_t index);
  // Counts the observers `changes` adds and removes against the limits, and keeps the ids.
  absl::Status Count(const ObserverChanges& changes, uint64_t index);
  Step NextMessage(grpc::ByteBuffer* out) override;
  grpc::Status EndStatus() override;
  void Sent() override;

  const ServiceContext& context_;
  const Principal* const principal_;
  const std::optional<std::string> scene_header_;
  const InterestLimits limits_;
  // Touched only by the read side (one read at a time).
  grpc::ByteBuffer in_;
  v1::InterestRequest request_;
  ObserverChanges changes_;
  uint64_t messages_read_ = 0;
  std::string scene_;
  // The observers declared by the messages read so far, and the units of the server's
  // observer allowance taken for them.
  absl::flat_hash_set<uint64_t> ids_;
  uint64_t taken_ = 0;
  // Set by the first message, before any write (the queue's listener starts the writes).
  std::shared_ptr<InterestWatcher> watcher_;
  // The scene, from the first message until the watcher is attached to it.
  std::shared_ptr<const Scene> scene_ref_;
  std::unique_ptr<WatchDispatcher::Attachment> attachment_;
};

}  // namespace collide
