#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "scene/scene_options.h"
#include "server/infra/auth.h"
#include "server/infra/http_listener.h"
#include "server/service_options.h"
#include "server/viewer/viewer_api.h"
#include "store/database.h"
#include "watch/watch_directory.h"

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
  /// The server's limits: the casts are bounded as the rpcs are (--max_hits,
  /// --max_excluded_ids).
  ServiceLimits service_limits{};
  /// The server's durability, which the scene list resolves each scene's default against.
  DurabilityPolicy default_durability = DurabilityPolicy::kAlways;
  /// The rest of the API's limits (ViewerLimits::queries comes from `service_limits`).
  ViewerLimits limits{};
};

/// The viewer's HTTP server (an HttpListener: civetweb, GET and HEAD only, anything else 405):
/// the page under /viewer/, the read-only JSON API under /viewer/api/ (scenes, scene, raycast,
/// spherecast: ViewerApi) and the live stream of a scene as server-sent events
/// (/viewer/api/stream: SceneStream, WatchFeed, QuerySampleFeed). Every answer, event and
/// refusal is a protobuf message in protobuf's JSON mapping (viewer_json.h).
/// Nothing it serves can change a scene. With a token file, every API call needs a token (any
/// role reads). Started before the data directory is opened (so a bad or busy address stops the
/// start-up first); its API answers 503 until Attach hands it the open store.
class ViewerEndpoint {
 public:
  /// Binds `options.address`. INVALID_ARGUMENT / FAILED_PRECONDITION for a bad address,
  /// UNAVAILABLE when it cannot be bound.
  static absl::StatusOr<std::unique_ptr<ViewerEndpoint>> Start(const ViewerOptions& options);
  /// Stops serving (ends the live streams first).
  ~ViewerEndpoint();
  ViewerEndpoint(const ViewerEndpoint&) = delete;
  ViewerEndpoint& operator=(const ViewerEndpoint&) = delete;

  /// Serves the API over `db` with `auth`'s tokens; `watches` (may be null: no watches are
  /// shown) lists the Watch streams open on each scene; `samples` (may be null: no casts are
  /// shown) is the server's sample of the casts it answers (the viewer's own casts are offered to
  /// it too). Each must outlive Stop(). Once only.
  void Attach(const Database* db, const Authenticator* auth, WatchDirectory* watches,
              QuerySampler* samples = nullptr, const ReplicationControl* replication = nullptr,
              std::string server_address = "");
  /// Ends the live streams and stops the HTTP server (idempotent).
  void Stop();

  /// The bound port.
  int port() const { return listener_->port(); }
  /// host:port with the bound port.
  const std::string& bound_address() const { return listener_->bound_address(); }

  /// What the API's handlers share once attached.
  struct State {
    ViewerApi api;
    WatchDirectory* watches = nullptr;
    QuerySampler* samples = nullptr;
  };

 private:
  explicit ViewerEndpoint(const ViewerOptions& options) : options_(options) {}

  const ViewerOptions options_;
  std::unique_ptr<State> state_;
  // state_ once attached: the handlers read it without a lock.
  std::atomic<const State*> attached_{nullptr};
  std::atomic<bool> stopping_{false};
  std::atomic<int> streams_{0};
  std::unique_ptr<HttpListener> listener_;

  void ServePage(const HttpRequest& request) const;
  void ServeApi(const HttpRequest& request);
  void Stream(const HttpRequest& request, const State& state, const Principal& principal,
              const QueryParams& params);
};

}  // namespace collide
