#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace collide {

// Errors about input, as data. Every layer that checks a value (the scene's checks of ops,
// queries, options and bodies; the watch layer's fences; the store's decoding of records) says
// where the value is and why it is wrong with a FieldError, carried as the payload of the
// absl::Status it returns. The layer names fields as the API does (`upsert.pose.rotation`,
// `raycast.direction`, `options.fat_margin`), inside the list it was given (`ops`, `queries`,
// `bodies`). A transport that made the input from a request of its own shape (the moves columns
// of an UpdateBatch, the bodies of UpsertBodies, a unary query's `ray`) moves the error to its
// request's words (server/convert/field_path.h), and renders every path through FieldPath below:
// a field path is written in exactly one place.

/// Where and why one value of an input is wrong.
struct FieldError {
  /// "No index": the field belongs to the input's root, or a relation names no other element.
  static constexpr size_t kNoIndex = static_cast<size_t>(-1);

  /// The repeated field the wrong element belongs to (`ops`, `queries`, `bodies`, or a longer
  /// path such as `chunks[3].bodies`); empty: a field of the root.
  std::string list{};
  /// The element of `list` (kNoIndex when `list` is empty).
  size_t index = kNoIndex;
  /// The field inside the element, dotted (`upsert.pose.rotation`); empty: the element itself.
  std::string field{};
  /// Why, without the path (`must be a unit quaternion (length 0.5)`).
  std::string reason{};
  /// How the reason refers to another element of `list` (`first by`, `removed by`), or empty.
  std::string relation{};
  /// With a relation: the other element's index in `related_list`.
  size_t related = kNoIndex;
  /// With a relation: the list of the other element when it is not `list`.
  std::string related_list{};

  bool operator==(const FieldError&) const = default;
};

/// The one way a field path is written: `list[index].field` (`ops[3].upsert.pose`), `list[index]`
/// when `field` is empty, `field` when `list` is, and `list.field` without an index.
std::string FieldPath(absl::string_view list, size_t index, absl::string_view field);

/// The path of `error`'s value (FieldPath of its list, index and field).
std::string FieldPathOf(const FieldError& error);

/// The message of `error`: `<path>: <reason>`, then ` (<relation> <list>[<related>])` with a
/// relation (`related_list` when set).
std::string FieldErrorMessage(const FieldError& error);

/// A status with `code` and FieldErrorMessage(error) that carries `error` as data.
absl::Status FieldErrorStatus(absl::StatusCode code, const FieldError& error);

/// A status with `code` about `field` of the root (`scene: no scene "x"`).
absl::Status FieldStatus(absl::StatusCode code, absl::string_view field, absl::string_view reason);

/// INVALID_ARGUMENT about `field` of the root (`options.fat_margin: ...`).
absl::Status InvalidFieldError(absl::string_view field, absl::string_view reason);

/// INVALID_ARGUMENT about `field` of element `index` of `list` (`ops[3].upsert.pose: ...`).
absl::Status InvalidElementError(absl::string_view list, size_t index, absl::string_view field,
                                 absl::string_view reason);

/// The FieldError `status` carries, if any.
std::optional<FieldError> GetFieldError(const absl::Status& status);

/// `status` with its FieldError, about a field of a root (`pose.rotation`), moved into element
/// `index` of `list` under `prefix` (`ops`, 3, `upsert` give `ops[3].upsert.pose.rotation`). A
/// status without a FieldError is returned as it is.
absl::Status AtElement(const absl::Status& status, absl::string_view list, size_t index,
                       absl::string_view prefix = "");

/// `status` with its FieldError moved under `parent` (`header`, `chunks[3]`): its list, or its
/// field when it has no list, is prefixed by `parent`. A status without a FieldError is
/// returned as it is.
absl::Status UnderField(const absl::Status& status, absl::string_view parent);

}  // namespace collide
