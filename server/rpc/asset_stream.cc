#include "server/rpc/asset_stream.h"

#include <utility>

#include "base/field_error.h"
#include "base/status_macros.h"
#include "scene/scene_name.h"
#include "server/convert/field_path.h"
#include "server/convert/status_convert.h"
#include "server/convert/wire_message.h"
#include "server/infra/scene_header.h"
#include "spdlog/spdlog.h"

namespace collide {

UploadReactor::UploadReactor(const ServiceContext& context, grpc::CallbackServerContext* call,
                             const Principal* principal, std::optional<std::string> scene_header,
                             grpc::ByteBuffer* response, std::unique_ptr<StreamHandle> stream)
    : ClientStreamReactor("UploadAsset", context, call, principal, std::move(scene_header),
                          response, std::move(stream)),
      uploader_(context.limits) {
  Start();
}

absl::Status UploadReactor::Take(const v1::UploadAssetRequest& message, size_t /*bytes*/) {
  const bool had_header = uploader_.has_header();
  COLLIDE_RETURN_IF_ERROR(uploader_.Add(message));
  if (!had_header && uploader_.has_header()) {
    // The target is known: the token's scenes, the routing header and the store's room apply
    // before any data is held.
    const std::string& scene = uploader_.scene();
    COLLIDE_RETURN_IF_ERROR(ValidateSceneName(scene));
    COLLIDE_RETURN_IF_ERROR(principal_->CheckScene(scene));
    COLLIDE_RETURN_IF_ERROR(CheckSceneHeader(scene_header_, scene));
    COLLIDE_RETURN_IF_ERROR(context_.db->CheckAssetRoom(scene, uploader_.name(), uploader_.size()));
  }
  return absl::OkStatus();
}

void UploadReactor::OnHalfClose() {
  absl::StatusOr<AssetUploader::Upload> upload = std::move(uploader_).Finish();
  if (!upload.ok()) {
    EndWith(upload.status());
    return;
  }
  // A cancel that came after the client's half-close uploads nothing.
  if (call_->IsCancelled()) {
    EndWith(absl::CancelledError("stream cancelled; nothing uploaded"));
    return;
  }
  // The store's callback holds the call open: once handed over, the upload completes (the asset
  // exists then) even if the client goes away meanwhile.
  stream_call_.Hold();
  const std::string scene = upload->scene;
  const std::string name = upload->name;
  context_.db->AddAsset(
      scene, name, std::move(upload->source), std::move(upload->expected_sha256),
      [this, scene, name](absl::StatusOr<AddedAsset> added) {
        absl::Status status = added.status();
        if (status.ok()) {
          const Asset& asset = *added->asset;
          v1::UploadAssetResponse response;
          uint64_t bodies = 0;
          if (absl::StatusOr<std::shared_ptr<const Scene>> found = context_.db->GetScene(scene);
              found.ok()) {
            if (std::optional<SceneAssetInfo> info = (*found)->GetAsset(name); info.has_value()) {
              bodies = info->body_count;
            }
          }
          AssetInfoToProto(name, asset, bodies, response.mutable_asset());
          response.set_already_present(added->already_present);
          status = SerializeMessage(response, response_);
          if (!added->already_present) {
            spdlog::info("scene \"{}\": uploaded {} \"{}\" ({} triangles, {} bytes, sha256 {})",
                         scene, AssetKindName(asset.kind()), name, asset.triangle_count(),
                         asset.source_bytes(), asset.sha256());
          }
        }
        EndWith(status);
        stream_call_.Release();
      });
}

absl::Status UploadReactor::ForClient(absl::Status status) {
  return ForRequest(status, RequestLayout{.kind = RequestLayout::Kind::kUpload});
}

}  // namespace collide
