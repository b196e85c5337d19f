#include "server/viewer/viewer_api.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <span>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/field_error.h"
#include "civetweb.h"
#include "collide/v1/collide.pb.h"
#include "collide/viewer/v1/viewer.pb.h"
#include "google/protobuf/util/json_util.h"
#include "query/batch.h"
#include "scene/asset.h"
#include "scene/scene_name.h"
#include "scene/scene_query.h"
#include "server/convert/asset_convert.h"
#include "server/convert/field_path.h"
#include "server/convert/interest_convert.h"
#include "server/convert/query_convert.h"
#include "server/convert/scene_convert.h"
#include "server/rpc/scene_info.h"
#include "watch/body_grid.h"
#include "watch/interest_rules.h"
#include "watch/interest_validate.h"

namespace collide {
namespace {

// A piece of a request quoted in a message: at most 64 bytes, escaped.
std::string Quoted(absl::string_view text) {
  return absl::StrCat("\"", absl::CEscape(text.substr(0, 64)), "\"");
}

// civetweb's decoder; a decoded text is never longer than its encoding.
std::string UrlDecode(absl::string_view text) {
  std::string out(text.size() + 1, '\0');
  const int n = mg_url_decode(text.data(), static_cast<int>(text.size()), out.data(),
                              static_cast<int>(out.size()), /*is_form_url_encoded=*/1);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

const std::string* Find(const QueryParams& params, absl::string_view name) {
  for (const auto& [key, value] : params) {
    if (key == name) return &value;
  }
  return nullptr;
}

// A decimal uint64 parameter (digits only: no sign, no spaces).
absl::StatusOr<uint64_t> ParseU64(absl::string_view param, const std::string& text) {
  uint64_t value = 0;
  if (text.empty() || !std::all_of(text.begin(), text.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(text, &value)) {
    return InvalidFieldError(
        param, absl::StrCat(Quoted(text), " is not a decimal integer from 0 to 2^64-1"));
  }
  return value;
}

// A number parameter, as it is: its range is the core's to check (a value past float's range is
// infinite, and refused there).
absl::StatusOr<float> ParseNumber(absl::string_view param, const std::string& text) {
  float value = 0;
  if (!absl::SimpleAtof(text, &value)) {
    return InvalidFieldError(param, absl::StrCat(Quoted(text), " is not a number"));
  }
  return value;
}

// An `x,y,z` parameter into `out`.
absl::Status ParseVec3(absl::string_view param, const std::string* text, v1::Vec3* out) {
  if (text == nullptr) return InvalidFieldError(param, "missing (x,y,z)");
  const std::vector<absl::string_view> parts = absl::StrSplit(*text, ',');
  float v[3] = {0, 0, 0};
  bool numbers = parts.size() == 3;
  for (size_t i = 0; numbers && i < 3; ++i) numbers = absl::SimpleAtof(parts[i], &v[i]);
  if (!numbers) {
    return InvalidFieldError(param, absl::StrCat(Quoted(*text), " is not three numbers x,y,z"));
  }
  out->set_x(v[0]);
  out->set_y(v[1]);
  out->set_z(v[2]);
  return absl::OkStatus();
}

// A core status about the scene (`scene: ...`) in the parameters' words: their `name`.
absl::Status AsNameParam(const absl::Status& status) {
  std::optional<FieldError> error = GetFieldError(status);
  if (!error.has_value() || !error->list.empty() || error->field != "scene") return status;
  error->field = "name";
  return FieldErrorStatus(status.code(), *error);
}

// What differs between the two casts: the request's message, where it holds the cast, and the
// converter the rpc uses.
template <typename Request>
struct CastKind;

template <>
struct CastKind<v1::RaycastRequest> {
  static constexpr absl::string_view kRoot = "ray";
  static constexpr bool kSphere = false;
  static v1::Raycast* Cast(v1::RaycastRequest* request) { return request->mutable_ray(); }
  static absl::StatusOr<Query> ToQuery(const v1::RaycastRequest& r) {
    return RaycastRequestToQuery(r);
  }
};

template <>
struct CastKind<v1::SphereCastRequest> {
  static constexpr absl::string_view kRoot = "cast";
  static constexpr bool kSphere = true;
  static v1::SphereCast* Cast(v1::SphereCastRequest* request) { return request->mutable_cast(); }
  static absl::StatusOr<Query> ToQuery(const v1::SphereCastRequest& r) {
    return SphereCastRequestToQuery(r);
  }
};

// The parameters of a cast (name, origin, direction, max_distance, radius, at_tick) as the rpc's
// request: numbers as they are (the core checks them), an absent max_distance the longest cast.
template <typename Request>
absl::StatusOr<Request> RequestFromParams(const QueryParams& params) {
  Request request;
  auto* cast = CastKind<Request>::Cast(&request);
  request.set_scene(*Find(params, "name"));
  if (absl::Status s = ParseVec3("origin", Find(params, "origin"), cast->mutable_origin());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ParseVec3("direction", Find(params, "direction"), cast->mutable_direction());
      !s.ok()) {
    return s;
  }
  cast->set_max_distance(kMaxCastDistance);
  if (const std::string* text = Find(params, "max_distance"); text != nullptr) {
    absl::StatusOr<float> value = ParseNumber("max_distance", *text);
    if (!value.ok()) return value.status();
    cast->set_max_distance(*value);
  }
  if constexpr (CastKind<Request>::kSphere) {
    const std::string* text = Find(params, "radius");
    if (text == nullptr) return InvalidFieldError("radius", "missing (the sphere's radius)");
    absl::StatusOr<float> value = ParseNumber("radius", *text);
    if (!value.ok()) return value.status();
    cast->set_radius(*value);
  }
  if (const std::string* text = Find(params, "at_tick"); text != nullptr) {
    absl::StatusOr<uint64_t> value = ParseU64("at_tick", *text);
    if (!value.ok()) return value.status();
    request.set_at_tick(*value);
  }
  return request;
}

// The `request` parameter: the rpc's request in protobuf's JSON mapping (unknown fields
// refused). The parser's message names the field it stopped at; its first line is kept (the
// rest is a picture of the input).
template <typename Request>
absl::StatusOr<Request> RequestFromJson(const QueryParams& params) {
  for (const auto& [name, value] : params) {
    if (name != "request" && name != "token") {
      return InvalidFieldError(name, "not taken with request (the request holds the whole cast)");
    }
  }
  Request request;
  const auto parsed =
      google::protobuf::util::JsonStringToMessage(*Find(params, "request"), &request);
  if (!parsed.ok()) {
    const std::string why(parsed.message());
    return InvalidFieldError(
        "request", absl::StrCat("not a ", Request::descriptor()->full_name(),
                                " in protobuf's JSON mapping: ", why.substr(0, why.find('\n'))));
  }
  return request;
}

// The bodies of a scene at one read: now, or at the end of a retained past tick.
struct PagedScene {
  uint64_t version = 0;
  uint64_t tick = 0;
  uint64_t oldest_tick = 0;
  uint32_t retained_ticks = 0;
  // Sorted by id.
  std::vector<BodyState> bodies;
};

// The scene's bodies now (`at_tick` empty: the scene's own, user_data included) or at the end
// of tick `*at_tick` (the history's, which keeps no user_data). A past body that places an asset
// is named by its asset's name ("(deleted)" for an asset deleted since, which only retained past
// ticks still place).
absl::StatusOr<PagedScene> ReadBodies(const Scene& scene, std::optional<uint64_t> at_tick) {
  PagedScene out;
  absl::flat_hash_map<const AssetGeometry*, std::string> names;
  if (at_tick.has_value()) {
    for (const SceneAssetInfo& info : scene.ListAssets()) {
      names.emplace(&info.asset->geometry(), info.name);
    }
  }
  const absl::Status status = scene.ReadWithHistory(
      [&](const CollisionWorld& world, const PoseHistory& history, uint64_t version) {
        out.version = version;
        out.tick = history.tick();
        out.oldest_tick = history.oldest_tick();
        out.retained_ticks = history.retained_ticks();
        if (!at_tick.has_value()) return absl::OkStatus();
        if (absl::Status s = CheckTickRetained(history, *at_tick); !s.ok()) return s;
        out.bodies.reserve(world.body_count());
        for (BodyHandle slot = 0; slot < world.slot_count(); ++slot) {
          const PastBody past = history.StateAt(world, slot, *at_tick);
          if (!past.alive) continue;
          BodyState body{.id = past.body.id,
                         .shape = past.body.shape,
                         .pose = past.body.pose,
                         .category = past.body.category,
                         .mask = past.body.mask,
                         .kind = past.body.kind};
          if (past.body.asset != kNoAsset) {
            const AssetGeometry& asset = world.asset(past.body.asset);
            auto name = names.find(&asset);
            // "(deleted)": an asset deleted since, which only retained past ticks still place.
            body.asset = name != names.end() ? name->second : "(deleted)";
            body.asset_kind = asset.kind();
            body.scale = past.body.scale;
          }
          out.bodies.push_back(std::move(body));
        }
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  if (at_tick.has_value()) {
    std::sort(out.bodies.begin(), out.bodies.end(),
              [](const BodyState& a, const BodyState& b) { return a.id < b.id; });
  } else {
    SceneState state = scene.CaptureState();
    out.version = state.version;
    out.tick = state.tick;
    out.bodies = std::move(state.bodies);
  }
  return out;
}

}  // namespace

absl::StatusOr<QueryParams> ParseQueryParams(absl::string_view query,
                                             const std::vector<absl::string_view>& allowed) {
  if (query.size() > kMaxViewerQueryBytes) {
    return InvalidFieldError(
        "query", absl::StrCat(query.size(), " bytes, over the limit of ", kMaxViewerQueryBytes));
  }
  QueryParams params;
  for (absl::string_view part : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    const std::pair<absl::string_view, absl::string_view> encoded =
        absl::StrSplit(part, absl::MaxSplits('=', 1));
    std::string name = UrlDecode(encoded.first);
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return InvalidFieldError("query",
                               absl::StrCat("unknown parameter ", Quoted(name),
                                            " (known: ", absl::StrJoin(allowed, ", "), ")"));
    }
    if (Find(params, name) != nullptr) return InvalidFieldError(name, "given more than once");
    params.emplace_back(std::move(name), UrlDecode(encoded.second));
  }
  return params;
}

ViewerApi::ViewerApi(const Database* db, const Authenticator* auth, const ViewerLimits& limits,
                     DurabilityPolicy default_durability, QuerySampler* samples,
                     const ReplicationControl* replication, std::string server_address)
    : db_(db),
      auth_(auth),
      limits_(limits),
      default_durability_(default_durability),
      samples_(samples),
      replication_(replication),
      server_address_(std::move(server_address)) {}

absl::StatusOr<const Principal*> ViewerApi::Authenticate(absl::string_view authorization,
                                                         const QueryParams& params) const {
  if (!authorization.empty() || !auth_->enabled()) {
    return auth_->AuthenticateHeader(authorization);
  }
  const std::string* token = Find(params, "token");
  if (token == nullptr) {
    return absl::UnauthenticatedError(
        "token: a reader token is required (the Authorization header `Bearer <token>` or the "
        "token parameter)");
  }
  absl::StatusOr<const Principal*> principal =
      auth_->AuthenticateHeader(absl::StrCat("Bearer ", *token));
  if (!principal.ok()) return absl::UnauthenticatedError("token: unknown token");
  return principal;
}

ViewerReply ViewerApi::Scenes(const Principal& principal) const {
  v1::ListScenesResponse response;
  ListScenesToProto(
      *db_, [&](const std::string& name) { return principal.CanSee(name); }, default_durability_,
      &response);
  if (replication_ != nullptr) {
    for (v1::SceneInfo& scene : *response.mutable_scenes()) {
      if (std::optional<SceneReplicaFigures> figures = replication_->SceneFigures(scene.name())) {
        ReplicationToProto(*figures, scene.mutable_replication());
      }
    }
  }
  return JsonReply(response);
}

absl::StatusOr<std::shared_ptr<const Scene>> ViewerApi::FindScene(const Principal& principal,
                                                                  const QueryParams& params) const {
  const std::string* name = Find(params, "name");
  if (name == nullptr) return InvalidFieldError("name", "missing (the scene's name)");
  if (absl::Status s = ValidateSceneName(*name); !s.ok()) return AsNameParam(s);
  if (absl::Status s = principal.CheckScene(*name); !s.ok()) return AsNameParam(s);
  absl::StatusOr<std::shared_ptr<const Scene>> scene = db_->GetScene(*name);
  if (!scene.ok()) return AsNameParam(scene.status());
  return scene;
}

ViewerReply ViewerApi::SceneBodies(const Principal& principal, const QueryParams& params) const {
  absl::StatusOr<std::shared_ptr<const Scene>> scene = FindScene(principal, params);
  if (!scene.ok()) return ErrorReply(scene.status());
  std::optional<uint64_t> after;
  if (const std::string* text = Find(params, "after"); text != nullptr) {
    absl::StatusOr<uint64_t> value = ParseU64("after", *text);
    if (!value.ok()) return ErrorReply(value.status());
    after = *value;
  }
  uint64_t limit = limits_.max_page_bodies;
  if (const std::string* text = Find(params, "limit"); text != nullptr) {
    absl::StatusOr<uint64_t> value = ParseU64("limit", *text);
    if (!value.ok()) return ErrorReply(value.status());
    if (*value == 0 || *value > limits_.max_page_bodies) {
      return ErrorReply(InvalidFieldError(
          "limit", absl::StrCat(*value, " is not from 1 to ", limits_.max_page_bodies)));
    }
    limit = *value;
  }
  std::optional<uint64_t> at_tick;
  if (const std::string* text = Find(params, "at_tick"); text != nullptr) {
    absl::StatusOr<uint64_t> value = ParseU64("at_tick", *text);
    if (!value.ok()) return ErrorReply(value.status());
    at_tick = *value;
  }
  absl::StatusOr<PagedScene> read = ReadBodies(**scene, at_tick);
  if (!read.ok()) return ErrorReply(read.status());
  const std::vector<BodyState>& bodies = read->bodies;
  auto it = bodies.begin();
  if (after.has_value()) {
    it = std::upper_bound(bodies.begin(), bodies.end(), *after,
                          [](uint64_t id, const BodyState& body) { return id < body.id; });
  }
  viewer::v1::ScenePage page;
  page.set_scene((*scene)->name());
  page.set_version(read->version);
  page.set_tick(read->tick);
  page.set_oldest_tick(read->oldest_tick);
  page.set_retained_ticks(read->retained_ticks);
  if (at_tick.has_value()) page.set_at_tick(*at_tick);
  page.set_body_count(bodies.size());
  const size_t count = std::min<size_t>(limit, static_cast<size_t>(bodies.end() - it));
  page.mutable_bodies()->Reserve(static_cast<int>(count));
  for (const auto end = it + static_cast<std::ptrdiff_t>(count); it != end; ++it) {
    BodyStateToProto(*it, page.add_bodies());
  }
  if (it != bodies.end() && count > 0) page.set_next_after(std::prev(it)->id);
  page.set_server_address(server_address_);
  if (replication_ != nullptr) {
    if (std::optional<SceneReplicaFigures> figures = replication_->SceneFigures(page.scene())) {
      ReplicationToProto(*figures, page.mutable_replication());
    }
  }
  return JsonReply(page);
}

ViewerReply ViewerApi::Raycast(const Principal& principal, const QueryParams& params) const {
  return Cast<v1::RaycastRequest>(principal, params);
}

ViewerReply ViewerApi::SphereCast(const Principal& principal, const QueryParams& params) const {
  return Cast<v1::SphereCastRequest>(principal, params);
}

template <typename Request>
ViewerReply ViewerApi::Cast(const Principal& principal, const QueryParams& params) const {
  // The request as the rpc's message, from JSON or from the parameters; the scene of the
  // parameters' form is looked up first, as it always was (its errors name `name`).
  const bool json = Find(params, "request") != nullptr;
  std::shared_ptr<const Scene> scene;
  absl::StatusOr<Request> request;
  if (json) {
    request = RequestFromJson<Request>(params);
  } else {
    absl::StatusOr<std::shared_ptr<const Scene>> found = FindScene(principal, params);
    if (!found.ok()) return ErrorReply(found.status());
    scene = *std::move(found);
    request = RequestFromParams<Request>(params);
  }
  if (!request.ok()) return ErrorReply(request.status());
  const auto in_words = [json](const absl::Status& s) { return json ? s : AsNameParam(s); };
  const RequestLayout layout{.kind = RequestLayout::Kind::kUnaryQuery,
                             .query_root = json ? CastKind<Request>::kRoot : ""};

  // As the rpc: the principal's prefixes, the query's values (converted as the rpc converts
  // them, checked by the core), the scene.
  if (absl::Status s = principal.CheckScene(request->scene()); !s.ok()) {
    return ErrorReply(in_words(s));
  }
  absl::StatusOr<Query> query = CastKind<Request>::ToQuery(*request);
  if (query.ok()) {
    if (absl::Status s = PrepareQuery(&*query, limits_.queries, 0); !s.ok()) query = s;
  }
  if (!query.ok()) return ErrorReply(ForRequest(query.status(), layout));
  if (scene == nullptr) {
    absl::StatusOr<std::shared_ptr<const Scene>> found = db_->GetScene(request->scene());
    if (!found.ok()) return ErrorReply(found.status());
    scene = *std::move(found);
  }
  if (const uint64_t version = scene->version(); request->min_version() > version) {
    return ErrorReply(
        FieldStatus(absl::StatusCode::kFailedPrecondition, "min_version",
                    absl::StrCat("the scene is at version ", version,
                                 "; the viewer does not wait for a later one (the rpcs do)")));
  }

  std::vector<absl::Status> status;
  std::vector<QueryResult> results;
  std::vector<QueryHit> hits;
  const std::span<const Query> queries(&*query, 1);
  const uint64_t version = AnswerQueries(*scene, queries, {}, &status, &results, &hits);
  if (samples_ != nullptr) samples_->Offer(scene.get(), version, queries, status, results, hits);
  if (!status[0].ok()) return ErrorReply(ForRequest(status[0], layout));
  const QueryResult& result = results[0];
  v1::QueryResponse response;
  response.set_version(version);
  response.set_truncated(result.truncated);
  for (uint32_t h = 0; h < result.hit_count; ++h) {
    HitToProto(hits[result.first_hit + h], response.add_hits());
  }
  return JsonReply(response);
}

ViewerReply ViewerApi::Relevant(const Principal& principal, const QueryParams& params) const {
  if (Find(params, "request") == nullptr) {
    return ErrorReply(InvalidFieldError("request", "missing (a collide.v1.InterestRequest)"));
  }
  absl::StatusOr<v1::InterestRequest> request = RequestFromJson<v1::InterestRequest>(params);
  if (!request.ok()) return ErrorReply(request.status());
  if (absl::Status s = principal.CheckScene(request->scene()); !s.ok()) return ErrorReply(s);
  if (request->observers_size() > kMaxViewerObservers) {
    return ErrorReply(InvalidFieldError(
        "observers", absl::StrCat("the viewer takes at most ", kMaxViewerObservers,
                                  " observers, got ", request->observers_size())));
  }
  ServiceLimits service_limits;
  service_limits.max_observers_per_stream = kMaxViewerObservers;
  ObserverChanges changes;
  if (absl::Status s = ObserverChangesFromProto(*request, service_limits, &changes); !s.ok()) {
    return ErrorReply(s);
  }
  if (absl::Status s =
          ValidateObserverChanges(&changes, InterestLimits{.max_relevant = limits_.max_relevant});
      !s.ok()) {
    return ErrorReply(s);
  }
  absl::StatusOr<std::shared_ptr<const Scene>> scene = db_->GetScene(request->scene());
  if (!scene.ok()) return ErrorReply(scene.status());
  absl::StatusOr<PagedScene> read = ReadBodies(**scene, std::nullopt);
  if (!read.ok()) return ErrorReply(read.status());
  const std::vector<BodyState>& bodies = read->bodies;  // by id
  v1::InterestSnapshot snapshot;
  snapshot.set_version(read->version);
  snapshot.set_tick(read->tick);
  std::vector<ObserverSpec>& specs = changes.upserts;
  std::sort(specs.begin(), specs.end(),
            [](const ObserverSpec& a, const ObserverSpec& b) { return a.id < b.id; });
  std::vector<std::pair<float, uint64_t>> eligible;
  for (const ObserverSpec& spec : specs) {
    v1::RelevantSet* set = snapshot.add_sets();
    set->set_observer_id(spec.id);
    const ObserverRules rules = RulesOf(spec);
    ObserverFrame frame{.active = true, .position = spec.pose.position, .axis = rules.axis};
    if (spec.attached_to.has_value()) {
      auto host = std::lower_bound(bodies.begin(), bodies.end(), *spec.attached_to,
                                   [](const BodyState& body, uint64_t id) { return body.id < id; });
      if (host == bodies.end() || host->id != *spec.attached_to) continue;  // empty
      frame.position = TransformPoint(host->pose, spec.pose.position);
      frame.axis = Rotate(host->pose.rotation, rules.axis);
    }
    eligible.clear();
    for (const BodyState& body : bodies) {
      if (spec.attached_to == body.id || !Accepts(spec, body.category, body.mask)) continue;
      const float d2 = InterestDistance2(frame.position, body.pose.position);
      if (Eligible(rules, frame, body.pose.position, d2, [] { return false; })) {
        eligible.emplace_back(d2, body.id);
      }
    }
    const size_t keep = std::min<size_t>(spec.max_relevant, eligible.size());
    std::partial_sort(eligible.begin(), eligible.begin() + static_cast<std::ptrdiff_t>(keep),
                      eligible.end());
    eligible.resize(keep);
    std::vector<uint64_t> ids;
    ids.reserve(keep);
    for (const auto& [d2, id] : eligible) ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    set->mutable_body_ids()->Add(ids.begin(), ids.end());
  }
  return JsonReply(snapshot);
}

ViewerReply ViewerApi::AssetPage(const Principal& principal, const QueryParams& params) const {
  absl::StatusOr<std::shared_ptr<const Scene>> scene = FindScene(principal, params);
  if (!scene.ok()) return ErrorReply(scene.status());
  const std::string* name = Find(params, "asset");
  if (name == nullptr) return ErrorReply(InvalidFieldError("asset", "missing (the asset's name)"));
  if (absl::Status s = ValidateAssetName(*name); !s.ok()) {
    std::optional<FieldError> error = GetFieldError(s);
    if (error.has_value()) error->field = "asset";
    return ErrorReply(error.has_value() ? FieldErrorStatus(s.code(), *error) : s);
  }
  uint64_t offset = 0;
  if (const std::string* text = Find(params, "offset"); text != nullptr) {
    absl::StatusOr<uint64_t> value = ParseU64("offset", *text);
    if (!value.ok()) return ErrorReply(value.status());
    offset = *value;
  }
  const std::optional<SceneAssetInfo> info = (*scene)->GetAsset(*name);
  if (!info.has_value()) {
    return ErrorReply(FieldStatus(
        absl::StatusCode::kNotFound, "asset",
        absl::StrCat("no asset ", Quoted(*name), " in scene ", Quoted((*scene)->name()))));
  }
  const Asset& asset = *info->asset;
  const AssetSource& source = asset.source();
  viewer::v1::AssetPage page;
  page.set_scene((*scene)->name());
  AssetInfoToProto(info->name, asset, info->body_count, page.mutable_asset());
  page.set_offset(offset);
  if (asset.kind() == AssetKind::kMesh) {
    const uint64_t triangles = asset.triangle_count();
    if (offset >= triangles) {
      return ErrorReply(InvalidFieldError(
          "offset", absl::StrCat(offset, " is past the last triangle (", triangles - 1, ")")));
    }
    const uint64_t count = std::min<uint64_t>(triangles - offset, limits_.max_asset_page_triangles);
    google::protobuf::RepeatedField<float>* positions = page.mutable_positions();
    positions->Reserve(static_cast<int>(9 * count));
    for (uint64_t t = offset; t < offset + count; ++t) {
      for (int k = 0; k < 3; ++k) {
        const Vec3& v = source.vertices[source.indices[3 * t + k]];
        positions->Add(v.x);
        positions->Add(v.y);
        positions->Add(v.z);
      }
    }
    if (offset + count < triangles) page.set_next_offset(offset + count);
    return JsonReply(page);
  }
  const uint64_t rows = source.size.rows;
  const uint64_t columns = source.size.columns;
  if (offset >= rows - 1) {
    return ErrorReply(InvalidFieldError(
        "offset", absl::StrCat(offset, " is past the last row of cells (", rows - 2, ")")));
  }
  const uint64_t page_rows = std::min<uint64_t>(
      rows - offset, std::max<uint64_t>(2, limits_.max_asset_page_samples / columns));
  page.set_row_count(page_rows);
  page.mutable_heights()->Add(
      source.heights.begin() + static_cast<std::ptrdiff_t>(offset * columns),
      source.heights.begin() + static_cast<std::ptrdiff_t>((offset + page_rows) * columns));
  if (source.size.has_holes) {
    const uint64_t first_cell = offset * (columns - 1);
    const uint64_t end_cell = (offset + page_rows - 1) * (columns - 1);
    for (uint64_t c = first_cell; c < end_cell; ++c) {
      if ((source.holes[c / 8] >> (c % 8)) & 1) page.add_hole_cells(c);
    }
  }
  if (offset + page_rows < rows) page.set_next_offset(offset + page_rows - 1);
  return JsonReply(page);
}

absl::StatusOr<std::shared_ptr<const Scene>> ViewerApi::StreamScene(
    const Principal& principal, const QueryParams& params) const {
  return FindScene(principal, params);
}

}  // namespace collide
