#include "server/viewer/viewer_endpoint.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "CivetServer.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "civetweb.h"
#include "server/infra/metrics_endpoint.h"
#include "server/viewer/viewer_assets.h"

namespace collide {
namespace {

using State = ViewerEndpoint::State;

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 413:
      return "Payload Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Internal Server Error";
  }
}

// Headers every answer carries: no caching of live data, no sniffing, no framing by other sites.
constexpr absl::string_view kCommonHeaders =
    "X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n"
    "Referrer-Policy: no-referrer\r\nConnection: close\r\n";

void Send(mg_connection* conn, int status, absl::string_view content_type, absl::string_view body,
          bool head_only = false, absl::string_view cache = "no-store") {
  const std::string header =
      absl::StrCat("HTTP/1.1 ", status, " ", ReasonPhrase(status),
                   "\r\nContent-Type: ", content_type, "\r\nContent-Length: ", body.size(),
                   "\r\nCache-Control: ", cache, "\r\n", kCommonHeaders, "\r\n");
  mg_write(conn, header.data(), header.size());
  if (!head_only && !body.empty()) mg_write(conn, body.data(), body.size());
}

void SendReply(mg_connection* conn, const ViewerReply& reply) {
  Send(conn, reply.http_status, "application/json", reply.body);
}

absl::string_view QueryString(mg_connection* conn) {
  const mg_request_info* info = mg_get_request_info(conn);
  return info != nullptr && info->query_string != nullptr ? info->query_string : "";
}

// The handlers answer GET (and HEAD for the page); any other method is refused.
class ReadOnlyHandler : public CivetHandler {
 public:
  bool handlePost(CivetServer*, mg_connection* conn) override { return Refuse(conn); }
  bool handlePut(CivetServer*, mg_connection* conn) override { return Refuse(conn); }
  bool handleDelete(CivetServer*, mg_connection* conn) override { return Refuse(conn); }
  bool handlePatch(CivetServer*, mg_connection* conn) override { return Refuse(conn); }
  bool handleOptions(CivetServer*, mg_connection* conn) override { return Refuse(conn); }

 private:
  static bool Refuse(mg_connection* conn) {
    SendReply(conn, ViewerReply{405, "{\"error\":\"method: the viewer only reads (GET)\"}\n"});
    return true;
  }
};

// /viewer/ and its files.
class PageHandler : public ReadOnlyHandler {
 public:
  bool handleGet(CivetServer*, mg_connection* conn) override { return Serve(conn, false); }
  bool handleHead(CivetServer*, mg_connection* conn) override { return Serve(conn, true); }

 private:
  static bool Serve(mg_connection* conn, bool head_only) {
    const mg_request_info* info = mg_get_request_info(conn);
    absl::string_view uri = info != nullptr && info->local_uri != nullptr ? info->local_uri : "";
    if (uri == "/" || uri == "/viewer") {
      const std::string header =
          absl::StrCat("HTTP/1.1 302 Found\r\nLocation: /viewer/\r\nContent-Length: 0\r\n",
                       kCommonHeaders, "\r\n");
      mg_write(conn, header.data(), header.size());
      return true;
    }
    absl::string_view path = uri;
    if (!absl::ConsumePrefix(&path, "/viewer/")) path = "-";
    if (path.empty()) path = "index.html";
    const ViewerAsset* asset = FindViewerAsset(std::string_view(path.data(), path.size()));
    if (asset == nullptr) {
      SendReply(conn, ViewerReply{404, "{\"error\":\"path: no such page\"}\n"});
      return true;
    }
    Send(conn, 200, absl::string_view(asset->content_type.data(), asset->content_type.size()),
         absl::string_view(asset->data.data(), asset->data.size()), head_only, "no-cache");
    return true;
  }
};

class ApiHandler : public ReadOnlyHandler {
 public:
  explicit ApiHandler(State* state) : state_(state) {}

  bool handleGet(CivetServer*, mg_connection* conn) override {
    const mg_request_info* info = mg_get_request_info(conn);
    absl::string_view uri = info != nullptr && info->local_uri != nullptr ? info->local_uri : "";
    absl::ConsumePrefix(&uri, "/viewer/api/");
    std::vector<absl::string_view> allowed;
    if (uri == "scenes") {
      allowed = {"token"};
    } else if (uri == "scene") {
      allowed = {"token", "name", "after", "limit", "at_tick"};
    } else if (uri == "raycast") {
      allowed = {"token", "name", "origin", "direction", "max_distance", "at_tick"};
    } else if (uri == "spherecast") {
      allowed = {"token", "name", "origin", "direction", "radius", "max_distance", "at_tick"};
    } else if (uri == "stream") {
      allowed = {"token", "name"};
    } else {
      SendReply(conn, ViewerReply{404,
                                  "{\"error\":\"path: no such API call (scenes, scene, "
                                  "raycast, spherecast, stream)\"}\n"});
      return true;
    }
    std::vector<absl::string_view> names(allowed.begin(), allowed.end());
    absl::StatusOr<QueryParams> params = ParseQueryParams(QueryString(conn), names);
    if (!params.ok()) {
      SendReply(conn, ErrorReply(params.status()));
      return true;
    }
    const char* authorization = mg_get_header(conn, "Authorization");
    absl::StatusOr<const Principal*> principal =
        state_->api.Authenticate(authorization != nullptr ? authorization : "", *params);
    if (!principal.ok()) {
      SendReply(conn, ErrorReply(principal.status()));
      return true;
    }
    if (uri == "scenes") {
      SendReply(conn, state_->api.Scenes(**principal));
    } else if (uri == "scene") {
      SendReply(conn, state_->api.SceneBodies(**principal, *params));
    } else if (uri == "raycast") {
      SendReply(conn, state_->api.Raycast(**principal, *params));
    } else if (uri == "spherecast") {
      SendReply(conn, state_->api.SphereCast(**principal, *params));
    } else {
      Stream(conn, **principal, *params);
    }
    return true;
  }

 private:
  void Stream(mg_connection* conn, const Principal& principal, const QueryParams& params) {
    absl::StatusOr<std::shared_ptr<const Scene>> scene = state_->api.StreamScene(principal, params);
    if (!scene.ok()) {
      SendReply(conn, ErrorReply(scene.status()));
      return;
    }
    const int max_streams = state_->options.max_streams;
    if (state_->streams.fetch_add(1) >= max_streams) {
      state_->streams.fetch_sub(1);
      SendReply(conn, ErrorReply(absl::UnavailableError(
                          absl::StrCat("stream: at most ", max_streams, " live streams at once"))));
      return;
    }
    WatchFeed watches(state_->watches, scene->get(), state_->api.limits().max_event_bytes);
    QuerySampleFeed samples(state_->samples, scene->get());
    SceneStream stream(*std::move(scene), state_->api.limits().max_event_bytes);
    const std::string header = absl::StrCat(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n",
        kCommonHeaders, "\r\nretry: 2000\n\n", stream.Hello());
    bool open = mg_write(conn, header.data(), header.size()) > 0;
    using Clock = std::chrono::steady_clock;
    const auto period =
        std::chrono::milliseconds(1000 / std::clamp(state_->options.events_per_second, 1, 100));
    auto next = Clock::now() + period;
    auto last_write = Clock::now();
    while (open && !state_->stopping.load()) {
      // Sleeps in short steps so that Stop ends the stream quickly.
      while (Clock::now() < next && !state_->stopping.load()) {
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
      open = mg_write(conn, event.data(), event.size()) > 0;
      last_write = Clock::now();
      if (stream.done()) break;
    }
    state_->streams.fetch_sub(1);
  }

  State* state_;
};

}  // namespace

struct ViewerEndpoint::Handlers {
  PageHandler page;
  ApiHandler api;
  explicit Handlers(State* state) : api(state) {}
};

absl::StatusOr<std::unique_ptr<ViewerEndpoint>> ViewerEndpoint::Start(const ViewerOptions& options,
                                                                      const Database* db,
                                                                      const Authenticator* auth,
                                                                      WatchDirectory* watches,
                                                                      QuerySampler* samples) {
  absl::StatusOr<MetricsAddress> address =
      ParseMetricsAddress(options.address, options.allow_remote, "viewer_address");
  if (!address.ok()) return address.status();
  auto endpoint = std::unique_ptr<ViewerEndpoint>(new ViewerEndpoint());
  endpoint->state_.reset(
      new State{ViewerApi(db, auth, options.limits, samples), options, watches, samples});
  endpoint->handlers_ = std::make_unique<Handlers>(endpoint->state_.get());
  // Live streams each hold a thread; the others are for page and API calls.
  const std::vector<std::string> civet_options = {
      "listening_ports",    address->bind,
      "num_threads",        std::to_string(std::max(1, options.max_streams) + 4),
      "request_timeout_ms", "10000",
      "enable_keep_alive",  "no",
  };
  try {
    endpoint->server_ = std::make_unique<CivetServer>(civet_options);
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("viewer_address: cannot listen on ", address->bind,
                                               " (the port is in use or the address is not "
                                               "one of this host's: ",
                                               e.what(), ")"));
  }
  const std::vector<int> ports = endpoint->server_->getListeningPorts();
  if (ports.empty() || ports[0] <= 0) {
    return absl::UnavailableError(
        absl::StrCat("viewer_address: cannot listen on ", address->bind, " (no port bound)"));
  }
  // civetweb takes the first handler whose path is the request's or a /-prefix of it.
  endpoint->server_->addHandler("/viewer/api", &endpoint->handlers_->api);
  endpoint->server_->addHandler("/viewer", &endpoint->handlers_->page);
  endpoint->server_->addHandler("/", &endpoint->handlers_->page);
  endpoint->port_ = ports[0];
  endpoint->bound_address_ = absl::StrCat(address->host, ":", endpoint->port_);
  return endpoint;
}

void ViewerEndpoint::Stop() {
  if (state_ != nullptr) state_->stopping.store(true);
  if (server_ != nullptr) {
    server_->close();
    server_.reset();
  }
}

ViewerEndpoint::~ViewerEndpoint() { Stop(); }

}  // namespace collide
