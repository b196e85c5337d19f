#include "integration/raw_call.h"

#include <future>
#include <vector>

namespace collide::integration {

grpc::ByteBuffer BytesMessage(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

std::string MessageBytes(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!buffer.Dump(&slices).ok()) return out;
  for (const grpc::Slice& slice : slices) {
    out.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return out;
}

grpc::Status RawUnaryCall(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                          const std::string& request, grpc::ClientContext* context,
                          std::string* response) {
  grpc::GenericStub stub(channel);
  grpc::ByteBuffer in = BytesMessage(request);
  grpc::ByteBuffer out;
  std::promise<grpc::Status> done;
  stub.UnaryCall(context, method, grpc::StubOptions(), &in, &out,
                 [&](grpc::Status status) { done.set_value(std::move(status)); });
  grpc::Status status = done.get_future().get();
  if (response != nullptr) *response = MessageBytes(out);
  return status;
}

RawStream::RawStream(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                     grpc::ClientContext* context)
    : stub_(channel) {
  call_ = stub_.PrepareCall(context, method, &cq_);
  if (call_ == nullptr) return;
  call_->StartCall(this);
  started_ = Wait(this);
}

RawStream::~RawStream() {
  if (call_ != nullptr && started_ && !finished_) Finish();
  cq_.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (cq_.Next(&tag, &ok)) {
  }
}

bool RawStream::Wait(void* tag) {
  void* got = nullptr;
  bool ok = false;
  // Every operation is awaited before the next starts: the next event is this one's.
  if (!cq_.Next(&got, &ok)) return false;
  return got == tag && ok;
}

bool RawStream::Write(const std::string& bytes) {
  grpc::ByteBuffer message = BytesMessage(bytes);
  call_->Write(message, this);
  return Wait(this);
}

bool RawStream::WritesDone() {
  call_->WritesDone(this);
  return Wait(this);
}

std::optional<std::string> RawStream::Read() {
  grpc::ByteBuffer message;
  call_->Read(&message, this);
  if (!Wait(this)) return std::nullopt;
  return MessageBytes(message);
}

grpc::Status RawStream::Finish() {
  grpc::Status status;
  if (finished_) return status;
  // The status comes after every message: read what the server still sends.
  while (Read().has_value()) {
  }
  finished_ = true;
  call_->Finish(&status, this);
  Wait(this);
  return status;
}

}  // namespace collide::integration
