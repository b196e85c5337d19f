#include "scene/move_destination.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "base/field_error.h"

namespace collide {

absl::Status ValidateMoveDestination(absl::string_view destination) {
  if (destination.empty() || destination.size() > kMaxMoveDestinationLength) {
    return InvalidFieldError("destination",
                             absl::StrCat("an address has 1 to ", kMaxMoveDestinationLength,
                                          " characters, got ", destination.size()));
  }
  for (size_t i = 0; i < destination.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(destination[i]);
    if (c <= 0x20 || c >= 0x7F) {
      return InvalidFieldError(
          "destination",
          absl::StrCat("character ", i, " is a space, a control character or not ASCII"));
    }
  }
  return absl::OkStatus();
}

absl::Status MovedError(absl::string_view scene, absl::string_view destination) {
  absl::Status status = FieldStatus(absl::StatusCode::kFailedPrecondition, "scene",
                                    absl::StrCat("scene \"", scene, "\" moved to ", destination));
  status.SetPayload(kMovedToPayload, absl::Cord(destination));
  return status;
}

absl::Status AlreadyMovingError(absl::string_view scene, absl::string_view destination) {
  absl::Status status = absl::FailedPreconditionError(
      absl::StrCat("destination: scene \"", scene, "\" is already moving to ", destination,
                   " (clear the mark first)"));
  status.SetPayload(kMovedToPayload, absl::Cord(destination));
  return status;
}

std::string MovedToOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kMovedToPayload);
  return payload.has_value() ? std::string(*payload) : std::string();
}

}  // namespace collide
