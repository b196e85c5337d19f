#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "prometheus/collectable.h"
#include "server/infra/http_listener.h"
#include "server/infra/listen_address.h"

namespace collide {

/// The HTTP server of /metrics: an HttpListener (GET and HEAD, the header timeout, 405 for any
/// other method) whose one route serves the registered collectables' families in the
/// Prometheus text format (prometheus-cpp's TextSerializer), each scrape reading them anew.
/// prometheus-cpp's own exposer is not used: it answers HEAD with 404 and cannot bound the time
/// a request's headers take.
class MetricsEndpoint {
 public:
  /// Binds `address` (a ParseHttpAddress result). UNAVAILABLE `metrics_address: cannot listen
  /// on ...` when it cannot be bound (the port in use, an address of another host).
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(const HttpAddress& address);
  /// Stops serving (a scrape in progress finishes first).
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  /// Serves `collectable`'s families at /metrics too (kept alive by this endpoint).
  void Register(std::shared_ptr<prometheus::Collectable> collectable);

  /// The bound port (the picked one for port 0).
  int port() const { return listener_->port(); }
  /// host:port with the bound port.
  const std::string& bound_address() const { return listener_->bound_address(); }

  /// The exposition of every registered collectable, as one scrape reads it.
  std::string Exposition();

 private:
  MetricsEndpoint() = default;

  Mutex mu_;
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<HttpListener> listener_;
};

}  // namespace collide
