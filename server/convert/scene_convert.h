#pragma once

#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collide/v1/collide.pb.h"
#include "scene/scene.h"
#include "scene/scene_options.h"
#include "scene/update_batch.h"
#include "server/service_options.h"
#include "store/database.h"

namespace collide {

// Scenes and bodies between the API's messages and the core: a create's options (defaulted),
// a scene's info and counters, a body as an upsert and a stored body back. Values are
// translated as they are; the core checks them (ValidateSceneOptions in the store,
// ValidateOpValues in the scene).

/// The scene options a create asks for, defaults filled in (max_bodies: min(1,000,000,
/// MaxBodiesCap(limits))). INVALID_ARGUMENT `options.durability` for a durability the API does
/// not have; every other value is the store's to check.
absl::StatusOr<SceneOptions> SceneOptionsFromProto(const v1::SceneOptions& proto,
                                                   const ServiceLimits& limits);

/// The most bodies this server lets a scene hold: limits.max_bodies_per_scene, at most
/// kMaxBodiesLimit.
uint32_t MaxBodiesCap(const ServiceLimits& limits);
/// The API's durability for a core policy (same values).
v1::Durability DurabilityToProto(DurabilityPolicy policy);
/// `stats` as the API's message.
void StatsToProto(const SceneStats& stats, v1::SceneStats* out);
/// `scene`'s name, options (durability resolved against `server_default`) and current counters.
void SceneInfoToProto(const Scene& scene, DurabilityPolicy server_default, v1::SceneInfo* out);
/// The ListScenes answer (the rpc's and the viewer's): every scene of `db` whose name `visible`
/// lets through, by name, each as SceneInfoToProto writes it; a scene deleted meanwhile is left
/// out.
void ListScenesToProto(const Database& db, absl::FunctionRef<bool(const std::string&)> visible,
                       DurabilityPolicy server_default, v1::ListScenesResponse* out);

/// The upsert of `body`, its values as they are. A body whose shape is a mesh or heightfield
/// instance places that asset: its name is appended to `asset_names` (the batch's
/// UpdateBatch::asset_names) and the op indexes it; with `asset_names` null such a shape is
/// refused. INVALID_ARGUMENT (a FieldError of the body, for the caller to place with AtElement)
/// about `shape` when none is set or `kind` when the API has no such kind.
absl::Status BodyToOp(const v1::Body& body, UpdateOp* op,
                      std::vector<std::string>* asset_names = nullptr);
/// The stored body `state` as the API's message.
void BodyStateToProto(const BodyState& state, v1::Body* out);

}  // namespace collide
