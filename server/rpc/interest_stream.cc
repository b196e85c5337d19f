#include "server/rpc/interest_stream.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "base/status_macros.h"
#include "server/convert/field_path.h"
#include "server/convert/interest_convert.h"
#include "server/convert/status_convert.h"
#include "server/convert/wire_message.h"
#include "server/infra/scene_header.h"

namespace collide {

InterestReactor::InterestReactor(const ServiceContext& context, const Principal* principal,
                                 std::optional<std::string> scene_header,
                                 std::unique_ptr<StreamHandle> stream)
    : BidiSerialWriter(std::move(stream)),
      context_(context),
      principal_(principal),
      scene_header_(std::move(scene_header)),
      limits_(InterestLimits{.max_relevant = context.limits.max_relevant_per_observer}) {
  call().Read(&in_);
}

void InterestReactor::OnReadDone(bool ok) {
  if (!call().OnReadDone()) return;  // the call is ending: the message, if any, is dropped
  if (!ok) {
    // The client half-closed: it changes nothing more, and the sets keep coming.
    return;
  }
  const uint64_t index = messages_read_++;
  absl::Status status = ParseMessage(&in_, &request_, FieldPath("messages", index, ""));
  if (status.ok()) status = Process(index);
  if (!status.ok()) {
    End(ToGrpcStatus(status));
    return;
  }
  call().Read(&in_);
}

absl::Status InterestReactor::Process(uint64_t index) {
  const std::string message = FieldPath("messages", index, "");
  // The values, translated then checked by the core; errors named in the stream's words.
  absl::Status status = ObserverChangesFromProto(request_, context_.limits, &changes_);
  if (status.ok()) status = ValidateObserverChanges(&changes_, limits_);
  if (!status.ok()) return ForRequest(UnderField(status, message), RequestLayout{});
  if (watcher_ == nullptr) {
    COLLIDE_RETURN_IF_ERROR(Open(index));
  } else if (!request_.scene().empty() && request_.scene() != scene_) {
    return InvalidFieldError(absl::StrCat(message, ".scene"),
                             absl::StrCat("the stream follows scene \"", scene_,
                                          "\" (later messages leave it empty or repeat it)"));
  }
  COLLIDE_RETURN_IF_ERROR(Count(changes_, index));
  watcher_->Submit(changes_);
  if (attachment_ != nullptr) {
    attachment_->Poke();
  } else {
    // Attached once its first changes are in: a worker starts it with them (its snapshot).
    attachment_ = context_.watches->AttachQuery(std::move(scene_ref_), watcher_);
  }
  return absl::OkStatus();
}

absl::Status InterestReactor::Open(uint64_t index) {
  if (request_.scene().empty()) {
    return InvalidFieldError(FieldPath("messages", index, "scene"),
                             "required in the first message");
  }
  COLLIDE_RETURN_IF_ERROR(CheckSceneHeader(scene_header_, request_.scene()));
  COLLIDE_RETURN_IF_ERROR(principal_->CheckScene(request_.scene()));
  WatchDispatcher* dispatcher = context_.watches;
  if (dispatcher == nullptr) {
    return absl::FailedPreconditionError("interest: this server evaluates no standing queries");
  }
  COLLIDE_ASSIGN_OR_RETURN(scene_ref_, context_.db->GetScene(request_.scene()));
  scene_ = request_.scene();
  const uint32_t asked = request_.max_queued_events() == 0 ? kDefaultInterestQueuedEvents
                                                           : request_.max_queued_events();
  watcher_ = std::make_shared<InterestWatcher>(InterestWatcherOptions{
      .max_queued_events = std::min(asked, context_.limits.max_watch_queued_events),
      .budget = &dispatcher->budget()});
  watcher_->queue().SetListener([this] { Pump(); });
  return absl::OkStatus();
}

absl::Status InterestReactor::Count(const ObserverChanges& changes, uint64_t index) {
  uint64_t added = 0, removed = 0;
  for (const ObserverSpec& spec : changes.upserts) added += ids_.contains(spec.id) ? 0 : 1;
  for (uint64_t id : changes.removes) removed += ids_.contains(id) ? 1 : 0;
  const uint64_t after = ids_.size() + added - removed;
  const std::string field = FieldPath("messages", index, "observers");
  if (after > context_.limits.max_observers_per_stream) {
    return FieldStatus(
        absl::StatusCode::kResourceExhausted, field,
        absl::StrCat("an interest stream holds at most ", context_.limits.max_observers_per_stream,
                     " observers (--max_observers_per_stream); this message "
                     "would make it ",
                     after));
  }
  Allowance& budget = context_.watches->budget().observers;
  if (after > ids_.size()) {
    const uint64_t more = after - ids_.size();
    if (!budget.TryTake(more)) {
      return FieldStatus(absl::StatusCode::kResourceExhausted, field,
                         absl::StrCat("the server's interest streams hold ", budget.used(),
                                      " observers; ", more, " more would pass its limit of ",
                                      budget.limit(), " (--max_interest_observers)"));
    }
    taken_ += more;
  } else {
    budget.Give(ids_.size() - after);
    taken_ -= ids_.size() - after;
  }
  for (uint64_t id : changes.removes) ids_.erase(id);
  for (const ObserverSpec& spec : changes.upserts) ids_.insert(spec.id);
  return absl::OkStatus();
}

grpc::Status InterestReactor::EndStatus() {
  if (watcher_->queue().end_reason() == WatchEnd::kContentsExhausted) {
    const Allowance& contents = context_.watches->budget().contents;
    return ToGrpcStatus(absl::ResourceExhaustedError(absl::StrCat(
        "observers: the bodies in this stream's sets would take the server's watches and "
        "interest streams past their limit of ",
        contents.limit(), " entries (--max_watch_contents); the stream is ended")));
  }
  return grpc::Status(grpc::StatusCode::NOT_FOUND, "scene: the scene was deleted");
}

InterestReactor::Step InterestReactor::NextMessage(grpc::ByteBuffer* out) {
  InterestMessage message;
  if (!watcher_->queue().Pop(&message)) {
    return watcher_->queue().Finished() ? Step::kEnd : Step::kWait;
  }
  v1::InterestResponse response;
  InterestMessageToProto(message, &response);
  // A message is bounded by the stream's limits (observers, their sets, queued events), far below
  // the 2 GiB SerializeMessage refuses.
  SerializeMessage(response, out).IgnoreError();
  return Step::kWrite;
}

void InterestReactor::Sent() { watcher_->queue().Sent(); }

void InterestReactor::OnDone() {
  if (watcher_ != nullptr) {
    // No listener call runs after this, so the worker never reaches this reactor again; the
    // watcher itself may live a little longer (the hub holds it until its next step).
    watcher_->queue().ClearListener();
    attachment_.reset();
  }
  if (taken_ > 0) context_.watches->budget().observers.Give(taken_);
  delete this;
}

}  // namespace collide
