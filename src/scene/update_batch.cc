#include "scene/update_batch.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "scene/op_error.h"

namespace collide {
namespace {

bool InRange(float v) { return std::isfinite(v) && std::fabs(v) <= kMaxCoordinate; }
bool IsDimension(float v) { return std::isfinite(v) && v >= 0.0f && v <= kMaxCoordinate; }

// Where the checked op sits: op `index` of `list` ("ops" in a batch, "bodies" in a snapshot).
struct Where {
  absl::string_view list;
  size_t index;
  UpdateOpType type;
};

absl::Status Invalid(const Where& at, OpField field, std::string reason) {
  return OpErrorStatus(
      absl::StatusCode::kInvalidArgument,
      OpError{.index = at.index, .op_type = at.type, .field = field, .reason = std::move(reason)},
      at.list);
}

absl::Status ValidatePose(const Pose& pose, const Where& index) {
  const Vec3& p = pose.position;
  if (!InRange(p.x) || !InRange(p.y) || !InRange(p.z)) {
    return Invalid(index, OpField::kPosePosition,
                   absl::StrFormat("must be finite and within +-%g", kMaxCoordinate));
  }
  const Quat& q = pose.rotation;
  if (!std::isfinite(q.x) || !std::isfinite(q.y) || !std::isfinite(q.z) || !std::isfinite(q.w)) {
    return Invalid(index, OpField::kPoseRotation, "must be finite");
  }
  // Compare in double: float32 rounding of the squares alone is ~1e-7, far below the tolerance.
  double len =
      std::sqrt(double{q.x} * q.x + double{q.y} * q.y + double{q.z} * q.z + double{q.w} * q.w);
  if (std::fabs(len - 1.0) > kUnitQuaternionTolerance) {
    return Invalid(index, OpField::kPoseRotation,
                   absl::StrFormat("must be a unit quaternion (length %.6g)", len));
  }
  return absl::OkStatus();
}

absl::Status ValidateShape(const Shape& shape, const Where& index) {
  const std::string reason = absl::StrFormat("must be finite, >= 0 and <= %g", kMaxCoordinate);
  switch (shape.type) {
    case ShapeType::kSphere:
      if (!IsDimension(shape.sphere.radius)) return Invalid(index, OpField::kSphereRadius, reason);
      return absl::OkStatus();
    case ShapeType::kBox: {
      const Vec3& e = shape.box.half_extents;
      if (!IsDimension(e.x) || !IsDimension(e.y) || !IsDimension(e.z)) {
        return Invalid(index, OpField::kBoxHalfExtents, reason);
      }
      return absl::OkStatus();
    }
    case ShapeType::kCapsule:
      if (!IsDimension(shape.capsule.radius))
        return Invalid(index, OpField::kCapsuleRadius, reason);
      if (!IsDimension(shape.capsule.half_height)) {
        return Invalid(index, OpField::kCapsuleHalfHeight, reason);
      }
      return absl::OkStatus();
  }
  return Invalid(index, OpField::kShapeType,
                 absl::StrCat("unknown shape type ", static_cast<int>(shape.type)));
}

}  // namespace

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

absl::Status ValidateOpValues(const UpdateOp& op, size_t i, absl::string_view list) {
  const Where index{list, i, op.type};
  switch (op.type) {
    case UpdateOpType::kUpsert:
      if (op.kind != BodyKind::kDynamic && op.kind != BodyKind::kStatic) {
        return Invalid(index, OpField::kKind,
                       absl::StrCat("unknown body kind ", static_cast<int>(op.kind)));
      }
      if (absl::Status s = ValidateShape(op.shape, index); !s.ok()) return s;
      return ValidatePose(op.pose, index);
    case UpdateOpType::kSetPose:
      return ValidatePose(op.pose, index);
    case UpdateOpType::kSetFilter:
    case UpdateOpType::kRemove:
      return absl::OkStatus();
  }
  return Invalid(index, OpField::kType,
                 absl::StrCat("unknown operation type ", static_cast<int>(op.type)));
}

Pose NormalizedPose(const Pose& pose) {
  return Pose{.rotation = NormalizeRotation(pose.rotation), .position = pose.position};
}

}  // namespace collide
