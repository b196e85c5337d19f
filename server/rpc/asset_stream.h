#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "collide/v1/collide.pb.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "server/convert/asset_convert.h"
#include "server/infra/auth.h"
#include "server/infra/stream_registry.h"
#include "server/rpc/client_stream_reactor.h"
#include "server/service_context.h"

namespace collide {

/// The reactor of one UploadAsset call: reads the messages one at a time into an AssetUploader;
/// once the header is read, checks the caller may write the scene it names and that the store
/// has room for the announced size (Database::CheckAssetRoom), before any data is held; once the
/// client half-closes after the trailer, hands the content to Database::AddAsset (hashed, built
/// and written on the store's asset thread) and answers once its record is fsynced. Any error,
/// or a call cancelled before its end, leaves nothing behind. Each read awaited is reported to
/// the stream's StreamHandle, so that a client that sends nothing for --stream_stall_timeout_ms
/// is cut off.
class UploadReactor final : public ClientStreamReactor<UploadReactor, v1::UploadAssetRequest> {
 public:
  /// `principal` was checked for the writer role; `scene_header` is the call's x-collide-scene
  /// header, if any (checked against the scene the header names). `call` outlives the reactor;
  /// `stream` is the call's registration (null when streams are not tracked).
  UploadReactor(const ServiceContext& context, grpc::CallbackServerContext* call,
                const Principal* principal, std::optional<std::string> scene_header,
                grpc::ByteBuffer* response, std::unique_ptr<StreamHandle> stream);

 private:
  friend class ClientStreamReactor<UploadReactor, v1::UploadAssetRequest>;
  absl::Status Take(const v1::UploadAssetRequest& message, size_t bytes);
  void OnHalfClose();
  // Errors in the request's words.
  absl::Status ForClient(absl::Status status);

  AssetUploader uploader_;
};

}  // namespace collide
