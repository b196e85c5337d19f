#include "server/convert/interest_convert.h"

#include <variant>

#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "server/convert/geometry_convert.h"

namespace collide {
namespace {

absl::Status ObserverFromProto(const v1::Observer& proto, size_t index, ObserverSpec* out) {
  if (proto.filter().excluded_ids_size() > 0) {
    return InvalidElementError("observers", index, "filter.excluded_ids",
                               "observers exclude no ids (must be empty)");
  }
  out->id = proto.id();
  if (proto.has_attached_to()) out->attached_to = proto.attached_to();
  out->pose = ToPose(proto.pose());
  out->enter_radius = proto.enter_radius();
  out->leave_radius = proto.has_leave_radius() ? proto.leave_radius() : proto.enter_radius();
  if (proto.has_cone()) {
    const v1::ViewCone& cone = proto.cone();
    out->cone = ViewCone{.direction = ToVec3(cone.direction()),
                         .half_angle = cone.half_angle(),
                         .leave_half_angle = cone.has_leave_half_angle() ? cone.leave_half_angle()
                                                                         : cone.half_angle()};
  }
  out->category = proto.filter().has_category() ? proto.filter().category() : ~0u;
  out->mask = proto.filter().has_mask() ? proto.filter().mask() : ~0u;
  out->max_relevant = proto.max_relevant();
  return absl::OkStatus();
}

}  // namespace

absl::Status ObserverChangesFromProto(const v1::InterestRequest& request,
                                      const ServiceLimits& limits, ObserverChanges* out) {
  if (static_cast<uint64_t>(request.observers_size()) > limits.max_observers_per_stream) {
    return FieldStatus(
        absl::StatusCode::kResourceExhausted, "observers",
        absl::StrCat("an interest stream holds at most ", limits.max_observers_per_stream,
                     " observers (--max_observers_per_stream), got ", request.observers_size(),
                     " in one message"));
  }
  out->upserts.clear();
  out->upserts.resize(static_cast<size_t>(request.observers_size()));
  for (size_t i = 0; i < out->upserts.size(); ++i) {
    absl::Status status =
        ObserverFromProto(request.observers(static_cast<int>(i)), i, &out->upserts[i]);
    if (!status.ok()) return status;
  }
  out->removes.assign(request.removes().begin(), request.removes().end());
  return absl::OkStatus();
}

void InterestMessageToProto(const InterestMessage& message, v1::InterestResponse* out) {
  out->Clear();
  if (const auto* s = std::get_if<InterestSnapshot>(&message)) {
    v1::InterestSnapshot* snapshot = out->mutable_snapshot();
    snapshot->set_version(s->version);
    snapshot->set_tick(s->tick);
    snapshot->set_resync(s->resync);
    snapshot->set_requests_applied(s->requests_applied);
    snapshot->mutable_sets()->Reserve(static_cast<int>(s->sets.size()));
    size_t at = 0;
    for (const RelevantSet& r : s->sets) {
      v1::RelevantSet* set = snapshot->add_sets();
      set->set_observer_id(r.observer_id);
      set->mutable_body_ids()->Add(s->ids.begin() + at, s->ids.begin() + at + r.count);
      at += r.count;
    }
    return;
  }
  const InterestUpdate& u = std::get<InterestUpdate>(message);
  v1::InterestUpdate* update = out->mutable_update();
  update->set_version(u.version);
  update->set_tick(u.tick);
  update->set_requests_applied(u.requests_applied);
  update->mutable_deltas()->Reserve(static_cast<int>(u.deltas.size()));
  size_t at = 0;
  for (const ObserverDelta& d : u.deltas) {
    v1::ObserverDelta* delta = update->add_deltas();
    delta->set_observer_id(d.observer_id);
    delta->set_full(d.full);
    delta->mutable_entered()->Add(u.ids.begin() + at, u.ids.begin() + at + d.entered);
    at += d.entered;
    delta->mutable_left()->Add(u.ids.begin() + at, u.ids.begin() + at + d.left);
    at += d.left;
  }
}

}  // namespace collide
