#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/worker_pool.h"
#include "grpcpp/server.h"
#include "grpcpp/support/server_interceptor.h"
#include "scene/query_sampler.h"
#include "server/infra/auth.h"
#include "server/infra/service_counters.h"
#include "server/infra/stream_registry.h"
#include "server/replication/replicator.h"
#include "server/replication/router_claims.h"
#include "server/rpc/collide_service.h"
#include "server/rpc/reflection_service.h"
#include "server/service_options.h"
#include "store/database.h"
#include "watch/watch_dispatcher.h"

namespace collide {

/// How long a gRPC connection may take to start: its TLS handshake and its client's HTTP/2
/// SETTINGS (GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS); then the server closes it.
inline constexpr std::chrono::milliseconds kGrpcHandshakeTimeout{10000};

/// What a server counts for /metrics (server/infra/metrics.h); empty: nothing is counted.
struct ServerHooks {
  /// Where the service counts queries and updates (outlives the server).
  ServiceCounters* counters = nullptr;
  /// Interceptors of every call (grpc::ServerBuilder's, experimental in gRPC 1.51).
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
};

/// A running collide server: the database, the service, the health and reflection services
/// (grpc.reflection.v1alpha from gRPC, grpc.reflection.v1 from reflection_service.h), listening
/// on one address.
class CollideServer {
 public:
  /// Checks the options (ServerOptions::Validate: a non-loopback address without a token file
  /// needs allow_insecure_remote, FAILED_PRECONDITION otherwise), reads the token file and the
  /// TLS files, reserves the address (PortReservation: UNAVAILABLE when it cannot be bound, before
  /// anything is written to the data directory), then opens the database and starts serving on
  /// the reserved port.
  static absl::StatusOr<std::unique_ptr<CollideServer>> Start(const ServerOptions& options,
                                                              ServerHooks hooks = {});
  /// Shutdown()s the server.
  ~CollideServer();
  CollideServer(const CollideServer&) = delete;
  CollideServer& operator=(const CollideServer&) = delete;

  /// The bound port (the picked one when the address asked for port 0).
  int port() const { return port_; }
  /// The address with the bound port, e.g. `127.0.0.1:43121`.
  const std::string& bound_address() const { return bound_address_; }
  /// The database (tests).
  Database* database() { return db_.get(); }
  /// The token checks of calls (AllowAll without a token file); the viewer's HTTP API uses it too.
  const Authenticator* authenticator() const { return auth_.get(); }
  /// The open streams' registry.
  const StreamRegistry* streams() const { return streams_.get(); }
  /// The watch dispatcher (its budget's figures).
  WatchDispatcher* watches() { return watches_.get(); }
  /// The sample of the casts the server answers, for the viewer's streams.
  QuerySampler* query_samples() { return &query_samples_; }
  /// Replication (--nats_url); null without.
  const ReplicationControl* replication() const { return replicator_.get(); }
  /// The address written in owner records and told to writers: --advertise_address, or the
  /// bound one.
  const std::string& advertised_address() const { return advertised_address_; }

  /// Graceful shutdown: health turns NOT_SERVING, the replicated scenes this server owns are
  /// handed to their followers (once their writes are stored), calls in progress get
  /// options.drain_timeout to finish before they are cancelled, then the database is flushed and
  /// closed. Returns the database's error, if any. Idempotent.
  absl::Status Shutdown();

 private:
  CollideServer() = default;

  ServerOptions options_;
  // Outlives db_, service_ and server_: QueryStream batches run their chunks on it, and the
  // database's writers finish their batches on it (DatabaseOptions::apply_pool).
  std::unique_ptr<WorkerPool> query_pool_;
  // Outlives service_ (its query rpcs offer to it) and the viewer (it reads it).
  QuerySampler query_samples_;
  // The database's ReplicationHook: outlives it (declared before it, destroyed after).
  std::unique_ptr<Replicator> replicator_;
  std::unique_ptr<Database> db_;
  // Keeps the routers' map; stopped before the database closes.
  std::unique_ptr<RouterClaims> router_;
  std::string advertised_address_;
  std::unique_ptr<Authenticator> auth_;
  // Outlives server_: streams unregister when they end, up to the server's shutdown.
  std::unique_ptr<StreamRegistry> streams_;
  // Outlives server_ too: Watch streams detach from it when they end.
  std::unique_ptr<WatchDispatcher> watches_;
  std::unique_ptr<CollideService> service_;
  std::unique_ptr<ReflectionService> reflection_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::string bound_address_;
  bool shut_down_ = false;
};

}  // namespace collide
