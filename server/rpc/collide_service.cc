#include "server/rpc/collide_service.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "collide/version.h"
#include "scene/move_destination.h"
#include "scene/scene_query.h"
#include "server/convert/asset_convert.h"
#include "server/convert/field_path.h"
#include "server/convert/query_convert.h"
#include "server/convert/scene_convert.h"
#include "server/convert/status_convert.h"
#include "server/convert/update_convert.h"
#include "server/convert/wire_message.h"
#include "server/infra/metadata_limit.h"
#include "server/infra/process_stats.h"
#include "server/infra/replication_proto.h"
#include "server/infra/scene_header.h"
#include "server/infra/scratch_memory.h"
#include "server/rpc/asset_stream.h"
#include "server/rpc/interest_stream.h"
#include "server/rpc/query_stream.h"
#include "server/rpc/scene_info.h"
#include "server/rpc/scene_transfer_stream.h"
#include "server/rpc/stream_lifecycle.h"
#include "server/rpc/update_stream.h"
#include "server/rpc/version_wait.h"
#include "server/rpc/watch_stream.h"
#include "spdlog/spdlog.h"

namespace collide {
namespace {

using BidiReactor = grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>;
using WriteReactor = grpc::ServerWriteReactor<grpc::ByteBuffer>;
using ReadReactor = grpc::ServerReadReactor<grpc::ByteBuffer>;

// Logs the failures that are the server's, not the caller's.
void LogServerError(absl::string_view rpc, const absl::Status& status) {
  // A write to a scene that moved away is the client's to redirect.
  if (!MovedToOf(status).empty()) return;
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

// Ends `call` with `status`, logging the server's own failures.
template <typename Request, typename Response>
void FinishCall(UnaryCall<Request, Response>* call, absl::string_view rpc,
                const absl::Status& status) {
  LogServerError(rpc, status);
  call->Finish(status);
}

// Applies a unary write's batch to `db` and finishes the call from the store's callback, with
// the store's errors about an op named in the request's words (`ops`).
// Counts the outcome in `counters` when not null; a write slower than --slow_update_ms from
// `start` (the handler's start; `convert` of it spent building `batch`; both read only while
// the log is on, see WriteClock) goes to the slow-update log.
template <typename Request>
void ApplyWrite(const ServiceContext& context, UnaryCall<Request, v1::WriteResponse>* call,
                absl::string_view rpc, const UpdateBatch& batch, RequestLayout layout,
                std::chrono::steady_clock::time_point start, std::chrono::nanoseconds convert) {
  ServiceCounters* const counters = context.counters;
  const SlowUpdateLog* const slow =
      context.slow_updates.enabled() ? &context.slow_updates : nullptr;
  const ServiceCounters::OpCounts op_counts =
      counters != nullptr ? ServiceCounters::CountOps(batch) : ServiceCounters::OpCounts{};
  context.db->Apply(
      call->request().scene(), ClientTag{}, batch,
      [call, rpc, layout, counters, op_counts, slow, start, convert,
       ops = batch.ops.size()](absl::StatusOr<ApplyAck> ack) {
        if (counters != nullptr) {
          counters->CountUpdate(ack.status(), ack.ok() && ack->duplicate, op_counts);
        }
        if (slow != nullptr) {
          slow->Record(
              rpc, call->request().scene(), ops, ack.status(), ack.ok() ? ack->version : 0,
              std::chrono::steady_clock::now() - start,
              UpdateTimings{.convert = convert, .apply = ack.ok() ? ack->timings : std::nullopt});
        }
        if (ack.ok()) {
          call->response()->set_version(ack->version);
          call->response()->set_durable(ack->durable);
        }
        FinishCall(call, rpc, ForRequest(ack.status(), layout));
      },
      /*timed=*/slow != nullptr);
}

// The clock of a unary write's slow-update timing: now, while the log is on; else a zero time
// (nothing is timed).
std::chrono::steady_clock::time_point WriteClock(const ServiceContext& context) {
  return context.slow_updates.enabled() ? std::chrono::steady_clock::now()
                                        : std::chrono::steady_clock::time_point();
}

// Registers a stream of `kind` with the server's StreamRegistry (a null handle when it has
// none); RESOURCE_EXHAUSTED when max_streams are open.
absl::StatusOr<std::unique_ptr<StreamHandle>> OpenStream(const ServiceContext& context,
                                                         StreamKind kind,
                                                         grpc::CallbackServerContext* call) {
  if (context.streams == nullptr) return std::unique_ptr<StreamHandle>();
  return context.streams->Open(kind, call);
}

// The Query.kind name of a unary query rpc's one query (slow_query_log.h).
absl::string_view UnaryQueryKind(absl::string_view rpc) {
  if (rpc == "Raycast") return "raycast 1";
  if (rpc == "SphereCast") return "sphere_cast 1";
  return "overlap 1";
}

}  // namespace

CollideService::CollideService(ServiceContext context) : context_(std::move(context)) {}

absl::StatusOr<const Principal*> CollideService::Authorize(grpc::CallbackServerContext* call,
                                                           Role role) const {
  if (absl::Status s = CheckMetadataSize(call->client_metadata(), context_.max_metadata_bytes);
      !s.ok()) {
    return s;
  }
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

grpc::ServerUnaryReactor* CollideService::CreateScene(grpc::CallbackServerContext* context,
                                                      const grpc::ByteBuffer* in,
                                                      grpc::ByteBuffer* out) {
  using Call = UnaryCall<v1::CreateSceneRequest, v1::CreateSceneResponse>;
  return Call::Start(context, in, out, [this](Call* call) {
    const v1::CreateSceneRequest& request = call->request();
    absl::StatusOr<const Principal*> principal =
        AuthorizeScene(call->context(), Role::kAdmin, request.scene());
    if (!principal.ok()) return FinishCall(call, "CreateScene", principal.status());
    if (absl::Status s = (*principal)->CheckScene(request.scene()); !s.ok()) {
      return FinishCall(call, "CreateScene", s);
    }
    absl::StatusOr<SceneOptions> options =
        SceneOptionsFromProto(request.options(), context_.limits);
    if (!options.ok()) return FinishCall(call, "CreateScene", options.status());
    const SceneOptions resolved = *options;
    const bool replicated = resolved.durability == DurabilityPolicy::kReplicated ||
                            (resolved.durability == DurabilityPolicy::kDefault &&
                             context_.default_durability == DurabilityPolicy::kReplicated);
    if (replicated && context_.replication == nullptr) {
      return FinishCall(call, "CreateScene",
                        InvalidFieldError("options.durability",
                                          "replicated needs a server started with --nats_url"));
    }
    auto created = [this, call, resolved](absl::Status status) {
      const std::string& name = call->request().scene();
      if (status.ok()) {
        spdlog::info(
            "created scene \"{}\" (fat_margin {}, max_bodies {}, durability {})", name,
            resolved.fat_margin, resolved.max_bodies,
            std::string(DurabilityPolicyName(resolved.durability == DurabilityPolicy::kDefault
                                                 ? context_.default_durability
                                                 : resolved.durability)));
        absl::StatusOr<std::shared_ptr<const Scene>> scene = context_.db->GetScene(name);
        if (scene.ok()) {
          DescribeScene(context_, **scene, call->response()->mutable_scene());
        } else {
          // Deleted meanwhile: report what was created.
          call->response()->mutable_scene()->set_name(name);
        }
      }
      FinishCall(call, "CreateScene", status);
    };
    if (replicated) {
      // Its stream and owner key first, on the replication's workers; then the scene here.
      return context_.replication->CreateScene(request.scene(), resolved, std::move(created));
    }
    context_.db->CreateScene(
        request.scene(), resolved,
        [this, call, created = std::move(created)](absl::Status status) mutable {
          // The router sends the scene's calls here (no need to wait: its
          // hash already does, or the map's sync will).
          if (status.ok() && context_.router != nullptr) {
            context_.router->Claim(call->request().scene(), nullptr);
          }
          created(status);
        });
  });
}

grpc::ServerUnaryReactor* CollideService::DeleteScene(grpc::CallbackServerContext* context,
                                                      const grpc::ByteBuffer* in,
                                                      grpc::ByteBuffer* out) {
  using Call = UnaryCall<v1::DeleteSceneRequest, v1::DeleteSceneResponse>;
  return Call::Start(context, in, out, [this](Call* call) {
    const v1::DeleteSceneRequest& request = call->request();
    absl::StatusOr<const Principal*> principal =
        AuthorizeScene(call->context(), Role::kAdmin, request.scene());
    if (!principal.ok()) return FinishCall(call, "DeleteScene", principal.status());
    if (absl::Status s = (*principal)->CheckScene(request.scene()); !s.ok()) {
      return FinishCall(call, "DeleteScene", s);
    }
    context_.db->DeleteScene(request.scene(), [this, call](absl::Status status) {
      if (status.ok()) spdlog::info("deleted scene \"{}\"", call->request().scene());
      FinishCall(call, "DeleteScene", status);
    });
  });
}

grpc::ServerUnaryReactor* CollideService::ListScenes(grpc::CallbackServerContext* context,
                                                     const grpc::ByteBuffer* in,
                                                     grpc::ByteBuffer* out) {
  using Call = UnaryCall<v1::ListScenesRequest, v1::ListScenesResponse>;
  return Call::Start(context, in, out, [this](Call* call) {
    absl::StatusOr<const Principal*> principal = Authorize(call->context(), Role::kReader);
    if (!principal.ok()) return FinishCall(call, "ListScenes", principal.status());
    FinishCall(call, "ListScenes", DoListScenes(**principal, call->response()));
  });
}

absl::Status CollideService::DoListScenes(const Principal& principal,
                                          v1::ListScenesResponse* response) const {
  ListScenesToProto(
      *context_.db, [&](const std::string& name) { return principal.CanSee(name); },
      context_.default_durability, response);
  // Replicated scenes: their owner and this server's lag (DescribeScene's part).
  if (context_.replication != nullptr) {
    for (v1::SceneInfo& info : *response->mutable_scenes()) {
      if (info.options().durability() != v1::DURABILITY_REPLICATED) continue;
      if (std::optional<SceneReplicaFigures> figures =
              context_.replication->SceneFigures(info.name())) {
        ReplicationToProto(*figures, info.mutable_replication());
      }
    }
  }
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* CollideService::GetScene(grpc::CallbackServerContext* context,
                                                   const grpc::ByteBuffer* in,
                                                   grpc::ByteBuffer* out) {
  using Call = UnaryCall<v1::GetSceneRequest, v1::GetSceneResponse>;
  return Call::Start(context, in, out, [this](Call* call) {
    absl::StatusOr<const Principal*> principal =
        AuthorizeScene(call->context(), Role::kReader, call->request().scene());
    if (!principal.ok()) return FinishCall(call, "GetScene", principal.status());
    FinishCall(call, "GetScene", DoGetScene(**principal, call->request(), call->response()));
  });
}

absl::Status CollideService::DoGetScene(const Principal& principal,
                                        const v1::GetSceneRequest& request,
                                        v1::GetSceneResponse* response) const {
  if (absl::Status s = principal.CheckScene(request.scene()); !s.ok()) return s;
  absl::StatusOr<std::shared_ptr<const Scene>> scene = context_.db->GetScene(request.scene());
  if (!scene.ok()) return scene.status();
  DescribeScene(context_, **scene, response->mutable_scene());
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Bodies.

grpc::ServerUnaryReactor* CollideService::UpsertBodies(grpc::CallbackServerContext* context,
                                                       const grpc::ByteBuffer* in,
                                                       grpc::ByteBuffer* out) {
  using Call = UnaryCall<v1::UpsertBodiesRequest, v1::WriteResponse>;
  return Call::Start(context, in, out, [this](Call* call) {
    const v1::UpsertBodiesRequest& request = call->request();
    absl::StatusOr<const Principal*> principal =
        AuthorizeScene(call->context(), Role::kWriter, request.scene());
    if (!principal.ok()) return FinishCall(call, "UpsertBodies", principal.status());
    if (absl::Status s = (*principal)->CheckScene(request.scene()); !s.ok()) {
      return FinishCall(call, "UpsertBodies", s);
    }
    const auto start = WriteClock(context_);
    UpdateBatch batch;
    if (absl::Status s = UpsertRequestToBatch(request, context_.limits, &batch); !s.ok()) {
      return FinishCall(call, "UpsertBodies", s);
    }
    ApplyWrite(context_, call, "UpsertBodies", batch,
               RequestLayout{.kind = RequestLayout::Kind::kUpsertBodies}, start,
               WriteClock(context_) - start);
  });
}

grpc::ServerUnaryReactor* CollideService::RemoveBodies(grpc::CallbackServerContext* context,
                                                       const grpc::ByteBuffer* in,
                                                       grpc::ByteBuffer* out) {
  using Call = UnaryCall<v1::RemoveBodiesRequest, v1::WriteResponse>;
  return Call::Start(context, in, out, [this](Call* call) {
    const v1::RemoveBodiesRequest& request = call->request();
    absl::StatusOr<const Principal*> principal =
        AuthorizeScene(call->context(), Role::kWriter, request.scene());
    if (!principal.ok()) return FinishCall(call, "RemoveBodies", principal.status());
    if (absl::Status s = (*principal)->CheckScene(request.scene()); !s.ok()) {
      return FinishCall(call, "RemoveBodies", s);
    }
    const auto start = WriteClock(context_);
    UpdateBatch batch;
    if (absl::Status s = RemoveRequestToBatch(request, context_.limits, &batch); !s.ok()) {
      return FinishCall(call, "RemoveBodies", s);
    }
    ApplyWrite(context_, call, "RemoveBodies", batch,
               RequestLayout{.kind = RequestLayout::Kind::kRemoveBodies}, start,
               WriteClock(context_) - start);
  });
}

grpc::ServerUnaryReactor* CollideService::GetBodies(grpc::CallbackServerContext* context,
                                                    const grpc::ByteBuffer* in,
                                                    grpc::ByteBuffer* out) {
  using Call = UnaryCall<v1::GetBodiesRequest, v1::GetBodiesResponse>;
  return Call::Start(context, in, out, [this](Call* call) {
    absl::StatusOr<const Principal*> principal =
        AuthorizeScene(call->context(), Role::kReader, call->request().scene());
    if (!principal.ok()) return FinishCall(call, "GetBodies", principal.status());
    FinishCall(call, "GetBodies", DoGetBodies(**principal, call->request(), call->response()));
  });
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

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* CollideService::UpdateStream(
    grpc::CallbackServerContext* call) {
  absl::StatusOr<const Principal*> principal = Authorize(call, Role::kWriter);
  if (!principal.ok()) return new Refused<BidiReactor>(principal.status());
  absl::StatusOr<std::unique_ptr<StreamHandle>> stream =
      OpenStream(context_, StreamKind::kUpdate, call);
  if (!stream.ok()) return new Refused<BidiReactor>(stream.status());
  return new UpdateStreamReactor(context_, *principal, SceneHeaderOf(call->client_metadata()),
                                 *std::move(stream));
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* CollideService::QueryStream(
    grpc::CallbackServerContext* call) {
  absl::StatusOr<const Principal*> principal = Authorize(call, Role::kReader);
  if (!principal.ok()) return new Refused<BidiReactor>(principal.status());
  absl::StatusOr<std::unique_ptr<StreamHandle>> stream =
      OpenStream(context_, StreamKind::kQuery, call);
  if (!stream.ok()) return new Refused<BidiReactor>(stream.status());
  return new QueryStreamReactor(context_, *principal, SceneHeaderOf(call->client_metadata()),
                                call->deadline(), *std::move(stream));
}

// ---------------------------------------------------------------------------------------------
// Standing queries.

grpc::ServerWriteReactor<grpc::ByteBuffer>* CollideService::Watch(grpc::CallbackServerContext* call,
                                                                  const grpc::ByteBuffer* in) {
  v1::WatchRequest request;
  grpc::ByteBuffer bytes(*in);
  if (absl::Status s = ParseMessage(&bytes, &request, "request"); !s.ok()) {
    return new Refused<WriteReactor>(s);
  }
  // AuthorizeScene also checks the x-collide-scene routing header against the request's scene.
  absl::StatusOr<const Principal*> principal = AuthorizeScene(call, Role::kReader, request.scene());
  if (!principal.ok()) return new Refused<WriteReactor>(principal.status());
  // Counted in --max_streams and --max_watch_streams, and watched for stalls, like every stream.
  absl::StatusOr<std::unique_ptr<StreamHandle>> stream =
      OpenStream(context_, StreamKind::kWatch, call);
  if (!stream.ok()) return new Refused<WriteReactor>(stream.status());
  return new WatchReactor(context_, *principal, request, *std::move(stream));
}

// ---------------------------------------------------------------------------------------------
// Interest management.

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* CollideService::Interest(
    grpc::CallbackServerContext* call) {
  absl::StatusOr<const Principal*> principal = Authorize(call, Role::kReader);
  if (!principal.ok()) return new Refused<BidiReactor>(principal.status());
  // Counted in --max_streams and --max_interest_streams, and watched for stalls, like every
  // stream; the scene comes with the first message.
  absl::StatusOr<std::unique_ptr<StreamHandle>> stream =
      OpenStream(context_, StreamKind::kInterest, call);
  if (!stream.ok()) return new Refused<BidiReactor>(stream.status());
  return new InterestReactor(context_, *principal, SceneHeaderOf(call->client_metadata()),
                             *std::move(stream));
}

// ---------------------------------------------------------------------------------------------
// Moving scenes.

grpc::ServerWriteReactor<grpc::ByteBuffer>* CollideService::ExportScene(
    grpc::CallbackServerContext* call, const grpc::ByteBuffer* in) {
  v1::ExportSceneRequest request;
  grpc::ByteBuffer bytes(*in);
  if (absl::Status s = ParseMessage(&bytes, &request, "request"); !s.ok()) {
    return new Refused<WriteReactor>(s);
  }
  absl::StatusOr<const Principal*> principal = AuthorizeScene(call, Role::kAdmin, request.scene());
  if (!principal.ok()) return new Refused<WriteReactor>(principal.status());
  // Counted in --max_streams and watched for stalls, like every stream.
  absl::StatusOr<std::unique_ptr<StreamHandle>> stream =
      OpenStream(context_, StreamKind::kExport, call);
  if (!stream.ok()) return new Refused<WriteReactor>(stream.status());
  return new ExportReactor(context_, *principal, request, *std::move(stream));
}

grpc::ServerReadReactor<grpc::ByteBuffer>* CollideService::ImportScene(
    grpc::CallbackServerContext* call, grpc::ByteBuffer* response) {
  absl::StatusOr<const Principal*> principal = Authorize(call, Role::kAdmin);
  if (!principal.ok()) return new Refused<ReadReactor>(principal.status());
  // Counted in --max_streams and --max_concurrent_imports (each import buffers its scene), and
  // watched for a client that stops sending.
  absl::StatusOr<std::unique_ptr<StreamHandle>> stream =
      OpenStream(context_, StreamKind::kImport, call);
  if (!stream.ok()) return new Refused<ReadReactor>(stream.status());
  return new ImportReactor(context_, call, *principal, SceneHeaderOf(call->client_metadata()),
                           response, *std::move(stream));
}

grpc::ServerUnaryReactor* CollideService::SetSceneMoving(grpc::CallbackServerContext* context,
                                                         const grpc::ByteBuffer* in,
                                                         grpc::ByteBuffer* out) {
  using Call = UnaryCall<v1::SetSceneMovingRequest, v1::SetSceneMovingResponse>;
  return Call::Start(context, in, out, [this](Call* call) {
    const v1::SetSceneMovingRequest& request = call->request();
    absl::StatusOr<const Principal*> principal =
        AuthorizeScene(call->context(), Role::kAdmin, request.scene());
    if (!principal.ok()) return FinishCall(call, "SetSceneMoving", principal.status());
    if (absl::Status s = (*principal)->CheckScene(request.scene()); !s.ok()) {
      return FinishCall(call, "SetSceneMoving", s);
    }
    if (absl::Status s = ValidateSceneName(request.scene()); !s.ok()) {
      return FinishCall(call, "SetSceneMoving", s);
    }
    if (request.clear() && !request.destination().empty()) {
      return FinishCall(call, "SetSceneMoving",
                        absl::InvalidArgumentError("destination: must be empty with clear"));
    }
    if (!request.clear()) {
      if (absl::Status s = ValidateMoveDestination(request.destination()); !s.ok()) {
        return FinishCall(call, "SetSceneMoving", s);
      }
    }
    context_.db->SetSceneMoving(
        request.scene(), request.destination(), [this, call](absl::Status status) {
          const v1::SetSceneMovingRequest& request = call->request();
          if (status.ok()) {
            if (request.clear()) {
              spdlog::info("scene \"{}\" is no longer moving", request.scene());
            } else {
              spdlog::info("scene \"{}\" is moving to {}: writes are refused", request.scene(),
                           request.destination());
            }
            absl::StatusOr<std::shared_ptr<const Scene>> scene =
                context_.db->GetScene(request.scene());
            if (scene.ok()) {
              DescribeScene(context_, **scene, call->response()->mutable_scene());
            } else {
              call->response()->mutable_scene()->set_name(request.scene());
            }
          }
          FinishCall(call, "SetSceneMoving", status);
        });
  });
}

// ---------------------------------------------------------------------------------------------
// Level geometry.

grpc::ServerReadReactor<grpc::ByteBuffer>* CollideService::UploadAsset(
    grpc::CallbackServerContext* call, grpc::ByteBuffer* response) {
  absl::StatusOr<const Principal*> principal = Authorize(call, Role::kWriter);
  if (!principal.ok()) return new Refused<ReadReactor>(principal.status());
  // Counted in --max_streams and, with the imports, --max_concurrent_imports (each holds its
  // asset's content until its end), and watched for a client that stops sending.
  absl::StatusOr<std::unique_ptr<StreamHandle>> stream =
      OpenStream(context_, StreamKind::kUpload, call);
  if (!stream.ok()) return new Refused<ReadReactor>(stream.status());
  return new UploadReactor(context_, call, *principal, SceneHeaderOf(call->client_metadata()),
                           response, *std::move(stream));
}

grpc::ServerUnaryReactor* CollideService::ListAssets(grpc::CallbackServerContext* context,
                                                     const grpc::ByteBuffer* in,
                                                     grpc::ByteBuffer* out) {
  using Call = UnaryCall<v1::ListAssetsRequest, v1::ListAssetsResponse>;
  return Call::Start(context, in, out, [this](Call* call) {
    absl::StatusOr<const Principal*> principal =
        AuthorizeScene(call->context(), Role::kReader, call->request().scene());
    if (!principal.ok()) return FinishCall(call, "ListAssets", principal.status());
    FinishCall(call, "ListAssets", DoListAssets(**principal, call->request(), call->response()));
  });
}

absl::Status CollideService::DoListAssets(const Principal& principal,
                                          const v1::ListAssetsRequest& request,
                                          v1::ListAssetsResponse* response) const {
  if (absl::Status s = principal.CheckScene(request.scene()); !s.ok()) return s;
  absl::StatusOr<std::shared_ptr<const Scene>> scene = context_.db->GetScene(request.scene());
  if (!scene.ok()) return scene.status();
  for (const SceneAssetInfo& info : (*scene)->ListAssets()) {
    AssetInfoToProto(info.name, *info.asset, info.body_count, response->add_assets());
  }
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* CollideService::DeleteAsset(grpc::CallbackServerContext* context,
                                                      const grpc::ByteBuffer* in,
                                                      grpc::ByteBuffer* out) {
  using Call = UnaryCall<v1::DeleteAssetRequest, v1::DeleteAssetResponse>;
  return Call::Start(context, in, out, [this](Call* call) {
    const v1::DeleteAssetRequest& request = call->request();
    absl::StatusOr<const Principal*> principal =
        AuthorizeScene(call->context(), Role::kWriter, request.scene());
    if (!principal.ok()) return FinishCall(call, "DeleteAsset", principal.status());
    if (absl::Status s = (*principal)->CheckScene(request.scene()); !s.ok()) {
      return FinishCall(call, "DeleteAsset", s);
    }
    if (absl::Status s = ValidateSceneName(request.scene()); !s.ok()) {
      return FinishCall(call, "DeleteAsset", s);
    }
    if (absl::Status s = ValidateAssetName(request.name()); !s.ok()) {
      return FinishCall(call, "DeleteAsset", s);
    }
    context_.db->DeleteAsset(request.scene(), request.name(), [call](absl::Status status) {
      if (status.ok()) {
        spdlog::info("scene \"{}\": deleted asset \"{}\"", call->request().scene(),
                     call->request().name());
      }
      FinishCall(call, "DeleteAsset", status);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Unary queries.

template <typename Request>
void CollideService::UnaryQuery(UnaryCall<Request, v1::QueryResponse>* call, QueryRpc rpc_kind,
                                absl::string_view rpc, absl::string_view query_root,
                                absl::StatusOr<Query> (*convert)(const Request&)) {
  const Request& request = call->request();
  absl::StatusOr<const Principal*> principal =
      AuthorizeScene(call->context(), Role::kReader, request.scene());
  if (!principal.ok()) return FinishCall(call, rpc, principal.status());
  auto run = [this, principal = *principal, call, convert, rpc_kind, rpc, query_root] {
    const bool timed = context_.slow_queries.enabled();
    const auto start =
        timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    absl::StatusOr<Query> query = convert(call->request());
    if (query.ok()) {
      if (absl::Status s = PrepareQuery(&*query, QueryLimitsOf(context_.limits), 0); !s.ok()) {
        query = s;
      }
    }
    const bool counted = context_.counters != nullptr && query.ok();
    const size_t kind = counted ? query->shape_query.index() : 0;
    const CollectMode mode = counted ? query->mode : CollectMode{};
    absl::Status status = ForRequest(
        DoQuery(*principal, call->request().scene(), std::move(query), call->response()),
        RequestLayout{.kind = RequestLayout::Kind::kUnaryQuery, .query_root = query_root});
    if (counted && status.ok()) {
      context_.counters->CountQuery(rpc_kind, kind, mode,
                                    static_cast<uint64_t>(call->response()->hits_size()));
    }
    if (timed && status.ok()) {
      context_.slow_queries.Record(rpc, call->request().scene(), 1, UnaryQueryKind(rpc),
                                   std::chrono::steady_clock::now() - start,
                                   call->response()->version());
    }
    return status;
  };
  const uint64_t min_version = request.min_version();
  std::shared_ptr<const Scene> scene;
  if (min_version > 0 && (*principal)->CheckScene(request.scene()).ok()) {
    absl::StatusOr<std::shared_ptr<const Scene>> found = context_.db->GetScene(request.scene());
    if (found.ok()) scene = *std::move(found);
  }
  if (scene == nullptr || scene->version() >= min_version) return FinishCall(call, rpc, run());
  // The call finishes from the wait's callback; it stays alive until then.
  VersionWait::Start(
      std::move(scene), min_version,
      VersionWaitDeadline(call->context()->deadline(), context_.limits.max_version_wait_ms),
      [call, rpc, run](absl::Status wait) { FinishCall(call, rpc, wait.ok() ? run() : wait); });
}

absl::Status CollideService::DoQuery(const Principal& principal, absl::string_view scene_name,
                                     absl::StatusOr<Query> query,
                                     v1::QueryResponse* response) const {
  if (absl::Status s = principal.CheckScene(scene_name); !s.ok()) return s;
  if (!query.ok()) return query.status();
  absl::StatusOr<std::shared_ptr<const Scene>> scene = context_.db->GetScene(scene_name);
  if (!scene.ok()) return scene.status();
  // Reused by each thread from call to call: no allocation per query once grown (the hits up to
  // kKeptScratchBytes).
  thread_local std::vector<absl::Status> status;
  thread_local std::vector<QueryResult> results;
  thread_local std::vector<QueryHit> hits;
  const std::span<const Query> queries(&*query, 1);
  const uint64_t version = AnswerQueries(**scene, queries, {}, &status, &results, &hits);
  if (context_.query_samples != nullptr) {
    context_.query_samples->Offer(scene->get(), version, queries, status, results, hits);
  }
  if (!status[0].ok()) return std::move(status[0]);
  const QueryResult& result = results[0];
  response->set_version(version);
  response->set_truncated(result.truncated);
  for (uint32_t h = 0; h < result.hit_count; ++h) {
    HitToProto(hits[result.first_hit + h], response->add_hits());
  }
  // A query allowed a large max_hits (--max_hits) must not pin its hits for the thread's life.
  ReleaseIfLarger(hits);
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* CollideService::Raycast(grpc::CallbackServerContext* context,
                                                  const grpc::ByteBuffer* in,
                                                  grpc::ByteBuffer* out) {
  using Call = UnaryCall<v1::RaycastRequest, v1::QueryResponse>;
  return Call::Start(context, in, out, [this](Call* call) {
    UnaryQuery(call, QueryRpc::kRaycast, "Raycast", "ray", &RaycastRequestToQuery);
  });
}

grpc::ServerUnaryReactor* CollideService::SphereCast(grpc::CallbackServerContext* context,
                                                     const grpc::ByteBuffer* in,
                                                     grpc::ByteBuffer* out) {
  using Call = UnaryCall<v1::SphereCastRequest, v1::QueryResponse>;
  return Call::Start(context, in, out, [this](Call* call) {
    UnaryQuery(call, QueryRpc::kSphereCast, "SphereCast", "cast", &SphereCastRequestToQuery);
  });
}

grpc::ServerUnaryReactor* CollideService::Overlap(grpc::CallbackServerContext* context,
                                                  const grpc::ByteBuffer* in,
                                                  grpc::ByteBuffer* out) {
  using Call = UnaryCall<v1::OverlapRequest, v1::QueryResponse>;
  return Call::Start(context, in, out, [this](Call* call) {
    UnaryQuery(call, QueryRpc::kOverlap, "Overlap", "overlap", &OverlapRequestToQuery);
  });
}

// ---------------------------------------------------------------------------------------------
// Server statistics.

grpc::ServerUnaryReactor* CollideService::GetServerStats(grpc::CallbackServerContext* context,
                                                         const grpc::ByteBuffer* in,
                                                         grpc::ByteBuffer* out) {
  using Call = UnaryCall<v1::GetServerStatsRequest, v1::GetServerStatsResponse>;
  return Call::Start(context, in, out, [this](Call* call) {
    absl::StatusOr<const Principal*> principal = Authorize(call->context(), Role::kAdmin);
    if (!principal.ok()) return FinishCall(call, "GetServerStats", principal.status());
    DoGetServerStats(**principal, call->request(), call->response());
    FinishCall(call, "GetServerStats", absl::OkStatus());
  });
}

void CollideService::DoGetServerStats(const Principal& principal,
                                      const v1::GetServerStatsRequest& request,
                                      v1::GetServerStatsResponse* response) const {
  response->set_server_version(kVersion);
  response->set_server_commit(kCommit);
  response->set_build_type(kBuildType);
  const absl::Time now = absl::Now();
  response->set_start_time_unix_seconds(absl::ToUnixSeconds(start_time_));
  response->set_uptime_seconds(
      static_cast<uint64_t>(std::max<int64_t>(0, absl::ToInt64Seconds(now - start_time_))));
  response->set_resident_memory_bytes(ResidentMemoryBytes());
  const uint32_t max_scenes = request.has_max_scenes()
                                  ? std::min(request.max_scenes(), kMaxStatsScenes)
                                  : kDefaultStatsScenes;
  uint32_t omitted = 0;
  for (const std::string& name : context_.db->SceneNames()) {
    if (!principal.CanSee(name)) continue;
    if (static_cast<uint32_t>(response->scene_stats_size()) >= max_scenes) {
      ++omitted;
      continue;
    }
    absl::StatusOr<std::shared_ptr<const Scene>> scene = context_.db->GetScene(name);
    if (!scene.ok()) continue;  // deleted meanwhile
    const SceneStats stats = (*scene)->Stats();
    v1::ServerSceneStats* out = response->add_scene_stats();
    out->set_name(name);
    out->set_body_count(static_cast<uint32_t>(stats.body_count));
    out->set_static_body_count(static_cast<uint32_t>(stats.static_body_count));
    out->set_version(stats.version);
    out->set_tick(stats.tick);
    out->set_memory_bytes(stats.memory_bytes);
    out->set_history_bytes(stats.history_bytes);
    out->set_log_bytes(context_.db->SceneLogBytes(name));
    out->set_asset_count(stats.asset_count);
    out->set_asset_triangles(stats.asset_triangles);
    out->set_asset_bytes(stats.asset_bytes);
    out->set_asset_memory_bytes(stats.asset_memory_bytes);
    if (context_.replication != nullptr &&
        (*scene)->options().durability == DurabilityPolicy::kReplicated) {
      if (std::optional<SceneReplicaFigures> figures = context_.replication->SceneFigures(name)) {
        ReplicationToProto(*figures, out->mutable_replication());
      }
    }
  }
  response->set_scenes_omitted(omitted);
  if (context_.streams != nullptr) {
    const StreamStats streams = context_.streams->stats();
    response->set_update_streams(streams.update_streams);
    response->set_query_streams(streams.query_streams);
    response->set_streams_opened(streams.opened);
    response->set_streams_refused(streams.refused);
    response->set_streams_stalled(streams.stalled);
    response->set_outbound_bytes(streams.outbound_bytes);
    response->set_watch_streams(streams.watch_streams);
    response->set_export_streams(streams.export_streams);
    response->set_import_streams(streams.import_streams);
    response->set_interest_streams(streams.interest_streams);
    response->set_upload_streams(streams.upload_streams);
  }
  const StoredAssets assets = context_.db->stored_assets();
  response->set_assets(assets.contents);
  response->set_asset_triangles(assets.triangles);
  response->set_asset_bytes(assets.source_bytes);
  response->set_asset_memory_bytes(assets.memory_bytes);
  if (context_.watches != nullptr) {
    WatchBudget& budget = context_.watches->budget();
    response->set_watch_fences(budget.fences.used());
    response->set_watch_contents(budget.contents.used());
    response->set_watch_queued_bytes(budget.queued_bytes.used());
    response->set_watch_backlog_bytes(budget.backlog_bytes.used());
    response->set_watch_resyncs(budget.resyncs.load(std::memory_order_relaxed));
    response->set_watch_exhausted(budget.exhausted.load(std::memory_order_relaxed));
    response->set_interest_observers(budget.observers.used());
  }
  response->set_scenes(static_cast<uint32_t>(context_.db->scene_count()));
  const StoreStats store = context_.db->stats();
  response->set_sync_lag_us(static_cast<uint64_t>(store.last_sync_lag.count()));
  response->set_max_sync_lag_us(static_cast<uint64_t>(store.max_sync_lag.count()));
  const absl::Status writable = context_.db->write_status();
  response->set_writable(writable.ok());
  if (!writable.ok()) response->set_write_error(std::string(writable.message()));
  response->set_server_address(context_.address);
  // Present either way (enabled false without --nats_url), so that every field is answered.
  v1::ReplicationStats* out = response->mutable_replication();
  if (context_.replication != nullptr) {
    const ReplicationFigures figures = context_.replication->Figures();
    out->set_enabled(true);
    out->set_connected(figures.connected);
    out->set_address(figures.address);
    out->set_owned_scenes(figures.owned);
    out->set_followed_scenes(figures.followed);
    out->set_takeovers(figures.takeovers);
    out->set_depositions(figures.depositions);
    out->set_rebuilds(figures.rebuilds);
    out->set_records_published(figures.records_published);
    out->set_records_applied(figures.records_applied);
    out->set_snapshots_published(figures.snapshots_published);
  }
}

}  // namespace collide
