#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "geom/pose.h"
#include "geom/shapes.h"
#include "scene/query_sampler.h"
#include "scene/scene.h"
#include "server/infra/auth.h"
#include "store/database.h"
#include "watch/watch_directory.h"

namespace collide {

/// The limits of the viewer's read-only HTTP API.
struct ViewerLimits {
  /// Bodies per /viewer/api/scene page (the `limit` parameter's default and most).
  uint32_t max_page_bodies = 10000;
  /// Scenes listed by /viewer/api/scenes (the rest is reported as truncated).
  uint32_t max_listed_scenes = 1000;
  /// Bytes of one live-stream event; changes past it wait for the next event.
  size_t max_event_bytes = 256 * 1024;
};

/// The query parameters of one request, decoded, in order.
using QueryParams = std::vector<std::pair<std::string, std::string>>;

/// Splits and URL-decodes a query string (`a=1&b=x%20y`). INVALID_ARGUMENT for a malformed
/// escape, a parameter given twice, or a name that is not one of `allowed` (the message names it).
absl::StatusOr<QueryParams> ParseQueryParams(absl::string_view query,
                                             const std::vector<absl::string_view>& allowed);

/// An answer of the API: the HTTP status and a JSON body (`{"error": "..."}` for a refusal).
struct ViewerReply {
  int http_status = 200;
  std::string body;
};

/// The HTTP status for `status` (400 INVALID_ARGUMENT / OUT_OF_RANGE, 401, 403, 404, 413
/// RESOURCE_EXHAUSTED, 503 UNAVAILABLE, 500 otherwise) with `{"error": "<message>"}`.
ViewerReply ErrorReply(const absl::Status& status);

/// The read-only API of the viewer, over the server's store: scene list, bodies, ray casts.
/// Thread-safe (each call reads the store under its own locks). Never writes to a scene.
class ViewerApi {
 public:
  /// `db`, `auth` and `samples` must outlive the API. The casts it answers are offered to
  /// `samples` (null: to none).
  ViewerApi(const Database* db, const Authenticator* auth, const ViewerLimits& limits,
            QuerySampler* samples = nullptr);

  /// The principal of a request: from `authorization` (`Bearer <token>`), else from the `token`
  /// parameter (EventSource cannot set headers). UNAUTHENTICATED when tokens are configured and
  /// neither names one.
  absl::StatusOr<const Principal*> Authenticate(absl::string_view authorization,
                                                const QueryParams& params) const;

  /// /viewer/api/scenes: `{"scenes": [{"name", "version", "tick", "oldest_tick", "bodies"}],
  /// "truncated"}`,
  /// the scenes `principal` may see, by name.
  ViewerReply Scenes(const Principal& principal) const;
  /// /viewer/api/scene?name=N[&after=ID][&limit=K][&at_tick=T]: the scene's bodies with ids
  /// above `after` (all when absent), at most `limit` (<= max_page_bodies), by id, with
  /// `next_after` when more follow; with `at_tick`, the bodies as they were at the end of that
  /// retained tick (400 `at_tick: ...` naming the retained range otherwise). The answer carries
  /// the retained range (`oldest_tick`..`tick`) and `retained_ticks`.
  ViewerReply SceneBodies(const Principal& principal, const QueryParams& params) const;
  /// /viewer/api/raycast?name=N&origin=x,y,z&direction=x,y,z[&max_distance=d][&at_tick=T]: the
  /// closest hit, as the gRPC Raycast answers it (at the past tick `at_tick` when given).
  ViewerReply Raycast(const Principal& principal, const QueryParams& params) const;
  /// /viewer/api/spherecast?name=N&origin=x,y,z&direction=x,y,z&radius=r[&max_distance=d]
  /// [&at_tick=T]: the closest hit of the swept sphere, as the gRPC SphereCast answers it.
  ViewerReply SphereCast(const Principal& principal, const QueryParams& params) const;

  /// The scene a live stream follows: checks `name` and the principal's prefixes.
  absl::StatusOr<std::shared_ptr<const Scene>> StreamScene(const Principal& principal,
                                                           const QueryParams& params) const;

  const ViewerLimits& limits() const { return limits_; }

 private:
  // A ray or sphere cast (`sphere`: the radius parameter is required).
  ViewerReply Cast(const Principal& principal, const QueryParams& params, bool sphere) const;
  absl::StatusOr<std::shared_ptr<const Scene>> FindScene(const Principal& principal,
                                                         const QueryParams& params) const;

  const Database* db_;
  const Authenticator* auth_;
  ViewerLimits limits_;
  QuerySampler* samples_;
};

/// One viewer's live stream of a scene: remembers what it has sent of each body and, on each
/// Poll, sends what changed since (new or reshaped bodies in full, moved ones as poses, without
/// the rotation when it did not change, removed ids), at most `max_event_bytes` per event; what
/// did not fit goes in the next one. Changes between two polls are coalesced: a body that moved
/// ten times is sent once, where it is now.
class SceneStream {
 public:
  /// Starts from the scene as it is now: nothing of it is sent (the page reads it with
  /// /viewer/api/scene after the stream's first event, `hello`).
  SceneStream(std::shared_ptr<const Scene> scene, size_t max_event_bytes);

  /// The `hello` event: `{"version", "tick"}` of the starting point.
  std::string Hello() const;
  /// The next event (`update`, or `deleted` once the scene was deleted), or empty when nothing
  /// changed. After `deleted`, done() is true.
  std::string Poll();
  /// The scene was deleted (the stream should end).
  bool done() const { return done_; }

 private:
  struct Sent {
    Shape shape{};
    Pose pose{};
    uint32_t category = 0;
    BodyKind kind = BodyKind::kDynamic;
    uint64_t generation = 0;
  };

  std::shared_ptr<const Scene> scene_;
  size_t max_event_bytes_;
  absl::flat_hash_map<uint64_t, Sent> sent_;
  uint64_t version_ = 0;
  uint64_t tick_ = 0;
  uint64_t generation_ = 0;
  // Changes did not all fit the last event: poll again even if the version is the same.
  bool backlog_ = false;
  bool done_ = false;
};

/// One viewer's view of the Watch streams open on a scene (WatchDirectory): on each Poll, an
/// `event: watches` when the set of watches changed (every watch's fences, at most
/// `max_event_bytes`; fences past it are left out and `"truncated": true`), and an
/// `event: watch_events` with the fence enter/exit events since the last poll (at most
/// kMaxEventsPerPoll; the directory keeps the latest WatchDirectory::kMaxEventsPerScene per
/// followed scene, and events a viewer missed are counted in `"dropped"`). Events are kept only
/// while some viewer follows the scene. Reads only.
class WatchFeed {
 public:
  /// Fence events per live-stream event at most.
  static constexpr size_t kMaxEventsPerPoll = 256;

  /// Follows `scene`'s watches in `directory` (null: no watches are ever sent).
  WatchFeed(WatchDirectory* directory, const Scene* scene, size_t max_event_bytes);
  ~WatchFeed();
  WatchFeed(const WatchFeed&) = delete;
  WatchFeed& operator=(const WatchFeed&) = delete;

  /// The events to send now (zero, one or two), or empty.
  std::string Poll();

 private:
  WatchDirectory* directory_;
  const Scene* scene_;
  size_t max_event_bytes_;
  uint64_t generation_ = 0;
  bool sent_watches_ = false;
  uint64_t cursor_ = 0;
};

/// One viewer's sample of the ray and sphere casts answered on a scene (QuerySampler: at most
/// QuerySampler::kMaxPerSecond per scene and second, the latest kMaxKept kept, taken only while
/// some viewer follows the scene): on each Poll, an `event: query_samples` with those since the
/// last poll, and how many it missed in `"dropped"`. Reads only.
class QuerySampleFeed {
 public:
  /// Follows `scene`'s samples in `sampler` (null: none are sent).
  QuerySampleFeed(QuerySampler* sampler, const Scene* scene);
  ~QuerySampleFeed();
  QuerySampleFeed(const QuerySampleFeed&) = delete;
  QuerySampleFeed& operator=(const QuerySampleFeed&) = delete;

  /// The event to send now, or empty.
  std::string Poll();

 private:
  QuerySampler* sampler_;
  const Scene* scene_;
  uint64_t cursor_ = 0;
};

/// Appends a body as the API writes it: `{"id": "<decimal>", "shape": "sphere" | "box" |
/// "capsule", its dimensions, "position": [x, y, z], "rotation": [x, y, z, w], "category",
/// "static"}`. Ids are strings (uint64 does not fit a JSON number exactly).
void AppendBodyJson(const BodyState& body, std::string* out);

}  // namespace collide
