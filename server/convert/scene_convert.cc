#include "server/convert/scene_convert.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "server/convert/geometry_convert.h"

namespace collide {

absl::StatusOr<SceneOptions> SceneOptionsFromProto(const v1::SceneOptions& proto,
                                                   const ServiceLimits& limits) {
  SceneOptions options;
  if (proto.has_fat_margin()) {
    const float margin = proto.fat_margin();
    if (!std::isfinite(margin) || margin < 0.0f || margin > 1e6f) {
      return absl::InvalidArgumentError(
          absl::StrCat("options.fat_margin: must be finite and in [0, 1e6], got ", margin));
    }
    options.fat_margin = margin;
  }
  const uint32_t cap = std::min(limits.max_bodies_per_scene, kMaxBodiesLimit);
  options.max_bodies = std::min<uint32_t>(1'000'000, cap);
  if (proto.has_max_bodies()) {
    if (proto.max_bodies() < 1 || proto.max_bodies() > cap) {
      return absl::InvalidArgumentError(
          absl::StrCat("options.max_bodies: must be in [1, ", cap, "], got ", proto.max_bodies()));
    }
    options.max_bodies = proto.max_bodies();
  }
  if (proto.has_history_ticks()) {
    if (proto.history_ticks() > kMaxHistoryTicks) {
      return absl::InvalidArgumentError(absl::StrCat("options.history_ticks: must be in [0, ",
                                                     kMaxHistoryTicks, "], got ",
                                                     proto.history_ticks()));
    }
    options.history_ticks = proto.history_ticks();
  }
  switch (proto.durability()) {
    case v1::DURABILITY_DEFAULT:
      options.durability = DurabilityPolicy::kDefault;
      break;
    case v1::DURABILITY_NONE:
      options.durability = DurabilityPolicy::kNone;
      break;
    case v1::DURABILITY_PERIODIC:
      options.durability = DurabilityPolicy::kPeriodic;
      break;
    case v1::DURABILITY_ALWAYS:
      options.durability = DurabilityPolicy::kAlways;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("options.durability: unknown durability ",
                                                     static_cast<int>(proto.durability())));
  }
  return options;
}

v1::Durability DurabilityToProto(DurabilityPolicy policy) {
  switch (policy) {
    case DurabilityPolicy::kNone:
      return v1::DURABILITY_NONE;
    case DurabilityPolicy::kPeriodic:
      return v1::DURABILITY_PERIODIC;
    case DurabilityPolicy::kAlways:
      return v1::DURABILITY_ALWAYS;
    case DurabilityPolicy::kDefault:
      break;
  }
  return v1::DURABILITY_DEFAULT;
}

void StatsToProto(const SceneStats& stats, v1::SceneStats* out) {
  out->set_version(stats.version);
  out->set_body_count(static_cast<uint32_t>(stats.body_count));
  out->set_static_body_count(static_cast<uint32_t>(stats.static_body_count));
  out->set_tree_height(static_cast<uint32_t>(stats.tree_height));
  out->set_memory_bytes(stats.memory_bytes);
  out->set_tick(stats.tick);
  out->set_oldest_tick(stats.oldest_tick);
}

void SceneInfoToProto(const Scene& scene, DurabilityPolicy server_default, v1::SceneInfo* out) {
  out->set_name(scene.name());
  const SceneOptions& options = scene.options();
  v1::SceneOptions* o = out->mutable_options();
  o->set_fat_margin(options.fat_margin);
  o->set_max_bodies(options.max_bodies);
  o->set_history_ticks(options.history_ticks);
  o->set_durability(DurabilityToProto(
      options.durability == DurabilityPolicy::kDefault ? server_default : options.durability));
  StatsToProto(scene.Stats(), out->mutable_stats());
  out->set_moved_to(scene.moved_to());
}

absl::Status BodyToOp(const v1::Body& body, const FieldPath& at, UpdateOp* op) {
  op->type = UpdateOpType::kUpsert;
  op->body_id = body.id();
  switch (body.kind()) {
    case v1::BODY_KIND_DYNAMIC:
      op->kind = BodyKind::kDynamic;
      break;
    case v1::BODY_KIND_STATIC:
      op->kind = BodyKind::kStatic;
      break;
    default:
      return InvalidField(at, "kind",
                          absl::StrCat("unknown body kind ", static_cast<int>(body.kind())));
  }
  COLLIDE_RETURN_IF_ERROR(ShapeFromProto(body.shape(), at, "shape", &op->shape));
  COLLIDE_RETURN_IF_ERROR(PoseFromProto(body.pose(), at, "pose", &op->pose));
  op->category = body.has_category() ? body.category() : 1u;
  op->mask = body.has_mask() ? body.mask() : ~0u;
  op->user_data = body.user_data();
  return absl::OkStatus();
}

void BodyStateToProto(const BodyState& state, v1::Body* out) {
  out->set_id(state.id);
  v1::Shape* shape = out->mutable_shape();
  switch (state.shape.type) {
    case ShapeType::kSphere:
      shape->mutable_sphere()->set_radius(state.shape.sphere.radius);
      break;
    case ShapeType::kBox:
      ToProtoVec3(state.shape.box.half_extents, shape->mutable_box()->mutable_half_extents());
      break;
    case ShapeType::kCapsule:
      shape->mutable_capsule()->set_radius(state.shape.capsule.radius);
      shape->mutable_capsule()->set_half_height(state.shape.capsule.half_height);
      break;
  }
  v1::Pose* pose = out->mutable_pose();
  ToProtoVec3(state.pose.position, pose->mutable_position());
  v1::Quat* q = pose->mutable_rotation();
  q->set_x(state.pose.rotation.x);
  q->set_y(state.pose.rotation.y);
  q->set_z(state.pose.rotation.z);
  q->set_w(state.pose.rotation.w);
  out->set_category(state.category);
  out->set_mask(state.mask);
  out->set_user_data(state.user_data);
  out->set_kind(state.kind == BodyKind::kStatic ? v1::BODY_KIND_STATIC : v1::BODY_KIND_DYNAMIC);
}

}  // namespace collide
