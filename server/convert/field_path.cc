#include "server/convert/field_path.h"

#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/field_error.h"

namespace collide {
namespace {

// The last segment of a dotted field (`position` of `set_pose.pose.position`).
absl::string_view LastSegment(absl::string_view field) {
  const size_t dot = field.rfind('.');
  return dot == absl::string_view::npos ? field : field.substr(dot + 1);
}

// `field` without its first segment when that is `head` (`upsert.id` -> `id`).
std::string WithoutHead(absl::string_view field, absl::string_view head) {
  if (field == head) return "";
  const std::string prefix = absl::StrCat(head, ".");
  if (absl::StartsWith(field, prefix)) return std::string(field.substr(prefix.size()));
  return std::string(field);
}

// Core op `index` of an UpdateBatch as an element of the request: its list and index.
void PlaceUpdateOp(const RequestLayout& layout, size_t index, std::string* list, size_t* at) {
  if (index < layout.op_count) {
    *list = "ops";
    *at = index;
  } else {
    *list = "moves.ids";
    *at = index - layout.op_count;
  }
}

void ForUpdateBatch(const RequestLayout& layout, FieldError* e) {
  if (e->index == FieldError::kNoIndex || e->index < layout.op_count) {
    // An op of `ops` is named as the core names it.
  } else {
    // A move: its id (`moves.ids[k]`), or one of its 7 pose floats (`moves.poses[k]`, the
    // reason saying which part).
    const size_t k = e->index - layout.op_count;
    const bool id = e->field.empty() || LastSegment(e->field) == "id";
    if (!id) e->reason = absl::StrCat(LastSegment(e->field), " ", e->reason);
    e->list = id ? "moves.ids" : "moves.poses";
    e->index = k;
    e->field.clear();
  }
  if (!e->relation.empty()) PlaceUpdateOp(layout, e->related, &e->related_list, &e->related);
}

void ForUnaryQuery(const RequestLayout& layout, FieldError* e) {
  e->list.clear();
  e->index = FieldError::kNoIndex;
  for (absl::string_view kind : {"raycast", "sphere_cast", "overlap", "point", "aabb"}) {
    if (e->field == kind || absl::StartsWith(e->field, absl::StrCat(kind, "."))) {
      // Under the root (`ray.direction`), or at the request's top without one (`direction`).
      absl::string_view rest = absl::string_view(e->field).substr(kind.size());
      if (layout.query_root.empty()) absl::ConsumePrefix(&rest, ".");
      e->field = absl::StrCat(layout.query_root, rest);
      return;
    }
  }
}

void ForImport(const RequestLayout& layout, absl::StatusCode code, FieldError* e) {
  // The assets are the stream's own (`assets[1].vertices[8]`), before the chunks.
  if (absl::StartsWith(e->list, "assets") || absl::StartsWith(e->field, "assets")) return;
  if (e->list == "bodies" && e->index != FieldError::kNoIndex && !layout.chunk_starts.empty()) {
    // The last chunk that starts at or before the body.
    const auto next =
        std::upper_bound(layout.chunk_starts.begin(), layout.chunk_starts.end(), e->index);
    const size_t chunk = static_cast<size_t>(next - layout.chunk_starts.begin()) - 1;
    e->index -= layout.chunk_starts[chunk];
    e->list = FieldPath("chunks", chunk, "bodies");
    return;
  }
  // The scene's name is the first message's `scene`, or the header's: a name that is not
  // valid is the header's field then; the scene it names (one that exists, one the token does
  // not cover) is the request's `scene`.
  if (e->list.empty() && e->field == "scene" &&
      (!layout.name_from_header || code != absl::StatusCode::kInvalidArgument)) {
    return;
  }
  std::string& inner = e->list.empty() ? e->field : e->list;
  inner = inner.empty() ? "header" : absl::StrCat("header.", inner);
}

}  // namespace

absl::Status ForRequest(const absl::Status& status, const RequestLayout& layout) {
  if (status.ok() || layout.kind == RequestLayout::Kind::kSame) return status;
  std::optional<FieldError> error = GetFieldError(status);
  if (!error.has_value()) return status;
  FieldError& e = *error;
  const bool core_op = e.list == "ops";
  switch (layout.kind) {
    case RequestLayout::Kind::kSame:
      return status;
    case RequestLayout::Kind::kUpdateBatch:
      if (!core_op) return status;
      ForUpdateBatch(layout, &e);
      break;
    case RequestLayout::Kind::kUpsertBodies:
      if (!core_op) return status;
      e.list = "bodies";
      e.field = WithoutHead(e.field, "upsert");
      break;
    case RequestLayout::Kind::kRemoveBodies:
      if (!core_op) return status;
      e.list = "ids";
      e.field.clear();
      break;
    case RequestLayout::Kind::kUnaryQuery:
      if (e.list != "queries") return status;
      ForUnaryQuery(layout, &e);
      break;
    case RequestLayout::Kind::kImport:
      ForImport(layout, status.code(), &e);
      break;
    case RequestLayout::Kind::kUpload:
      if (!e.list.empty()) return status;
      if (e.field == "name" || e.field == "sha256" || absl::StartsWith(e.field, "mesh.") ||
          absl::StartsWith(e.field, "heightfield.")) {
        e.field = absl::StrCat("header.", e.field);
        break;
      }
      return status;
  }
  return FieldErrorStatus(status.code(), e);
}

}  // namespace collide
