#include "server/convert/status_convert.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace collide {
namespace {

TEST(ToGrpcStatus, KeepsEveryCodeAndTheMessage) {
  const absl::StatusCode codes[] = {
      absl::StatusCode::kCancelled,          absl::StatusCode::kUnknown,
      absl::StatusCode::kInvalidArgument,    absl::StatusCode::kDeadlineExceeded,
      absl::StatusCode::kNotFound,           absl::StatusCode::kAlreadyExists,
      absl::StatusCode::kPermissionDenied,   absl::StatusCode::kResourceExhausted,
      absl::StatusCode::kFailedPrecondition, absl::StatusCode::kAborted,
      absl::StatusCode::kOutOfRange,         absl::StatusCode::kUnimplemented,
      absl::StatusCode::kInternal,           absl::StatusCode::kUnavailable,
      absl::StatusCode::kDataLoss,           absl::StatusCode::kUnauthenticated};
  for (absl::StatusCode code : codes) {
    const grpc::Status status = ToGrpcStatus(absl::Status(code, "ops[3].remove: no body 7"));
    EXPECT_EQ(static_cast<int>(status.error_code()), static_cast<int>(code));
    EXPECT_EQ(status.error_message(), "ops[3].remove: no body 7");
  }
}

TEST(ToGrpcStatus, CutsALongMessageAndSaysHowMuchWasCut) {
  const std::string name(70000, 'n');
  const grpc::Status status =
      ToGrpcStatus(absl::NotFoundError(absl::StrCat("scene: no scene \"", name, "\"")));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_LE(status.error_message().size(), kMaxStatusMessageBytes);
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "scene: no scene \"nnnn"))
      << status.error_message().substr(0, 40);
  const size_t kept = status.error_message().find("...");
  ASSERT_NE(kept, std::string::npos);
  // What was cut plus what was kept is the whole message (`scene: no scene "` + name + `"`).
  EXPECT_EQ(status.error_message().substr(kept),
            absl::StrCat("... (", name.size() + 18 - kept, " more bytes)"));
}

TEST(ToGrpcStatus, NeverSplitsAUtf8Character) {
  // Two-byte characters from the start: wherever the cut falls, it must fall between them.
  for (size_t lead = 0; lead < 4; ++lead) {
    std::string message(lead, 'a');
    for (int i = 0; i < 2000; ++i) message += "\xC3\xA9";  // U+00E9
    const std::string bounded = BoundedStatusMessage(message);
    const size_t kept = bounded.find("...");
    ASSERT_NE(kept, std::string::npos);
    EXPECT_EQ((kept - lead) % 2, 0u) << "lead " << lead;
    EXPECT_EQ(bounded.substr(0, kept), message.substr(0, kept));
  }
}

TEST(ToGrpcStatus, KeepsAMessageOfExactlyTheLimit) {
  const std::string message(kMaxStatusMessageBytes, 'm');
  EXPECT_EQ(ToGrpcStatus(absl::InternalError(message)).error_message(), message);
  v1::Error error;
  ToProtoError(absl::InternalError(message + "x"), &error);
  EXPECT_LE(error.message().size(), kMaxStatusMessageBytes);
}

TEST(ToGrpcStatus, MapsOkToOk) { EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok()); }

TEST(ToProtoError, CarriesTheGoogleRpcCodeAndTheMessage) {
  v1::Error error;
  ToProtoError(absl::InvalidArgumentError("scene: bad"), &error);
  EXPECT_EQ(error.code(), 3);
  EXPECT_EQ(error.message(), "scene: bad");
  ToProtoError(absl::NotFoundError("x"), &error);
  EXPECT_EQ(error.code(), 5);
  ToProtoError(absl::PermissionDeniedError("x"), &error);
  EXPECT_EQ(error.code(), 7);
  ToProtoError(absl::ResourceExhaustedError("x"), &error);
  EXPECT_EQ(error.code(), 8);
}

TEST(PrefixStatus, PutsThePrefixInFrontAndKeepsTheCode) {
  const absl::Status status =
      PrefixStatus(absl::NotFoundError("scene \"a\" was deleted"), "scene: ");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "scene: scene \"a\" was deleted");
  EXPECT_TRUE(PrefixStatus(absl::OkStatus(), "x").ok());
}

}  // namespace
}  // namespace collide
