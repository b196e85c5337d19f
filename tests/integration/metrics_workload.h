#pragma once

#include <cstdint>
#include <string>

#include "integration/test_util.h"

namespace collide::integration {

// The known workload of the metrics tests (RunWorkload).
inline constexpr int kBodies = 10;
inline constexpr int kUnaryRaycasts = 37;
inline constexpr int kStreamBatches = 5;
inline constexpr int kQueriesPerBatch = 64;
inline constexpr int kMoveBatches = 11;
inline constexpr int kMovesPerBatch = 7;

/// What the workload did, as the client saw it.
struct Workload {
  /// Hits of every query answered.
  uint64_t hits = 0;
  /// The scene's version at the end.
  uint64_t version = 0;
};

/// Runs the known workload against `server` (started with ServerConfig::metrics): a scene
/// "arena" of kBodies spheres (one UpsertBodies), kUnaryRaycasts unary Raycasts (closest),
/// kStreamBatches QueryStream batches of kQueriesPerBatch overlap queries (all), kMoveBatches
/// UpdateStream batches of kMovesPerBatch moves and one batch refused with NOT_FOUND (a move of
/// a body that does not exist), and one GetScene of a scene that does not exist (NOT_FOUND).
/// Checks collide_streams_open{kind="update"} is 1 while its stream is open. Fails the test
/// (ASSERT) on any unexpected answer.
void RunWorkload(ServerProcess& server, Workload* done);

/// The path of `name` on $PATH, or "" when it is not there.
std::string FindOnPath(const std::string& name);

}  // namespace collide::integration
