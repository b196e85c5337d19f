#include "server/proto_convert.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <span>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "server/status_convert.h"

namespace collide {
namespace {

bool InRange(float v) { return std::isfinite(v) && std::fabs(v) <= kMaxCoordinate; }
bool IsDimension(float v) { return std::isfinite(v) && v >= 0.0f && v <= kMaxCoordinate; }

absl::Status Invalid(const FieldPath& at, absl::string_view field, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(at.Of(field), ": ", reason));
}

std::string CoordinateReason() {
  return absl::StrFormat("must be finite and within +-%g", kMaxCoordinate);
}
std::string DimensionReason() {
  return absl::StrFormat("must be finite, >= 0 and <= %g", kMaxCoordinate);
}

Vec3 ToVec3(const v1::Vec3& v) { return Vec3{v.x(), v.y(), v.z()}; }

void ToProtoVec3(const Vec3& v, v1::Vec3* out) {
  out->set_x(v.x);
  out->set_y(v.y);
  out->set_z(v.z);
}

absl::Status PointFromProto(const v1::Vec3& proto, const FieldPath& at, absl::string_view field,
                            Vec3* out) {
  if (!InRange(proto.x()) || !InRange(proto.y()) || !InRange(proto.z())) {
    return Invalid(at, field, CoordinateReason());
  }
  *out = ToVec3(proto);
  return absl::OkStatus();
}

// A unit quaternion (renormalised) from x, y, z, w: INVALID_ARGUMENT unless within
// kUnitQuaternionTolerance of unit length.
absl::Status UnitQuat(float x, float y, float z, float w, const FieldPath& at,
                      absl::string_view field, Quat* out) {
  if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(z) || !std::isfinite(w)) {
    return Invalid(at, field, "must be finite");
  }
  // In double: float32 rounding of the squares is far below the tolerance.
  const double len = std::sqrt(double{x} * x + double{y} * y + double{z} * z + double{w} * w);
  if (std::fabs(len - 1.0) > kUnitQuaternionTolerance) {
    return Invalid(at, field, absl::StrFormat("must be a unit quaternion (length %.6g)", len));
  }
  *out = Quat{static_cast<float>(x / len), static_cast<float>(y / len), static_cast<float>(z / len),
              static_cast<float>(w / len)};
  return absl::OkStatus();
}

// `field` (a Pose) of the message at `at`: an absent rotation is the identity.
absl::Status PoseFromProto(const v1::Pose& proto, const FieldPath& at, absl::string_view field,
                           Pose* out) {
  Pose pose;
  COLLIDE_RETURN_IF_ERROR(
      PointFromProto(proto.position(), at, absl::StrCat(field, ".position"), &pose.position));
  if (proto.has_rotation()) {
    const v1::Quat& q = proto.rotation();
    COLLIDE_RETURN_IF_ERROR(
        UnitQuat(q.x(), q.y(), q.z(), q.w(), at, absl::StrCat(field, ".rotation"), &pose.rotation));
  }
  *out = pose;
  return absl::OkStatus();
}

// `field` (a Shape) of the message at `at`.
absl::Status ShapeFromProto(const v1::Shape& proto, const FieldPath& at, absl::string_view field,
                            Shape* out) {
  switch (proto.shape_case()) {
    case v1::Shape::kSphere:
      if (!IsDimension(proto.sphere().radius())) {
        return Invalid(at, absl::StrCat(field, ".sphere.radius"), DimensionReason());
      }
      *out = Sphere{proto.sphere().radius()};
      return absl::OkStatus();
    case v1::Shape::kBox: {
      const v1::Vec3& e = proto.box().half_extents();
      if (!IsDimension(e.x()) || !IsDimension(e.y()) || !IsDimension(e.z())) {
        return Invalid(at, absl::StrCat(field, ".box.half_extents"), DimensionReason());
      }
      *out = Box{ToVec3(e)};
      return absl::OkStatus();
    }
    case v1::Shape::kCapsule:
      if (!IsDimension(proto.capsule().radius())) {
        return Invalid(at, absl::StrCat(field, ".capsule.radius"), DimensionReason());
      }
      if (!IsDimension(proto.capsule().half_height())) {
        return Invalid(at, absl::StrCat(field, ".capsule.half_height"), DimensionReason());
      }
      *out = Capsule{proto.capsule().radius(), proto.capsule().half_height()};
      return absl::OkStatus();
    case v1::Shape::SHAPE_NOT_SET:
      break;
  }
  return Invalid(at, field, "must hold a sphere, a box or a capsule");
}

// A direction normalised in double (finite, non-zero).
absl::Status DirectionFromProto(const v1::Vec3& proto, const FieldPath& at, Vec3* out) {
  const double x = proto.x(), y = proto.y(), z = proto.z();
  const double len = std::sqrt(x * x + y * y + z * z);
  if (!std::isfinite(len) || len == 0.0)
    return Invalid(at, "direction", "must be finite and non-zero");
  *out =
      Vec3{static_cast<float>(x / len), static_cast<float>(y / len), static_cast<float>(z / len)};
  return absl::OkStatus();
}

absl::Status MaxDistanceFromProto(float proto, const FieldPath& at, float* out) {
  if (!std::isfinite(proto) || proto < 0.0f) {
    return Invalid(at, "max_distance", "must be finite and >= 0");
  }
  *out = std::min(proto, kMaxCastDistance);
  return absl::OkStatus();
}

absl::Status RadiusFromProto(float proto, const FieldPath& at, float* out) {
  if (!IsDimension(proto)) return Invalid(at, "radius", DimensionReason());
  *out = proto;
  return absl::OkStatus();
}

absl::Status RaycastFromProto(const v1::Raycast& proto, const FieldPath& at, Query* out) {
  out->kind = QueryKind::kRaycast;
  COLLIDE_RETURN_IF_ERROR(PointFromProto(proto.origin(), at, "origin", &out->ray.origin));
  COLLIDE_RETURN_IF_ERROR(DirectionFromProto(proto.direction(), at, &out->ray.direction));
  return MaxDistanceFromProto(proto.max_distance(), at, &out->ray.max_distance);
}

absl::Status SphereCastFromProto(const v1::SphereCast& proto, const FieldPath& at, Query* out) {
  out->kind = QueryKind::kSphereCast;
  COLLIDE_RETURN_IF_ERROR(PointFromProto(proto.origin(), at, "origin", &out->ray.origin));
  COLLIDE_RETURN_IF_ERROR(DirectionFromProto(proto.direction(), at, &out->ray.direction));
  COLLIDE_RETURN_IF_ERROR(MaxDistanceFromProto(proto.max_distance(), at, &out->ray.max_distance));
  return RadiusFromProto(proto.radius(), at, &out->radius);
}

absl::Status OverlapFromProto(const v1::Overlap& proto, const FieldPath& at, Query* out) {
  out->kind = QueryKind::kOverlap;
  COLLIDE_RETURN_IF_ERROR(ShapeFromProto(proto.shape(), at, "shape", &out->shape));
  return PoseFromProto(proto.pose(), at, "pose", &out->pose);
}

absl::Status PointQueryFromProto(const v1::PointQuery& proto, const FieldPath& at, Query* out) {
  out->kind = QueryKind::kWithinRadius;
  COLLIDE_RETURN_IF_ERROR(PointFromProto(proto.point(), at, "point", &out->ray.origin));
  return RadiusFromProto(proto.radius(), at, &out->radius);
}

absl::Status AabbQueryFromProto(const v1::AabbQuery& proto, const FieldPath& at, Query* out) {
  out->kind = QueryKind::kRegion;
  const v1::Aabb& region = proto.region();
  COLLIDE_RETURN_IF_ERROR(PointFromProto(region.min(), at, "region.min", &out->region.min));
  COLLIDE_RETURN_IF_ERROR(PointFromProto(region.max(), at, "region.max", &out->region.max));
  const Aabb& b = out->region;
  if (b.min.x > b.max.x || b.min.y > b.max.y || b.min.z > b.max.z) {
    return Invalid(at, "region", "min must not exceed max on any axis");
  }
  return absl::OkStatus();
}

// The fields every query has: filter, mode, max_hits (at `at`, the query or request root).
// The tick a query names: `at_tick` and `tick_fraction` (a fraction needs a tick and lies in
// [0, 1)). Whether the scene retains the tick is checked under the scene read (CheckQueryTick).
absl::Status TickFromProto(bool has_tick, uint64_t at_tick, float fraction, const FieldPath& at,
                           Query* out) {
  if (!std::isfinite(fraction) || fraction < 0.0f || fraction >= 1.0f) {
    return Invalid(at, "tick_fraction", absl::StrCat("must be in [0, 1), got ", fraction));
  }
  if (fraction > 0.0f && !has_tick) {
    return Invalid(at, "tick_fraction", "needs at_tick");
  }
  if (has_tick) out->at_tick = at_tick;
  out->tick_fraction = fraction;
  return absl::OkStatus();
}

absl::Status CommonFromProto(const v1::Filter& filter, v1::Mode mode, uint32_t max_hits,
                             bool detail, const FieldPath& at, const ServiceLimits& limits,
                             Query* out) {
  if (filter.excluded_ids_size() > static_cast<int>(limits.max_excluded_ids)) {
    return Invalid(at, "filter.excluded_ids",
                   absl::StrCat("at most ", limits.max_excluded_ids, " ids, got ",
                                filter.excluded_ids_size()));
  }
  out->filter.category = filter.has_category() ? filter.category() : ~0u;
  out->filter.mask = filter.has_mask() ? filter.mask() : ~0u;
  out->filter.excluded_ids = std::span<const uint64_t>(
      filter.excluded_ids().data(), static_cast<size_t>(filter.excluded_ids_size()));
  switch (mode) {
    case v1::MODE_CLOSEST:
      out->mode = CollectMode::kClosest;
      break;
    case v1::MODE_ANY:
      out->mode = CollectMode::kAny;
      break;
    case v1::MODE_ALL:
      out->mode = CollectMode::kAll;
      break;
    default:
      return Invalid(at, "mode", absl::StrCat("unknown mode ", static_cast<int>(mode)));
  }
  if (max_hits > limits.max_hits) {
    return Invalid(at, "max_hits", absl::StrCat("must be at most ", limits.max_hits));
  }
  out->max_hits = max_hits != 0 ? max_hits : std::min<uint32_t>(64, limits.max_hits);
  if (out->max_hits == 0) out->max_hits = 1;
  out->detail = detail;
  return absl::OkStatus();
}

// Parses the core's `ops[i].field: reason`: the index, the field (may be empty) and the rest
// starting at ": ".
bool ParseOpPath(absl::string_view message, size_t* index, absl::string_view* field,
                 absl::string_view* rest) {
  if (!absl::ConsumePrefix(&message, "ops[")) return false;
  const size_t close = message.find(']');
  if (close == absl::string_view::npos) return false;
  uint64_t i = 0;
  if (!absl::SimpleAtoi(message.substr(0, close), &i)) return false;
  message.remove_prefix(close + 1);
  const size_t colon = message.find(": ");
  if (colon == absl::string_view::npos) return false;
  absl::string_view f = message.substr(0, colon);
  if (!f.empty() && !absl::ConsumePrefix(&f, ".")) return false;
  *index = static_cast<size_t>(i);
  *field = f;
  *rest = message.substr(colon);
  return true;
}

}  // namespace

std::string FieldPath::Of(absl::string_view field) const {
  std::string out(head);
  if (index != kNoIndex) absl::StrAppend(&out, "[", index, "]");
  absl::StrAppend(&out, tail);
  if (!field.empty()) {
    if (!out.empty()) out.push_back('.');
    absl::StrAppend(&out, field);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Scenes.

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
}

// ---------------------------------------------------------------------------------------------
// Bodies and updates.

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
      return Invalid(at, "kind", absl::StrCat("unknown body kind ", static_cast<int>(body.kind())));
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

absl::Status UpdateBatchFromProto(const v1::UpdateBatch& proto, const ServiceLimits& limits,
                                  UpdateBatch* out) {
  const size_t op_count = static_cast<size_t>(proto.ops_size());
  const size_t move_count = static_cast<size_t>(proto.moves().ids_size());
  if (op_count + move_count > limits.max_batch_ops) {
    return absl::ResourceExhaustedError(absl::StrCat("ops: a batch holds at most ",
                                                     limits.max_batch_ops, " ops and moves, got ",
                                                     op_count + move_count));
  }
  const auto& poses = proto.moves().poses();
  if (static_cast<size_t>(poses.size()) != 7 * move_count) {
    return absl::InvalidArgumentError(absl::StrCat("moves.poses: must hold 7 floats per id (",
                                                   7 * move_count, "), got ", poses.size()));
  }
  if (proto.has_tick() && proto.tick() > PoseHistory::kMaxTick) {
    return absl::InvalidArgumentError(
        absl::StrCat("tick: must be at most ", PoseHistory::kMaxTick, ", got ", proto.tick()));
  }
  out->ops.resize(op_count + move_count);
  if (proto.has_tick()) {
    out->tick = proto.tick();
  } else {
    out->tick.reset();
  }
  for (size_t i = 0; i < op_count; ++i) {
    const v1::UpdateOp& op = proto.ops(static_cast<int>(i));
    UpdateOp& core = out->ops[i];
    core = UpdateOp{};
    switch (op.op_case()) {
      case v1::UpdateOp::kUpsert:
        COLLIDE_RETURN_IF_ERROR(BodyToOp(op.upsert(), FieldPath{"ops", i, ".upsert"}, &core));
        break;
      case v1::UpdateOp::kSetPose:
        core.type = UpdateOpType::kSetPose;
        core.body_id = op.set_pose().id();
        COLLIDE_RETURN_IF_ERROR(PoseFromProto(
            op.set_pose().pose(), FieldPath{"ops", i, ".set_pose"}, "pose", &core.pose));
        break;
      case v1::UpdateOp::kSetFilter:
        core.type = UpdateOpType::kSetFilter;
        core.body_id = op.set_filter().id();
        core.category = op.set_filter().category();
        core.mask = op.set_filter().mask();
        break;
      case v1::UpdateOp::kRemove:
        core.type = UpdateOpType::kRemove;
        core.body_id = op.remove();
        break;
      case v1::UpdateOp::OP_NOT_SET:
        return Invalid(FieldPath{"ops", i}, "op",
                       "must hold an upsert, set_pose, set_filter or remove");
    }
  }
  const float* p = poses.data();
  for (size_t k = 0; k < move_count; ++k, p += 7) {
    UpdateOp& core = out->ops[op_count + k];
    core = UpdateOp{};
    core.type = UpdateOpType::kSetPose;
    core.body_id = proto.moves().ids(static_cast<int>(k));
    const FieldPath at{"moves.poses", k};
    if (!InRange(p[0]) || !InRange(p[1]) || !InRange(p[2])) {
      return Invalid(at, "", absl::StrCat("position ", CoordinateReason()));
    }
    core.pose.position = Vec3{p[0], p[1], p[2]};
    COLLIDE_RETURN_IF_ERROR(UnitQuat(p[3], p[4], p[5], p[6], at, "", &core.pose.rotation));
  }
  return absl::OkStatus();
}

absl::Status TranslateOpError(
    const absl::Status& status,
    absl::FunctionRef<std::string(size_t index, absl::string_view field)> name) {
  if (status.ok()) return status;
  size_t index = 0;
  absl::string_view field, rest;
  if (ParseOpPath(status.message(), &index, &field, &rest)) {
    // The explanation may name another op ("first by ops[3]"): in the request's own words too.
    std::string explanation;
    while (!rest.empty()) {
      const size_t at = rest.find("ops[");
      const size_t close = at == absl::string_view::npos ? at : rest.find(']', at);
      uint64_t other = 0;
      if (close == absl::string_view::npos ||
          !absl::SimpleAtoi(rest.substr(at + 4, close - at - 4), &other)) {
        absl::StrAppend(&explanation, rest);
        break;
      }
      absl::StrAppend(&explanation, rest.substr(0, at), name(static_cast<size_t>(other), ""));
      rest.remove_prefix(close + 1);
    }
    return absl::Status(status.code(), absl::StrCat(name(index, field), explanation));
  }
  if (absl::StartsWith(status.message(), "scene \"")) return PrefixStatus(status, "scene: ");
  return status;
}

absl::Status TranslateUpdateError(const absl::Status& status, const v1::UpdateBatch& proto) {
  const size_t op_count = static_cast<size_t>(proto.ops_size());
  return TranslateOpError(status, [&](size_t i, absl::string_view field) -> std::string {
    if (i >= op_count) {
      const size_t k = i - op_count;
      if (field.empty() || field == "body_id") return absl::StrCat("moves.ids[", k, "]");
      return absl::StrCat("moves.poses[", k, "]");
    }
    const v1::UpdateOp& op = proto.ops(static_cast<int>(i));
    const std::string at = absl::StrCat("ops[", i, "]");
    if (field.empty()) return at;
    switch (op.op_case()) {
      case v1::UpdateOp::kUpsert:
        return absl::StrCat(at, ".upsert.", field == "body_id" ? "id" : field);
      case v1::UpdateOp::kSetPose:
        return absl::StrCat(at, ".set_pose.", field == "body_id" ? "id" : field);
      case v1::UpdateOp::kSetFilter:
        return absl::StrCat(at, ".set_filter.", field == "body_id" ? "id" : field);
      case v1::UpdateOp::kRemove:
        return absl::StrCat(at, ".remove");
      case v1::UpdateOp::OP_NOT_SET:
        break;
    }
    return at;
  });
}

absl::Status UpsertRequestToBatch(const v1::UpsertBodiesRequest& request,
                                  const ServiceLimits& limits, UpdateBatch* out) {
  if (static_cast<size_t>(request.bodies_size()) > limits.max_batch_ops) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "bodies: at most ", limits.max_batch_ops, " bodies per call, got ", request.bodies_size()));
  }
  out->ops.resize(static_cast<size_t>(request.bodies_size()));
  for (size_t i = 0; i < out->ops.size(); ++i) {
    out->ops[i] = UpdateOp{};
    COLLIDE_RETURN_IF_ERROR(
        BodyToOp(request.bodies(static_cast<int>(i)), FieldPath{"bodies", i}, &out->ops[i]));
  }
  return absl::OkStatus();
}

absl::Status TranslateUpsertError(const absl::Status& status) {
  return TranslateOpError(status, [](size_t i, absl::string_view field) -> std::string {
    if (field.empty()) return absl::StrCat("bodies[", i, "]");
    return absl::StrCat("bodies[", i, "].", field == "body_id" ? "id" : field);
  });
}

absl::Status RemoveRequestToBatch(const v1::RemoveBodiesRequest& request,
                                  const ServiceLimits& limits, UpdateBatch* out) {
  if (static_cast<size_t>(request.ids_size()) > limits.max_batch_ops) {
    return absl::ResourceExhaustedError(absl::StrCat("ids: at most ", limits.max_batch_ops,
                                                     " ids per call, got ", request.ids_size()));
  }
  out->ops.resize(static_cast<size_t>(request.ids_size()));
  for (size_t i = 0; i < out->ops.size(); ++i)
    out->ops[i] = RemoveOp(request.ids(static_cast<int>(i)));
  return absl::OkStatus();
}

absl::Status TranslateRemoveError(const absl::Status& status) {
  return TranslateOpError(status, [](size_t i, absl::string_view) -> std::string {
    return absl::StrCat("ids[", i, "]");
  });
}

// ---------------------------------------------------------------------------------------------
// Queries.

absl::Status QueryFromProto(const v1::Query& proto, size_t index, const ServiceLimits& limits,
                            Query* out) {
  *out = Query{};
  absl::Status status;
  switch (proto.kind_case()) {
    case v1::Query::kRaycast:
      status = RaycastFromProto(proto.raycast(), FieldPath{"queries", index, ".raycast"}, out);
      break;
    case v1::Query::kSphereCast:
      status = SphereCastFromProto(proto.sphere_cast(), FieldPath{"queries", index, ".sphere_cast"},
                                   out);
      break;
    case v1::Query::kOverlap:
      status = OverlapFromProto(proto.overlap(), FieldPath{"queries", index, ".overlap"}, out);
      break;
    case v1::Query::kPoint:
      status = PointQueryFromProto(proto.point(), FieldPath{"queries", index, ".point"}, out);
      break;
    case v1::Query::kAabb:
      status = AabbQueryFromProto(proto.aabb(), FieldPath{"queries", index, ".aabb"}, out);
      break;
    case v1::Query::KIND_NOT_SET:
      return Invalid(FieldPath{"queries", index}, "kind",
                     "must hold a raycast, sphere_cast, overlap, point or aabb query");
  }
  if (!status.ok()) return status;
  COLLIDE_RETURN_IF_ERROR(TickFromProto(proto.has_at_tick(), proto.at_tick(), proto.tick_fraction(),
                                        FieldPath{"queries", index}, out));
  return CommonFromProto(proto.filter(), proto.mode(), proto.max_hits(), proto.detail(),
                         FieldPath{"queries", index}, limits, out);
}

namespace {

// The filter, mode, max_hits, detail and tick fields every unary query request has.
template <typename Request>
absl::Status UnaryQueryOptionsFromProto(const Request& request, bool detail,
                                        const ServiceLimits& limits, Query* query) {
  COLLIDE_RETURN_IF_ERROR(CommonFromProto(request.filter(), request.mode(), request.max_hits(),
                                          detail, FieldPath{}, limits, query));
  return TickFromProto(request.has_at_tick(), request.at_tick(), request.tick_fraction(),
                       FieldPath{}, query);
}

}  // namespace

absl::StatusOr<Query> RaycastRequestToQuery(const v1::RaycastRequest& request,
                                            const ServiceLimits& limits) {
  Query query;
  COLLIDE_RETURN_IF_ERROR(RaycastFromProto(request.ray(), FieldPath{"ray"}, &query));
  COLLIDE_RETURN_IF_ERROR(UnaryQueryOptionsFromProto(request, false, limits, &query));
  return query;
}

absl::StatusOr<Query> SphereCastRequestToQuery(const v1::SphereCastRequest& request,
                                               const ServiceLimits& limits) {
  Query query;
  COLLIDE_RETURN_IF_ERROR(SphereCastFromProto(request.cast(), FieldPath{"cast"}, &query));
  COLLIDE_RETURN_IF_ERROR(UnaryQueryOptionsFromProto(request, false, limits, &query));
  return query;
}

absl::StatusOr<Query> OverlapRequestToQuery(const v1::OverlapRequest& request,
                                            const ServiceLimits& limits) {
  Query query;
  COLLIDE_RETURN_IF_ERROR(OverlapFromProto(request.overlap(), FieldPath{"overlap"}, &query));
  COLLIDE_RETURN_IF_ERROR(UnaryQueryOptionsFromProto(request, request.detail(), limits, &query));
  return query;
}

void HitToProto(const QueryHit& hit, v1::Hit* out) {
  out->set_body_id(hit.body_id);
  out->set_distance(hit.distance);
  ToProtoVec3(hit.point, out->mutable_point());
  ToProtoVec3(hit.normal, out->mutable_normal());
  out->set_depth(hit.depth);
  out->set_start_overlapping(hit.start_overlapping);
}

}  // namespace collide
