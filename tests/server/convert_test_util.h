#pragma once

// What the tests of the service's converters share: requests from text format, the check of an
// error's code and path, small limits.

#include <gtest/gtest.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "google/protobuf/text_format.h"
#include "server/service_options.h"

namespace collide {

template <typename Message>
Message Parse(const std::string& text) {
  Message message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

// Checks the code exactly and that the message starts with `path` + ": ".
inline void ExpectError(const absl::Status& status, absl::StatusCode code, const std::string& path,
                        const std::string& what) {
  EXPECT_EQ(status.code(), code) << what << ": " << status;
  EXPECT_TRUE(absl::StartsWith(status.message(), path + ": "))
      << what << ": expected path " << path << ", got " << status.message();
}

inline ServiceLimits TestLimits() {
  ServiceLimits limits;
  limits.max_batch_ops = 4;
  limits.max_hits = 100;
  limits.max_excluded_ids = 2;
  limits.max_bodies_per_scene = 5000;
  return limits;
}

inline constexpr char kSphere[] = "shape { sphere { radius: 1 } }";

struct Case {
  const char* text;
  absl::StatusCode code;
  const char* path;
};

}  // namespace collide
