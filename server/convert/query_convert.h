#pragma once

#include <cstddef>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collide/v1/collide.pb.h"
#include "query/batch.h"
#include "query/hit.h"
#include "server/service_options.h"

namespace collide {

// Queries in, results out: a QueryBatch's queries and the unary query requests as core queries,
// checked once here (paths `queries[i].raycast.direction`, `ray.origin`, `filter.excluded_ids`,
// ...), and hits back as the API's messages.

/// The largest max_distance used for casts: every body lies far inside it (coordinates and sizes
/// are bounded by kMaxCoordinate), so longer finite distances are clamped to it.
inline constexpr float kMaxCastDistance = 1e10f;

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
