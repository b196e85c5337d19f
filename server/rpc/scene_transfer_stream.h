#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "collide/v1/collide.pb.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "server/convert/scene_transfer.h"
#include "server/infra/auth.h"
#include "server/infra/stream_registry.h"
#include "server/rpc/client_stream_reactor.h"
#include "server/rpc/serial_writer.h"
#include "server/rpc/stream_lifecycle.h"
#include "server/service_context.h"

namespace collide {

/// The reactor of one ExportScene call. The scene's state is copied under its reader lock when
/// the call starts (Scene::CaptureState: one version, writers wait only for the copy), then
/// written one message at a time (SerialWriter, SceneExporter): the next write starts when the
/// previous one completed, so the call holds the copy and one encoded message whatever the
/// client's pace; a client that reads nothing for --stream_stall_timeout_ms is cut off by the
/// stream registry's watchdog.
class ExportReactor final : public SerialWriter {
 public:
  /// Starts the export (or finishes the call with the request's error). `principal` was checked
  /// for the admin role; `stream` is the call's registration (null when streams are not
  /// tracked).
  ExportReactor(const ServiceContext& context, const Principal* principal,
                const v1::ExportSceneRequest& request, std::unique_ptr<StreamHandle> stream);

  void OnDone() override;

 private:
  absl::Status Start(const v1::ExportSceneRequest& request);
  Step NextMessage(grpc::ByteBuffer* out) override;
  grpc::Status EndStatus() override;

  const ServiceContext& context_;
  const Principal* const principal_;
  std::unique_ptr<SceneExporter> exporter_;
};

/// The reactor of one ImportScene call: reads the messages one at a time into a SceneImporter
/// (bounded by --max_import_bytes), and once the client half-closes after the trailer hands the
/// scene to Database::ImportScene, which logs it as one record: the call is answered once that
/// record is fsynced. Any error, or a call cancelled before its end, leaves nothing behind.
/// Each read awaited is reported to the stream's StreamHandle, so that a client that sends
/// nothing for --stream_stall_timeout_ms is cut off.
class ImportReactor final : public ClientStreamReactor<ImportReactor, v1::ImportSceneRequest> {
 public:
  /// `principal` was checked for the admin role; `scene_header` is the call's x-collide-scene
  /// header, if any (checked against the target's name). `call` outlives the reactor; `stream`
  /// is the call's registration (null when streams are not tracked).
  ImportReactor(const ServiceContext& context, grpc::CallbackServerContext* call,
                const Principal* principal, std::optional<std::string> scene_header,
                grpc::ByteBuffer* response, std::unique_ptr<StreamHandle> stream);

 private:
  friend class ClientStreamReactor<ImportReactor, v1::ImportSceneRequest>;
  absl::Status Take(const v1::ImportSceneRequest& message, size_t bytes);
  void OnHalfClose();
  absl::Status ForClient(absl::Status status) { return status; }

  SceneImporter importer_;
};

}  // namespace collide
