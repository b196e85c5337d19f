#include "server/viewer/viewer_endpoint.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "base/field_error.h"
#include "civetweb.h"
#include "server/convert/query_convert.h"
#include "server/infra/listen_address.h"
#include "server/viewer/viewer_assets.h"
#include "server/viewer/viewer_json.h"
#include "server/viewer/viewer_stream.h"

namespace collide {
namespace {

void SendReply(const HttpRequest& request, const ViewerReply& reply) {
  WriteHttpAnswer(request.conn, reply.http_status, "application/json", reply.body, request.head);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ViewerEndpoint>> ViewerEndpoint::Start(
    const ViewerOptions& options) {
  absl::StatusOr<HttpAddress> address =
      ParseHttpAddress(options.address, options.allow_remote, "viewer_address");
  if (!address.ok()) return address.status();
  auto endpoint = std::unique_ptr<ViewerEndpoint>(new ViewerEndpoint(options));
  ViewerEndpoint* self = endpoint.get();
  HttpListenerOptions listener;
  listener.flag = "viewer_address";
  listener.address = *address;
  // Live streams each hold a thread; the others are for page and API calls.
  listener.threads = kHttpWorkerThreads + std::max(1, options.max_streams);
  listener.error_content_type = "application/json";
  listener.error_body = &ListenerErrorBody;
  std::vector<HttpRoute> routes;
  routes.push_back({"/viewer/api", [self](const HttpRequest& r) { self->ServeApi(r); }});
  routes.push_back({"/", [self](const HttpRequest& r) { self->ServePage(r); }});
  absl::StatusOr<std::unique_ptr<HttpListener>> started =
      HttpListener::Start(std::move(listener), std::move(routes));
  if (!started.ok()) return started.status();
  endpoint->listener_ = *std::move(started);
  return endpoint;
}

void ViewerEndpoint::Attach(const Database* db, const Authenticator* auth, WatchDirectory* watches,
                            QuerySampler* samples, const ReplicationControl* replication,
                            std::string server_address) {
  if (state_ != nullptr) return;
  ViewerLimits limits = options_.limits;
  limits.queries = QueryLimitsOf(options_.service_limits);
  limits.max_relevant = options_.service_limits.max_relevant_per_observer;
  state_.reset(new State{ViewerApi(db, auth, limits, options_.default_durability, samples,
                                   replication, std::move(server_address)),
                         watches, samples});
  attached_.store(state_.get());
}

void ViewerEndpoint::Stop() {
  stopping_.store(true);
  if (listener_ != nullptr) listener_->Stop();
}

ViewerEndpoint::~ViewerEndpoint() { Stop(); }

// /viewer/ and its files.
void ViewerEndpoint::ServePage(const HttpRequest& request) const {
  if (request.path == "/" || request.path == "/viewer") {
    WriteHttpAnswer(request.conn, 302, "text/plain; charset=utf-8", "", request.head, "no-store",
                    "Location: /viewer/\r\n");
    return;
  }
  absl::string_view path = request.path;
  if (!absl::ConsumePrefix(&path, "/viewer/")) path = "-";
  if (path.empty()) path = "index.html";
  const ViewerAsset* asset = FindViewerAsset(std::string_view(path.data(), path.size()));
  if (asset == nullptr) {
    SendReply(request,
              ErrorReply(FieldStatus(absl::StatusCode::kNotFound, "path", "no such page")));
    return;
  }
  WriteHttpAnswer(
      request.conn, 200, absl::string_view(asset->content_type.data(), asset->content_type.size()),
      absl::string_view(asset->data.data(), asset->data.size()), request.head, "no-cache");
}

void ViewerEndpoint::ServeApi(const HttpRequest& request) {
  absl::string_view call = request.path;
  absl::ConsumePrefix(&call, "/viewer/api/");
  std::vector<absl::string_view> allowed;
  if (call == "scenes") {
    allowed = {"token"};
  } else if (call == "scene") {
    allowed = {"token", "name", "after", "limit", "at_tick"};
  } else if (call == "raycast") {
    allowed = {"token", "request", "name", "origin", "direction", "max_distance", "at_tick"};
  } else if (call == "spherecast") {
    allowed = {"token",     "request", "name",         "origin",
               "direction", "radius",  "max_distance", "at_tick"};
  } else if (call == "relevant") {
    allowed = {"token", "request"};
  } else if (call == "asset") {
    allowed = {"token", "name", "asset", "offset"};
  } else if (call == "stream") {
    allowed = {"token", "name"};
  } else {
    SendReply(request,
              ErrorReply(FieldStatus(absl::StatusCode::kNotFound, "path",
                                     "no such API call (scenes, scene, asset, raycast, spherecast, "
                                     "relevant, stream)")));
    return;
  }
  const State* state = attached_.load();
  if (state == nullptr) {
    SendReply(request, ErrorReply(absl::UnavailableError(
                           "server: starting (the data directory is being opened)")));
    return;
  }
  absl::StatusOr<QueryParams> params = ParseQueryParams(request.query, allowed);
  if (!params.ok()) {
    SendReply(request, ErrorReply(params.status()));
    return;
  }
  const char* authorization = mg_get_header(request.conn, "Authorization");
  absl::StatusOr<const Principal*> principal =
      state->api.Authenticate(authorization != nullptr ? authorization : "", *params);
  if (!principal.ok()) {
    SendReply(request, ErrorReply(principal.status()));
    return;
  }
  if (call == "scenes") {
    SendReply(request, state->api.Scenes(**principal));
  } else if (call == "scene") {
    SendReply(request, state->api.SceneBodies(**principal, *params));
  } else if (call == "raycast") {
    SendReply(request, state->api.Raycast(**principal, *params));
  } else if (call == "spherecast") {
    SendReply(request, state->api.SphereCast(**principal, *params));
  } else if (call == "relevant") {
    SendReply(request, state->api.Relevant(**principal, *params));
  } else if (call == "asset") {
    SendReply(request, state->api.AssetPage(**principal, *params));
  } else {
    Stream(request, *state, **principal, *params);
  }
}

void ViewerEndpoint::Stream(const HttpRequest& request, const State& state,
                            const Principal& principal, const QueryParams& params) {
  absl::StatusOr<std::shared_ptr<const Scene>> scene = state.api.StreamScene(principal, params);
  if (!scene.ok()) {
    SendReply(request, ErrorReply(scene.status()));
    return;
  }
  const std::string header = absl::StrCat(
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n",
      CommonHttpHeaders(), "\r\n");
  if (request.head) {
    // The stream's headers, nothing of the stream.
    mg_write(request.conn, header.data(), header.size());
    return;
  }
  const int max_streams = options_.max_streams;
  if (streams_.fetch_add(1) >= max_streams) {
    streams_.fetch_sub(1);
    SendReply(request, ErrorReply(absl::UnavailableError(absl::StrCat(
                           "stream: at most ", max_streams, " live streams at once"))));
    return;
  }
  WatchFeed watches(state.watches, scene->get(), state.api.limits().max_event_bytes);
  QuerySampleFeed samples(state.samples, scene->get());
  SceneStream stream(*std::move(scene), state.api.limits().max_event_bytes);
  const std::string hello = absl::StrCat(header, "retry: 2000\n\n", stream.Hello());
  bool open = mg_write(request.conn, hello.data(), hello.size()) > 0;
  using Clock = std::chrono::steady_clock;
  const auto period =
      std::chrono::milliseconds(1000 / std::clamp(options_.events_per_second, 1, 100));
  auto next = Clock::now() + period;
  auto last_write = Clock::now();
  while (open && !stopping_.load()) {
    // Sleeps in short steps so that Stop ends the stream quickly.
    while (Clock::now() < next && !stopping_.load()) {
      std::this_thread::sleep_for(
          std::min<Clock::duration>(next - Clock::now(), std::chrono::milliseconds(20)));
    }
    next += period;
    if (Clock::now() > next) next = Clock::now() + period;
    std::string event = stream.Poll();
    if (!stream.done()) {
      event += watches.Poll();
      event += samples.Poll();
    }
    if (event.empty() && Clock::now() - last_write > std::chrono::seconds(1)) {
      event = ": keep-alive\n\n";  // finds a viewer that went away
    }
    if (event.empty()) continue;
    open = mg_write(request.conn, event.data(), event.size()) > 0;
    last_write = Clock::now();
    if (stream.done()) break;
  }
  streams_.fetch_sub(1);
}

}  // namespace collide
