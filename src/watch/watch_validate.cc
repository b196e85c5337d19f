#include "watch/watch_validate.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "base/status_macros.h"
#include "scene/update_batch.h"
#include "scene/validate.h"

namespace collide {
namespace {

// INVALID_ARGUMENT `<list>[index].id: <what> <id> appears twice (first by <list>[first])`.
absl::Status Twice(absl::string_view list, size_t index, absl::string_view what, uint64_t id,
                   size_t first) {
  return FieldErrorStatus(absl::StatusCode::kInvalidArgument,
                          FieldError{.list = std::string(list),
                                     .index = index,
                                     .field = "id",
                                     .reason = absl::StrCat(what, " ", id, " appears twice"),
                                     .relation = "first by",
                                     .related = first});
}

}  // namespace

absl::Status PrepareWatch(std::span<FenceSpec> fences, std::span<const ContactWatchSpec> contacts) {
  absl::flat_hash_map<uint64_t, size_t> first;
  first.reserve(fences.size());
  for (size_t i = 0; i < fences.size(); ++i) {
    FenceSpec& fence = fences[i];
    COLLIDE_RETURN_IF_ERROR(AtElement(ValidateShape(fence.shape), "fences", i, "shape"));
    COLLIDE_RETURN_IF_ERROR(AtElement(ValidatePose(fence.pose), "fences", i, "pose"));
    fence.pose = NormalizedPose(fence.pose);
    if (auto [it, added] = first.try_emplace(fence.id, i); !added) {
      return Twice("fences", i, "fence", fence.id, it->second);
    }
  }
  first.clear();
  for (size_t i = 0; i < contacts.size(); ++i) {
    if (auto [it, added] = first.try_emplace(contacts[i].id, i); !added) {
      return Twice("contacts", i, "contact watch", contacts[i].id, it->second);
    }
  }
  return absl::OkStatus();
}

}  // namespace collide
