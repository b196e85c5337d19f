#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collide/v1/collide.pb.h"
#include "scene/scene.h"
#include "scene/scene_options.h"
#include "scene/update_batch.h"
#include "server/convert/field_path.h"
#include "server/service_options.h"

namespace collide {

// Scenes and bodies between the API's messages and the core: a create's options (checked and
// defaulted), a scene's info and counters, a body as an upsert and a stored body back.

/// The scene options a create asks for, defaults filled in (max_bodies: min(1,000,000,
/// limits.max_bodies_per_scene)). INVALID_ARGUMENT `options.<field>` for out-of-range values.
absl::StatusOr<SceneOptions> SceneOptionsFromProto(const v1::SceneOptions& proto,
                                                   const ServiceLimits& limits);
/// The API's durability for a core policy (same values).
v1::Durability DurabilityToProto(DurabilityPolicy policy);
/// `stats` as the API's message.
void StatsToProto(const SceneStats& stats, v1::SceneStats* out);
/// `scene`'s name, options (durability resolved against `server_default`) and current counters.
void SceneInfoToProto(const Scene& scene, DurabilityPolicy server_default, v1::SceneInfo* out);

/// The upsert of `body`, which sits at `at` (e.g. {"bodies", 2} or {"ops", 1, ".upsert"}).
/// INVALID_ARGUMENT naming the field (`bodies[2].shape.sphere.radius`, `bodies[0].pose.rotation`,
/// `bodies[0].shape` when no shape is set, `bodies[0].kind`).
absl::Status BodyToOp(const v1::Body& body, const FieldPath& at, UpdateOp* op);
/// The stored body `state` as the API's message.
void BodyStateToProto(const BodyState& state, v1::Body* out);

}  // namespace collide
