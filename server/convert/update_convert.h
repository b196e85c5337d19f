#pragma once

#include "absl/status/status.h"
#include "collide/v1/collide.pb.h"
#include "scene/update_batch.h"
#include "server/convert/field_path.h"
#include "server/service_options.h"

namespace collide {

// The writes of the API as core update batches: an UpdateBatch's ops then moves, the bodies of
// an UpsertBodies call, the ids of a RemoveBodies call. Values are checked here with the
// request's paths; what the scene then finds wrong with an op comes back as an OpError, which
// WithRequestPaths (field_path.h) words with the RequestOps of the request.

/// `proto`'s ops then moves as one core batch (into `out`, whose storage is reused).
/// RESOURCE_EXHAUSTED `ops` over limits.max_batch_ops (ops + moves); INVALID_ARGUMENT
/// `ops[i]...`, `moves.poses` (not 7 floats per id), `moves.poses[k]` (bad pose of move k),
/// `tick` (over 2^63 - 1). Does not check the scene name.
absl::Status UpdateBatchFromProto(const v1::UpdateBatch& proto, const ServiceLimits& limits,
                                  UpdateBatch* out);
/// How the core batch of `proto` lists its ops (its ops, then its moves).
RequestOps OpsOf(const v1::UpdateBatch& proto);

/// The bodies of an UpsertBodies request as one batch. RESOURCE_EXHAUSTED `bodies` over the
/// limit; INVALID_ARGUMENT `bodies[i]...`. Its ops are RequestOps{kUpsertBodies}.
absl::Status UpsertRequestToBatch(const v1::UpsertBodiesRequest& request,
                                  const ServiceLimits& limits, UpdateBatch* out);

/// The removals of a RemoveBodies request as one batch. RESOURCE_EXHAUSTED `ids` over the limit.
/// Its ops are RequestOps{kRemoveBodies}.
absl::Status RemoveRequestToBatch(const v1::RemoveBodiesRequest& request,
                                  const ServiceLimits& limits, UpdateBatch* out);

}  // namespace collide
