#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/status.h"

namespace collide::integration {

/// `bytes` as one gRPC message.
grpc::ByteBuffer BytesMessage(const std::string& bytes);
/// The bytes of a received message.
std::string MessageBytes(const grpc::ByteBuffer& buffer);

/// Sends `request` (any bytes) to the unary method `method` (`/collide.v1.Collide/GetScene`)
/// and waits for the status; `response` (optional) receives the answer's bytes.
grpc::Status RawUnaryCall(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                          const std::string& request, grpc::ClientContext* context,
                          std::string* response = nullptr);

/// A streaming call of any method whose messages are bytes, driven one step at a time with
/// blocking calls (over gRPC's generic stub and a completion queue of its own): for tests that
/// send what no generated stub would (malformed or oversized messages).
class RawStream {
 public:
  /// Starts `method` on `channel` with `context` (which must outlive the stream).
  RawStream(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
            grpc::ClientContext* context);
  RawStream(const RawStream&) = delete;
  RawStream& operator=(const RawStream&) = delete;
  ~RawStream();

  /// True when the call started.
  bool started() const { return started_; }
  /// Writes one message; false when the stream is broken.
  bool Write(const std::string& bytes);
  /// Half-closes; false when the stream is broken.
  bool WritesDone();
  /// The next message, or nullopt once the server ended the stream.
  std::optional<std::string> Read();
  /// The call's final status (reads and drops the messages left first).
  grpc::Status Finish();

 private:
  // Waits for the operation tagged `tag`; its ok.
  bool Wait(void* tag);

  grpc::GenericStub stub_;
  grpc::CompletionQueue cq_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call_;
  bool started_ = false;
  bool finished_ = false;
};

}  // namespace collide::integration
