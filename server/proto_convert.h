#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "collide/v1/collide.pb.h"
#include "query/batch.h"
#include "query/hit.h"
#include "scene/scene.h"
#include "scene/scene_options.h"
#include "scene/update_batch.h"
#include "server/service_options.h"

namespace collide {

// Conversion between the API's messages and the core's types, with every check of the service
// edge: values are validated here once (NaN/Inf, sizes, unit rotations, directions, limits), and
// errors name the proto field path from the request message's root
// (`ops[3].set_pose.pose.rotation: must be a unit quaternion (length 0.5)`). The core may then
// assume valid input. The core's own errors (unknown bodies, duplicate upserts, full scenes) name
// core paths (`ops[i].body_id`); the Translate* functions rewrite them into proto paths.

/// Where a message sits in its request, rendered only when an error needs it:
/// `head[index]tail.field`, e.g. {"ops", 3, ".upsert"} + "pose.rotation".
struct FieldPath {
  /// No index: the path is `head tail`.
  static constexpr size_t kNoIndex = static_cast<size_t>(-1);
  absl::string_view head{};
  size_t index = kNoIndex;
  absl::string_view tail{};
  /// The path of `field` inside the message (the message itself when `field` is empty).
  std::string Of(absl::string_view field) const;
};

/// The largest max_distance used for casts: every body lies far inside it (coordinates and sizes
/// are bounded by kMaxCoordinate), so longer finite distances are clamped to it.
inline constexpr float kMaxCastDistance = 1e10f;

// ---------------------------------------------------------------------------------------------
// Scenes.

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

// ---------------------------------------------------------------------------------------------
// Bodies and updates.

/// The upsert of `body`, which sits at `at` (e.g. {"bodies", 2} or {"ops", 1, ".upsert"}).
/// INVALID_ARGUMENT naming the field (`bodies[2].shape.sphere.radius`, `bodies[0].pose.rotation`,
/// `bodies[0].shape` when no shape is set, `bodies[0].kind`).
absl::Status BodyToOp(const v1::Body& body, const FieldPath& at, UpdateOp* op);
/// The stored body `state` as the API's message.
void BodyStateToProto(const BodyState& state, v1::Body* out);

/// `proto`'s ops then moves as one core batch (into `out`, whose storage is reused).
/// RESOURCE_EXHAUSTED `ops` over limits.max_batch_ops (ops + moves); INVALID_ARGUMENT
/// `ops[i]...`, `moves.poses` (not 7 floats per id), `moves.poses[k]` (bad pose of move k).
/// Does not check the scene name.
absl::Status UpdateBatchFromProto(const v1::UpdateBatch& proto, const ServiceLimits& limits,
                                  UpdateBatch* out);
/// A core error about the batch made from `proto` (its `ops[i].<field>` paths count ops then
/// moves) with proto paths: `ops[2].remove`, `ops[1].upsert.id`, `moves.ids[4]`, ...
absl::Status TranslateUpdateError(const absl::Status& status, const v1::UpdateBatch& proto);

/// The bodies of an UpsertBodies request as one batch. RESOURCE_EXHAUSTED `bodies` over the
/// limit; INVALID_ARGUMENT `bodies[i]...`.
absl::Status UpsertRequestToBatch(const v1::UpsertBodiesRequest& request,
                                  const ServiceLimits& limits, UpdateBatch* out);
/// A core error about the batch of an UpsertBodies request, with `bodies[i]...` paths
/// (`bodies[1].id` for a duplicate).
absl::Status TranslateUpsertError(const absl::Status& status);

/// The removals of a RemoveBodies request as one batch. RESOURCE_EXHAUSTED `ids` over the limit.
absl::Status RemoveRequestToBatch(const v1::RemoveBodiesRequest& request,
                                  const ServiceLimits& limits, UpdateBatch* out);
/// A core error about the batch of a RemoveBodies request, with `ids[i]` paths.
absl::Status TranslateRemoveError(const absl::Status& status);

/// Rewrites the path of a core batch error `ops[i].<field>: reason` into `name(i, field)`; other
/// messages are kept, except the scene's `scene "x" was deleted`, which gets the path `scene`.
absl::Status TranslateOpError(
    const absl::Status& status,
    absl::FunctionRef<std::string(size_t index, absl::string_view field)> name);

// ---------------------------------------------------------------------------------------------
// Queries.

/// `queries[index]` of a QueryBatch as a core query. The query's filter.excluded_ids points into
/// `proto`, which must outlive the query's use. INVALID_ARGUMENT `queries[i].raycast.direction`,
/// `queries[i].kind` (none set), `queries[i].max_hits`, `queries[i].filter.excluded_ids`, ...
absl::Status QueryFromProto(const v1::Query& proto, size_t index, const ServiceLimits& limits,
                            Query* out);
/// The query of a Raycast request (paths `ray.*`, `filter.*`, `mode`, `max_hits`); the filter
/// points into `request`.
absl::StatusOr<Query> RaycastRequestToQuery(const v1::RaycastRequest& request,
                                            const ServiceLimits& limits);
/// The query of a SphereCast request (paths `cast.*`, ...); the filter points into `request`.
absl::StatusOr<Query> SphereCastRequestToQuery(const v1::SphereCastRequest& request,
                                               const ServiceLimits& limits);
/// The query of an Overlap request (paths `overlap.*`, ...); the filter points into `request`.
absl::StatusOr<Query> OverlapRequestToQuery(const v1::OverlapRequest& request,
                                            const ServiceLimits& limits);

/// `hit` as the API's message.
void HitToProto(const QueryHit& hit, v1::Hit* out);

}  // namespace collide
