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

/// A triangle mesh for UploadMesh, not owned: `vertices` holds x, y, z per vertex (length units,
/// the asset's own frame), `indices` three per triangle (counter-clockwise seen from the front).
struct MeshArrays {
  std::span<const float> vertices;
  std::span<const uint32_t> indices;
};

/// A heightfield for UploadHeightfield, not owned (collide.proto, HeightfieldAssetSize): rows x
/// columns heights, row-major (sample (i, j) at i x columns + j, the local point (j x spacing_x,
/// height, i x spacing_z)), and its hole bits ((rows - 1) x (columns - 1) bits, cell c = i x
/// (columns - 1) + j at bit c % 8 of byte c / 8) or empty for none.
struct HeightfieldArrays {
  uint64_t rows = 0;
  uint64_t columns = 0;
  float spacing_x = 1.0f;
  float spacing_z = 1.0f;
  std::span<const float> heights;
  std::span<const uint8_t> holes;
};

/// How UploadMesh and UploadHeightfield send an asset, and retry it.
struct UploadOptions {
  /// Data bytes per AssetChunk (below the server's --max_message_bytes).
  size_t chunk_bytes = 1 << 20;
  /// Send the content's SHA-256 in the header (MeshSha256, HeightfieldSha256), so that the
  /// server checks what it received end to end (DATA_LOSS otherwise).
  bool send_sha256 = true;
  /// After a retryable failure (UNAVAILABLE: the server unreachable or restarting; ABORTED,
  /// DEADLINE_EXCEEDED, INTERNAL, UNKNOWN, CANCELLED by the server; RESOURCE_EXHAUSTED
  /// `streams: ...`, its concurrent uploads all taken), the whole upload is sent again after a
  /// wait that starts at initial_backoff and grows by backoff_multiplier up to max_backoff, for
  /// at most give_up_after; then the last error is returned. Sending again is harmless: the
  /// server answers an upload of a name it holds with the same content as already present.
  absl::Duration initial_backoff = absl::Milliseconds(20);
  absl::Duration max_backoff = absl::Seconds(1);
  double backoff_multiplier = 2.0;
  absl::Duration give_up_after = absl::Seconds(30);
  /// Each attempt's deadline and wait_for_ready (unset deadline: options().stream_deadline).
  CallOptions call;
};

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

  /// Uploads a triangle mesh as asset `name` of `scene` (UploadAsset; writer): a header, chunks
  /// of `options.chunk_bytes`, a trailer with the counts and the CRC-32C; answered once the asset
  /// is durable, with its AssetInfo (sha256, triangles, memory). Retried as `options` say.
  /// Bodies place it as Shape.mesh {asset: name}. The server's errors name the arrays' elements
  /// (`vertices[12]: must be finite`, `indices[7]: must be below the vertex count`).
  absl::StatusOr<v1::UploadAssetResponse> UploadMesh(std::string_view scene, std::string_view name,
                                                     const MeshArrays& mesh,
                                                     const UploadOptions& options = {});
  /// Uploads a heightfield as asset `name` of `scene`, as UploadMesh does. Bodies place it as
  /// Shape.heightfield {asset: name}.
  absl::StatusOr<v1::UploadAssetResponse> UploadHeightfield(std::string_view scene,
                                                            std::string_view name,
                                                            const HeightfieldArrays& heightfield,
                                                            const UploadOptions& options = {});
  /// Every asset of `scene`, sorted by name (reader).
  absl::StatusOr<std::vector<v1::AssetInfo>> ListAssets(std::string_view scene,
                                                        const CallOptions& call = {});
  /// Deletes asset `name` of `scene` (writer): FAILED_PRECONDITION while a body places it.
  absl::Status DeleteAsset(std::string_view scene, std::string_view name,
                           const CallOptions& call = {});

  /// The channel, for callers that need the raw stub.
  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }
  /// The options the client was made with.
  const ClientOptions& options() const { return options_; }

 private:
  // One data list of an upload: its field and its 32-bit values (or bytes for holes).
  struct UploadList {
    int field = 0;  // AssetChunk's field number
    const void* data = nullptr;
    size_t count = 0;
    size_t element_bytes = 4;
  };
  // Sends the upload (header, chunks of `lists` in order, trailer) until it is answered or a
  // failure that is not retryable, as `options` say.
  absl::StatusOr<v1::UploadAssetResponse> Upload(std::string_view scene,
                                                 const v1::AssetHeader& header,
                                                 std::span<const UploadList> lists,
                                                 const UploadOptions& options);
  absl::StatusOr<v1::UploadAssetResponse> UploadOnce(std::string_view scene,
                                                     const v1::AssetHeader& header,
                                                     std::span<const UploadList> lists,
                                                     const UploadOptions& options);
  // ImportScene and CheckImport.
  absl::StatusOr<v1::SceneInfo> Import(ImportSource source, std::string_view scene, bool replace,
                                       bool check_only, const CallOptions& call);

  std::shared_ptr<grpc::Channel> channel_;
  ClientOptions options_;
  std::unique_ptr<v1::Collide::Stub> stub_;
};

}  // namespace collide::client
