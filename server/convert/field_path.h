#pragma once

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace collide {

// The field paths of the API's error messages (`ops[3].upsert.pose.rotation: must be a unit
// quaternion (length 0.5)`), named from the request message's root. The converters check values
// with the FieldPath of the message they read; errors the core finds in a batch arrive as data
// (an OpError payload, scene/op_error.h) and get their path here, in the words of the request
// the batch came from (RequestOps).

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

/// INVALID_ARGUMENT `<at.Of(field)>: <reason>`.
absl::Status InvalidField(const FieldPath& at, absl::string_view field, absl::string_view reason);

/// How a request lists the ops of the core batch made from it.
struct RequestOps {
  enum class Kind {
    /// An UpdateBatch: its `ops` (the first `op_count` core ops), then its `moves`.
    kUpdateBatch,
    /// An UpsertBodiesRequest: core op i is `bodies[i]`.
    kUpsertBodies,
    /// A RemoveBodiesRequest: core op i is `ids[i]`.
    kRemoveBodies,
  };
  Kind kind = Kind::kUpdateBatch;
  /// kUpdateBatch: how many of the core ops came from `ops` (the rest are moves).
  size_t op_count = 0;
};

/// `status` as the client sees it: when it carries an OpError, its message is rebuilt from that
/// with the request's paths (`ops[1].upsert.id`, `moves.ids[4]`, `bodies[2].id`, `ids[0]`, and
/// the other op a reason names: `(first by bodies[0])`); any other status is returned as it is.
absl::Status WithRequestPaths(const absl::Status& status, const RequestOps& ops);

}  // namespace collide
