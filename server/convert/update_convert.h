#pragma once

#include "absl/status/status.h"
#include "collide/v1/collide.pb.h"
#include "scene/update_batch.h"
#include "server/convert/field_path.h"
#include "server/service_options.h"

namespace collide {

// The writes of the API as core update batches: an UpdateBatch's ops then moves, the bodies of
// an UpsertBodies call, the ids of a RemoveBodies call. Values are translated as they are; the
// scene checks them (Scene::Apply, scene/validate.h) and names a wrong one in the core batch's
// words (`ops[7].set_pose.pose.rotation`), which ForRequest (field_path.h) moves to the
// request's (`moves.poses[2]`) with the request's RequestLayout.

/// `proto`'s ops then moves as one core batch (into `out`, whose storage is reused).
/// RESOURCE_EXHAUSTED `ops` over limits.max_batch_ops (ops + moves); INVALID_ARGUMENT
/// `ops[i].op` (none set), `ops[i].upsert.shape` / `.kind` (none the API has), `moves.poses`
/// (not 7 floats per id). Does not check the scene name.
absl::Status UpdateBatchFromProto(const v1::UpdateBatch& proto, const ServiceLimits& limits,
                                  UpdateBatch* out);
/// How the core batch of `proto` lists its ops (its ops, then its moves).
RequestLayout LayoutOf(const v1::UpdateBatch& proto);

/// The bodies of an UpsertBodies request as one batch. RESOURCE_EXHAUSTED `bodies` over the
/// limit; INVALID_ARGUMENT `bodies[i].shape` / `.kind`. Its layout is kUpsertBodies.
absl::Status UpsertRequestToBatch(const v1::UpsertBodiesRequest& request,
                                  const ServiceLimits& limits, UpdateBatch* out);

/// The removals of a RemoveBodies request as one batch. RESOURCE_EXHAUSTED `ids` over the limit.
/// Its layout is kRemoveBodies.
absl::Status RemoveRequestToBatch(const v1::RemoveBodiesRequest& request,
                                  const ServiceLimits& limits, UpdateBatch* out);

}  // namespace collide
