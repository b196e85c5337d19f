#pragma once

#include <cstddef>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collide/v1/collide.pb.h"
#include "query/batch.h"
#include "query/hit.h"
#include "scene/validate.h"
#include "server/service_options.h"

namespace collide {

// Queries in, results out: a QueryBatch's queries and the unary query requests as core queries,
// translated as they are (PrepareQuery, scene/validate.h, checks and normalises them), and hits
// back as the API's messages.

/// The query limits of the server's flags.
QueryLimits QueryLimitsOf(const ServiceLimits& limits);

/// `queries[index]` of a QueryBatch as a core query, to be checked by PrepareQuery with the same
/// index. The query's filter.excluded_ids points into `proto`, which must outlive the query's
/// use. INVALID_ARGUMENT `queries[i].kind` (none set), `queries[i].overlap.shape` (none set),
/// `queries[i].mode` (a mode the API does not have).
absl::Status QueryFromProto(const v1::Query& proto, size_t index, Query* out);

/// The query of a Raycast request; the filter points into `request`. Errors as QueryFromProto's,
/// about fields of the request (`mode`).
absl::StatusOr<Query> RaycastRequestToQuery(const v1::RaycastRequest& request);

/// The query of a SphereCast request; the filter points into `request`.
absl::StatusOr<Query> SphereCastRequestToQuery(const v1::SphereCastRequest& request);

/// The query of an Overlap request (`overlap.shape` when none is set); the filter points into
/// `request`.
absl::StatusOr<Query> OverlapRequestToQuery(const v1::OverlapRequest& request);

/// `hit` as the API's message.
void HitToProto(const QueryHit& hit, v1::Hit* out);

}  // namespace collide
