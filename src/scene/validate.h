#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "geom/pose.h"
#include "geom/shapes.h"
#include "query/batch.h"
#include "scene/scene.h"
#include "scene/update_batch.h"

namespace collide {

// The core's checks of input values: the one validator. Every transport (gRPC, the viewer's
// HTTP API, import files) translates its messages into the core types below and hands them to
// these checks, directly or through the scene (Scene::Apply checks every op, Scene::Restore
// every body); the geometry, tree and query code after them assumes valid input. An error names
// the value as the API does, as a FieldError (base/field_error.h): `ops[3].upsert.pose.rotation:
// must be a unit quaternion (length 0.5)`, `queries[2].raycast.direction: must be finite and
// non-zero`. Scene options are checked by ValidateSceneOptions (scene_options.h), scene names by
// ValidateSceneName (scene_name.h), both with FieldErrors too. Each check also puts the value into
// its canonical form where one exists (a direction of unit length, a cast distance clamped to
// kMaxCastDistance).

/// The longest distance a cast goes: longer requests are clamped to it (every scene fits in far
/// less: coordinates are at most kMaxCoordinate).
inline constexpr float kMaxCastDistance = 1e10f;

/// A finite coordinate within +-kMaxCoordinate.
bool IsCoordinate(float v);
/// A finite size in [0, kMaxCoordinate].
bool IsDimension(float v);

/// Checks a pose: `position` (finite, within +-kMaxCoordinate) and `rotation` (finite, within
/// kUnitQuaternionTolerance of unit length). Errors name `position` or `rotation`.
absl::Status ValidatePose(const Pose& pose);

/// Checks a shape's dimensions (finite, >= 0, <= kMaxCoordinate) and type. Errors name
/// `sphere.radius`, `box.half_extents`, `capsule.radius`, `capsule.half_height`, or the shape
/// itself for an unknown type.
absl::Status ValidateShape(const Shape& shape);

/// Checks the values of `<list>[index]` alone (finite and in-range numbers, known enums, unit
/// rotations); existence of bodies is the scene's check. Errors name the field under the op's
/// type, as the API's UpdateOp does: `ops[3].upsert.shape.sphere.radius`,
/// `ops[0].set_pose.pose.rotation`, `ops[1].upsert.kind`, `ops[2]` for an unknown type.
absl::Status ValidateOpValues(const UpdateOp& op, size_t index, absl::string_view list = "ops");

/// Checks a stored body (a snapshot's, an import's) as ValidateOpValues checks an upsert; errors
/// name `<list>[index].<field>` without an op type (`bodies[4].pose.rotation`).
absl::Status ValidateBody(const BodyState& body, size_t index, absl::string_view list = "bodies");

/// The limits a query is checked against (the server's flags).
struct QueryLimits {
  /// The most hits a MODE_ALL query may ask for.
  uint32_t max_hits = 4096;
  /// The most ids a query's filter may exclude.
  uint32_t max_excluded_ids = 1024;
};

/// Checks `*query` (element `index` of `list`) and puts it into canonical form: cast directions
/// normalised (in double), cast distances clamped to kMaxCastDistance, max_hits 0 replaced by
/// the default (kDefaultMaxHits, at most limits.max_hits). Errors name the field under the
/// query's kind, as the API's Query does (`queries[2].sphere_cast.radius`,
/// `queries[0].aabb.region`), and the fields every kind has at the query
/// (`queries[1].tick_fraction`, `queries[4].max_hits`). Whether the scene retains `at_tick` is
/// checked under the scene's read (CheckQueryTick).
absl::Status PrepareQuery(Query* query, const QueryLimits& limits, size_t index,
                          absl::string_view list = "queries");

}  // namespace collide
