#pragma once

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "server/infra/auth.h"

namespace collide {

/// The gRPC metadata key a client sets, on every call that names a scene, to that scene's name,
/// so that a router in front of several servers (HAProxy's consistent hash, docs/SCALING.md) can
/// send every call of one scene to the same server. Streams are opened for one scene.
inline constexpr absl::string_view kSceneHeader = "x-collide-scene";

/// The value of the call's x-collide-scene metadata; nullopt when the call has none (an old
/// client, or ListScenes). When the key is repeated, the first value counts (routers hash the
/// first too).
std::optional<std::string> SceneHeaderOf(const ClientMetadata& metadata);

/// OK when `header` is absent or equals `scene`; otherwise INVALID_ARGUMENT
/// `scene: "b" does not match the x-collide-scene header "a"`: a router sharding by the header
/// would have sent the call to the server of another scene. Checked for every rpc that names a
/// scene and for every batch of an UpdateStream or QueryStream (the batch's error; the stream
/// goes on).
absl::Status CheckSceneHeader(const std::optional<std::string>& header, absl::string_view scene);

}  // namespace collide
