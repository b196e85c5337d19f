// The per-call metadata check and the transport limit derived from --max_metadata_bytes.

#include "server/infra/metadata_limit.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace collide {
namespace {

TEST(MetadataSize, CountsNameValueAndThirtyTwoBytesPerEntry) {
  const std::string big(1000, 'v');
  ClientMetadata metadata;
  EXPECT_EQ(MetadataSize(metadata), 0u);
  metadata.emplace("a", "");
  EXPECT_EQ(MetadataSize(metadata), 1u + 32);
  metadata.emplace("x-padding", big);
  metadata.emplace("x-padding", "short");  // a repeated key counts once per value
  EXPECT_EQ(MetadataSize(metadata), (1u + 32) + (9 + 1000 + 32) + (9 + 5 + 32));
}

TEST(CheckMetadataSize, AcceptsUpToTheLimitAndRefusesOneByteMore) {
  const std::string value(100, 'v');
  ClientMetadata metadata;
  metadata.emplace("key", value);
  const int size = 3 + 100 + 32;
  EXPECT_TRUE(CheckMetadataSize(metadata, size).ok());
  EXPECT_TRUE(CheckMetadataSize(metadata, size + 1).ok());
  const absl::Status over = CheckMetadataSize(metadata, size - 1);
  EXPECT_EQ(over.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(over.message(),
            "metadata: 135 bytes of request metadata exceed the server's limit of 134 "
            "(--max_metadata_bytes)");
  // No limit: nothing is checked.
  EXPECT_TRUE(CheckMetadataSize(metadata, 0).ok());
  EXPECT_TRUE(CheckMetadataSize(metadata, -1).ok());
}

TEST(TransportMetadataLimit, IsTwiceTheCallLimitAndNeverOverflows) {
  EXPECT_EQ(TransportMetadataLimit(16384), 32768);
  EXPECT_EQ(TransportMetadataLimit(1), 2);
  EXPECT_EQ(TransportMetadataLimit(std::numeric_limits<int32_t>::max() / 2),
            std::numeric_limits<int32_t>::max() - 1);
  EXPECT_EQ(TransportMetadataLimit(std::numeric_limits<int32_t>::max() / 2 + 1),
            std::numeric_limits<int32_t>::max());
  EXPECT_EQ(TransportMetadataLimit(std::numeric_limits<int32_t>::max()),
            std::numeric_limits<int32_t>::max());
}

}  // namespace
}  // namespace collide
