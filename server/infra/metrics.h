#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/support/server_interceptor.h"
#include "server/infra/metrics_endpoint.h"
#include "server/infra/metrics_rpc.h"
#include "server/infra/replication_control.h"
#include "server/infra/service_counters.h"
#include "server/infra/stream_registry.h"
#include "store/database.h"
#include "watch/watch_dispatcher.h"

namespace collide {

/// How collide-server serves /metrics (its --metrics_* flags).
struct MetricsOptions {
  /// host:port (ParseHttpAddress); port 0 picks a free port.
  std::string address;
  /// The most scene label values (MetricsScenes); the rest are summed into scene="_other".
  size_t max_scenes = 100;
  /// A non-loopback address is allowed (a token file or --allow_insecure_remote).
  bool allow_remote = false;
};

/// What the scrape-time collectors read from a running server (each outlives Stop()).
struct MetricsSources {
  /// The open streams (collide_streams_*).
  const StreamRegistry* streams = nullptr;
  /// The watch dispatcher's budget (collide_watch_*); null: no watch figures.
  WatchDispatcher* watches = nullptr;
  /// The scenes and the store (collide_scene_*, collide_store_*).
  Database* database = nullptr;
  /// Replicated scenes (collide_replication_*); null: no replication figures.
  const ReplicationControl* replication = nullptr;
};

/// The server's Prometheus metrics: the per-rpc figures (RpcMetrics, through an interceptor),
/// the service's counters (ServiceCounters), and at scrape time the scenes', the store's, the
/// streams' and the process's figures, served on /metrics. Start it before the server (a bad or
/// busy address then stops the start-up before the data directory is opened), give the server
/// counters() and InterceptorFactory(), then Attach what it runs.
class ServerMetrics {
 public:
  /// Checks `options` and binds the HTTP endpoint (ParseHttpAddress, MetricsEndpoint::Start).
  static absl::StatusOr<std::unique_ptr<ServerMetrics>> Start(const MetricsOptions& options);
  ServerMetrics(const ServerMetrics&) = delete;
  ServerMetrics& operator=(const ServerMetrics&) = delete;
  ~ServerMetrics();

  /// Where the service counts queries and updates (this object outlives the server).
  ServiceCounters* counters() { return &counters_; }
  /// The interceptor that counts every call (the go-grpc-prometheus grpc_server_* families).
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> InterceptorFactory();
  /// Adds the scrape-time figures of a running server.
  void Attach(const MetricsSources& sources);
  /// Stops serving /metrics (before the server shuts down: scrapes read its store). Idempotent.
  void Stop();

  /// The bound port, and host:port with it.
  int port() const { return port_; }
  const std::string& bound_address() const { return bound_address_; }

 private:
  explicit ServerMetrics(const MetricsOptions& options);

  const MetricsOptions options_;
  ServiceCounters counters_;
  std::shared_ptr<RpcMetrics> rpc_;
  std::unique_ptr<MetricsEndpoint> endpoint_;
  int port_ = 0;
  std::string bound_address_;
};

}  // namespace collide
