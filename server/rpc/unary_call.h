#pragma once

#include <string>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "scene/move_destination.h"
#include "server/convert/status_convert.h"
#include "server/convert/wire_message.h"

namespace collide {

/// One unary call of the service: the request, parsed from the bytes gRPC received, the response
/// being built, and the reactor that answers. A handler reads `request()`, fills `response()`
/// and calls `Finish(status)` once, at once or later from a callback (the call stays alive until
/// then); Finish encodes the response only when the status is OK.
template <typename Request, typename Response>
class UnaryCall final : public grpc::ServerUnaryReactor {
 public:
  /// Parses `in` and hands the call to `handle`, or finishes it with INVALID_ARGUMENT when the
  /// bytes are not a `Request`. `out` (gRPC's) receives the encoded response. Returns the reactor
  /// to hand back to gRPC.
  static grpc::ServerUnaryReactor* Start(grpc::CallbackServerContext* context,
                                         const grpc::ByteBuffer* in, grpc::ByteBuffer* out,
                                         absl::FunctionRef<void(UnaryCall*)> handle) {
    auto* call = new UnaryCall(context, out);
    // gRPC hands the request as const; parsing consumes a copy (a reference to the same slices).
    grpc::ByteBuffer bytes(*in);
    if (absl::Status s = ParseMessage(&bytes, &call->request_, "request"); !s.ok()) {
      call->Finish(s);
    } else {
      handle(call);
    }
    return call;
  }

  grpc::CallbackServerContext* context() const { return context_; }
  const Request& request() const { return request_; }
  Response* response() { return &response_; }

  /// Ends the call with `status` (its message bounded, status_convert.h).
  void Finish(absl::Status status) {
    if (status.ok()) status = SerializeMessage(response_, out_);
    // A write refused because its scene moved says where to, machine-readably.
    if (std::string moved_to = MovedToOf(status); !moved_to.empty()) {
      context_->AddTrailingMetadata(kMovedToMetadata, moved_to);
    }
    grpc::ServerUnaryReactor::Finish(ToGrpcStatus(status));
  }

  void OnDone() override { delete this; }

 private:
  UnaryCall(grpc::CallbackServerContext* context, grpc::ByteBuffer* out)
      : context_(context), out_(out) {}

  grpc::CallbackServerContext* const context_;
  grpc::ByteBuffer* const out_;
  Request request_;
  Response response_;
};

}  // namespace collide
