#include "base/field_error.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace collide {
namespace {

// The payload's type URL. The payload never leaves the process: its layout is this file's own
// (index, related, then four length-prefixed strings).
constexpr absl::string_view kPayloadUrl = "collide/FieldError";

void PutU64(uint64_t v, std::string* out) {
  char bytes[sizeof v];
  std::memcpy(bytes, &v, sizeof v);
  out->append(bytes, sizeof v);
}

bool GetU64(absl::string_view* in, uint64_t* v) {
  if (in->size() < sizeof *v) return false;
  std::memcpy(v, in->data(), sizeof *v);
  in->remove_prefix(sizeof *v);
  return true;
}

void PutString(absl::string_view s, std::string* out) {
  PutU64(s.size(), out);
  out->append(s.data(), s.size());
}

bool GetString(absl::string_view* in, std::string* s) {
  uint64_t size = 0;
  if (!GetU64(in, &size) || size > in->size()) return false;
  s->assign(in->data(), size);
  in->remove_prefix(size);
  return true;
}

std::string Encode(const FieldError& error) {
  std::string out;
  PutU64(error.index, &out);
  PutU64(error.related, &out);
  PutString(error.list, &out);
  PutString(error.field, &out);
  PutString(error.reason, &out);
  PutString(error.relation, &out);
  PutString(error.related_list, &out);
  return out;
}

std::optional<FieldError> Decode(absl::string_view in) {
  FieldError error;
  uint64_t index = 0, related = 0;
  if (!GetU64(&in, &index) || !GetU64(&in, &related) || !GetString(&in, &error.list) ||
      !GetString(&in, &error.field) || !GetString(&in, &error.reason) ||
      !GetString(&in, &error.relation) || !GetString(&in, &error.related_list) || !in.empty()) {
    return std::nullopt;
  }
  error.index = static_cast<size_t>(index);
  error.related = static_cast<size_t>(related);
  return error;
}

}  // namespace

std::string FieldPath(absl::string_view list, size_t index, absl::string_view field) {
  std::string out(list);
  if (!list.empty() && index != FieldError::kNoIndex) absl::StrAppend(&out, "[", index, "]");
  if (!field.empty()) {
    if (!out.empty()) out.push_back('.');
    out.append(field.data(), field.size());
  }
  return out;
}

std::string FieldPathOf(const FieldError& error) {
  return FieldPath(error.list, error.index, error.field);
}

std::string FieldErrorMessage(const FieldError& error) {
  std::string message = FieldPathOf(error);
  absl::StrAppend(&message, message.empty() ? "" : ": ", error.reason);
  if (!error.relation.empty()) {
    const std::string& list = error.related_list.empty() ? error.list : error.related_list;
    absl::StrAppend(&message, " (", error.relation, " ", FieldPath(list, error.related, ""), ")");
  }
  return message;
}

absl::Status FieldErrorStatus(absl::StatusCode code, const FieldError& error) {
  absl::Status status(code, FieldErrorMessage(error));
  status.SetPayload(kPayloadUrl, absl::Cord(Encode(error)));
  return status;
}

absl::Status FieldStatus(absl::StatusCode code, absl::string_view field, absl::string_view reason) {
  return FieldErrorStatus(code,
                          FieldError{.field = std::string(field), .reason = std::string(reason)});
}

absl::Status InvalidFieldError(absl::string_view field, absl::string_view reason) {
  return FieldStatus(absl::StatusCode::kInvalidArgument, field, reason);
}

absl::Status InvalidElementError(absl::string_view list, size_t index, absl::string_view field,
                                 absl::string_view reason) {
  return FieldErrorStatus(absl::StatusCode::kInvalidArgument,
                          FieldError{.list = std::string(list),
                                     .index = index,
                                     .field = std::string(field),
                                     .reason = std::string(reason)});
}

std::optional<FieldError> GetFieldError(const absl::Status& status) {
  const auto payload = status.GetPayload(kPayloadUrl);
  if (!payload.has_value()) return std::nullopt;
  return Decode(std::string(*payload));
}

absl::Status AtElement(const absl::Status& status, absl::string_view list, size_t index,
                       absl::string_view prefix) {
  // The hot path (every op of every batch): an OK status, returned at once.
  if (status.ok()) return status;
  std::optional<FieldError> error = GetFieldError(status);
  if (!error.has_value()) return status;
  error->list = std::string(list);
  error->index = index;
  if (!prefix.empty()) {
    error->field =
        error->field.empty() ? std::string(prefix) : absl::StrCat(prefix, ".", error->field);
  }
  return FieldErrorStatus(status.code(), *error);
}

absl::Status UnderField(const absl::Status& status, absl::string_view parent) {
  if (status.ok()) return status;
  std::optional<FieldError> error = GetFieldError(status);
  if (!error.has_value() || parent.empty()) return status;
  const auto under = [parent](std::string* inner) {
    *inner = inner->empty() ? std::string(parent) : absl::StrCat(parent, ".", *inner);
  };
  if (!error->related_list.empty()) under(&error->related_list);
  under(error->list.empty() ? &error->field : &error->list);
  return FieldErrorStatus(status.code(), *error);
}

}  // namespace collide
