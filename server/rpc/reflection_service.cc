#include "server/rpc/reflection_service.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"

namespace collide {
namespace {

namespace v1 = grpc::reflection::v1;
using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::FieldDescriptor;
using google::protobuf::FileDescriptor;

void SetError(grpc::StatusCode code, std::string message, v1::ServerReflectionResponse* response) {
  v1::ErrorResponse* error = response->mutable_error_response();
  error->set_error_code(static_cast<int32_t>(code));
  error->set_error_message(std::move(message));
}

// Adds `file` (always) and then the files it imports, directly or not, that `sent` does not
// hold yet; records each one in `sent`.
void AddFiles(const FileDescriptor* file, std::set<std::string>* sent,
              v1::FileDescriptorResponse* out) {
  std::vector<const FileDescriptor*> pending = {file};
  bool first = true;
  while (!pending.empty()) {
    const FileDescriptor* next = pending.back();
    pending.pop_back();
    const bool is_new = sent->insert(next->name()).second;
    if (!is_new && !first) continue;
    first = false;
    google::protobuf::FileDescriptorProto proto;
    next->CopyTo(&proto);
    proto.SerializeToString(out->add_file_descriptor_proto());
    for (int i = 0; i < next->dependency_count(); ++i) {
      if (sent->count(next->dependency(i)->name()) == 0) pending.push_back(next->dependency(i));
    }
  }
}

}  // namespace

ReflectionService::ReflectionService(std::vector<std::string> services)
    : services_(std::move(services)) {}

grpc::Status ReflectionService::ServerReflectionInfo(
    grpc::ServerContext* /*context*/,
    grpc::ServerReaderWriter<v1::ServerReflectionResponse, v1::ServerReflectionRequest>* stream) {
  const DescriptorPool* pool = DescriptorPool::generated_pool();
  // The files this stream has sent, so that imports go once.
  std::set<std::string> sent;
  v1::ServerReflectionRequest request;
  while (stream->Read(&request)) {
    v1::ServerReflectionResponse response;
    response.set_valid_host(request.host());
    *response.mutable_original_request() = request;
    switch (request.message_request_case()) {
      case v1::ServerReflectionRequest::kFileByFilename: {
        const FileDescriptor* file = pool->FindFileByName(request.file_by_filename());
        if (file == nullptr) {
          SetError(grpc::StatusCode::NOT_FOUND, "file not found", &response);
        } else {
          AddFiles(file, &sent, response.mutable_file_descriptor_response());
        }
        break;
      }
      case v1::ServerReflectionRequest::kFileContainingSymbol: {
        const FileDescriptor* file =
            pool->FindFileContainingSymbol(request.file_containing_symbol());
        if (file == nullptr) {
          SetError(grpc::StatusCode::NOT_FOUND, "symbol not found", &response);
        } else {
          AddFiles(file, &sent, response.mutable_file_descriptor_response());
        }
        break;
      }
      case v1::ServerReflectionRequest::kFileContainingExtension: {
        const v1::ExtensionRequest& asked = request.file_containing_extension();
        const Descriptor* type = pool->FindMessageTypeByName(asked.containing_type());
        const FieldDescriptor* extension =
            type == nullptr ? nullptr : pool->FindExtensionByNumber(type, asked.extension_number());
        if (extension == nullptr) {
          SetError(grpc::StatusCode::NOT_FOUND, "extension not found", &response);
        } else {
          AddFiles(extension->file(), &sent, response.mutable_file_descriptor_response());
        }
        break;
      }
      case v1::ServerReflectionRequest::kAllExtensionNumbersOfType: {
        const Descriptor* type =
            pool->FindMessageTypeByName(request.all_extension_numbers_of_type());
        if (type == nullptr) {
          SetError(grpc::StatusCode::NOT_FOUND, "type not found", &response);
        } else {
          std::vector<const FieldDescriptor*> extensions;
          pool->FindAllExtensions(type, &extensions);
          v1::ExtensionNumberResponse* out = response.mutable_all_extension_numbers_response();
          out->set_base_type_name(type->full_name());
          for (const FieldDescriptor* extension : extensions) {
            out->add_extension_number(extension->number());
          }
        }
        break;
      }
      case v1::ServerReflectionRequest::kListServices:
        for (const std::string& name : services_) {
          response.mutable_list_services_response()->add_service()->set_name(name);
        }
        break;
      default:
        SetError(grpc::StatusCode::UNIMPLEMENTED, "message_request: not set or not known",
                 &response);
        break;
    }
    if (!stream->Write(response)) break;
  }
  return grpc::Status::OK;
}

}  // namespace collide
