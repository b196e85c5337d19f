#include "server/convert/update_convert.h"

#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "base/status_macros.h"
#include "server/convert/geometry_convert.h"
#include "server/convert/scene_convert.h"

namespace collide {

absl::Status UpdateBatchFromProto(const v1::UpdateBatch& proto, const ServiceLimits& limits,
                                  UpdateBatch* out) {
  const size_t op_count = static_cast<size_t>(proto.ops_size());
  const size_t move_count = static_cast<size_t>(proto.moves().ids_size());
  if (op_count + move_count > limits.max_batch_ops) {
    return FieldStatus(absl::StatusCode::kResourceExhausted, "ops",
                       absl::StrCat("a batch holds at most ", limits.max_batch_ops,
                                    " ops and moves, got ", op_count + move_count));
  }
  const auto& poses = proto.moves().poses();
  if (static_cast<size_t>(poses.size()) != 7 * move_count) {
    return InvalidFieldError("moves.poses", absl::StrCat("must hold 7 floats per id (",
                                                         7 * move_count, "), got ", poses.size()));
  }
  out->ops.resize(op_count + move_count);
  out->asset_names.clear();
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
        COLLIDE_RETURN_IF_ERROR(
            AtElement(BodyToOp(op.upsert(), &core, &out->asset_names), "ops", i, "upsert"));
        break;
      case v1::UpdateOp::kSetPose:
        core.type = UpdateOpType::kSetPose;
        core.body_id = op.set_pose().id();
        core.pose = ToPose(op.set_pose().pose());
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
        return InvalidElementError("ops", i, "op",
                                   "must hold an upsert, set_pose, set_filter or remove");
    }
  }
  // The hot path: 7 floats and an id per move, copied as they are (the scene checks them).
  const float* p = poses.data();
  const uint64_t* ids = proto.moves().ids().data();
  for (size_t k = 0; k < move_count; ++k, p += 7) {
    UpdateOp& core = out->ops[op_count + k];
    core = UpdateOp{};
    core.type = UpdateOpType::kSetPose;
    core.body_id = ids[k];
    core.pose.position = Vec3{p[0], p[1], p[2]};
    core.pose.rotation = Quat{p[3], p[4], p[5], p[6]};
  }
  return absl::OkStatus();
}

absl::Status UpsertRequestToBatch(const v1::UpsertBodiesRequest& request,
                                  const ServiceLimits& limits, UpdateBatch* out) {
  if (static_cast<size_t>(request.bodies_size()) > limits.max_batch_ops) {
    return FieldStatus(absl::StatusCode::kResourceExhausted, "bodies",
                       absl::StrCat("at most ", limits.max_batch_ops, " bodies per call, got ",
                                    request.bodies_size()));
  }
  out->ops.resize(static_cast<size_t>(request.bodies_size()));
  out->asset_names.clear();
  for (size_t i = 0; i < out->ops.size(); ++i) {
    out->ops[i] = UpdateOp{};
    COLLIDE_RETURN_IF_ERROR(
        AtElement(BodyToOp(request.bodies(static_cast<int>(i)), &out->ops[i], &out->asset_names),
                  "bodies", i));
  }
  return absl::OkStatus();
}

absl::Status RemoveRequestToBatch(const v1::RemoveBodiesRequest& request,
                                  const ServiceLimits& limits, UpdateBatch* out) {
  if (static_cast<size_t>(request.ids_size()) > limits.max_batch_ops) {
    return FieldStatus(
        absl::StatusCode::kResourceExhausted, "ids",
        absl::StrCat("at most ", limits.max_batch_ops, " ids per call, got ", request.ids_size()));
  }
  out->ops.resize(static_cast<size_t>(request.ids_size()));
  out->asset_names.clear();
  for (size_t i = 0; i < out->ops.size(); ++i)
    out->ops[i] = RemoveOp(request.ids(static_cast<int>(i)));
  return absl::OkStatus();
}

RequestLayout LayoutOf(const v1::UpdateBatch& proto) {
  return RequestLayout{.kind = RequestLayout::Kind::kUpdateBatch,
                       .op_count = static_cast<size_t>(proto.ops_size())};
}

}  // namespace collide
