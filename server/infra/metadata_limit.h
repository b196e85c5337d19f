#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "server/infra/auth.h"

namespace collide {

// Oversized request metadata, checked per call.
//
// gRPC 1.51's HTTP/2 layer treats a header block larger than its limit
// (GRPC_ARG_MAX_METADATA_SIZE) as an error of the whole connection: it closes the connection, and
// every call open on it, of any client sharing that channel, ends with RESOURCE_EXHAUSTED. So the
// server gives that layer a larger limit (TransportMetadataLimit) and enforces the configured one
// itself, per call (CheckMetadataSize): a call whose metadata is over --max_metadata_bytes but
// within the transport's limit fails alone, and the connection and its other calls go on.

/// How many times --max_metadata_bytes the HTTP/2 layer accepts before it closes a connection.
inline constexpr int64_t kTransportMetadataFactor = 2;

/// The limit given to gRPC's HTTP/2 layer (GRPC_ARG_MAX_METADATA_SIZE) for a server whose calls
/// may carry at most `max_metadata_bytes` of metadata: kTransportMetadataFactor times it, at most
/// INT32_MAX.
int TransportMetadataLimit(int max_metadata_bytes);

/// The size of a call's metadata as HTTP/2 counts a header list (RFC 7540 section 6.5.2): for
/// each entry, its name's and value's bytes plus 32. (gRPC's own count also covers the
/// pseudo-headers and the headers it consumes itself, such as :path and grpc-timeout.)
uint64_t MetadataSize(const ClientMetadata& metadata);

/// OK when `metadata` is at most `max_metadata_bytes` (MetadataSize); otherwise
/// RESOURCE_EXHAUSTED `metadata: 20512 bytes of request metadata exceed the server's limit of
/// 16384 (--max_metadata_bytes)`. A `max_metadata_bytes` of 0 or less checks nothing.
absl::Status CheckMetadataSize(const ClientMetadata& metadata, int max_metadata_bytes);

}  // namespace collide
