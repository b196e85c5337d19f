#include "server/convert/wire_message.h"

#include "absl/strings/str_cat.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "grpcpp/support/proto_buffer_writer.h"

namespace collide {

absl::Status ParseMessage(grpc::ByteBuffer* buffer, google::protobuf::Message* message,
                          absl::string_view what) {
  message->Clear();
  return MergeMessage(buffer, message, what);
}

absl::Status MergeMessage(grpc::ByteBuffer* buffer, google::protobuf::Message* message,
                          absl::string_view what) {
  const size_t bytes = buffer->Length();
  bool parsed = false;
  {
    grpc::ProtoBufferReader reader(buffer);
    // The partial variant: proto3 has no required fields to check, and it does not log (the
    // checked one writes a libprotobuf ERROR line when a message is incomplete). Bounded by
    // the buffer's length, which is the whole message.
    parsed = bytes <= static_cast<size_t>(INT32_MAX) &&
             message->MergePartialFromBoundedZeroCopyStream(&reader, static_cast<int>(bytes)) &&
             reader.status().ok();
  }
  buffer->Clear();
  if (!parsed) {
    message->Clear();
    return absl::InvalidArgumentError(absl::StrCat(what, ": not a valid ",
                                                   message->GetDescriptor()->full_name(),
                                                   " message (", bytes, " bytes)"));
  }
  return absl::OkStatus();
}

absl::Status SerializeMessage(const google::protobuf::Message& message, grpc::ByteBuffer* buffer) {
  const size_t size = message.ByteSizeLong();
  if (size > static_cast<size_t>(INT32_MAX)) {
    return absl::InternalError(absl::StrCat("response: ", size, " bytes is too large to send"));
  }
  // gRPC's own serializer (what the typed methods use): small messages go into one inlined
  // slice, larger ones into blocks, without an intermediate copy.
  buffer->Clear();  // the writer requires an empty buffer
  bool own_buffer = false;
  const grpc::Status status =
      grpc::GenericSerialize<grpc::ProtoBufferWriter, google::protobuf::Message>(message, buffer,
                                                                                 &own_buffer);
  if (!status.ok()) {
    buffer->Clear();
    return absl::InternalError("response: could not be encoded");
  }
  return absl::OkStatus();
}

}  // namespace collide
