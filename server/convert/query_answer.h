#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "collide/v1/collide.pb.h"
#include "grpcpp/support/byte_buffer.h"
#include "server/service_options.h"

namespace collide {

// The size of a QueryStream answer (a QueryBatchResult), bounded before the batch runs, and the
// encoder that writes it result by result, so that an answer is held as its bytes (about 50 per
// hit) and never as a tree of messages (about 200 bytes per hit, on top of the bytes).

/// The most bytes one hit adds to an answer: a Hit with every field at its longest (body_id a
/// 10-byte varint, distance, point, normal, depth, start_overlapping, triangle a 5-byte varint,
/// back_face), with its tag and length.
inline constexpr uint64_t kMaxHitBytes = 67;
/// The most bytes one QueryResult adds to an answer beside its hits or its error: its tag and
/// length (up to 5 bytes), request_id (up to 11) and truncated (2).
inline constexpr uint64_t kMaxResultBytes = 19;
/// The most bytes a query's Error adds to its QueryResult: its tag and length (3), code (2) and
/// a message of at most kMaxStatusMessageBytes (1,024) with its tag and length (3).
inline constexpr uint64_t kMaxResultErrorBytes = 1032;
/// The most bytes of an answer beside its results: the version (11).
inline constexpr uint64_t kMaxAnswerHeaderBytes = 11;

/// The largest answer a QueryBatch can get, whatever the scene holds.
struct AnswerBound {
  /// The sum over its queries of max_hits for MODE_ALL (0 counts as min(kDefaultMaxHits,
  /// limits.max_hits), larger values as limits.max_hits) and 1 otherwise.
  uint64_t hits = 0;
  /// Encoded bytes: 11 + the sum over its queries of 19 + max(67 x its hits, 1,032). A query
  /// answered with an error instead of hits has room for it either way.
  uint64_t bytes = 0;
};

/// The largest answer `batch` can get.
AnswerBound MaxAnswer(const v1::QueryBatch& batch, const ServiceLimits& limits);

/// Encodes one QueryBatchResult into a grpc::ByteBuffer one QueryResult at a time: the bytes are
/// those of the whole message serialized at once (fields in order: version, then results), in
/// blocks of up to 1 MiB. Not for a batch error (serialize that small message as it is).
class QueryAnswerWriter {
 public:
  /// Starts an answer computed against scene version `version`.
  explicit QueryAnswerWriter(uint64_t version);
  QueryAnswerWriter(const QueryAnswerWriter&) = delete;
  QueryAnswerWriter& operator=(const QueryAnswerWriter&) = delete;
  ~QueryAnswerWriter();

  /// Appends `result` as the next entry of `results`.
  void Add(const v1::QueryResult& result);
  /// The bytes written so far.
  uint64_t bytes() const;
  /// Moves the answer into `out` (replacing what it held); the writer must not be used after.
  void Finish(grpc::ByteBuffer* out);

 private:
  class Blocks;
  std::unique_ptr<Blocks> blocks_;
};

}  // namespace collide
