#include "server/convert/scene_convert.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "base/status_macros.h"
#include "server/convert/geometry_convert.h"

namespace collide {

absl::StatusOr<SceneOptions> SceneOptionsFromProto(const v1::SceneOptions& proto,
                                                   const ServiceLimits& limits) {
  SceneOptions options;
  if (proto.has_fat_margin()) options.fat_margin = proto.fat_margin();
  options.max_bodies = proto.has_max_bodies() ? proto.max_bodies()
                                              : std::min(options.max_bodies, MaxBodiesCap(limits));
  if (proto.has_history_ticks()) options.history_ticks = proto.history_ticks();
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
    case v1::DURABILITY_REPLICATED:
      options.durability = DurabilityPolicy::kReplicated;
      break;
    default:
      return InvalidFieldError(
          "options.durability",
          absl::StrCat("unknown durability ", static_cast<int>(proto.durability())));
  }
  return options;
}

uint32_t MaxBodiesCap(const ServiceLimits& limits) {
  return std::min(limits.max_bodies_per_scene, kMaxBodiesLimit);
}

v1::Durability DurabilityToProto(DurabilityPolicy policy) {
  switch (policy) {
    case DurabilityPolicy::kNone:
      return v1::DURABILITY_NONE;
    case DurabilityPolicy::kPeriodic:
      return v1::DURABILITY_PERIODIC;
    case DurabilityPolicy::kAlways:
      return v1::DURABILITY_ALWAYS;
    case DurabilityPolicy::kReplicated:
      return v1::DURABILITY_REPLICATED;
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
  out->set_asset_count(stats.asset_count);
  out->set_asset_triangles(stats.asset_triangles);
  out->set_asset_bytes(stats.asset_bytes);
  out->set_asset_memory_bytes(stats.asset_memory_bytes);
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

absl::Status BodyToOp(const v1::Body& body, UpdateOp* op, std::vector<std::string>* asset_names) {
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
      return InvalidFieldError("kind",
                               absl::StrCat("unknown body kind ", static_cast<int>(body.kind())));
  }
  const v1::Shape& shape = body.shape();
  const bool mesh = shape.shape_case() == v1::Shape::kMesh;
  if (asset_names != nullptr && (mesh || shape.shape_case() == v1::Shape::kHeightfield)) {
    // The scene checks the name, the kind and the scale.
    const v1::AssetInstance& instance = mesh ? shape.mesh() : shape.heightfield();
    asset_names->push_back(instance.asset());
    op->asset = static_cast<uint32_t>(asset_names->size());
    op->asset_kind = mesh ? AssetKind::kMesh : AssetKind::kHeightfield;
    op->scale = instance.has_scale() ? instance.scale() : 1.0f;
  } else {
    COLLIDE_RETURN_IF_ERROR(UnderField(ToShape(shape, &op->shape), "shape"));
  }
  op->pose = ToPose(body.pose());
  op->category = body.has_category() ? body.category() : 1u;
  op->mask = body.has_mask() ? body.mask() : ~0u;
  op->user_data = body.user_data();
  return absl::OkStatus();
}

void ListScenesToProto(const Database& db, absl::FunctionRef<bool(const std::string&)> visible,
                       DurabilityPolicy server_default, v1::ListScenesResponse* out) {
  for (const std::string& name : db.SceneNames()) {  // sorted
    if (!visible(name)) continue;
    absl::StatusOr<std::shared_ptr<const Scene>> scene = db.GetScene(name);
    if (!scene.ok()) continue;  // deleted meanwhile
    SceneInfoToProto(**scene, server_default, out->add_scenes());
  }
}

void BodyStateToProto(const BodyState& state, v1::Body* out) {
  out->set_id(state.id);
  if (!state.asset.empty()) {
    v1::AssetInstance* instance = state.asset_kind == AssetKind::kHeightfield
                                      ? out->mutable_shape()->mutable_heightfield()
                                      : out->mutable_shape()->mutable_mesh();
    instance->set_asset(state.asset);
    instance->set_scale(state.scale);
  } else {
    ToProtoShape(state.shape, out->mutable_shape());
  }
  ToProtoPose(state.pose, out->mutable_pose());
  out->set_category(state.category);
  out->set_mask(state.mask);
  out->set_user_data(state.user_data);
  out->set_kind(state.kind == BodyKind::kStatic ? v1::BODY_KIND_STATIC : v1::BODY_KIND_DYNAMIC);
}

}  // namespace collide
