#include "server/rpc/watch_stream.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "server/convert/field_path.h"
#include "server/convert/geometry_convert.h"
#include "server/convert/scene_convert.h"
#include "server/convert/status_convert.h"
#include "server/convert/wire_message.h"

namespace collide {
namespace {

absl::Status FenceFromProto(const v1::Fence& proto, size_t index, FenceSpec* out) {
  // The shape and pose are checked as a body's (same rules, paths `fences[i].shape...`).
  const FieldPath at{"fences", index, ""};
  v1::Body body;
  *body.mutable_shape() = proto.shape();
  *body.mutable_pose() = proto.pose();
  UpdateOp op;
  COLLIDE_RETURN_IF_ERROR(BodyToOp(body, at, &op));
  if (proto.filter().excluded_ids_size() > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(at.Of("filter.excluded_ids"), ": fences exclude no ids (must be empty)"));
  }
  out->id = proto.id();
  out->shape = op.shape;
  out->pose = op.pose;
  if (proto.has_attached_to()) out->attached_to = proto.attached_to();
  out->category = proto.filter().has_category() ? proto.filter().category() : ~0u;
  out->mask = proto.filter().has_mask() ? proto.filter().mask() : ~0u;
  return absl::OkStatus();
}

}  // namespace

absl::Status WatchSpecsFromProto(const v1::WatchRequest& request, const ServiceLimits& limits,
                                 std::vector<FenceSpec>* fences,
                                 std::vector<ContactWatchSpec>* contacts) {
  if (static_cast<uint64_t>(request.fences_size()) > limits.max_fences_per_watch) {
    return absl::ResourceExhaustedError(absl::StrCat("fences: a watch holds at most ",
                                                     limits.max_fences_per_watch, " fences, got ",
                                                     request.fences_size()));
  }
  if (request.contacts_size() > kMaxContactWatches) {
    return absl::ResourceExhaustedError(absl::StrCat("contacts: a watch holds at most ",
                                                     kMaxContactWatches, " contact watches, got ",
                                                     request.contacts_size()));
  }
  fences->clear();
  fences->reserve(request.fences_size());
  absl::flat_hash_set<uint64_t> ids;
  for (int i = 0; i < request.fences_size(); ++i) {
    FenceSpec fence;
    COLLIDE_RETURN_IF_ERROR(FenceFromProto(request.fences(i), static_cast<size_t>(i), &fence));
    if (!ids.insert(fence.id).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("fences[", i, "].id: fence ", fence.id, " appears twice"));
    }
    fences->push_back(fence);
  }
  ids.clear();
  contacts->clear();
  for (int i = 0; i < request.contacts_size(); ++i) {
    const v1::ContactWatch& c = request.contacts(i);
    if (!ids.insert(c.id()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("contacts[", i, "].id: contact watch ", c.id(), " appears twice"));
    }
    contacts->push_back(ContactWatchSpec{.id = c.id(),
                                         .category_a = c.has_category_a() ? c.category_a() : ~0u,
                                         .category_b = c.has_category_b() ? c.category_b() : ~0u});
  }
  return absl::OkStatus();
}

void WatchMessageToProto(const WatchMessage& message, v1::WatchResponse* out) {
  out->Clear();
  if (const auto* s = std::get_if<WatchSnapshot>(&message)) {
    v1::WatchSnapshot* snapshot = out->mutable_snapshot();
    snapshot->set_version(s->version);
    snapshot->set_tick(s->tick);
    snapshot->set_resync(s->resync);
    for (const FenceContents& f : s->fences) {
      v1::FenceContents* contents = snapshot->add_fences();
      contents->set_fence_id(f.fence_id);
      contents->mutable_body_ids()->Add(f.body_ids.begin(), f.body_ids.end());
    }
    for (const ContactPair& p : s->contacts) {
      v1::ContactPair* pair = snapshot->add_contacts();
      pair->set_contact_id(p.watch_id);
      pair->set_body_id(p.body_id);
      pair->set_other_body_id(p.other_body_id);
    }
    return;
  }
  const WatchUpdate& u = std::get<WatchUpdate>(message);
  v1::WatchUpdate* update = out->mutable_update();
  update->set_version(u.version);
  update->set_tick(u.tick);
  for (const WatchEvent& e : u.events) {
    v1::WatchEvent* event = update->add_events();
    event->set_body_id(e.body_id);
    switch (e.kind) {
      case WatchEventKind::kEnter:
        event->set_kind(v1::WatchEvent::KIND_ENTER);
        event->set_fence_id(e.watch_id);
        ToProtoVec3(e.point, event->mutable_point());
        ToProtoVec3(e.normal, event->mutable_normal());
        break;
      case WatchEventKind::kExit:
        event->set_kind(v1::WatchEvent::KIND_EXIT);
        event->set_fence_id(e.watch_id);
        break;
      case WatchEventKind::kContactBegin:
      case WatchEventKind::kContactEnd:
        event->set_kind(e.kind == WatchEventKind::kContactBegin ? v1::WatchEvent::KIND_CONTACT_BEGIN
                                                                : v1::WatchEvent::KIND_CONTACT_END);
        event->set_contact_id(e.watch_id);
        event->set_other_body_id(e.other_body_id);
        break;
    }
  }
}

WatchReactor::WatchReactor(const ServiceContext& context, const Principal* principal,
                           const v1::WatchRequest& request, std::unique_ptr<StreamHandle> stream)
    : SerialWriter(std::move(stream)), context_(context), principal_(principal) {
  if (absl::Status status = Start(request); !status.ok()) FinishOnce(ToGrpcStatus(status));
}
absl::Status WatchReactor::Start(const v1::WatchRequest& request) {
  COLLIDE_RETURN_IF_ERROR(principal_->CheckScene(request.scene()));
  std::vector<FenceSpec> fences;
  std::vector<ContactWatchSpec> contacts;
  COLLIDE_RETURN_IF_ERROR(WatchSpecsFromProto(request, context_.limits, &fences, &contacts));
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
