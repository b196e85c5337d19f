#include "server/viewer/viewer_json.h"

#include "absl/strings/escaping.h"
#include "collide/viewer/v1/viewer.pb.h"
#include "google/protobuf/stubs/common.h"
#include "google/protobuf/util/json_util.h"

namespace collide {
namespace {

// A string field must hold UTF-8 (protobuf drops other bytes, and logs each time): a message
// that quotes bytes of a request that are not is escaped whole (`\377`). The check is the one
// protobuf applies to string fields.
std::string Utf8Text(absl::string_view text) {
  if (google::protobuf::internal::IsStructurallyValidUTF8(text.data(),
                                                          static_cast<int>(text.size()))) {
    return std::string(text);
  }
  return absl::CEscape(text);
}

std::string ErrorBody(absl::StatusCode code, absl::string_view message) {
  viewer::v1::Error error;
  error.set_error(Utf8Text(message));
  error.set_code(absl::StatusCodeToString(code));
  std::string body = ToJson(error);
  body.push_back('\n');
  return body;
}

}  // namespace

std::string ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string out;
  // Fails only for a message that is not a generated one's; the viewer prints only those.
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  return out;
}

ViewerReply JsonReply(const google::protobuf::Message& message) {
  ViewerReply reply{200, ToJson(message)};
  reply.body.push_back('\n');
  return reply;
}

int HttpStatusOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kResourceExhausted:
      return 413;
    case absl::StatusCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

ViewerReply ErrorReply(const absl::Status& status) {
  return ViewerReply{HttpStatusOf(status.code()), ErrorBody(status.code(), status.message())};
}

std::string ListenerErrorBody(int http_status, absl::string_view message) {
  absl::StatusCode code = absl::StatusCode::kInternal;
  if (http_status == 404) {
    code = absl::StatusCode::kNotFound;
  } else if (http_status == 405) {
    code = absl::StatusCode::kUnimplemented;
  } else if (http_status == 413 || http_status == 414 || http_status == 431) {
    code = absl::StatusCode::kResourceExhausted;
  } else if (http_status >= 400 && http_status < 500) {
    code = absl::StatusCode::kInvalidArgument;
  }
  return ErrorBody(code, message);
}

}  // namespace collide
