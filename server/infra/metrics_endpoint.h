#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "prometheus/collectable.h"
#include "prometheus/exposer.h"

namespace collide {

/// A checked --metrics_address.
struct MetricsAddress {
  /// The host as given (`127.0.0.1`, `localhost`, `[::1]`, `0.0.0.0`, ...).
  std::string host;
  /// 0 picks a free port.
  int port = 0;
  /// The form the HTTP server binds: a numeric host (`localhost` is 127.0.0.1) and the port.
  std::string bind;
};

/// Parses `address`, `host:port`: the host an IPv4 address, `localhost` or a bracketed IPv6
/// address, the port 0 to 65535 in decimal. INVALID_ARGUMENT `metrics_address: ...` otherwise.
/// A host that is not a loopback one is refused (FAILED_PRECONDITION) unless `allow_remote`
/// (the gRPC address's rule: a token file or --allow_insecure_remote). `flag` names the flag in
/// the messages (--viewer_address is checked the same way).
absl::StatusOr<MetricsAddress> ParseMetricsAddress(absl::string_view address, bool allow_remote,
                                                   absl::string_view flag = "metrics_address");

/// The HTTP server of /metrics (prometheus-cpp's exposer): serves the registered collectables'
/// families in the Prometheus text format, each scrape reading them anew.
class MetricsEndpoint {
 public:
  /// Binds `address`. UNAVAILABLE `metrics_address: cannot listen on ...` when it cannot be bound
  /// (the port in use, an address of another host).
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(const MetricsAddress& address);
  /// Stops serving (a scrape in progress finishes first).
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  /// Serves `collectable`'s families at /metrics too (kept alive by this endpoint).
  void Register(std::shared_ptr<prometheus::Collectable> collectable);

  /// The bound port (the picked one for port 0).
  int port() const { return port_; }
  /// host:port with the bound port.
  const std::string& bound_address() const { return bound_address_; }

 private:
  MetricsEndpoint() = default;

  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
  std::string bound_address_;
};

}  // namespace collide
