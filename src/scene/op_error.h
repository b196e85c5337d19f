#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "scene/update_batch.h"

namespace collide {

// An error about one operation of an update batch, as data: which op (its index in the core
// batch), which of its fields, why, and the earlier op the reason refers to, if any. The scene
// layer returns it as the payload of an absl::Status whose message is the core's own wording
// (`ops[2].body_id: body 8 is upserted twice in one batch (first by ops[0])`, for logs and the
// core's tests); the service renders the client's field path from the payload (never from the
// message), in the words of the request the batch came from (`bodies[2].id: ...`).

/// The field of an UpdateOp an error is about.
enum class OpField : uint8_t {
  /// The op as a whole.
  kNone = 0,
  kType,
  kBodyId,
  kKind,
  kShapeType,
  kSphereRadius,
  kBoxHalfExtents,
  kCapsuleRadius,
  kCapsuleHalfHeight,
  kPosePosition,
  kPoseRotation,
};

/// The field's name inside the op (`body_id`, `shape.sphere.radius`, `pose.rotation`; empty for
/// kNone); the API's messages use the same names, except that body_id is the message's id.
absl::string_view OpFieldName(OpField field);

/// How the reason of an OpError refers to another op of the batch.
enum class OpRelation : uint8_t {
  kNone = 0,
  /// `(first by <op>)`: the earlier upsert of the same body.
  kFirstBy,
  /// `(removed by <op>)`: the earlier removal of the same body.
  kRemovedBy,
};

/// The wording of a relation inside its parentheses (`first by`, `removed by`).
absl::string_view OpRelationWords(OpRelation relation);

/// Which op of a batch is wrong, in which field, and why.
struct OpError {
  /// The op's index in the core batch (UpdateBatch::ops).
  size_t index = 0;
  /// The op's type (the API names an op's fields under its type).
  UpdateOpType op_type = UpdateOpType::kSetPose;
  OpField field = OpField::kNone;
  /// The explanation after the path, without the relation (`no body 17 in scene "arena"`).
  std::string reason;
  OpRelation relation = OpRelation::kNone;
  /// With a relation: the index of the other op.
  size_t related = 0;

  bool operator==(const OpError&) const = default;
};

/// A status with `code` that carries `error`: its message is the core's wording, with op paths
/// `<list>[index]` ("ops" for a batch, "bodies" for a snapshot's body table).
absl::Status OpErrorStatus(absl::StatusCode code, const OpError& error,
                           absl::string_view list = "ops");

/// The OpError `status` carries, if any.
std::optional<OpError> GetOpError(const absl::Status& status);

}  // namespace collide
