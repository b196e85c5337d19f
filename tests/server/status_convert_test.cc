#include "server/status_convert.h"

#include <gtest/gtest.h>

#include "absl/status/status.h"

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
