#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "scene/query_sampler.h"
#include "scene/scene.h"
#include "scene/scene_options.h"
#include "scene/validate.h"
#include "server/infra/auth.h"
#include "server/infra/replication_control.h"
#include "server/viewer/viewer_json.h"
#include "store/database.h"

namespace collide {

/// The limits of the viewer's read-only HTTP API.
struct ViewerLimits {
  /// Bodies per /viewer/api/scene page (the `limit` parameter's default and most).
  uint32_t max_page_bodies = 10000;
  /// Bytes of one live-stream event; changes past it wait for the next event.
  size_t max_event_bytes = 256 * 1024;
  /// The casts' limits: the server's (--max_hits, --max_excluded_ids), as for the rpcs.
  QueryLimits queries{};
  /// The largest Observer.max_relevant of /viewer/api/relevant (--max_relevant_per_observer).
  uint32_t max_relevant = 1024;
  /// Triangles of a mesh per /viewer/api/asset page.
  uint32_t max_asset_page_triangles = 32768;
  /// Samples of a heightfield per /viewer/api/asset page (a page has at least two rows whatever
  /// the columns: at most 2 x 32,768 samples).
  uint32_t max_asset_page_samples = 131072;
};

/// The most observers one /viewer/api/relevant request may name.
inline constexpr int kMaxViewerObservers = 16;

/// The longest query string the API takes (a cast's JSON request with a full filter fits).
inline constexpr size_t kMaxViewerQueryBytes = 8192;

/// The query parameters of one request, decoded, in order.
using QueryParams = std::vector<std::pair<std::string, std::string>>;

/// Splits a query string (`a=1&b=x%20y`) at `&` and `=` and decodes each name and value with the
/// HTTP server's own decoder (civetweb's mg_url_decode: `%XX` escapes, `+` a space; a `%` not
/// followed by two hex digits is kept as it is). INVALID_ARGUMENT for a query over
/// kMaxViewerQueryBytes, a parameter given twice, or a name that is not one of `allowed` (the
/// message names it).
absl::StatusOr<QueryParams> ParseQueryParams(absl::string_view query,
                                             const std::vector<absl::string_view>& allowed);

/// The read-only API of the viewer, over the server's store: scene list, bodies, ray and sphere
/// casts. Every answer is a message printed with protobuf's JSON mapping (ToJson): the API's
/// where it has one (collide.v1.ListScenesResponse, collide.v1.QueryResponse, collide.v1.Body),
/// the viewer's own otherwise (collide.viewer.v1.ScenePage). Thread-safe (each call reads the
/// store under its own locks). Never writes to a scene.
class ViewerApi {
 public:
  /// `db`, `auth`, `samples` and `replication` must outlive the API. A scene's durability is
  /// listed against `default_durability` (the server's). The casts it answers are offered to
  /// `samples` (null: to none). Replicated scenes are described by `replication` (null: the
  /// server has none); `server_address` is the answering server's, as GetServerStats says it.
  ViewerApi(const Database* db, const Authenticator* auth, const ViewerLimits& limits,
            DurabilityPolicy default_durability, QuerySampler* samples = nullptr,
            const ReplicationControl* replication = nullptr, std::string server_address = "");

  /// The principal of a request: from `authorization` (`Bearer <token>`), else from the `token`
  /// parameter (EventSource cannot set headers). UNAUTHENTICATED when tokens are configured and
  /// neither names one.
  absl::StatusOr<const Principal*> Authenticate(absl::string_view authorization,
                                                const QueryParams& params) const;

  /// /viewer/api/scenes: the collide.v1.ListScenesResponse the ListScenes rpc answers
  /// `principal`: the scenes it may see, by name (a replicated one with its owner and this
  /// server's lag).
  ViewerReply Scenes(const Principal& principal) const;
  /// /viewer/api/scene?name=N[&after=ID][&limit=K][&at_tick=T]: a collide.viewer.v1.ScenePage,
  /// the scene's bodies with ids above `after` (all when absent), at most `limit` (<=
  /// max_page_bodies), by id, with `next_after` when more follow; with `at_tick`, the bodies as
  /// they were at the end of that retained tick (400 `at_tick: ...` naming the retained range
  /// otherwise; the history keeps no user_data: 0 at a past tick). The page names the answering
  /// server and, for a replicated scene, its role and lag.
  ViewerReply SceneBodies(const Principal& principal, const QueryParams& params) const;
  /// /viewer/api/raycast: the Raycast rpc over HTTP, answered with its collide.v1.QueryResponse.
  /// The request is a collide.v1.RaycastRequest, either as JSON in the `request` parameter
  /// (protobuf's JSON mapping; its errors are the rpc's: `ray.direction: ...`), or as the
  /// parameters name=N&origin=x,y,z&direction=x,y,z[&max_distance=d][&at_tick=T] (an absent
  /// max_distance: the longest cast; errors name the parameter: `direction: ...`). The viewer
  /// does not wait for a version: a min_version above the scene's is FAILED_PRECONDITION.
  ViewerReply Raycast(const Principal& principal, const QueryParams& params) const;
  /// /viewer/api/spherecast: the SphereCast rpc over HTTP, as Raycast: a
  /// collide.v1.SphereCastRequest in `request` (`cast.radius: ...`), or Raycast's parameters and
  /// `radius=r` (required).
  ViewerReply SphereCast(const Principal& principal, const QueryParams& params) const;
  /// /viewer/api/relevant?request=R: the relevant sets of the observers of R, a
  /// collide.v1.InterestRequest in protobuf's JSON mapping (its scene and at most
  /// kMaxViewerObservers observers, checked as the Interest rpc checks them: `observers[0].
  /// enter_radius: ...`), answered with a collide.v1.InterestSnapshot of their sets at the
  /// scene's version now, computed from every body by the rules of interest_rules.h. A set here
  /// has no past, so no hysteresis: a body is in it within enter_radius (and the cone's
  /// half_angle), as in the set an interest stream starts with.
  ViewerReply Relevant(const Principal& principal, const QueryParams& params) const;

  /// /viewer/api/asset?name=N&asset=A[&offset=K]: a collide.viewer.v1.AssetPage, one page of
  /// the geometry of asset A of scene N as uploaded: a mesh's triangles from triangle K (their
  /// corners, at most max_asset_page_triangles), a heightfield's sample rows from row K (at most
  /// max_asset_page_samples samples, at least two rows; pages overlap by one row) and the holes
  /// among their cells; `next_offset` when more follow. 404 `asset: no asset "A" in scene "N"`;
  /// 400 `offset: ...` for an offset past the last triangle (row).
  ViewerReply AssetPage(const Principal& principal, const QueryParams& params) const;

  /// The scene a live stream follows: checks `name` and the principal's prefixes.
  absl::StatusOr<std::shared_ptr<const Scene>> StreamScene(const Principal& principal,
                                                           const QueryParams& params) const;

  const ViewerLimits& limits() const { return limits_; }

 private:
  // A cast request of either form, answered as the unary rpc answers it.
  template <typename Request>
  ViewerReply Cast(const Principal& principal, const QueryParams& params) const;
  absl::StatusOr<std::shared_ptr<const Scene>> FindScene(const Principal& principal,
                                                         const QueryParams& params) const;

  const Database* db_;
  const Authenticator* auth_;
  ViewerLimits limits_;
  DurabilityPolicy default_durability_;
  QuerySampler* samples_;
  const ReplicationControl* replication_;
  std::string server_address_;
};

}  // namespace collide
