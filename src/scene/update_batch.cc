#include "scene/update_batch.h"

#include "absl/strings/str_cat.h"

namespace collide {

UpdateOp UpsertOp(const BodyDesc& desc, uint64_t user_data) {
  UpdateOp op;
  op.type = UpdateOpType::kUpsert;
  op.kind = desc.kind;
  op.body_id = desc.id;
  op.pose = desc.pose;
  op.shape = desc.shape;
  op.category = desc.category;
  op.mask = desc.mask;
  op.user_data = user_data;
  return op;
}

void PlaceAsset(UpdateBatch* batch, UpdateOp* op, std::string name, AssetKind kind, float scale) {
  batch->asset_names.push_back(std::move(name));
  op->asset = static_cast<uint32_t>(batch->asset_names.size());
  op->asset_kind = kind;
  op->scale = scale;
}

UpdateOp SetPoseOp(uint64_t id, const Pose& pose) {
  UpdateOp op;
  op.type = UpdateOpType::kSetPose;
  op.body_id = id;
  op.pose = pose;
  return op;
}

UpdateOp SetFilterOp(uint64_t id, uint32_t category, uint32_t mask) {
  UpdateOp op;
  op.type = UpdateOpType::kSetFilter;
  op.body_id = id;
  op.category = category;
  op.mask = mask;
  return op;
}

UpdateOp RemoveOp(uint64_t id) {
  UpdateOp op;
  op.type = UpdateOpType::kRemove;
  op.body_id = id;
  return op;
}

bool IsStructural(const UpdateBatch& batch) {
  for (const UpdateOp& op : batch.ops) {
    if (op.type == UpdateOpType::kUpsert || op.type == UpdateOpType::kRemove) return true;
  }
  return false;
}

absl::string_view UpdateOpName(UpdateOpType type) {
  switch (type) {
    case UpdateOpType::kUpsert:
      return "upsert";
    case UpdateOpType::kSetPose:
      return "set_pose";
    case UpdateOpType::kSetFilter:
      return "set_filter";
    case UpdateOpType::kRemove:
      return "remove";
  }
  return "";
}

std::string OpIdField(UpdateOpType type) {
  // A removal is its id.
  if (type == UpdateOpType::kRemove) return "remove";
  return absl::StrCat(UpdateOpName(type), ".id");
}

Pose NormalizedPose(const Pose& pose) {
  return Pose{.rotation = NormalizeRotation(pose.rotation), .position = pose.position};
}

}  // namespace collide
