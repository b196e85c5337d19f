#include "server/infra/scene_header.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/field_error.h"

namespace collide {

std::optional<std::string> SceneHeaderOf(const ClientMetadata& metadata) {
  // gRPC hands the server lower-case keys; a multimap keeps repeated values in arrival order.
  auto found = metadata.find(grpc::string_ref(kSceneHeader.data(), kSceneHeader.size()));
  if (found == metadata.end()) return std::nullopt;
  return std::string(found->second.data(), found->second.size());
}

absl::Status CheckSceneHeader(const std::optional<std::string>& header, absl::string_view scene) {
  if (!header.has_value() || *header == scene) return absl::OkStatus();
  // Both names are quoted with C escapes: neither has been validated as a scene name yet.
  return InvalidFieldError(
      "scene", absl::StrCat("\"", absl::CHexEscape(scene), "\" does not match the ", kSceneHeader,
                            " header \"", absl::CHexEscape(*header), "\""));
}

}  // namespace collide
