#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace collide {

// The viewer's answers and events as text: every one is a message (the API's, collide/v1, or
// the viewer's own, collide/viewer/v1) printed with protobuf's JSON mapping, and every refusal is
// a collide.viewer.v1.Error.

/// `message` in protobuf's JSON mapping as the viewer writes every answer and event: field
/// names as in the .proto, fields at their default values printed too (an absent message or
/// optional field is left out), 64-bit integers as strings, enums by name; one line, no newline.
std::string ToJson(const google::protobuf::Message& message);

/// An answer of the API: the HTTP status and its JSON body.
struct ViewerReply {
  int http_status = 200;
  std::string body;
};

/// `message` as a 200 answer (ToJson and a newline).
ViewerReply JsonReply(const google::protobuf::Message& message);

/// The HTTP status of a refusal with `code`: 400 INVALID_ARGUMENT, OUT_OF_RANGE and
/// FAILED_PRECONDITION, 401 UNAUTHENTICATED, 403 PERMISSION_DENIED, 404 NOT_FOUND, 413
/// RESOURCE_EXHAUSTED, 503 UNAVAILABLE, 500 otherwise.
int HttpStatusOf(absl::StatusCode code);

/// `status` as HttpStatusOf's status and a collide.viewer.v1.Error body, `{"error": "<message>",
/// "code": "<the code's name>"}` and a newline. The message is the status's own, rendered in the
/// request's words first (ForRequest); a message that is not UTF-8 is escaped (`\377`).
ViewerReply ErrorReply(const absl::Status& status);

/// The body of a refusal the HTTP listener itself makes (a method other than GET and HEAD, a
/// malformed request, an unknown path) with HTTP status `http_status`: a collide.viewer.v1.Error
/// whose code is NOT_FOUND for 404, UNIMPLEMENTED for 405, RESOURCE_EXHAUSTED for 413, 414 and
/// 431, INVALID_ARGUMENT for another 4xx, INTERNAL otherwise.
std::string ListenerErrorBody(int http_status, absl::string_view message);

}  // namespace collide
