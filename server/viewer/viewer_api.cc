#include "server/viewer/viewer_api.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <span>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/field_error.h"
#include "query/batch.h"
#include "scene/scene_name.h"
#include "scene/scene_query.h"
#include "scene/update_batch.h"
#include "scene/validate.h"
#include "server/convert/field_path.h"
#include "server/convert/query_convert.h"

namespace collide {
namespace {

// The longest query string taken (a ray's parameters fit many times over).
constexpr size_t kMaxQueryBytes = 2048;

absl::Status Invalid(absl::string_view param, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(param, ": ", why));
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

absl::StatusOr<std::string> UrlDecode(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+') {
      out.push_back(' ');
    } else if (c == '%') {
      if (i + 2 >= text.size()) {
        return absl::InvalidArgumentError("a % escape needs two hex digits");
      }
      const int hi = HexValue(text[i + 1]);
      const int lo = HexValue(text[i + 2]);
      if (hi < 0 || lo < 0) return absl::InvalidArgumentError("a % escape needs two hex digits");
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// `"text"` as a JSON string.
void AppendJsonString(absl::string_view text, std::string* out) {
  out->push_back('"');
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (u < 0x20 || u >= 0x7f) {
      // Scene names and messages are ASCII; anything else is escaped byte by byte.
      absl::StrAppendFormat(out, "\\u%04x", u);
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

void AppendFloat(float v, std::string* out) {
  char buffer[32];
  const int n = std::snprintf(buffer, sizeof(buffer), "%.7g", static_cast<double>(v));
  out->append(buffer, n > 0 ? static_cast<size_t>(n) : 0);
}

void AppendVec3(const Vec3& v, std::string* out) {
  out->push_back('[');
  AppendFloat(v.x, out);
  out->push_back(',');
  AppendFloat(v.y, out);
  out->push_back(',');
  AppendFloat(v.z, out);
  out->push_back(']');
}

void AppendQuat(const Quat& q, std::string* out) {
  out->push_back('[');
  AppendFloat(q.x, out);
  out->push_back(',');
  AppendFloat(q.y, out);
  out->push_back(',');
  AppendFloat(q.z, out);
  out->push_back(',');
  AppendFloat(q.w, out);
  out->push_back(']');
}

// A pose as the stream sends a move: ["id", px, py, pz, qx, qy, qz, qw], or ["id", px, py, pz]
// when the rotation is the one the viewer has (`with_rotation` false).
// `,"half_extents":[..]` or `,"radius":..[,"half_height":..]`, then `,"position":[..],
// "rotation":[..]`: a body's or a fence's shape and pose, as the page draws them.
void AppendShapeAndPoseJson(const Shape& shape, const Pose& pose, std::string* out) {
  switch (shape.type) {
    case ShapeType::kBox:
      out->append(",\"half_extents\":");
      AppendVec3(shape.box.half_extents, out);
      break;
    case ShapeType::kCapsule:
      out->append(",\"radius\":");
      AppendFloat(shape.capsule.radius, out);
      out->append(",\"half_height\":");
      AppendFloat(shape.capsule.half_height, out);
      break;
    case ShapeType::kSphere:
    default:
      out->append(",\"radius\":");
      AppendFloat(shape.sphere.radius, out);
      break;
  }
  out->append(",\"position\":");
  AppendVec3(pose.position, out);
  out->append(",\"rotation\":");
  AppendQuat(pose.rotation, out);
}

void AppendPoseJson(uint64_t id, const Pose& pose, bool with_rotation, std::string* out) {
  absl::StrAppend(out, "[\"", id, "\",");
  AppendFloat(pose.position.x, out);
  out->push_back(',');
  AppendFloat(pose.position.y, out);
  out->push_back(',');
  AppendFloat(pose.position.z, out);
  if (!with_rotation) {
    out->push_back(']');
    return;
  }
  out->push_back(',');
  AppendFloat(pose.rotation.x, out);
  out->push_back(',');
  AppendFloat(pose.rotation.y, out);
  out->push_back(',');
  AppendFloat(pose.rotation.z, out);
  out->push_back(',');
  AppendFloat(pose.rotation.w, out);
  out->push_back(']');
}

const std::string* Find(const QueryParams& params, absl::string_view name) {
  for (const auto& [key, value] : params) {
    if (key == name) return &value;
  }
  return nullptr;
}

// A decimal uint64 parameter (no sign, no spaces).
absl::StatusOr<uint64_t> ParseU64(absl::string_view param, const std::string& text) {
  uint64_t value = 0;
  if (text.empty() || text.size() > 20 || !absl::ascii_isdigit(text[0]) ||
      !absl::SimpleAtoi(text, &value)) {
    return Invalid(param, absl::StrCat("\"", absl::CEscape(text.substr(0, 64)),
                                       "\" is not a decimal integer from 0 to 2^64-1"));
  }
  return value;
}

// A finite float parameter within +-limit.
absl::StatusOr<float> ParseFloat(absl::string_view param, absl::string_view text, double limit) {
  double value = 0;
  if (text.empty() || text.size() > 40 || !absl::SimpleAtod(text, &value) ||
      !std::isfinite(value) || std::fabs(value) > limit) {
    return Invalid(param, absl::StrFormat("\"%s\" is not a finite number within +-%g",
                                          absl::CEscape(text.substr(0, 64)), limit));
  }
  return static_cast<float>(value);
}

absl::StatusOr<Vec3> ParseVec3(absl::string_view param, const std::string* text) {
  if (text == nullptr) return Invalid(param, "missing (x,y,z)");
  const std::vector<absl::string_view> parts = absl::StrSplit(*text, ',');
  if (parts.size() != 3) {
    return Invalid(param, absl::StrCat("\"", absl::CEscape(text->substr(0, 64)),
                                       "\" is not three numbers x,y,z"));
  }
  Vec3 v;
  float* out[3] = {&v.x, &v.y, &v.z};
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<float> value = ParseFloat(param, parts[i], kMaxCoordinate);
    if (!value.ok()) return value.status();
    *out[i] = *value;
  }
  return v;
}

// A core status about the scene (`scene: ...`) in the viewer's words: its parameter is `name`.
absl::Status AsNameParam(const absl::Status& status) {
  std::optional<FieldError> error = GetFieldError(status);
  if (!error.has_value() || !error->list.empty() || error->field != "scene") return status;
  error->field = "name";
  return FieldErrorStatus(status.code(), *error);
}

const char* ShapeName(ShapeType type) {
  switch (type) {
    case ShapeType::kBox:
      return "box";
    case ShapeType::kCapsule:
      return "capsule";
    case ShapeType::kSphere:
    default:
      return "sphere";
  }
}

bool SameShape(const Shape& a, const Shape& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case ShapeType::kBox:
      return a.box.half_extents.x == b.box.half_extents.x &&
             a.box.half_extents.y == b.box.half_extents.y &&
             a.box.half_extents.z == b.box.half_extents.z;
    case ShapeType::kCapsule:
      return a.capsule.radius == b.capsule.radius && a.capsule.half_height == b.capsule.half_height;
    case ShapeType::kSphere:
    default:
      return a.sphere.radius == b.sphere.radius;
  }
}

// The bodies of a scene at one read: now, or at the end of a retained past tick.
struct PastScene {
  uint64_t version = 0;
  uint64_t tick = 0;
  uint64_t oldest_tick = 0;
  uint32_t retained_ticks = 0;
  // Sorted by id.
  std::vector<BodyState> bodies;
};

// The scene's bodies now (`at_tick` empty) or at the end of tick `*at_tick`, under one read.
absl::StatusOr<PastScene> ReadBodies(const Scene& scene, std::optional<uint64_t> at_tick) {
  PastScene out;
  const absl::Status status = scene.ReadWithHistory(
      [&](const CollisionWorld& world, const PoseHistory& history, uint64_t version) {
        out.version = version;
        out.tick = history.tick();
        out.oldest_tick = history.oldest_tick();
        out.retained_ticks = history.retained_ticks();
        const uint64_t t = at_tick.value_or(history.tick());
        if (absl::Status s = CheckTickRetained(history, t); !s.ok()) return s;
        out.bodies.reserve(world.body_count());
        for (BodyHandle slot = 0; slot < world.slot_count(); ++slot) {
          // At the current tick StateAt reads the world as it is (no record is newer).
          const PastBody past = history.StateAt(world, slot, t);
          if (!past.alive) continue;
          out.bodies.push_back(BodyState{.id = past.body.id,
                                         .shape = past.body.shape,
                                         .pose = past.body.pose,
                                         .category = past.body.category,
                                         .mask = past.body.mask,
                                         .kind = past.body.kind});
        }
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  std::sort(out.bodies.begin(), out.bodies.end(),
            [](const BodyState& a, const BodyState& b) { return a.id < b.id; });
  return out;
}

}  // namespace

absl::StatusOr<QueryParams> ParseQueryParams(absl::string_view query,
                                             const std::vector<absl::string_view>& allowed) {
  if (query.size() > kMaxQueryBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("query: ", query.size(), " bytes, over the limit of ", kMaxQueryBytes));
  }
  QueryParams params;
  for (absl::string_view part : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    const size_t eq = part.find('=');
    absl::StatusOr<std::string> name = UrlDecode(part.substr(0, eq));
    if (!name.ok())
      return absl::InvalidArgumentError(absl::StrCat("query: ", name.status().message()));
    absl::StatusOr<std::string> value =
        UrlDecode(eq == absl::string_view::npos ? absl::string_view() : part.substr(eq + 1));
    if (!value.ok()) {
      return Invalid(*name, value.status().message());
    }
    if (std::find(allowed.begin(), allowed.end(), *name) == allowed.end()) {
      std::string known;
      for (absl::string_view a : allowed) absl::StrAppend(&known, known.empty() ? "" : ", ", a);
      std::string quoted;
      AppendJsonString(name->substr(0, 64), &quoted);
      return absl::InvalidArgumentError(
          absl::StrCat("query: unknown parameter ", quoted, " (known: ", known, ")"));
    }
    if (Find(params, *name) != nullptr) return Invalid(*name, "given more than once");
    params.emplace_back(*std::move(name), *std::move(value));
  }
  return params;
}

ViewerReply ErrorReply(const absl::Status& status) {
  ViewerReply reply;
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
      reply.http_status = 400;
      break;
    case absl::StatusCode::kUnauthenticated:
      reply.http_status = 401;
      break;
    case absl::StatusCode::kPermissionDenied:
      reply.http_status = 403;
      break;
    case absl::StatusCode::kNotFound:
      reply.http_status = 404;
      break;
    case absl::StatusCode::kResourceExhausted:
      reply.http_status = 413;
      break;
    case absl::StatusCode::kUnavailable:
      reply.http_status = 503;
      break;
    default:
      reply.http_status = 500;
      break;
  }
  reply.body = "{\"error\":";
  AppendJsonString(status.message(), &reply.body);
  reply.body += "}\n";
  return reply;
}

void AppendBodyJson(const BodyState& body, std::string* out) {
  absl::StrAppend(out, "{\"id\":\"", body.id, "\",\"shape\":\"", ShapeName(body.shape.type), "\"");
  AppendShapeAndPoseJson(body.shape, body.pose, out);
  absl::StrAppend(out, ",\"category\":", body.category,
                  ",\"static\":", body.kind == BodyKind::kStatic ? "true" : "false", "}");
}

ViewerApi::ViewerApi(const Database* db, const Authenticator* auth, const ViewerLimits& limits,
                     QuerySampler* samples)
    : db_(db), auth_(auth), limits_(limits), samples_(samples) {}

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
  std::vector<std::string> names = db_->SceneNames();
  std::sort(names.begin(), names.end());
  std::string out = "{\"scenes\":[";
  uint32_t listed = 0;
  bool truncated = false;
  for (const std::string& name : names) {
    if (!principal.CanSee(name)) continue;
    absl::StatusOr<std::shared_ptr<const Scene>> scene = db_->GetScene(name);
    if (!scene.ok()) continue;  // deleted in between
    if (listed == limits_.max_listed_scenes) {
      truncated = true;
      break;
    }
    const SceneStats stats = (*scene)->Stats();
    if (listed > 0) out.push_back(',');
    out.append("{\"name\":");
    AppendJsonString(name, &out);
    absl::StrAppend(&out, ",\"version\":", stats.version, ",\"tick\":", stats.tick,
                    ",\"oldest_tick\":", stats.oldest_tick, ",\"bodies\":", stats.body_count, "}");
    ++listed;
  }
  absl::StrAppend(&out, "],\"truncated\":", truncated ? "true" : "false", "}\n");
  return ViewerReply{200, std::move(out)};
}

absl::StatusOr<std::shared_ptr<const Scene>> ViewerApi::FindScene(const Principal& principal,
                                                                  const QueryParams& params) const {
  const std::string* name = Find(params, "name");
  if (name == nullptr) return Invalid("name", "missing (the scene's name)");
  if (absl::Status s = ValidateSceneName(*name); !s.ok()) return AsNameParam(s);
  if (absl::Status s = principal.CheckScene(*name); !s.ok()) return AsNameParam(s);
  absl::StatusOr<std::shared_ptr<const Scene>> scene = db_->GetScene(*name);
  if (!scene.ok()) return AsNameParam(scene.status());
  return scene;
}

ViewerReply ViewerApi::SceneBodies(const Principal& principal, const QueryParams& params) const {
  absl::StatusOr<std::shared_ptr<const Scene>> scene = FindScene(principal, params);
  if (!scene.ok()) return ErrorReply(scene.status());
  uint64_t after = 0;
  bool has_after = false;
  if (const std::string* text = Find(params, "after"); text != nullptr) {
    absl::StatusOr<uint64_t> value = ParseU64("after", *text);
    if (!value.ok()) return ErrorReply(value.status());
    after = *value;
    has_after = true;
  }
  uint64_t limit = limits_.max_page_bodies;
  if (const std::string* text = Find(params, "limit"); text != nullptr) {
    absl::StatusOr<uint64_t> value = ParseU64("limit", *text);
    if (!value.ok()) return ErrorReply(value.status());
    if (*value == 0 || *value > limits_.max_page_bodies) {
      return ErrorReply(
          Invalid("limit", absl::StrCat(*value, " is not from 1 to ", limits_.max_page_bodies)));
    }
    limit = *value;
  }
  std::optional<uint64_t> at_tick;
  if (const std::string* text = Find(params, "at_tick"); text != nullptr) {
    absl::StatusOr<uint64_t> value = ParseU64("at_tick", *text);
    if (!value.ok()) return ErrorReply(value.status());
    at_tick = *value;
  }
  absl::StatusOr<PastScene> read = ReadBodies(**scene, at_tick);
  if (!read.ok()) return ErrorReply(read.status());
  const PastScene& state = *read;
  auto first = state.bodies.begin();
  if (has_after) {
    first = std::upper_bound(state.bodies.begin(), state.bodies.end(), after,
                             [](uint64_t id, const BodyState& body) { return id < body.id; });
  }
  std::string out = "{\"name\":";
  AppendJsonString((*scene)->name(), &out);
  absl::StrAppend(&out, ",\"version\":", state.version, ",\"tick\":", state.tick,
                  ",\"oldest_tick\":", state.oldest_tick,
                  ",\"retained_ticks\":", state.retained_ticks, ",\"at_tick\":");
  if (at_tick.has_value()) {
    absl::StrAppend(&out, *at_tick);
  } else {
    out.append("null");
  }
  absl::StrAppend(&out, ",\"body_count\":", state.bodies.size(), ",\"bodies\":[");
  uint64_t count = 0;
  auto it = first;
  for (; it != state.bodies.end() && count < limit; ++it, ++count) {
    if (count > 0) out.push_back(',');
    AppendBodyJson(*it, &out);
  }
  out.append("],\"next_after\":");
  if (it != state.bodies.end() && count > 0) {
    absl::StrAppend(&out, "\"", std::prev(it)->id, "\"");
  } else {
    out.append("null");
  }
  out.append("}\n");
  return ViewerReply{200, std::move(out)};
}

ViewerReply ViewerApi::Raycast(const Principal& principal, const QueryParams& params) const {
  return Cast(principal, params, /*sphere=*/false);
}

ViewerReply ViewerApi::SphereCast(const Principal& principal, const QueryParams& params) const {
  return Cast(principal, params, /*sphere=*/true);
}

ViewerReply ViewerApi::Cast(const Principal& principal, const QueryParams& params,
                            bool sphere) const {
  absl::StatusOr<std::shared_ptr<const Scene>> scene = FindScene(principal, params);
  if (!scene.ok()) return ErrorReply(scene.status());
  absl::StatusOr<Vec3> origin = ParseVec3("origin", Find(params, "origin"));
  if (!origin.ok()) return ErrorReply(origin.status());
  absl::StatusOr<Vec3> direction = ParseVec3("direction", Find(params, "direction"));
  if (!direction.ok()) return ErrorReply(direction.status());
  float max_distance = kMaxCastDistance;
  if (const std::string* text = Find(params, "max_distance"); text != nullptr) {
    absl::StatusOr<float> value = ParseFloat("max_distance", *text, kMaxCoordinate);
    if (!value.ok()) return ErrorReply(value.status());
    max_distance = *value;
  }
  float radius = 0.0f;
  if (sphere) {
    const std::string* text = Find(params, "radius");
    if (text == nullptr) return ErrorReply(Invalid("radius", "missing (the sphere's radius)"));
    absl::StatusOr<float> value = ParseFloat("radius", *text, kMaxCoordinate);
    if (!value.ok()) return ErrorReply(value.status());
    radius = *value;
  }
  Query query;
  const Ray ray{.origin = *origin, .direction = *direction, .max_distance = max_distance};
  if (sphere) {
    query.shape_query = SphereCastQuery{ray, radius};
  } else {
    query.shape_query = RaycastQuery{ray};
  }
  query.mode = CollectMode::kClosest;
  query.max_hits = 0;
  if (const std::string* text = Find(params, "at_tick"); text != nullptr) {
    absl::StatusOr<uint64_t> value = ParseU64("at_tick", *text);
    if (!value.ok()) return ErrorReply(value.status());
    query.at_tick = *value;
  }
  // The core's checks, as for every query; their errors name the parameters (`direction`,
  // `at_tick`).
  const RequestLayout params_layout{.kind = RequestLayout::Kind::kUnaryQuery, .query_root = ""};
  if (absl::Status s = PrepareQuery(&query, QueryLimits{}, 0); !s.ok()) {
    return ErrorReply(ForRequest(s, params_layout));
  }
  std::vector<absl::Status> status;
  std::vector<QueryResult> results;
  std::vector<QueryHit> hits;
  const std::span<const Query> queries(&query, 1);
  const uint64_t version = AnswerQueries(**scene, queries, {}, &status, &results, &hits);
  if (samples_ != nullptr) samples_->Offer(scene->get(), version, queries, status, results, hits);
  if (!status.empty() && !status[0].ok()) return ErrorReply(ForRequest(status[0], params_layout));
  std::string out = absl::StrCat("{\"version\":", version, ",\"at_tick\":");
  if (query.at_tick.has_value()) {
    absl::StrAppend(&out, *query.at_tick);
  } else {
    out.append("null");
  }
  out.append(",\"hit\":");
  if (results.empty() || results[0].hit_count == 0) {
    out.append("null");
  } else {
    const QueryHit& hit = hits[results[0].first_hit];
    absl::StrAppend(&out, "{\"id\":\"", hit.body_id, "\",\"distance\":");
    AppendFloat(hit.distance, &out);
    out.append(",\"point\":");
    AppendVec3(hit.point, &out);
    out.append(",\"normal\":");
    AppendVec3(hit.normal, &out);
    out.append("}");
  }
  out.append("}\n");
  return ViewerReply{200, std::move(out)};
}

absl::StatusOr<std::shared_ptr<const Scene>> ViewerApi::StreamScene(
    const Principal& principal, const QueryParams& params) const {
  return FindScene(principal, params);
}

SceneStream::SceneStream(std::shared_ptr<const Scene> scene, size_t max_event_bytes)
    : scene_(std::move(scene)), max_event_bytes_(std::max<size_t>(max_event_bytes, 4096)) {
  const SceneState state = scene_->CaptureState();
  version_ = state.version;
  tick_ = state.tick;
  sent_.reserve(state.bodies.size());
  for (const BodyState& body : state.bodies) {
    sent_[body.id] = Sent{body.shape, body.pose, body.category, body.kind, 0};
  }
}

std::string SceneStream::Hello() const {
  return absl::StrCat("event: hello\ndata: {\"version\":", version_, ",\"tick\":", tick_,
                      ",\"max_event_bytes\":", max_event_bytes_, "}\n\n");
}

std::string SceneStream::Poll() {
  if (done_) return {};
  if (scene_->deleted()) {
    done_ = true;
    return "event: deleted\ndata: {}\n\n";
  }
  if (!backlog_ && scene_->version() == version_) return {};
  const SceneState state = scene_->CaptureState();
  ++generation_;
  std::string bodies;
  std::string poses;
  std::string removed;
  // Room left for the three lists (the envelope is under 200 bytes).
  const size_t budget = max_event_bytes_ - 200;
  size_t used = 0;
  bool full = false;
  std::string item;
  for (const BodyState& body : state.bodies) {
    auto [it, inserted] = sent_.try_emplace(body.id);
    Sent& sent = it->second;
    const bool reshaped = inserted || !SameShape(sent.shape, body.shape) ||
                          sent.category != body.category || sent.kind != body.kind;
    if (!reshaped && sent.pose == body.pose) {
      sent.generation = generation_;
      continue;
    }
    if (!full) {
      item.clear();
      if (reshaped) {
        AppendBodyJson(body, &item);
      } else {
        AppendPoseJson(body.id, body.pose, sent.pose.rotation != body.pose.rotation, &item);
      }
    }
    if (full || used + item.size() + 1 > budget) {
      // Next event; a new body not sent yet stays unknown to the viewer until then.
      full = true;
      if (inserted) {
        sent.generation = generation_;
        sent.category = ~body.category;  // differs: sent as new next time
        sent.shape = body.shape;
        sent.kind = body.kind;
      } else {
        sent.generation = generation_;
      }
      continue;
    }
    std::string& list = reshaped ? bodies : poses;
    if (!list.empty()) list.push_back(',');
    list.append(item);
    used += item.size() + 1;
    sent = Sent{body.shape, body.pose, body.category, body.kind, generation_};
  }
  // Bodies not in the state were removed.
  for (auto it = sent_.begin(); it != sent_.end();) {
    if (it->second.generation == generation_) {
      ++it;
      continue;
    }
    const std::string id = absl::StrCat("\"", it->first, "\"");
    if (full || used + id.size() + 1 > budget) {
      full = true;
      ++it;
      continue;
    }
    if (!removed.empty()) removed.push_back(',');
    removed.append(id);
    used += id.size() + 1;
    sent_.erase(it++);
  }
  backlog_ = full;
  version_ = state.version;
  tick_ = state.tick;
  if (bodies.empty() && poses.empty() && removed.empty() && !full) return {};
  return absl::StrCat("event: update\ndata: {\"version\":", version_, ",\"tick\":", tick_,
                      ",\"bodies\":[", bodies, "],\"poses\":[", poses, "],\"removed\":[", removed,
                      "],\"more\":", full ? "true" : "false", "}\n\n");
}

namespace {

void AppendFenceJson(const FenceSpec& fence, std::string* out) {
  absl::StrAppend(out, "{\"id\":\"", fence.id, "\",\"shape\":\"", ShapeName(fence.shape.type),
                  "\"");
  AppendShapeAndPoseJson(fence.shape, fence.pose, out);
  out->append(",\"attached_to\":");
  if (fence.attached_to.has_value()) {
    absl::StrAppend(out, "\"", *fence.attached_to, "\"");
  } else {
    out->append("null");
  }
  out->append("}");
}

}  // namespace

WatchFeed::WatchFeed(WatchDirectory* directory, const Scene* scene, size_t max_event_bytes)
    : directory_(directory),
      scene_(scene),
      max_event_bytes_(std::max<size_t>(max_event_bytes, 4096)) {
  if (directory_ != nullptr) cursor_ = directory_->Follow(scene_);
}

WatchFeed::~WatchFeed() {
  if (directory_ != nullptr) directory_->Unfollow(scene_);
}

std::string WatchFeed::Poll() {
  if (directory_ == nullptr) return {};
  std::string out;
  const uint64_t generation = directory_->WatchesGeneration(scene_);
  if (!sent_watches_ || generation != generation_) {
    sent_watches_ = true;
    generation_ = generation;
    const std::vector<ListedWatch> watches = directory_->Watches(scene_);
    // Room for the lists (the envelope is under 100 bytes).
    const size_t budget = max_event_bytes_ - 100;
    std::string list;
    std::string fence;
    bool truncated = false;
    for (const ListedWatch& watch : watches) {
      if (list.size() + 40 > budget) {
        truncated = true;
        break;
      }
      if (!list.empty()) list.push_back(',');
      absl::StrAppend(&list, "{\"watch\":\"", watch.watch, "\",\"fences\":[");
      bool first = true;
      for (const FenceSpec& spec : watch.fences) {
        fence.clear();
        AppendFenceJson(spec, &fence);
        if (list.size() + fence.size() + 3 > budget) {
          truncated = true;
          break;
        }
        if (!first) list.push_back(',');
        list.append(fence);
        first = false;
      }
      list.append("]}");
    }
    absl::StrAppend(&out, "event: watches\ndata: {\"watches\":[", list,
                    "],\"truncated\":", truncated ? "true" : "false", "}\n\n");
  }
  const ListedEvents events = directory_->EventsAfter(scene_, cursor_, kMaxEventsPerPoll);
  cursor_ = events.next;
  if (!events.events.empty() || events.dropped > 0) {
    absl::StrAppend(&out, "event: watch_events\ndata: {\"events\":[");
    bool first = true;
    for (const ListedEvent& e : events.events) {
      if (!first) out.push_back(',');
      first = false;
      absl::StrAppend(&out, "{\"watch\":\"", e.watch, "\",\"fence\":\"", e.event.watch_id,
                      "\",\"body\":\"", e.event.body_id, "\",\"kind\":\"",
                      e.event.kind == WatchEventKind::kEnter ? "enter" : "exit",
                      "\",\"version\":", e.version, ",\"point\":");
      AppendVec3(e.event.point, &out);
      out.append(",\"normal\":");
      AppendVec3(e.event.normal, &out);
      out.append("}");
    }
    absl::StrAppend(&out, "],\"dropped\":", events.dropped, "}\n\n");
  }
  return out;
}

QuerySampleFeed::QuerySampleFeed(QuerySampler* sampler, const Scene* scene)
    : sampler_(sampler), scene_(scene) {
  if (sampler_ != nullptr) cursor_ = sampler_->Follow(scene_);
}

QuerySampleFeed::~QuerySampleFeed() {
  if (sampler_ != nullptr) sampler_->Unfollow(scene_);
}

std::string QuerySampleFeed::Poll() {
  if (sampler_ == nullptr) return {};
  const SampledQueries taken = sampler_->After(scene_, cursor_, QuerySampler::kMaxKept);
  cursor_ = taken.next;
  if (taken.samples.empty() && taken.dropped == 0) return {};
  std::string out = "event: query_samples\ndata: {\"samples\":[";
  bool first = true;
  for (const QuerySample& sample : taken.samples) {
    if (!first) out.push_back(',');
    first = false;
    absl::StrAppend(&out, "{\"kind\":\"", sample.sphere ? "sphere_cast" : "raycast",
                    "\",\"version\":", sample.version, ",\"origin\":");
    AppendVec3(sample.origin, &out);
    out.append(",\"direction\":");
    AppendVec3(sample.direction, &out);
    out.append(",\"max_distance\":");
    AppendFloat(sample.max_distance, &out);
    out.append(",\"radius\":");
    AppendFloat(sample.radius, &out);
    out.append(",\"at_tick\":");
    if (sample.at_tick.has_value()) {
      absl::StrAppend(&out, *sample.at_tick);
    } else {
      out.append("null");
    }
    out.append(",\"hit\":");
    if (sample.hit_id.has_value()) {
      absl::StrAppend(&out, "{\"id\":\"", *sample.hit_id, "\",\"distance\":");
      AppendFloat(sample.hit_distance, &out);
      out.append("}");
    } else {
      out.append("null");
    }
    out.append("}");
  }
  absl::StrAppend(&out, "],\"dropped\":", taken.dropped, "}\n\n");
  return out;
}

}  // namespace collide
