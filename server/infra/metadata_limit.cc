#include "server/infra/metadata_limit.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"

namespace collide {

int TransportMetadataLimit(int max_metadata_bytes) {
  const int64_t limit = int64_t{max_metadata_bytes} * kTransportMetadataFactor;
  return static_cast<int>(std::min<int64_t>(limit, std::numeric_limits<int32_t>::max()));
}

uint64_t MetadataSize(const ClientMetadata& metadata) {
  // RFC 7540 section 6.5.2: an entry's size is its name and value plus an overhead of 32 bytes.
  constexpr uint64_t kEntryOverhead = 32;
  uint64_t size = 0;
  for (const auto& [name, value] : metadata) size += name.size() + value.size() + kEntryOverhead;
  return size;
}

absl::Status CheckMetadataSize(const ClientMetadata& metadata, int max_metadata_bytes) {
  if (max_metadata_bytes <= 0) return absl::OkStatus();
  const uint64_t size = MetadataSize(metadata);
  if (size <= static_cast<uint64_t>(max_metadata_bytes)) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat("metadata: ", size, " bytes of request metadata exceed the server's limit of ",
                   max_metadata_bytes, " (--max_metadata_bytes)"));
}

}  // namespace collide
