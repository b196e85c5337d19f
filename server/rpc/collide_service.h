#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "collide/v1/collide.grpc.pb.h"
#include "collide/v1/collide.pb.h"
#include "grpcpp/support/server_callback.h"
#include "query/batch.h"
#include "server/infra/auth.h"
#include "server/rpc/unary_call.h"
#include "server/service_context.h"

namespace collide {

/// Every method of collide.v1.Collide in its raw form: requests arrive as bytes that the service
/// parses itself (wire_message.h), so that a malformed message is INVALID_ARGUMENT, never a
/// silent end of stream or UNIMPLEMENTED.
using RawCollideServiceBase = v1::Collide::WithRawCallbackMethod_CreateScene<
    v1::Collide::WithRawCallbackMethod_DeleteScene<v1::Collide::WithRawCallbackMethod_ListScenes<
        v1::Collide::WithRawCallbackMethod_GetScene<v1::Collide::WithRawCallbackMethod_UpsertBodies<
            v1::Collide::WithRawCallbackMethod_RemoveBodies<
                v1::Collide::WithRawCallbackMethod_GetBodies<
                    v1::Collide::WithRawCallbackMethod_UpdateStream<
                        v1::Collide::WithRawCallbackMethod_QueryStream<
                            v1::Collide::WithRawCallbackMethod_Raycast<
                                v1::Collide::WithRawCallbackMethod_SphereCast<
                                    v1::Collide::WithRawCallbackMethod_Overlap<
                                        v1::Collide::WithRawCallbackMethod_Watch<
                                            v1::Collide::WithRawCallbackMethod_GetServerStats<
                                                v1::Collide::Service>>>>>>>>>>>>>>;
/// With the rpcs that move scenes (ExportScene, ImportScene, SetSceneMoving).
using RawCollideServiceWithTransfer =
    v1::Collide::WithRawCallbackMethod_ExportScene<v1::Collide::WithRawCallbackMethod_ImportScene<
        v1::Collide::WithRawCallbackMethod_SetSceneMoving<RawCollideServiceBase>>>;
/// With interest management (Interest).
using RawCollideServiceWithInterest =
    v1::Collide::WithRawCallbackMethod_Interest<RawCollideServiceWithTransfer>;
/// With the rpcs of level geometry (UploadAsset, ListAssets, DeleteAsset).
using RawCollideService =
    v1::Collide::WithRawCallbackMethod_UploadAsset<v1::Collide::WithRawCallbackMethod_ListAssets<
        v1::Collide::WithRawCallbackMethod_DeleteAsset<RawCollideServiceWithInterest>>>;

/// The collide.v1.Collide service over a Database (callback API). Handlers are thin: each unary
/// call arrives as a UnaryCall (unary_call.h) holding the parsed request; the handler
/// authenticates it, checks the x-collide-scene header of a call naming a scene
/// (scene_header.h), then delegates to a function returning absl::Status that validates
/// and converts at the edge (scene_convert.h, update_convert.h, query_convert.h); the status
/// becomes the call's status in one place (status_convert.h). Unary writes finish from the store's
/// acknowledgement; the streams are UpdateStreamReactor, QueryStreamReactor, WatchReactor and
/// InterestReactor.
class CollideService final : public RawCollideService {
 public:
  /// `context`'s pointers must outlive the service.
  explicit CollideService(ServiceContext context);

  grpc::ServerUnaryReactor* CreateScene(grpc::CallbackServerContext* call,
                                        const grpc::ByteBuffer* request,
                                        grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* DeleteScene(grpc::CallbackServerContext* call,
                                        const grpc::ByteBuffer* request,
                                        grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* ListScenes(grpc::CallbackServerContext* call,
                                       const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* GetScene(grpc::CallbackServerContext* call,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* UpsertBodies(grpc::CallbackServerContext* call,
                                         const grpc::ByteBuffer* request,
                                         grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* RemoveBodies(grpc::CallbackServerContext* call,
                                         const grpc::ByteBuffer* request,
                                         grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* GetBodies(grpc::CallbackServerContext* call,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* UpdateStream(
      grpc::CallbackServerContext* call) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* QueryStream(
      grpc::CallbackServerContext* call) override;
  grpc::ServerUnaryReactor* Raycast(grpc::CallbackServerContext* call,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* SphereCast(grpc::CallbackServerContext* call,
                                       const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Overlap(grpc::CallbackServerContext* call,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* GetServerStats(grpc::CallbackServerContext* call,
                                           const grpc::ByteBuffer* request,
                                           grpc::ByteBuffer* response) override;

  /// Standing queries: a WatchReactor (watch_stream.h) over the request's scene.
  grpc::ServerWriteReactor<grpc::ByteBuffer>* Watch(grpc::CallbackServerContext* call,
                                                    const grpc::ByteBuffer* request) override;

  /// Interest management: an InterestReactor (interest_stream.h) over the first message's scene.
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* Interest(
      grpc::CallbackServerContext* call) override;

  /// Moving scenes: an ExportReactor / ImportReactor (scene_transfer_stream.h). Admin.
  grpc::ServerWriteReactor<grpc::ByteBuffer>* ExportScene(grpc::CallbackServerContext* call,
                                                          const grpc::ByteBuffer* request) override;
  grpc::ServerReadReactor<grpc::ByteBuffer>* ImportScene(grpc::CallbackServerContext* call,
                                                         grpc::ByteBuffer* response) override;
  /// Marks a scene as moving, or clears the mark (Database::SetSceneMoving). Admin.
  grpc::ServerUnaryReactor* SetSceneMoving(grpc::CallbackServerContext* call,
                                           const grpc::ByteBuffer* request,
                                           grpc::ByteBuffer* response) override;

  /// Level geometry: an UploadReactor (asset_stream.h) per upload; the scene's asset table;
  /// an asset's deletion (Database::DeleteAsset). Writer, reader, writer.
  grpc::ServerReadReactor<grpc::ByteBuffer>* UploadAsset(grpc::CallbackServerContext* call,
                                                         grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* ListAssets(grpc::CallbackServerContext* call,
                                       const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* DeleteAsset(grpc::CallbackServerContext* call,
                                        const grpc::ByteBuffer* request,
                                        grpc::ByteBuffer* response) override;
  /// Every asset of one scene, sorted by name. PERMISSION_DENIED, NOT_FOUND.
  absl::Status DoListAssets(const Principal& principal, const v1::ListAssetsRequest& request,
                            v1::ListAssetsResponse* response) const;

  // The logic of the synchronous rpcs, without gRPC types (`principal` already authenticated).

  /// Every scene `principal` may see, sorted by name.
  absl::Status DoListScenes(const Principal& principal, v1::ListScenesResponse* response) const;
  /// One scene's info. PERMISSION_DENIED, NOT_FOUND.
  absl::Status DoGetScene(const Principal& principal, const v1::GetSceneRequest& request,
                          v1::GetSceneResponse* response) const;
  /// The server's build, uptime, memory and counters, and the figures of the first
  /// `request.max_scenes` scenes `principal` may see (admin; checked by the caller).
  void DoGetServerStats(const Principal& principal, const v1::GetServerStatsRequest& request,
                        v1::GetServerStatsResponse* response) const;
  /// Bodies of one scene, read at one version.
  absl::Status DoGetBodies(const Principal& principal, const v1::GetBodiesRequest& request,
                           v1::GetBodiesResponse* response) const;
  /// Authorises a unary query, converts `request` with `convert`, checks the query
  /// (PrepareQuery) and answers it (DoQuery) once the scene reached the request's min_version (at
  /// once when 0); DEADLINE_EXCEEDED when the wait passes the call's deadline or
  /// limits.max_version_wait_ms. No thread waits meanwhile (VersionWait). Errors name the
  /// request's fields, the query's kind under `query_root` (`ray.direction`).
  template <typename Request>
  void UnaryQuery(UnaryCall<Request, v1::QueryResponse>* call, QueryRpc rpc_kind,
                  absl::string_view rpc, absl::string_view query_root,
                  absl::StatusOr<Query> (*convert)(const Request&));
  /// One query against one scene version (`query` from the request's conversion).
  absl::Status DoQuery(const Principal& principal, absl::string_view scene,
                       absl::StatusOr<Query> query, v1::QueryResponse* response) const;

 private:
  // The principal of `call` if its role is at least `role`.
  absl::StatusOr<const Principal*> Authorize(grpc::CallbackServerContext* call, Role role) const;
  // Authorize, then the call's x-collide-scene header (if any) against the request's `scene`
  // (scene_header.h).
  absl::StatusOr<const Principal*> AuthorizeScene(grpc::CallbackServerContext* call, Role role,
                                                  absl::string_view scene) const;

  const ServiceContext context_;
  // When the service was built (the server's start), for GetServerStats.
  const absl::Time start_time_ = absl::Now();
};

/// The scenes GetServerStats lists when the request does not say.
inline constexpr uint32_t kDefaultStatsScenes = 100;
/// The most scenes GetServerStats lists, whatever the request says.
inline constexpr uint32_t kMaxStatsScenes = 1000;

}  // namespace collide
