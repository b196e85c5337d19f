#include "server/rpc/scene_transfer_stream.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "scene/scene_name.h"
#include "server/convert/scene_convert.h"
#include "server/convert/status_convert.h"
#include "server/convert/wire_message.h"
#include "server/infra/scene_header.h"
#include "spdlog/spdlog.h"

namespace collide {

// ---------------------------------------------------------------------------------------------
// ExportScene.

ExportReactor::ExportReactor(const ServiceContext& context, const Principal* principal,
                             const v1::ExportSceneRequest& request,
                             std::unique_ptr<StreamHandle> stream)
    : SerialWriter(std::move(stream)), context_(context), principal_(principal) {
  if (absl::Status status = Start(request); !status.ok()) {
    FinishOnce(ToGrpcStatus(status));
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
    : context_(context),
      call_(call),
      principal_(principal),
      scene_header_(std::move(scene_header)),
      response_(response),
      stream_(std::move(stream)),
      importer_(context.limits) {
  Read();
}

void ImportReactor::Read() {
  // Awaited from here: the registry's watchdog ends the call if nothing comes for the stall
  // timeout.
  if (stream_ != nullptr) stream_->ReadStarted();
  StartRead(&in_);
}

absl::Status ImportReactor::Take() {
  const size_t bytes = in_.Length();
  COLLIDE_RETURN_IF_ERROR(
      ParseMessage(&in_, &request_, absl::StrCat("messages[", importer_.messages(), "]")));
  const bool had_header = importer_.has_header();
  COLLIDE_RETURN_IF_ERROR(importer_.Add(request_, bytes));
  if (!had_header && importer_.has_header()) {
    // The target is known: the token's scenes and the routing header apply to it.
    COLLIDE_RETURN_IF_ERROR(principal_->CheckScene(importer_.scene()));
    COLLIDE_RETURN_IF_ERROR(CheckSceneHeader(scene_header_, importer_.scene()));
  }
  return absl::OkStatus();
}

void ImportReactor::OnReadDone(bool ok) {
  if (stream_ != nullptr) stream_->ReadDone();
  {
    absl::MutexLock lock(&mu_);
    if (finished_) return;
  }
  if (!ok) {
    // The client half-closed (or the call broke: OnCancel finishes it then).
    Import();
    return;
  }
  if (absl::Status status = Take(); !status.ok()) {
    FinishOnce(status);
    return;
  }
  Read();
}

void ImportReactor::Import() {
  absl::StatusOr<ImportedScene> imported = std::move(importer_).Finish();
  if (!imported.ok()) {
    FinishOnce(imported.status());
    return;
  }
  // A read that failed because the call broke (rather than the client's half-close) imports
  // nothing, even after a complete stream.
  if (call_->IsCancelled()) {
    FinishOnce(absl::CancelledError("stream cancelled; nothing imported"));
    return;
  }
  if (imported->check_only) {
    // The import's checks, nothing created: answered with the scene the import would create.
    absl::StatusOr<std::unique_ptr<Scene>> scene = context_.db->CheckImport(
        imported->scene, imported->options, imported->state, imported->replace);
    absl::Status status = scene.status();
    if (scene.ok()) {
      v1::ImportSceneResponse response;
      SceneInfoToProto(**scene, context_.default_durability, response.mutable_scene());
      status = SerializeMessage(response, response_);
    }
    FinishOnce(status);
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    if (finished_) return;  // cancelled: nothing is imported
    // From here the store's callback finishes the call (the reactor lives until it runs).
    importing_ = true;
  }
  const std::string name = imported->scene;
  const size_t bodies = imported->state.bodies.size();
  context_.db->ImportScene(
      name, imported->options, imported->state, imported->replace,
      [this, name, bodies](absl::Status status) {
        if (status.ok()) {
          absl::StatusOr<std::shared_ptr<const Scene>> scene = context_.db->GetScene(name);
          if (scene.ok()) {
            v1::ImportSceneResponse response;
            SceneInfoToProto(**scene, context_.default_durability, response.mutable_scene());
            status = SerializeMessage(response, response_);
          }
          spdlog::info("imported scene \"{}\" ({} bodies)", name, bodies);
        }
        {
          absl::MutexLock lock(&mu_);
          importing_ = false;
        }
        FinishOnce(status);
      });
}

void ImportReactor::OnCancel() {
  {
    absl::MutexLock lock(&mu_);
    // An import handed to the store finishes from its callback (the scene exists then).
    if (importing_) return;
  }
  FinishOnce(absl::CancelledError("stream cancelled; nothing imported"));
}

void ImportReactor::FinishOnce(const absl::Status& status) {
  {
    absl::MutexLock lock(&mu_);
    if (finished_) return;
    finished_ = true;
  }
  switch (status.code()) {
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kUnavailable:
      spdlog::error("ImportScene: {}", status.ToString());
      break;
    default:
      break;
  }
  if (stream_ != nullptr) stream_->Release();
  Finish(ToGrpcStatus(status));
}

void ImportReactor::OnDone() { delete this; }

}  // namespace collide
