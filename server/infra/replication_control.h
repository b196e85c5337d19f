#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "scene/scene_options.h"

namespace collide {

/// One replicated scene as this server holds it (GetScene, GetServerStats, /metrics).
struct SceneReplicaFigures {
  std::string scene;
  /// This server owns the scene (takes its writes).
  bool owner = false;
  /// The owner's address (empty while none is known).
  std::string owner_address;
  /// The owner's epoch.
  uint64_t epoch = 0;
  /// The replicated log's sequence of the last record stored (owner) or applied (follower) here.
  uint64_t applied_sequence = 0;
  /// Log messages not applied here yet, and for how long the oldest has waited (0 on the owner
  /// and on a follower that is up to date).
  uint64_t lag_sequences = 0;
  double lag_seconds = 0;
  /// Queries may read the copy here (checked against the replicated log).
  bool readable = false;
  /// "owner", "resolving", "following", "rebuilding" or "taking over".
  std::string state;
};

/// Counters of this server's replication.
struct ReplicationFigures {
  /// Connected to a NATS node now.
  bool connected = false;
  /// This server's address in owner records.
  std::string address;
  /// Replicated scenes this server owns, and those it follows.
  uint32_t owned = 0;
  uint32_t followed = 0;
  /// Since start: scenes this server took over (a failover or a handover), lost to another
  /// server while it owned them, and rebuilt from the replicated log.
  uint64_t takeovers = 0;
  uint64_t depositions = 0;
  uint64_t rebuilds = 0;
  /// Since start: records this server stored in the replicated logs as owner, and applied as a
  /// follower; snapshots it copied to them.
  uint64_t records_published = 0;
  uint64_t records_applied = 0;
  uint64_t snapshots_published = 0;
};

/// What the service asks of replication (server/replication/replicator.h implements it).
class ReplicationControl {
 public:
  virtual ~ReplicationControl() = default;
  /// Creates replicated scene `name` (its options' durability is replicated): its stream and
  /// its owner key (ALREADY_EXISTS when the key exists: the scene lives on another server), then
  /// the scene here, owned by this server. `done` runs once the creation is stored in the
  /// replicated log, on any thread.
  virtual void CreateScene(const std::string& name, const SceneOptions& options,
                           std::function<void(absl::Status)> done) = 0;
  /// The figures of replicated scene `scene`, if this server holds it.
  virtual std::optional<SceneReplicaFigures> SceneFigures(absl::string_view scene) const = 0;
  /// Every replicated scene this server holds, sorted by name.
  virtual std::vector<SceneReplicaFigures> AllSceneFigures() const = 0;
  virtual ReplicationFigures Figures() const = 0;
};

/// The router's map from scene to shard, kept by this server (server/replication/router_claims.h).
class RouterControl {
 public:
  virtual ~RouterControl() = default;
  /// Points every router's map entry of `scene` at this server; `done` once they answered (the
  /// first error if one did not), on any thread.
  virtual void Claim(const std::string& scene, std::function<void(absl::Status)> done) = 0;
};

}  // namespace collide
