#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "base/mutex.h"
#include "server/infra/replication_control.h"
#include "store/database.h"

namespace collide {

/// How a server keeps the router's map (--router_admin, --router_map, --router_backend).
struct RouterClaimsOptions {
  /// HAProxy runtime API addresses (`host:port`), each a router in front of the shards.
  std::vector<std::string> routers;
  /// The map as HAProxy names it (the file of its `map(...)` converter).
  std::string map;
  /// This server's backend in the routers' configuration.
  std::string backend;
  /// How often the whole map is checked against this server's scenes.
  std::chrono::milliseconds interval{5000};
  /// How long one command may take.
  std::chrono::milliseconds timeout{2000};
};

/// Keeps every router's override map (docker/haproxy.cfg: `use_backend` of the map's entry for
/// the x-collide-scene header, the consistent hash for a scene without one) pointing at this
/// server for the scenes it writes: its scenes that are not replicated (and not moving away),
/// and the replicated scenes it owns. Claim points a scene's entry here at once (a scene
/// imported by a move, a takeover); every `interval` the whole map is compared with the scenes
/// here (`show map`) and corrected: entries missing or pointing elsewhere are set, entries
/// pointing here for scenes this server no longer writes are deleted. A router that restarted
/// (its runtime changes lost) is put right within one interval.
class RouterClaims final : public RouterControl {
 public:
  /// `replication` (may be null) says which replicated scenes this server owns; both outlive
  /// the claims.
  RouterClaims(RouterClaimsOptions options, Database* db, const ReplicationControl* replication);
  /// Stop()s.
  ~RouterClaims() override;
  RouterClaims(const RouterClaims&) = delete;
  RouterClaims& operator=(const RouterClaims&) = delete;

  void Start();
  void Stop();

  /// Sets the entry of `scene` to this server's backend on every router (set map, or add map
  /// when it has none); `done` once every router answered (the first error).
  void Claim(const std::string& scene, std::function<void(absl::Status)> done) override;
  /// Checks the whole map soon.
  void SyncSoon();

 private:
  struct PendingClaim {
    std::string scene;
    std::function<void(absl::Status)> done;
  };
  void Run();
  // Sets one entry on one router.
  absl::Status SetEntry(const std::string& router, const std::string& scene);
  // The scenes this server writes now.
  std::vector<std::string> Writable() const;
  void Sync();

  const RouterClaimsOptions options_;
  Database* const db_;
  const ReplicationControl* const replication_;

  Mutex mu_;
  CondVar cv_;
  std::deque<PendingClaim> claims_ ABSL_GUARDED_BY(mu_);
  bool sync_soon_ ABSL_GUARDED_BY(mu_) = true;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace collide
