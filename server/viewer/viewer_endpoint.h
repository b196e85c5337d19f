#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/infra/auth.h"
#include "server/viewer/viewer_api.h"
#include "store/database.h"

class CivetServer;

namespace collide {

/// What the viewer's HTTP server serves and how much.
struct ViewerOptions {
  /// host:port, checked like --metrics_address (a non-loopback host needs `allow_remote`).
  std::string address;
  /// --token_file or --allow_insecure_remote was given.
  bool allow_remote = false;
  /// At most this many live streams at once (more are refused with 503).
  int max_streams = 8;
  /// Live-stream events per second at most (changes in between are coalesced).
  int events_per_second = 10;
  ViewerLimits limits{};
};

/// The viewer's HTTP server (civetweb): the page under /viewer/, the read-only JSON API under
/// /viewer/api/ (scenes, scene, raycast, spherecast) and the live stream of a scene as server-sent
/// events
/// (/viewer/api/stream). Only GET and HEAD; nothing it serves can change a scene. With a token
/// file, every API call needs a token (any role reads).
class ViewerEndpoint {
 public:
  /// Binds `options.address`. INVALID_ARGUMENT / FAILED_PRECONDITION for a bad address,
  /// UNAVAILABLE when it cannot be bound. `db` and `auth` must outlive the endpoint.
  /// `watches` (may be null: no watches are shown) lists the Watch streams open on each scene;
  /// `samples` (may be null: no casts are shown) is the server's sample of the casts it answers
  /// (the viewer's own casts are offered to it too). Both must outlive the endpoint.
  static absl::StatusOr<std::unique_ptr<ViewerEndpoint>> Start(const ViewerOptions& options,
                                                               const Database* db,
                                                               const Authenticator* auth,
                                                               WatchDirectory* watches = nullptr,
                                                               QuerySampler* samples = nullptr);
  /// Stops serving (ends the live streams first).
  ~ViewerEndpoint();
  ViewerEndpoint(const ViewerEndpoint&) = delete;
  ViewerEndpoint& operator=(const ViewerEndpoint&) = delete;

  /// Ends the live streams and stops the HTTP server (idempotent).
  void Stop();

  /// The bound port.
  int port() const { return port_; }
  /// host:port with the bound port.
  const std::string& bound_address() const { return bound_address_; }

  /// Shared with the request handlers.
  struct State {
    ViewerApi api;
    ViewerOptions options;
    WatchDirectory* watches = nullptr;
    QuerySampler* samples = nullptr;
    std::atomic<bool> stopping{false};
    std::atomic<int> streams{0};
  };

 private:
  ViewerEndpoint() = default;

  std::unique_ptr<State> state_;
  std::unique_ptr<CivetServer> server_;
  struct Handlers;
  std::unique_ptr<Handlers> handlers_;
  int port_ = 0;
  std::string bound_address_;
};

}  // namespace collide
