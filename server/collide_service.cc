#include "server/collide_service.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scene/query_ticks.h"
#include "server/proto_convert.h"
#include "server/query_stream.h"
#include "server/scene_header.h"
#include "server/status_convert.h"
#include "server/update_stream.h"
#include "server/version_wait.h"
#include "server/watch_stream.h"
#include "spdlog/spdlog.h"

namespace collide {
namespace {

// A stream refused before it starts (authentication): finishes at once.
template <typename Request, typename Response>
class RefusedStream final : public grpc::ServerBidiReactor<Request, Response> {
 public:
  explicit RefusedStream(const absl::Status& status) { this->Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

// Logs the failures that are the server's, not the caller's.
void LogServerError(absl::string_view rpc, const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kUnavailable:
      spdlog::error("{}: {}", std::string(rpc), status.ToString());
      break;
    default:
      break;
  }
}

grpc::ServerUnaryReactor* FinishNow(grpc::CallbackServerContext* call, absl::string_view rpc,
                                    const absl::Status& status) {
  LogServerError(rpc, status);
  grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// Applies a unary write's batch to `db` and finishes the call from the store's callback, with
// the store's error paths rewritten by `translate` into the request's field names.
grpc::ServerUnaryReactor* ApplyWrite(Database& db, grpc::CallbackServerContext* call,
                                     absl::string_view rpc, const std::string& scene,
                                     const UpdateBatch& batch,
                                     absl::Status (*translate)(const absl::Status&),
                                     v1::WriteResponse* response) {
  grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
  db.Apply(scene, ClientTag{}, batch,
           [&db, reactor, response, rpc, translate](absl::StatusOr<ApplyAck> ack) {
             if (ack.ok()) {
               response->set_version(ack->version);
               response->set_durable(ack->durable);
             }
             const absl::Status status =
                 translate(ClarifyStoreWriteError(ack.status(), db.write_status()));
             LogServerError(rpc, status);
             reactor->Finish(ToGrpcStatus(status));
           });
  return reactor;
}

// Registers a stream of `kind` with the server's StreamRegistry (a null handle when it has
// none); RESOURCE_EXHAUSTED when max_streams are open.
absl::StatusOr<std::unique_ptr<StreamHandle>> OpenStream(const ServiceContext& context,
                                                         StreamKind kind,
                                                         grpc::CallbackServerContext* call) {
  if (context.streams == nullptr) return std::unique_ptr<StreamHandle>();
  return context.streams->Open(kind, call);
}

}  // namespace

CollideService::CollideService(ServiceContext context) : context_(std::move(context)) {}

absl::StatusOr<const Principal*> CollideService::Authorize(grpc::CallbackServerContext* call,
                                                           Role role) const {
  absl::StatusOr<const Principal*> principal = context_.auth->Authenticate(call->client_metadata());
  if (!principal.ok()) return principal.status();
  if (absl::Status s = (*principal)->Require(role); !s.ok()) return s;
  return principal;
}

absl::StatusOr<const Principal*> CollideService::AuthorizeScene(grpc::CallbackServerContext* call,
                                                                Role role,
                                                                absl::string_view scene) const {
  absl::StatusOr<const Principal*> principal = Authorize(call, role);
  if (!principal.ok()) return principal;
  if (absl::Status s = CheckSceneHeader(SceneHeaderOf(call->client_metadata()), scene); !s.ok()) {
    return s;
  }
  return principal;
}

// ---------------------------------------------------------------------------------------------
// Scenes.

grpc::ServerUnaryReactor* CollideService::CreateScene(grpc::CallbackServerContext* call,
                                                      const v1::CreateSceneRequest* request,
                                                      v1::CreateSceneResponse* response) {
  absl::StatusOr<const Principal*> principal = AuthorizeScene(call, Role::kAdmin, request->scene());
  if (!principal.ok()) return FinishNow(call, "CreateScene", principal.status());
  if (absl::Status s = (*principal)->CheckScene(request->scene()); !s.ok()) {
    return FinishNow(call, "CreateScene", s);
  }
  if (absl::Status s = ValidateSceneName(request->scene()); !s.ok()) {
    return FinishNow(call, "CreateScene", s);
  }
  absl::StatusOr<SceneOptions> options = SceneOptionsFromProto(request->options(), context_.limits);
  if (!options.ok()) return FinishNow(call, "CreateScene", options.status());
  grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
  const SceneOptions resolved = *options;
  context_.db->CreateScene(
      request->scene(), resolved,
      [this, reactor, request, response, resolved](absl::Status status) {
        status = ClarifyStoreWriteError(status, context_.db->write_status());
        if (status.ok()) {
          spdlog::info(
              "created scene \"{}\" (fat_margin {}, max_bodies {}, durability {})",
              request->scene(), resolved.fat_margin, resolved.max_bodies,
              std::string(DurabilityPolicyName(resolved.durability == DurabilityPolicy::kDefault
                                                   ? context_.default_durability
                                                   : resolved.durability)));
          absl::StatusOr<std::shared_ptr<const Scene>> scene =
              context_.db->GetScene(request->scene());
          if (scene.ok()) {
            SceneInfoToProto(**scene, context_.default_durability, response->mutable_scene());
          } else {
            // Deleted meanwhile: report what was created.
            response->mutable_scene()->set_name(request->scene());
          }
        }
        LogServerError("CreateScene", status);
        reactor->Finish(ToGrpcStatus(status));
      });
  return reactor;
}

grpc::ServerUnaryReactor* CollideService::DeleteScene(grpc::CallbackServerContext* call,
                                                      const v1::DeleteSceneRequest* request,
                                                      v1::DeleteSceneResponse* response) {
  absl::StatusOr<const Principal*> principal = AuthorizeScene(call, Role::kAdmin, request->scene());
  if (!principal.ok()) return FinishNow(call, "DeleteScene", principal.status());
  if (absl::Status s = (*principal)->CheckScene(request->scene()); !s.ok()) {
    return FinishNow(call, "DeleteScene", s);
  }
  grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
  context_.db->DeleteScene(request->scene(), [this, reactor, request](absl::Status status) {
    status = ClarifyStoreWriteError(status, context_.db->write_status());
    if (status.ok()) spdlog::info("deleted scene \"{}\"", request->scene());
    LogServerError("DeleteScene", status);
    reactor->Finish(ToGrpcStatus(status));
  });
  return reactor;
}

grpc::ServerUnaryReactor* CollideService::ListScenes(grpc::CallbackServerContext* call,
                                                     const v1::ListScenesRequest* request,
                                                     v1::ListScenesResponse* response) {
  absl::StatusOr<const Principal*> principal = Authorize(call, Role::kReader);
  if (!principal.ok()) return FinishNow(call, "ListScenes", principal.status());
  return FinishNow(call, "ListScenes", DoListScenes(**principal, response));
}

absl::Status CollideService::DoListScenes(const Principal& principal,
                                          v1::ListScenesResponse* response) const {
  for (const std::string& name : context_.db->scenes().List()) {
    if (!principal.CanSee(name)) continue;
    absl::StatusOr<std::shared_ptr<const Scene>> scene = context_.db->GetScene(name);
    if (!scene.ok()) continue;  // deleted meanwhile
    SceneInfoToProto(**scene, context_.default_durability, response->add_scenes());
  }
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* CollideService::GetScene(grpc::CallbackServerContext* call,
                                                   const v1::GetSceneRequest* request,
                                                   v1::GetSceneResponse* response) {
  absl::StatusOr<const Principal*> principal =
      AuthorizeScene(call, Role::kReader, request->scene());
  if (!principal.ok()) return FinishNow(call, "GetScene", principal.status());
  return FinishNow(call, "GetScene", DoGetScene(**principal, *request, response));
}

absl::Status CollideService::DoGetScene(const Principal& principal,
                                        const v1::GetSceneRequest& request,
                                        v1::GetSceneResponse* response) const {
  if (absl::Status s = principal.CheckScene(request.scene()); !s.ok()) return s;
  absl::StatusOr<std::shared_ptr<const Scene>> scene = context_.db->GetScene(request.scene());
  if (!scene.ok()) return scene.status();
  SceneInfoToProto(**scene, context_.default_durability, response->mutable_scene());
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Bodies.

grpc::ServerUnaryReactor* CollideService::UpsertBodies(grpc::CallbackServerContext* call,
                                                       const v1::UpsertBodiesRequest* request,
                                                       v1::WriteResponse* response) {
  absl::StatusOr<const Principal*> principal =
      AuthorizeScene(call, Role::kWriter, request->scene());
  if (!principal.ok()) return FinishNow(call, "UpsertBodies", principal.status());
  if (absl::Status s = (*principal)->CheckScene(request->scene()); !s.ok()) {
    return FinishNow(call, "UpsertBodies", s);
  }
  UpdateBatch batch;
  if (absl::Status s = UpsertRequestToBatch(*request, context_.limits, &batch); !s.ok()) {
    return FinishNow(call, "UpsertBodies", s);
  }
  return ApplyWrite(*context_.db, call, "UpsertBodies", request->scene(), batch,
                    &TranslateUpsertError, response);
}

grpc::ServerUnaryReactor* CollideService::RemoveBodies(grpc::CallbackServerContext* call,
                                                       const v1::RemoveBodiesRequest* request,
                                                       v1::WriteResponse* response) {
  absl::StatusOr<const Principal*> principal =
      AuthorizeScene(call, Role::kWriter, request->scene());
  if (!principal.ok()) return FinishNow(call, "RemoveBodies", principal.status());
  if (absl::Status s = (*principal)->CheckScene(request->scene()); !s.ok()) {
    return FinishNow(call, "RemoveBodies", s);
  }
  UpdateBatch batch;
  if (absl::Status s = RemoveRequestToBatch(*request, context_.limits, &batch); !s.ok()) {
    return FinishNow(call, "RemoveBodies", s);
  }
  return ApplyWrite(*context_.db, call, "RemoveBodies", request->scene(), batch,
                    &TranslateRemoveError, response);
}

grpc::ServerUnaryReactor* CollideService::GetBodies(grpc::CallbackServerContext* call,
                                                    const v1::GetBodiesRequest* request,
                                                    v1::GetBodiesResponse* response) {
  absl::StatusOr<const Principal*> principal =
      AuthorizeScene(call, Role::kReader, request->scene());
  if (!principal.ok()) return FinishNow(call, "GetBodies", principal.status());
  return FinishNow(call, "GetBodies", DoGetBodies(**principal, *request, response));
}

absl::Status CollideService::DoGetBodies(const Principal& principal,
                                         const v1::GetBodiesRequest& request,
                                         v1::GetBodiesResponse* response) const {
  if (absl::Status s = principal.CheckScene(request.scene()); !s.ok()) return s;
  const uint32_t limit = context_.limits.max_batch_ops;
  if (static_cast<size_t>(request.ids_size()) > limit) {
    return absl::ResourceExhaustedError(
        absl::StrCat("ids: at most ", limit, " ids per call, got ", request.ids_size()));
  }
  absl::StatusOr<std::shared_ptr<const Scene>> found = context_.db->GetScene(request.scene());
  if (!found.ok()) return found.status();
  const Scene& scene = **found;
  auto too_many = [&](size_t count) {
    return absl::ResourceExhaustedError(absl::StrCat("ids: the scene holds ", count,
                                                     " bodies, over the limit of ", limit,
                                                     " per response; ask for ids"));
  };
  if (request.ids_size() == 0) {
    if (static_cast<size_t>(scene.Stats().body_count) > limit) {
      return too_many(static_cast<size_t>(scene.Stats().body_count));
    }
    SceneState state = scene.CaptureState();
    if (state.bodies.size() > limit) return too_many(state.bodies.size());
    response->set_version(state.version);
    for (const BodyState& body : state.bodies) BodyStateToProto(body, response->add_bodies());
    return absl::OkStatus();
  }
  // Body by body; retried when a write landed in between, so the answer is one version (in the
  // unlikely case of writes racing every attempt, the last attempt's version is reported).
  for (int attempt = 0; attempt < 4; ++attempt) {
    response->Clear();
    const uint64_t before = scene.version();
    for (uint64_t id : request.ids()) {
      std::optional<BodyState> body = scene.GetBody(id);
      if (body.has_value()) {
        BodyStateToProto(*body, response->add_bodies());
      } else {
        response->add_missing_ids(id);
      }
    }
    const uint64_t after = scene.version();
    response->set_version(after);
    if (before == after) break;
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Streams.

grpc::ServerBidiReactor<v1::UpdateBatch, v1::UpdateAck>* CollideService::UpdateStream(
    grpc::CallbackServerContext* call) {
  absl::StatusOr<const Principal*> principal = Authorize(call, Role::kWriter);
  if (!principal.ok()) {
    return new RefusedStream<v1::UpdateBatch, v1::UpdateAck>(principal.status());
  }
  absl::StatusOr<std::unique_ptr<StreamHandle>> stream =
      OpenStream(context_, StreamKind::kUpdate, call);
  if (!stream.ok()) return new RefusedStream<v1::UpdateBatch, v1::UpdateAck>(stream.status());
  return new UpdateStreamReactor(context_, *principal, SceneHeaderOf(call->client_metadata()),
                                 *std::move(stream));
}

grpc::ServerBidiReactor<v1::QueryBatch, v1::QueryBatchResult>* CollideService::QueryStream(
    grpc::CallbackServerContext* call) {
  absl::StatusOr<const Principal*> principal = Authorize(call, Role::kReader);
  if (!principal.ok()) {
    return new RefusedStream<v1::QueryBatch, v1::QueryBatchResult>(principal.status());
  }
  absl::StatusOr<std::unique_ptr<StreamHandle>> stream =
      OpenStream(context_, StreamKind::kQuery, call);
  if (!stream.ok()) return new RefusedStream<v1::QueryBatch, v1::QueryBatchResult>(stream.status());
  return new QueryStreamReactor(context_, *principal, SceneHeaderOf(call->client_metadata()),
                                call->deadline(), *std::move(stream));
}

// ---------------------------------------------------------------------------------------------
// Standing queries.

namespace {

// A Watch call refused before it started (auth, header): finishes at once.
class RefusedWatch final : public grpc::ServerWriteReactor<v1::WatchResponse> {
 public:
  explicit RefusedWatch(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace

grpc::ServerWriteReactor<v1::WatchResponse>* CollideService::Watch(
    grpc::CallbackServerContext* call, const v1::WatchRequest* request) {
  // AuthorizeScene also checks the x-collide-scene routing header against the request's scene.
  absl::StatusOr<const Principal*> principal =
      AuthorizeScene(call, Role::kReader, request->scene());
  if (!principal.ok()) return new RefusedWatch(ToGrpcStatus(principal.status()));
  return new WatchReactor(context_, *principal, *request);
}

// ---------------------------------------------------------------------------------------------
// Unary queries.

template <typename Request>
grpc::ServerUnaryReactor* CollideService::UnaryQuery(
    grpc::CallbackServerContext* call, absl::string_view rpc, const Request* request,
    v1::QueryResponse* response,
    absl::StatusOr<Query> (*convert)(const Request&, const ServiceLimits&)) {
  absl::StatusOr<const Principal*> principal =
      AuthorizeScene(call, Role::kReader, request->scene());
  if (!principal.ok()) return FinishNow(call, rpc, principal.status());
  auto run = [this, principal = *principal, request, response, convert] {
    return DoQuery(*principal, request->scene(), convert(*request, context_.limits), response);
  };
  const uint64_t min_version = request->min_version();
  std::shared_ptr<const Scene> scene;
  if (min_version > 0 && (*principal)->CheckScene(request->scene()).ok()) {
    absl::StatusOr<std::shared_ptr<const Scene>> found = context_.db->GetScene(request->scene());
    if (found.ok()) scene = *std::move(found);
  }
  if (scene == nullptr || scene->version() >= min_version) return FinishNow(call, rpc, run());
  // The reactor finishes from the wait's callback; gRPC keeps the request and response alive
  // until then.
  grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
  VersionWait::Start(std::move(scene), min_version,
                     VersionWaitDeadline(call->deadline(), context_.limits.max_version_wait_ms),
                     [reactor, rpc, run](absl::Status wait) {
                       const absl::Status status = wait.ok() ? run() : wait;
                       LogServerError(rpc, status);
                       reactor->Finish(ToGrpcStatus(status));
                     });
  return reactor;
}

absl::Status CollideService::DoQuery(const Principal& principal, absl::string_view scene_name,
                                     absl::StatusOr<Query> query,
                                     v1::QueryResponse* response) const {
  if (absl::Status s = principal.CheckScene(scene_name); !s.ok()) return s;
  if (!query.ok()) return query.status();
  absl::StatusOr<std::shared_ptr<const Scene>> scene = context_.db->GetScene(scene_name);
  if (!scene.ok()) return scene.status();
  // Reused by each thread from call to call: no hit-vector allocation per query once grown.
  thread_local std::vector<QueryHit> hits;
  hits.clear();
  QueryResult result;
  absl::Status tick_status;
  const uint64_t version = (*scene)->ReadWithHistory(
      [&](const CollisionWorld& world, const PoseHistory& history, uint64_t v) {
        tick_status = CheckQueryTick(history, *query);
        if (tick_status.ok()) result = RunQuery(world, history, *query, &hits);
        return v;
      });
  if (!tick_status.ok()) return tick_status;
  response->set_version(version);
  response->set_truncated(result.truncated);
  for (uint32_t h = 0; h < result.hit_count; ++h) {
    HitToProto(hits[result.first_hit + h], response->add_hits());
  }
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* CollideService::Raycast(grpc::CallbackServerContext* call,
                                                  const v1::RaycastRequest* request,
                                                  v1::QueryResponse* response) {
  return UnaryQuery(call, "Raycast", request, response, &RaycastRequestToQuery);
}

grpc::ServerUnaryReactor* CollideService::SphereCast(grpc::CallbackServerContext* call,
                                                     const v1::SphereCastRequest* request,
                                                     v1::QueryResponse* response) {
  return UnaryQuery(call, "SphereCast", request, response, &SphereCastRequestToQuery);
}

grpc::ServerUnaryReactor* CollideService::Overlap(grpc::CallbackServerContext* call,
                                                  const v1::OverlapRequest* request,
                                                  v1::QueryResponse* response) {
  return UnaryQuery(call, "Overlap", request, response, &OverlapRequestToQuery);
}

// ---------------------------------------------------------------------------------------------
// Server statistics.

grpc::ServerUnaryReactor* CollideService::GetServerStats(grpc::CallbackServerContext* call,
                                                         const v1::GetServerStatsRequest* request,
                                                         v1::GetServerStatsResponse* response) {
  absl::StatusOr<const Principal*> principal = Authorize(call, Role::kAdmin);
  if (!principal.ok()) return FinishNow(call, "GetServerStats", principal.status());
  DoGetServerStats(response);
  return FinishNow(call, "GetServerStats", absl::OkStatus());
}

void CollideService::DoGetServerStats(v1::GetServerStatsResponse* response) const {
  if (context_.streams != nullptr) {
    const StreamStats streams = context_.streams->stats();
    response->set_update_streams(streams.update_streams);
    response->set_query_streams(streams.query_streams);
    response->set_streams_opened(streams.opened);
    response->set_streams_refused(streams.refused);
    response->set_streams_stalled(streams.stalled);
    response->set_outbound_bytes(streams.outbound_bytes);
  }
  response->set_scenes(static_cast<uint32_t>(context_.db->scenes().size()));
  const absl::Status writable = context_.db->write_status();
  response->set_writable(writable.ok());
  if (!writable.ok()) response->set_write_error(std::string(writable.message()));
}

}  // namespace collide
