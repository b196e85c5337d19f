#include "server/rpc/watch_stream.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "server/convert/status_convert.h"
#include "server/convert/watch_convert.h"
#include "server/convert/wire_message.h"
#include "watch/watch_validate.h"

namespace collide {

WatchReactor::WatchReactor(const ServiceContext& context, const Principal* principal,
                           const v1::WatchRequest& request, std::unique_ptr<StreamHandle> stream)
    : SerialWriter(std::move(stream)), context_(context), principal_(principal) {
  if (absl::Status status = Start(request); !status.ok()) End(ToGrpcStatus(status));
}
absl::Status WatchReactor::Start(const v1::WatchRequest& request) {
  COLLIDE_RETURN_IF_ERROR(principal_->CheckScene(request.scene()));
  std::vector<FenceSpec> fences;
  std::vector<ContactWatchSpec> contacts;
  COLLIDE_RETURN_IF_ERROR(WatchSpecsFromProto(request, context_.limits, &fences, &contacts));
  COLLIDE_RETURN_IF_ERROR(PrepareWatch(fences, contacts));
  COLLIDE_ASSIGN_OR_RETURN(std::shared_ptr<const Scene> scene,
                           context_.db->GetScene(request.scene()));
  const uint32_t asked =
      request.max_queued_events() == 0 ? kDefaultWatchQueuedEvents : request.max_queued_events();
  WatcherOptions options{.max_queued_events =
                             std::min(asked, context_.limits.max_watch_queued_events)};
  WatchDispatcher* dispatcher = context_.watches;
  if (dispatcher != nullptr) {
    Allowance& budget = dispatcher->budget().fences;
    const uint64_t units = fences.size() + contacts.size();
    if (!budget.TryTake(units)) {
      return absl::ResourceExhaustedError(
          absl::StrCat("fences: the server's watches hold ", budget.used(),
                       " fences and contact watches; ", units, " more would pass its limit of ",
                       budget.limit(), " (--max_watch_fences); retry later"));
    }
    options.budget = &dispatcher->budget();
    options.reserved_fences = units;
  }
  watcher_ = std::make_shared<Watcher>(std::move(fences), std::move(contacts), options);
  watcher_->queue().SetListener([this] { Pump(); });
  if (dispatcher == nullptr) return watcher_->Attach(std::move(scene));
  attachment_ = dispatcher->Attach(std::move(scene), watcher_);
  return absl::OkStatus();
}

grpc::Status WatchReactor::EndStatus() {
  if (watcher_->queue().end_reason() == WatchEnd::kContentsExhausted) {
    const Allowance& contents = context_.watches->budget().contents;
    return ToGrpcStatus(absl::ResourceExhaustedError(absl::StrCat(
        "fences: the bodies inside this watch's fences and its contact pairs would take the "
        "server's watches past their limit of ",
        contents.limit(), " entries (--max_watch_contents); the watch is ended")));
  }
  return grpc::Status(grpc::StatusCode::NOT_FOUND, "scene: the scene was deleted");
}

SerialWriter::Step WatchReactor::NextMessage(grpc::ByteBuffer* out) {
  WatchMessage message;
  if (!watcher_->queue().Pop(&message)) {
    return watcher_->queue().Finished() ? Step::kEnd : Step::kWait;
  }
  // Only the encoding is kept while the message is sent (the other copies go at once).
  v1::WatchResponse response;
  WatchMessageToProto(message, &response);
  // A watch message is bounded by the watch's limits (fences, queued events), far below the
  // 2 GiB that SerializeMessage refuses.
  SerializeMessage(response, out).IgnoreError();
  return Step::kWrite;
}

void WatchReactor::Sent() { watcher_->queue().Sent(); }

void WatchReactor::OnDone() {
  if (watcher_ != nullptr) {
    // No listener call runs after this, so the watch worker never reaches this reactor again;
    // the watcher itself may live a little longer (the worker holds it until its next step).
    watcher_->queue().ClearListener();
    attachment_.reset();
    // A watcher attached to the scene directly: waits for a batch callback in progress.
    watcher_->Detach();
  }
  delete this;
}

}  // namespace collide
