#include "server/rpc/scene_transfer_stream.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "base/status_macros.h"
#include "scene/scene_name.h"
#include "server/convert/field_path.h"
#include "server/convert/scene_convert.h"
#include "server/convert/status_convert.h"
#include "server/convert/wire_message.h"
#include "server/infra/scene_header.h"
#include "server/rpc/scene_info.h"
#include "spdlog/spdlog.h"

namespace collide {

// ---------------------------------------------------------------------------------------------
// ExportScene.

ExportReactor::ExportReactor(const ServiceContext& context, const Principal* principal,
                             const v1::ExportSceneRequest& request,
                             std::unique_ptr<StreamHandle> stream)
    : SerialWriter(std::move(stream)), context_(context), principal_(principal) {
  if (absl::Status status = Start(request); !status.ok()) {
    End(ToGrpcStatus(status));
    return;
  }
  Pump();
}

absl::Status ExportReactor::Start(const v1::ExportSceneRequest& request) {
  COLLIDE_RETURN_IF_ERROR(ValidateSceneName(request.scene()));
  COLLIDE_RETURN_IF_ERROR(principal_->CheckScene(request.scene()));
  COLLIDE_ASSIGN_OR_RETURN(std::shared_ptr<const Scene> scene,
                           context_.db->GetScene(request.scene()));
  // One version: the copy is taken under the scene's reader lock; the stream is written from it.
  exporter_ = std::make_unique<SceneExporter>(
      scene->name(), scene->options(), scene->CaptureState(), request.max_bodies_per_chunk());
  return absl::OkStatus();
}

SerialWriter::Step ExportReactor::NextMessage(grpc::ByteBuffer* out) {
  v1::SceneExportMessage message;
  if (!exporter_->Next(&message)) return Step::kEnd;
  // A message is at most about 1 MiB of bodies or 32,768 marks, far below the 2 GiB that
  // SerializeMessage refuses.
  SerializeMessage(message, out).IgnoreError();
  return Step::kWrite;
}

grpc::Status ExportReactor::EndStatus() { return grpc::Status::OK; }

void ExportReactor::OnDone() { delete this; }

// ---------------------------------------------------------------------------------------------
// ImportScene.

ImportReactor::ImportReactor(const ServiceContext& context, grpc::CallbackServerContext* call,
                             const Principal* principal, std::optional<std::string> scene_header,
                             grpc::ByteBuffer* response, std::unique_ptr<StreamHandle> stream)
    : ClientStreamReactor("ImportScene", context, call, principal, std::move(scene_header),
                          response, std::move(stream)),
      importer_(context.limits) {
  Start();
}

absl::Status ImportReactor::Take(const v1::ImportSceneRequest& message, size_t bytes) {
  const bool had_header = importer_.has_header();
  COLLIDE_RETURN_IF_ERROR(importer_.Add(message, bytes));
  if (!had_header && importer_.has_header()) {
    // The target is known: the token's scenes and the routing header apply to it.
    COLLIDE_RETURN_IF_ERROR(principal_->CheckScene(importer_.scene()));
    COLLIDE_RETURN_IF_ERROR(CheckSceneHeader(scene_header_, importer_.scene()));
  }
  return absl::OkStatus();
}

void ImportReactor::OnHalfClose() {
  absl::StatusOr<ImportedScene> imported = std::move(importer_).Finish();
  if (!imported.ok()) {
    EndWith(imported.status());
    return;
  }
  // A cancel that came after the client's half-close imports nothing.
  if (call_->IsCancelled()) {
    EndWith(absl::CancelledError("stream cancelled; nothing imported"));
    return;
  }
  // A replicated scene's log starts at its creation on the cluster: it is created, not imported
  // (check_only answers the same).
  if (imported->options.durability == DurabilityPolicy::kReplicated ||
      (imported->options.durability == DurabilityPolicy::kDefault &&
       context_.default_durability == DurabilityPolicy::kReplicated)) {
    EndWith(FieldStatus(absl::StatusCode::kFailedPrecondition, "header.options.durability",
                        "a scene is imported with durability none, periodic or always: a "
                        "replicated scene is created (CreateScene) and written"));
    return;
  }
  if (imported->check_only) {
    // The import's checks, nothing created: answered with the scene the import would create.
    absl::StatusOr<std::unique_ptr<Scene>> scene = context_.db->CheckImport(
        imported->scene, imported->options, imported->state, imported->replace, imported->assets);
    absl::Status status =
        ForRequest(scene.status(), RequestLayout{.kind = RequestLayout::Kind::kImport,
                                                 .chunk_starts = imported->chunk_starts,
                                                 .name_from_header = imported->name_from_header});
    if (scene.ok()) {
      v1::ImportSceneResponse response;
      SceneInfoToProto(**scene, context_.default_durability, response.mutable_scene());
      status = SerializeMessage(response, response_);
    }
    EndWith(status);
    return;
  }
  const std::string name = imported->scene;
  const size_t bodies = imported->state.bodies.size();
  // The store's callback holds the call open: once handed over, the import completes (the scene
  // exists then) even if the client goes away meanwhile.
  stream_call_.Hold();
  context_.db->ImportScene(
      name, imported->options, std::move(imported->state), std::move(imported->assets),
      imported->replace,
      [this, name, bodies, chunk_starts = std::move(imported->chunk_starts),
       name_from_header = imported->name_from_header](absl::Status status) {
        // The store names the options and bodies it finds wrong as the scene's; the client
        // sent them as the header's and the chunks'.
        status = ForRequest(status, RequestLayout{.kind = RequestLayout::Kind::kImport,
                                                  .chunk_starts = chunk_starts,
                                                  .name_from_header = name_from_header});
        if (status.ok()) {
          absl::StatusOr<std::shared_ptr<const Scene>> scene = context_.db->GetScene(name);
          if (scene.ok()) {
            v1::ImportSceneResponse response;
            DescribeScene(context_, **scene, response.mutable_scene());
            status = SerializeMessage(response, response_);
          }
          spdlog::info("imported scene \"{}\" ({} bodies)", name, bodies);
        }
        if (!status.ok() || context_.router == nullptr) {
          EndWith(status);
          stream_call_.Release();
          return;
        }
        // A scene moved here is routed here before the move goes on (the mover deletes it at its
        // source next): the import is answered once the routers' maps say so. A router that does
        // not answer does not fail the import (the map's sync puts it right).
        context_.router->Claim(name, [this, name](absl::Status claimed) {
          if (!claimed.ok()) {
            spdlog::warn("imported scene \"{}\": the routers' map not updated: {}", name,
                         claimed.ToString());
          }
          EndWith(absl::OkStatus());
          stream_call_.Release();
        });
      });
}

}  // namespace collide
