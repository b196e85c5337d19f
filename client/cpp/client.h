#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/cpp/client_options.h"
#include "client/cpp/query_stream.h"
#include "client/cpp/update_writer.h"
#include "collide/v1/collide.grpc.pb.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"

namespace collide::client {

/// A connection to one collide server: a typed method per rpc. Errors come back as absl::Status
/// with the server's code and message (a field path, `: `, the reason). Thread-safe: any number
/// of threads may call it at once, and streams opened from it are independent.
class Client {
 public:
  /// Opens a channel as `options` say (lazily: the first call connects).
  static absl::StatusOr<std::unique_ptr<Client>> Connect(const ClientOptions& options);
  /// A client over an existing channel; `options` give the token and deadline.
  Client(std::shared_ptr<grpc::Channel> channel, ClientOptions options);

  /// Waits until the channel is connected, up to `timeout`. DEADLINE_EXCEEDED otherwise.
  absl::Status WaitForConnected(absl::Duration timeout);

  /// Scenes. CreateScene returns the new scene (defaults filled in).
  absl::StatusOr<v1::SceneInfo> CreateScene(const v1::CreateSceneRequest& request);
  /// The same with a name and options.
  absl::StatusOr<v1::SceneInfo> CreateScene(std::string_view scene,
                                            const v1::SceneOptions& options = {});
  /// Deletes a scene and its bodies.
  absl::Status DeleteScene(std::string_view scene);
  /// Every scene the token may see, sorted by name.
  absl::StatusOr<std::vector<v1::SceneInfo>> ListScenes();
  /// One scene's settings and counters.
  absl::StatusOr<v1::SceneInfo> GetScene(std::string_view scene);

  /// Bodies. Upserts are applied as one batch.
  absl::StatusOr<v1::WriteResponse> UpsertBodies(const v1::UpsertBodiesRequest& request);
  /// The same with a scene and bodies.
  absl::StatusOr<v1::WriteResponse> UpsertBodies(std::string_view scene,
                                                 std::span<const v1::Body> bodies);
  /// Removes bodies, as one batch; each must exist.
  absl::StatusOr<v1::WriteResponse> RemoveBodies(const v1::RemoveBodiesRequest& request);
  /// The same with a scene and ids.
  absl::StatusOr<v1::WriteResponse> RemoveBodies(std::string_view scene,
                                                 std::span<const uint64_t> ids);
  /// Reads the bodies `ids` (all of them when empty).
  absl::StatusOr<v1::GetBodiesResponse> GetBodies(std::string_view scene,
                                                  std::span<const uint64_t> ids = {});

  /// One-off queries.
  absl::StatusOr<v1::QueryResponse> Raycast(const v1::RaycastRequest& request);
  /// A ball swept along a ray.
  absl::StatusOr<v1::QueryResponse> SphereCast(const v1::SphereCastRequest& request);
  /// The bodies a posed shape overlaps.
  absl::StatusOr<v1::QueryResponse> Overlap(const v1::OverlapRequest& request);

  /// Opens an UpdateStream whose batches carry `client_id` (0: no deduplication) and sequences
  /// from `first_sequence` on. Deadline: options().stream_deadline.
  absl::StatusOr<std::unique_ptr<UpdateWriter>> OpenUpdateStream(uint64_t client_id,
                                                                 uint64_t first_sequence = 1);
  /// Opens a QueryStream. Deadline: options().stream_deadline.
  absl::StatusOr<std::unique_ptr<QueryStreamSession>> OpenQueryStream();

  /// The channel, for callers that need the raw stub.
  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }
  /// The options the client was made with.
  const ClientOptions& options() const { return options_; }

 private:
  // A context with the token and the deadline of a unary call or a stream.
  std::unique_ptr<grpc::ClientContext> NewContext(bool unary) const;

  std::shared_ptr<grpc::Channel> channel_;
  ClientOptions options_;
  std::unique_ptr<v1::Collide::Stub> stub_;
};

}  // namespace collide::client
