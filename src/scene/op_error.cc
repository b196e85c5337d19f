#include "scene/op_error.h"

#include <cstring>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace collide {
namespace {

// The payload's type URL. The payload never leaves the process: its layout is the in-memory one
// below (index, related, op type, field, relation, then the reason's bytes).
constexpr absl::string_view kPayloadUrl = "collide/OpError";
constexpr size_t kHeaderBytes = 2 * sizeof(uint64_t) + 3;

std::string Encode(const OpError& error) {
  std::string out(kHeaderBytes, '\0');
  const uint64_t index = error.index, related = error.related;
  std::memcpy(out.data(), &index, sizeof(index));
  std::memcpy(out.data() + sizeof(index), &related, sizeof(related));
  out[2 * sizeof(uint64_t)] = static_cast<char>(error.op_type);
  out[2 * sizeof(uint64_t) + 1] = static_cast<char>(error.field);
  out[2 * sizeof(uint64_t) + 2] = static_cast<char>(error.relation);
  out.append(error.reason);
  return out;
}

std::optional<OpError> Decode(const std::string& bytes) {
  if (bytes.size() < kHeaderBytes) return std::nullopt;
  OpError error;
  uint64_t index = 0, related = 0;
  std::memcpy(&index, bytes.data(), sizeof(index));
  std::memcpy(&related, bytes.data() + sizeof(index), sizeof(related));
  error.index = static_cast<size_t>(index);
  error.related = static_cast<size_t>(related);
  error.op_type = static_cast<UpdateOpType>(bytes[2 * sizeof(uint64_t)]);
  error.field = static_cast<OpField>(bytes[2 * sizeof(uint64_t) + 1]);
  error.relation = static_cast<OpRelation>(bytes[2 * sizeof(uint64_t) + 2]);
  error.reason = bytes.substr(kHeaderBytes);
  return error;
}

}  // namespace

absl::string_view OpFieldName(OpField field) {
  switch (field) {
    case OpField::kNone:
      return "";
    case OpField::kType:
      return "type";
    case OpField::kBodyId:
      return "body_id";
    case OpField::kKind:
      return "kind";
    case OpField::kShapeType:
      return "shape.type";
    case OpField::kSphereRadius:
      return "shape.sphere.radius";
    case OpField::kBoxHalfExtents:
      return "shape.box.half_extents";
    case OpField::kCapsuleRadius:
      return "shape.capsule.radius";
    case OpField::kCapsuleHalfHeight:
      return "shape.capsule.half_height";
    case OpField::kPosePosition:
      return "pose.position";
    case OpField::kPoseRotation:
      return "pose.rotation";
  }
  return "";
}

absl::string_view OpRelationWords(OpRelation relation) {
  switch (relation) {
    case OpRelation::kNone:
      break;
    case OpRelation::kFirstBy:
      return "first by";
    case OpRelation::kRemovedBy:
      return "removed by";
  }
  return "";
}

absl::Status OpErrorStatus(absl::StatusCode code, const OpError& error, absl::string_view list) {
  std::string message = absl::StrCat(list, "[", error.index, "]");
  if (error.field != OpField::kNone) absl::StrAppend(&message, ".", OpFieldName(error.field));
  absl::StrAppend(&message, ": ", error.reason);
  if (error.relation != OpRelation::kNone) {
    absl::StrAppend(&message, " (", OpRelationWords(error.relation), " ", list, "[", error.related,
                    "])");
  }
  absl::Status status(code, message);
  status.SetPayload(kPayloadUrl, absl::Cord(Encode(error)));
  return status;
}

std::optional<OpError> GetOpError(const absl::Status& status) {
  const auto payload = status.GetPayload(kPayloadUrl);
  if (!payload.has_value()) return std::nullopt;
  return Decode(std::string(*payload));
}

}  // namespace collide
