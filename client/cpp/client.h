#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/cpp/client_options.h"
#include "client/cpp/interest_stream.h"
#include "client/cpp/query_stream.h"
#include "client/cpp/update_writer.h"
#include "client/cpp/watch_stream.h"
#include "collide/v1/collide.grpc.pb.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"

namespace collide::client {

/// Receives the messages of an export in order (header, chunks, trailer); an error stops the
/// export (the call is cancelled) and is returned.
using ExportSink = absl::FunctionRef<absl::Status(const v1::SceneExportMessage& message)>;
/// Yields the messages of an import in order: true with `*message` filled, false after the last
/// one, or an error (the import is then cancelled: nothing is created).
using ImportSource = absl::FunctionRef<absl::StatusOr<bool>(v1::SceneExportMessage* message)>;

/// The gRPC metadata key naming the scene of a call, so that a router can shard by scene. Every
/// call that names a scene sends it; streams are opened for one scene.
inline constexpr char kSceneHeader[] = "x-collide-scene";

/// A connection to one collide server: a typed method per rpc. Errors come back as absl::Status
/// with the server's code and message (a field path, `: `, the reason). Every call sends the
/// token, the `x-collide-scene` header of the scene it names, and has a deadline (the client's
/// default unless `call` overrides it). Thread-safe: any number of threads may call it at once,
/// and streams opened from it are independent.
class Client {
 public:
  /// Opens a channel as `options` say (lazily: the first call connects).
  static absl::StatusOr<std::unique_ptr<Client>> Connect(const ClientOptions& options);
  /// A client over an existing channel; `options` give the token and deadline.
  Client(std::shared_ptr<grpc::Channel> channel, ClientOptions options);

  /// Waits until the channel is connected, up to `timeout`. DEADLINE_EXCEEDED otherwise.
  absl::Status WaitForConnected(absl::Duration timeout);

  /// Scenes. CreateScene returns the new scene (defaults filled in).
  absl::StatusOr<v1::SceneInfo> CreateScene(const v1::CreateSceneRequest& request,
                                            const CallOptions& call = {});
  /// The same with a name and options.
  absl::StatusOr<v1::SceneInfo> CreateScene(std::string_view scene,
                                            const v1::SceneOptions& options = {},
                                            const CallOptions& call = {});
  /// Deletes a scene and its bodies.
  absl::Status DeleteScene(std::string_view scene, const CallOptions& call = {});
  /// Every scene the token may see, sorted by name.
  absl::StatusOr<std::vector<v1::SceneInfo>> ListScenes(const CallOptions& call = {});
  /// One scene's settings and counters.
  absl::StatusOr<v1::SceneInfo> GetScene(std::string_view scene, const CallOptions& call = {});

  /// The server's build, uptime, memory, stream and store counters, and per-scene figures of at
  /// most `max_scenes` scenes (the server's default of 100 when absent; at most 1000). Admin.
  absl::StatusOr<v1::GetServerStatsResponse> GetServerStats(
      std::optional<uint32_t> max_scenes = std::nullopt, const CallOptions& call = {});

  /// Bodies. Upserts are applied as one batch.
  absl::StatusOr<v1::WriteResponse> UpsertBodies(const v1::UpsertBodiesRequest& request,
                                                 const CallOptions& call = {});
  /// The same with a scene and bodies.
  absl::StatusOr<v1::WriteResponse> UpsertBodies(std::string_view scene,
                                                 std::span<const v1::Body> bodies,
                                                 const CallOptions& call = {});
  /// Removes bodies, as one batch; each must exist.
  absl::StatusOr<v1::WriteResponse> RemoveBodies(const v1::RemoveBodiesRequest& request,
                                                 const CallOptions& call = {});
  /// The same with a scene and ids.
  absl::StatusOr<v1::WriteResponse> RemoveBodies(std::string_view scene,
                                                 std::span<const uint64_t> ids,
                                                 const CallOptions& call = {});
  /// Reads the bodies `ids` (all of them when empty).
  absl::StatusOr<v1::GetBodiesResponse> GetBodies(std::string_view scene,
                                                  std::span<const uint64_t> ids = {},
                                                  const CallOptions& call = {});

  /// One-off queries.
  absl::StatusOr<v1::QueryResponse> Raycast(const v1::RaycastRequest& request,
                                            const CallOptions& call = {});
  /// A ball swept along a ray.
  absl::StatusOr<v1::QueryResponse> SphereCast(const v1::SphereCastRequest& request,
                                               const CallOptions& call = {});
  /// The bodies a posed shape overlaps.
  absl::StatusOr<v1::QueryResponse> Overlap(const v1::OverlapRequest& request,
                                            const CallOptions& call = {});

  /// Opens an UpdateStream for `scene` (sent as the `x-collide-scene` header; the server rejects
  /// batches for other scenes) whose batches carry `client_id` (0: no deduplication) and
  /// sequences from `first_sequence` on. An empty `scene` sends no header, for a stream that
  /// updates several scenes. Deadline: `call.deadline`, else options().stream_deadline. For a
  /// writer that survives server restarts, see ResilientUpdateWriter.
  absl::StatusOr<std::unique_ptr<UpdateWriter>> OpenUpdateStream(std::string_view scene,
                                                                 uint64_t client_id,
                                                                 uint64_t first_sequence = 1,
                                                                 const CallOptions& call = {});
  /// Opens a QueryStream for `scene` (empty: no header, batches may name any scene). Deadline:
  /// `call.deadline`, else options().stream_deadline. For queries from many threads batched
  /// together, see QueryBatcher.
  absl::StatusOr<std::unique_ptr<QueryStreamSession>> OpenQueryStream(std::string_view scene,
                                                                      const CallOptions& call = {});

  /// A context for a call of `scene` (empty or not a valid scene name: no scene header) with the
  /// token and the deadline of a unary call (`unary`) or a stream, as `call` overrides them. For
  /// callers of the raw stub (channel()).
  std::unique_ptr<grpc::ClientContext> NewContext(std::string_view scene, bool unary,
                                                  const CallOptions& call = {}) const;

  /// Opens a Watch on `request.scene()` (sent as the x-collide-scene header too): fences and
  /// contact watches whose events stream until the stream is cancelled or the scene deleted. A
  /// bad request ends the stream at once (the first Read returns the error). Deadline:
  /// `call.deadline`, else options().stream_deadline.
  absl::StatusOr<std::unique_ptr<WatchStream>> Watch(const v1::WatchRequest& request,
                                                     const CallOptions& call = {});

  /// Opens an interest stream on `scene` with `observers` (InterestStream::Open): their relevant
  /// sets, then deltas, observers changed on the open stream, reopened after a break.
  absl::StatusOr<std::unique_ptr<InterestStream>> OpenInterest(std::string_view scene,
                                                               std::vector<v1::Observer> observers,
                                                               InterestOptions options = {});

  /// Streams `scene` at one version into `sink` (ExportScene; admin): one header, chunks of at
  /// most `max_bodies_per_chunk` bodies (0: the server's default, 4,096), one trailer. Deadline:
  /// `call.deadline`, else options().stream_deadline.
  absl::Status ExportScene(std::string_view scene, ExportSink sink,
                           uint32_t max_bodies_per_chunk = 0, const CallOptions& call = {});
  /// Creates a scene from the messages of `source` (ImportScene; admin), all or nothing, named
  /// `scene` (empty: the name in the header); `replace` replaces a scene of that name. Returns
  /// the imported scene once the server made it durable. The first message is read before the
  /// call opens, so that the x-collide-scene header names the scene either way.
  absl::StatusOr<v1::SceneInfo> ImportScene(ImportSource source, std::string_view scene = {},
                                            bool replace = false, const CallOptions& call = {});
  /// As ImportScene with ImportSceneRequest.check_only: the server checks the messages as an
  /// import (values, counts, checksum, the target) and creates nothing. Returns the scene the
  /// import would create, or the error the import would end with.
  absl::StatusOr<v1::SceneInfo> CheckImport(ImportSource source, std::string_view scene = {},
                                            bool replace = false, const CallOptions& call = {});

  /// Marks `scene` as moving to `destination` (SetSceneMoving; admin): from the answer on, and
  /// durably, writes to it are refused with FAILED_PRECONDITION naming `destination`; queries
  /// go on. Returns the scene (moved_to set). For a whole move, see MoveScene (scene_move.h).
  absl::StatusOr<v1::SceneInfo> SetSceneMoving(std::string_view scene, std::string_view destination,
                                               const CallOptions& call = {});
  /// Clears the mark SetSceneMoving set (a failed move's rollback): writes are accepted again.
  absl::StatusOr<v1::SceneInfo> ClearSceneMoving(std::string_view scene,
                                                 const CallOptions& call = {});

  /// The channel, for callers that need the raw stub.
  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }
  /// The options the client was made with.
  const ClientOptions& options() const { return options_; }

 private:
  // ImportScene and CheckImport.
  absl::StatusOr<v1::SceneInfo> Import(ImportSource source, std::string_view scene, bool replace,
                                       bool check_only, const CallOptions& call);

  std::shared_ptr<grpc::Channel> channel_;
  ClientOptions options_;
  std::unique_ptr<v1::Collide::Stub> stub_;
};

}  // namespace collide::client
