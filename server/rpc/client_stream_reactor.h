#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "base/field_error.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "server/convert/status_convert.h"
#include "server/convert/wire_message.h"
#include "server/infra/auth.h"
#include "server/infra/stream_registry.h"
#include "server/rpc/stream_lifecycle.h"
#include "server/service_context.h"
#include "spdlog/spdlog.h"

namespace collide {

/// The shape every client-streaming rpc shares (ImportScene, UploadAsset): the messages are read
/// one at a time, each read awaited (the registry's watchdog ends a call whose client sends
/// nothing for --stream_stall_timeout_ms), parsed as `Request` (a message that does not parse is
/// INVALID_ARGUMENT `messages[i]`) and handed to the derived reactor's
///   absl::Status Take(const Request& message, size_t bytes);
/// and, once the client half-closes, to its
///   void OnHalfClose();
/// which answers the call through EndWith (after asynchronous work under stream_call_.Hold(), if
/// any). A derived reactor also names how a status reads in its request's words:
///   absl::Status ForClient(absl::Status status);
/// `Derived` calls Start() once it is constructed.
template <typename Derived, typename Request>
class ClientStreamReactor : public grpc::ServerReadReactor<grpc::ByteBuffer> {
 public:
  void OnReadDone(bool ok) override {
    if (!stream_call_.OnReadDone()) return;
    if (!ok) {
      // The client half-closed.
      self().OnHalfClose();
      return;
    }
    const size_t bytes = in_.Length();
    absl::Status status = ParseMessage(&in_, &request_, FieldPath("messages", messages_++, ""));
    if (status.ok()) status = self().Take(request_, bytes);
    if (!status.ok()) {
      EndWith(std::move(status));
      return;
    }
    Read();
  }
  void OnCancel() override { stream_call_.OnCancel(); }
  void OnDone() override { delete static_cast<Derived*>(this); }

 protected:
  /// `rpc` names the call in the log; `principal` was checked for the rpc's role; `scene_header`
  /// is the call's x-collide-scene header, if any. `call` outlives the reactor; `stream` is the
  /// call's registration (null when streams are not tracked).
  ClientStreamReactor(const char* rpc, const ServiceContext& context,
                      grpc::CallbackServerContext* call, const Principal* principal,
                      std::optional<std::string> scene_header, grpc::ByteBuffer* response,
                      std::unique_ptr<StreamHandle> stream)
      : context_(context),
        call_(call),
        principal_(principal),
        scene_header_(std::move(scene_header)),
        response_(response),
        stream_call_(this, std::move(stream)),
        rpc_(rpc) {}
  ~ClientStreamReactor() override = default;

  /// Reads the first message.
  void Start() { Read(); }

  /// Ends the call with `status` in the request's words, logging the server's own failures.
  void EndWith(absl::Status status) {
    status = self().ForClient(std::move(status));
    switch (status.code()) {
      case absl::StatusCode::kInternal:
      case absl::StatusCode::kUnknown:
      case absl::StatusCode::kUnavailable:
        spdlog::error("{}: {}", rpc_, status.ToString());
        break;
      default:
        break;
    }
    stream_call_.End(ToGrpcStatus(status));
  }

  const ServiceContext& context_;
  grpc::CallbackServerContext* const call_;
  const Principal* const principal_;
  const std::optional<std::string> scene_header_;
  grpc::ByteBuffer* const response_;
  // The order of reads, the store's callback, cancel and finish.
  StreamCall<grpc::ServerReadReactor<grpc::ByteBuffer>> stream_call_;

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
  void Read() { stream_call_.Read(&in_, /*awaited=*/true); }

  const char* const rpc_;
  grpc::ByteBuffer in_;
  Request request_;
  // Messages read so far (the next one's index).
  uint64_t messages_ = 0;
};

}  // namespace collide
