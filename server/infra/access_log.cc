#include "server/infra/access_log.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/message_lite.h"
#include "google/protobuf/wire_format_lite.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/status.h"
#include "server/infra/scene_header.h"
#include "spdlog/spdlog.h"

namespace collide {
namespace {

using grpc::experimental::InterceptionHookPoints;
using WireFormatLite = google::protobuf::internal::WireFormatLite;

// The longest scene text logged (scene names have at most 128 characters).
constexpr size_t kMaxSceneChars = 128;

// The number of the `scene` string field of `method`'s request type ("/pkg.Service/Method"), or
// 0 when it has none (or the method is not in the generated pool).
int SceneFieldOf(absl::string_view method) {
  if (!absl::ConsumePrefix(&method, "/")) return 0;
  std::string name(method);
  const size_t slash = name.find('/');
  if (slash == std::string::npos) return 0;
  name[slash] = '.';
  const google::protobuf::MethodDescriptor* descriptor =
      google::protobuf::DescriptorPool::generated_pool()->FindMethodByName(name);
  if (descriptor == nullptr) return 0;
  const google::protobuf::FieldDescriptor* field =
      descriptor->input_type()->FindFieldByName("scene");
  if (field == nullptr || field->type() != google::protobuf::FieldDescriptor::TYPE_STRING) {
    return 0;
  }
  return field->number();
}

// The value of string field `number` of the message encoded in `bytes` (the last one, as a
// parser keeps), or "" when absent or the bytes do not parse.
std::string StringField(const grpc::ByteBuffer& bytes, int number) {
  grpc::Slice slice;
  if (!const_cast<grpc::ByteBuffer&>(bytes).DumpToSingleSlice(&slice).ok()) return "";
  google::protobuf::io::CodedInputStream in(slice.begin(), static_cast<int>(slice.size()));
  std::string value;
  while (const uint32_t tag = in.ReadTag()) {
    if (WireFormatLite::GetTagFieldNumber(tag) == number &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      if (!WireFormatLite::ReadString(&in, &value)) return "";
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return "";
    }
  }
  return value;
}

// `scene` as logged: quoted, escaped, bounded (it may be any text a client sent).
std::string Quoted(absl::string_view scene) {
  if (scene.empty()) return "-";
  const bool cut = scene.size() > kMaxSceneChars;
  return absl::StrCat("\"", absl::CHexEscape(scene.substr(0, kMaxSceneChars)),
                      cut ? "...\"" : "\"");
}

class AccessLogInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit AccessLogInterceptor(grpc::experimental::ServerRpcInfo* info)
      : info_(info), method_(info->method()), start_(std::chrono::steady_clock::now()) {
    const absl::string_view method = method_;
    // The collide.v1 methods and the health service take their requests as bytes; the
    // reflection services as generated messages.
    raw_ = absl::StartsWith(method, "/collide.v1.") || absl::StartsWith(method, "/grpc.health.");
    generated_ = absl::StartsWith(method, "/grpc.reflection.");
    scene_field_ = raw_ ? SceneFieldOf(method) : 0;
  }

  // A call that never sent a status (cancelled, or cut by the server's stop) is logged here.
  ~AccessLogInterceptor() override {
    if (!logged_) Log(grpc::StatusCode::CANCELLED);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_INITIAL_METADATA)) {
      peer_ = info_->server_context()->peer();
      if (std::optional<std::string> header = SceneHeaderOf(*methods->GetRecvInitialMetadata())) {
        scene_ = *std::move(header);
      }
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE)) {
      if (const void* message = methods->GetRecvMessage(); message != nullptr) {
        if (raw_) {
          const auto& bytes = *static_cast<const grpc::ByteBuffer*>(message);
          bytes_in_ += bytes.Length();
          if (scene_.empty() && scene_field_ != 0 && !first_read_) {
            scene_ = StringField(bytes, scene_field_);
          }
        } else if (generated_) {
          // A generated message: its type derives from MessageLite alone.
          bytes_in_ += static_cast<const google::protobuf::MessageLite*>(message)->ByteSizeLong();
        }
        first_read_ = true;
      }
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE)) {
      if (const grpc::ByteBuffer* bytes = methods->GetSerializedSendMessage()) {
        bytes_out_ += bytes->Length();
      }
    }
    // Logged before the status goes out, so that a client's calls made one after the other
    // are logged in that order.
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS) && !logged_) {
      Log(methods->GetSendStatus().error_code());
    }
    methods->Proceed();
  }

 private:
  static const char* CodeName(grpc::StatusCode code) {
    switch (code) {
      case grpc::StatusCode::OK:
        return "OK";
      case grpc::StatusCode::CANCELLED:
        return "CANCELLED";
      case grpc::StatusCode::UNKNOWN:
        return "UNKNOWN";
      case grpc::StatusCode::INVALID_ARGUMENT:
        return "INVALID_ARGUMENT";
      case grpc::StatusCode::DEADLINE_EXCEEDED:
        return "DEADLINE_EXCEEDED";
      case grpc::StatusCode::NOT_FOUND:
        return "NOT_FOUND";
      case grpc::StatusCode::ALREADY_EXISTS:
        return "ALREADY_EXISTS";
      case grpc::StatusCode::PERMISSION_DENIED:
        return "PERMISSION_DENIED";
      case grpc::StatusCode::RESOURCE_EXHAUSTED:
        return "RESOURCE_EXHAUSTED";
      case grpc::StatusCode::FAILED_PRECONDITION:
        return "FAILED_PRECONDITION";
      case grpc::StatusCode::ABORTED:
        return "ABORTED";
      case grpc::StatusCode::OUT_OF_RANGE:
        return "OUT_OF_RANGE";
      case grpc::StatusCode::UNIMPLEMENTED:
        return "UNIMPLEMENTED";
      case grpc::StatusCode::INTERNAL:
        return "INTERNAL";
      case grpc::StatusCode::UNAVAILABLE:
        return "UNAVAILABLE";
      case grpc::StatusCode::DATA_LOSS:
        return "DATA_LOSS";
      case grpc::StatusCode::UNAUTHENTICATED:
        return "UNAUTHENTICATED";
      default:
        return "UNKNOWN";
    }
  }

  void Log(grpc::StatusCode code) {
    logged_ = true;
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
            .count();
    spdlog::debug("access: method {}, scene {}, code {}, {:.3f} ms, peer {}, bytes in {}, out {}",
                  method_, Quoted(scene_), CodeName(code), ms, peer_, bytes_in_, bytes_out_);
  }

  grpc::experimental::ServerRpcInfo* const info_;
  const std::string method_;
  const std::chrono::steady_clock::time_point start_;
  // How the method's requests arrive: as bytes, as generated messages, or neither is known (an
  // unknown method: its bytes are not counted).
  bool raw_ = false;
  bool generated_ = false;
  int scene_field_ = 0;
  bool first_read_ = false;
  std::string scene_;
  std::string peer_ = "-";
  uint64_t bytes_in_ = 0;
  uint64_t bytes_out_ = 0;
  bool logged_ = false;
};

class AccessLogFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    if (!spdlog::should_log(spdlog::level::debug)) return nullptr;
    return new AccessLogInterceptor(info);
  }
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> NewAccessLogFactory() {
  return std::make_unique<AccessLogFactory>();
}

}  // namespace collide
