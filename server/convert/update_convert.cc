#include "server/convert/update_convert.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "history/pose_history.h"
#include "server/convert/geometry_convert.h"
#include "server/convert/scene_convert.h"

namespace collide {

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
        return InvalidField(FieldPath{"ops", i}, "op",
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
    if (!IsCoordinate(p[0]) || !IsCoordinate(p[1]) || !IsCoordinate(p[2])) {
      return InvalidField(at, "", absl::StrCat("position ", CoordinateReason()));
    }
    core.pose.position = Vec3{p[0], p[1], p[2]};
    COLLIDE_RETURN_IF_ERROR(UnitQuat(p[3], p[4], p[5], p[6], at, "", &core.pose.rotation));
  }
  return absl::OkStatus();
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

RequestOps OpsOf(const v1::UpdateBatch& proto) {
  return RequestOps{.kind = RequestOps::Kind::kUpdateBatch,
                    .op_count = static_cast<size_t>(proto.ops_size())};
}

}  // namespace collide
