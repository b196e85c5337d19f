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
    : context_(context),
      call_(call),
      principal_(principal),
      scene_header_(std::move(scene_header)),
      response_(response),
      stream_call_(this, std::move(stream)),
      uploader_(context.limits) {
  Read();
}

void UploadReactor::Read() {
  // Awaited: the registry's watchdog ends the call if nothing comes for the stall timeout.
  stream_call_.Read(&in_, /*awaited=*/true);
}

absl::Status UploadReactor::Take() {
  COLLIDE_RETURN_IF_ERROR(
      ParseMessage(&in_, &request_, FieldPath("messages", uploader_.messages(), "")));
  const bool had_header = uploader_.has_header();
  COLLIDE_RETURN_IF_ERROR(uploader_.Add(request_));
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

void UploadReactor::OnReadDone(bool ok) {
  if (!stream_call_.OnReadDone()) return;
  if (!ok) {
    // The client half-closed.
    Upload();
    return;
  }
  if (absl::Status status = Take(); !status.ok()) {
    EndWith(status);
    return;
  }
  Read();
}

void UploadReactor::Upload() {
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

void UploadReactor::OnCancel() { stream_call_.OnCancel(); }

void UploadReactor::EndWith(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kUnavailable:
      spdlog::error("UploadAsset: {}", status.ToString());
      break;
    default:
      break;
  }
  stream_call_.End(
      ToGrpcStatus(ForRequest(status, RequestLayout{.kind = RequestLayout::Kind::kUpload})));
}

void UploadReactor::OnDone() { delete this; }

}  // namespace collide
