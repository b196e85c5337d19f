#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "collide/v1/collide.pb.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "server/convert/scene_transfer.h"
#include "server/infra/auth.h"
#include "server/service_context.h"

namespace collide {

/// The reactor of one ExportScene call. The scene's state is copied under its reader lock when
/// the call starts (Scene::CaptureState: one version, writers wait only for the copy), then
/// written one message at a time (SceneExporter): the next write starts when the previous one
/// completed, so the call holds the copy and one encoded message whatever the client's pace.
class ExportReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  /// Starts the export (or finishes the call with the request's error). `principal` was checked
  /// for the admin role.
  ExportReactor(const ServiceContext& context, const Principal* principal,
                const v1::ExportSceneRequest& request);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  absl::Status Start(const v1::ExportSceneRequest& request);
  // Writes the next message, or finishes after the trailer.
  void WriteNext() ABSL_LOCKS_EXCLUDED(mu_);
  void FinishOnce(const grpc::Status& status) ABSL_LOCKS_EXCLUDED(mu_);

  const ServiceContext& context_;
  const Principal* const principal_;
  std::unique_ptr<SceneExporter> exporter_;
  absl::Mutex mu_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  // The message being written (changed only while no write is in flight).
  grpc::ByteBuffer out_;
};

/// The reactor of one ImportScene call: reads the messages one at a time into a SceneImporter
/// (bounded by --max_import_bytes), and once the client half-closes after the trailer hands the
/// scene to Database::ImportScene, which logs it as one record: the call is answered once that
/// record is fsynced. Any error, or a call cancelled before its end, leaves nothing behind.
class ImportReactor final : public grpc::ServerReadReactor<grpc::ByteBuffer> {
 public:
  /// `principal` was checked for the admin role; `scene_header` is the call's x-collide-scene
  /// header, if any (checked against the target's name). `call` outlives the reactor.
  ImportReactor(const ServiceContext& context, grpc::CallbackServerContext* call,
                const Principal* principal, std::optional<std::string> scene_header,
                grpc::ByteBuffer* response);

  void OnReadDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  absl::Status Take();
  void Import();
  void FinishOnce(const absl::Status& status);

  const ServiceContext& context_;
  grpc::CallbackServerContext* const call_;
  const Principal* const principal_;
  const std::optional<std::string> scene_header_;
  grpc::ByteBuffer* const response_;
  SceneImporter importer_;
  grpc::ByteBuffer in_;
  v1::ImportSceneRequest request_;
  absl::Mutex mu_;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  // Handed to the store, whose callback finishes the call.
  bool importing_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace collide
