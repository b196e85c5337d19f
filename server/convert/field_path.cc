#include "server/convert/field_path.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "scene/op_error.h"

namespace collide {
namespace {

// Where core op `index` sits in the request, and the name of its `field` there (empty when the
// path names the op itself).
struct OpPlace {
  FieldPath at;
  absl::string_view field;
};

OpPlace PlaceOf(const RequestOps& ops, size_t index, UpdateOpType type, OpField field) {
  // The API calls a body's id `id`; every other core field has its API name.
  const absl::string_view name = field == OpField::kBodyId ? "id" : OpFieldName(field);
  switch (ops.kind) {
    case RequestOps::Kind::kUpsertBodies:
      return OpPlace{FieldPath{"bodies", index}, name};
    case RequestOps::Kind::kRemoveBodies:
      return OpPlace{FieldPath{"ids", index}, ""};
    case RequestOps::Kind::kUpdateBatch:
      break;
  }
  if (index >= ops.op_count) {
    // A move: its id, or its 7 pose floats.
    const size_t k = index - ops.op_count;
    if (field == OpField::kNone || field == OpField::kBodyId) {
      return OpPlace{FieldPath{"moves.ids", k}, ""};
    }
    return OpPlace{FieldPath{"moves.poses", k}, ""};
  }
  if (field == OpField::kNone) return OpPlace{FieldPath{"ops", index}, ""};
  switch (type) {
    case UpdateOpType::kUpsert:
      return OpPlace{FieldPath{"ops", index, ".upsert"}, name};
    case UpdateOpType::kSetPose:
      return OpPlace{FieldPath{"ops", index, ".set_pose"}, name};
    case UpdateOpType::kSetFilter:
      return OpPlace{FieldPath{"ops", index, ".set_filter"}, name};
    case UpdateOpType::kRemove:
      return OpPlace{FieldPath{"ops", index, ".remove"}, ""};
  }
  return OpPlace{FieldPath{"ops", index}, ""};
}

std::string PathOf(const RequestOps& ops, size_t index, UpdateOpType type, OpField field) {
  const OpPlace place = PlaceOf(ops, index, type, field);
  return place.at.Of(place.field);
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

absl::Status InvalidField(const FieldPath& at, absl::string_view field, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(at.Of(field), ": ", reason));
}

absl::Status WithRequestPaths(const absl::Status& status, const RequestOps& ops) {
  if (status.ok()) return status;
  const std::optional<OpError> error = GetOpError(status);
  if (!error.has_value()) return status;
  std::string message =
      absl::StrCat(PathOf(ops, error->index, error->op_type, error->field), ": ", error->reason);
  if (error->relation != OpRelation::kNone) {
    // The other op is named as a whole (its type does not matter then).
    absl::StrAppend(&message, " (", OpRelationWords(error->relation), " ",
                    PathOf(ops, error->related, error->op_type, OpField::kNone), ")");
  }
  return absl::Status(status.code(), message);
}

}  // namespace collide
