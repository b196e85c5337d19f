#include "server/rpc/serial_writer.h"

#include <utility>

namespace collide {

template <typename Base>
SerialWriterOf<Base>::SerialWriterOf(std::unique_ptr<StreamHandle> stream)
    : call_(this, std::move(stream)) {}

template <typename Base>
void SerialWriterOf<Base>::Pump() {
  Step step = Step::kWait;
  {
    MutexLock lock(&mu_);
    if (writing_ || call_.ending()) return;
    step = NextMessage(&out_);
    if (step == Step::kWait) return;
    writing_ = step == Step::kWrite;
  }
  // Outside the lock: gRPC may run reactions inline. out_ is not touched again until the write
  // completes (writing_).
  if (step == Step::kEnd) {
    // A bidirectional reactor keeps a read open for its client: the end does not wait for it
    // (a server-streaming one has none).
    call_.EndWithReadOpen(EndStatus());
    return;
  }
  if (!call_.Write(&out_)) {
    MutexLock lock(&mu_);
    writing_ = false;
    out_.Clear();
  }
}

template <typename Base>
void SerialWriterOf<Base>::OnWriteDone(bool ok) {
  Sent();
  // Held until the last line: nothing here finishes the call (and so deletes this) before it.
  call_.Hold();
  // The call's state first: until writing_ is cleared below, no other thread's Pump takes a
  // message (it would find the call still writing, and the message it took would be lost).
  const bool go_on = call_.OnWriteDone(ok);
  {
    MutexLock lock(&mu_);
    writing_ = false;
    out_.Clear();  // the sent message's memory
  }
  if (go_on) Pump();
  call_.Release();
}

template <typename Base>
void SerialWriterOf<Base>::OnCancel() {
  call_.OnCancel();
}

template class SerialWriterOf<grpc::ServerWriteReactor<grpc::ByteBuffer>>;
template class SerialWriterOf<grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>>;

}  // namespace collide
