#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "collide/v1/collide.pb.h"
#include "gtest/gtest.h"
#include "query/batch.h"
#include "query/collision_world.h"

namespace collide::integration {

// The in-process engine (collide_query) as the oracle of the server's answers: the same
// bodies and queries, converted from the API messages the way the contract says (absent
// rotation = identity, rotations and directions normalised, absent filter bits = all / 1).

/// A body of the API as the core describes it.
BodyDesc ToBodyDesc(const v1::Body& body);
/// A pose of the API in core form.
Pose ToCorePose(const v1::Pose& pose);

/// A unary Raycast request as the equivalent query of a batch.
v1::Query AsQuery(const v1::RaycastRequest& request);
/// A unary SphereCast request as a query.
v1::Query AsQuery(const v1::SphereCastRequest& request);
/// A unary Overlap request as a query.
v1::Query AsQuery(const v1::OverlapRequest& request);

/// A collision world holding exactly `bodies`, answering API queries.
class ReferenceWorld {
 public:
  /// Builds the world from the bodies (any order).
  explicit ReferenceWorld(std::span<const v1::Body> bodies);

  /// The expected answer to `query` (the request id echoed, no error).
  v1::QueryResult Run(const v1::Query& query) const;

 private:
  CollisionWorld world_;
};

/// Tolerances of a comparison.
struct HitTolerance {
  /// Distances, depths and point coordinates: within `relative` times max(1, |expected|).
  float relative = 1e-4f;
  /// Normals: within this per component.
  float normal = 1e-3f;
};

/// Checks the server's answer `got` to `query` against `world` (the state of the version the
/// answer reports): the request id, no error, identical hit ids in order and the truncated flag,
/// values within the tolerance. MODE_ANY may return any one of the hits MODE_ALL would.
::testing::AssertionResult ResultMatches(const v1::Query& query, const v1::QueryResult& got,
                                         const ReferenceWorld& world, HitTolerance tolerance = {});

/// The same for a unary answer.
::testing::AssertionResult ResponseMatches(const v1::Query& query, const v1::QueryResponse& got,
                                           const ReferenceWorld& world,
                                           HitTolerance tolerance = {});

}  // namespace collide::integration
