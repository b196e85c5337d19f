#include "server/convert/watch_convert.h"

#include <variant>

#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "base/status_macros.h"
#include "server/convert/geometry_convert.h"

namespace collide {
namespace {

absl::Status FenceFromProto(const v1::Fence& proto, size_t index, FenceSpec* out) {
  COLLIDE_RETURN_IF_ERROR(AtElement(ToShape(proto.shape(), &out->shape), "fences", index, "shape"));
  if (proto.filter().excluded_ids_size() > 0) {
    return InvalidElementError("fences", index, "filter.excluded_ids",
                               "fences exclude no ids (must be empty)");
  }
  out->id = proto.id();
  out->pose = ToPose(proto.pose());
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
    return FieldStatus(absl::StatusCode::kResourceExhausted, "fences",
                       absl::StrCat("a watch holds at most ", limits.max_fences_per_watch,
                                    " fences, got ", request.fences_size()));
  }
  if (request.contacts_size() > kMaxContactWatches) {
    return FieldStatus(absl::StatusCode::kResourceExhausted, "contacts",
                       absl::StrCat("a watch holds at most ", kMaxContactWatches,
                                    " contact watches, got ", request.contacts_size()));
  }
  fences->clear();
  fences->resize(static_cast<size_t>(request.fences_size()));
  for (size_t i = 0; i < fences->size(); ++i) {
    COLLIDE_RETURN_IF_ERROR(FenceFromProto(request.fences(static_cast<int>(i)), i, &(*fences)[i]));
  }
  contacts->clear();
  contacts->reserve(static_cast<size_t>(request.contacts_size()));
  for (const v1::ContactWatch& c : request.contacts()) {
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
  for (const WatchEvent& e : u.events) WatchEventToProto(e, update->add_events());
}

void WatchEventToProto(const WatchEvent& e, v1::WatchEvent* event) {
  event->Clear();
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

void FenceSpecToProto(const FenceSpec& fence, v1::Fence* out) {
  out->Clear();
  out->set_id(fence.id);
  ToProtoShape(fence.shape, out->mutable_shape());
  ToProtoPose(fence.pose, out->mutable_pose());
  if (fence.attached_to.has_value()) out->set_attached_to(*fence.attached_to);
  out->mutable_filter()->set_category(fence.category);
  out->mutable_filter()->set_mask(fence.mask);
}

}  // namespace collide
