#include "server/convert/query_answer.h"

#include <algorithm>
#include <vector>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream.h"
#include "grpc/slice.h"
#include "grpcpp/support/slice.h"
#include "query/batch.h"

namespace collide {
namespace {

// The wire tags of QueryBatchResult's fields (field number << 3 | wire type).
constexpr uint32_t kVersionTag = v1::QueryBatchResult::kVersionFieldNumber << 3 | 0;  // varint
constexpr uint32_t kResultsTag = v1::QueryBatchResult::kResultsFieldNumber << 3 | 2;  // bytes

// Blocks start small (most answers are a few hundred bytes) and double up to kMaxBlockBytes.
constexpr size_t kFirstBlockBytes = 4 << 10;
constexpr size_t kMaxBlockBytes = 1 << 20;
// When the last block has more than this unused, its bytes are copied into a block of their own
// size, so that an answer waiting to be written holds no more than its bytes.
constexpr size_t kMaxUnusedBytes = 16 << 10;

}  // namespace

AnswerBound MaxAnswer(const v1::QueryBatch& batch, const ServiceLimits& limits) {
  AnswerBound bound{.hits = 0, .bytes = kMaxAnswerHeaderBytes};
  for (const v1::Query& query : batch.queries()) {
    uint64_t hits = 1;
    if (query.mode() == v1::MODE_ALL) {
      hits = std::min<uint64_t>(query.max_hits() == 0 ? kDefaultMaxHits : query.max_hits(),
                                limits.max_hits);
    }
    bound.hits += hits;
    bound.bytes += kMaxResultBytes + std::max(hits * kMaxHitBytes, kMaxResultErrorBytes);
  }
  return bound;
}

// A protobuf output stream into gRPC slices that it allocates as the message grows.
class QueryAnswerWriter::Blocks final : public google::protobuf::io::ZeroCopyOutputStream {
 public:
  bool Next(void** data, int* size) override {
    if (blocks_.empty() || used_ == blocks_.back().size()) {
      const size_t bytes =
          blocks_.empty() ? kFirstBlockBytes : std::min(2 * blocks_.back().size(), kMaxBlockBytes);
      grpc_slice block = grpc_slice_malloc(bytes);
      // A fresh block is this stream's alone until Finish: its bytes may be written.
      data_ = GRPC_SLICE_START_PTR(block);
      blocks_.emplace_back(block, grpc::Slice::STEAL_REF);
      used_ = 0;
    }
    *data = data_ + used_;
    *size = static_cast<int>(blocks_.back().size() - used_);
    used_ = blocks_.back().size();
    return true;
  }

  void BackUp(int count) override { used_ -= static_cast<size_t>(count); }

  int64_t ByteCount() const override {
    int64_t bytes = 0;
    for (size_t i = 0; i + 1 < blocks_.size(); ++i)
      bytes += static_cast<int64_t>(blocks_[i].size());
    return bytes + static_cast<int64_t>(used_);
  }

  // `out` gets the bytes written; the stream is empty after.
  void Finish(grpc::ByteBuffer* out) {
    if (!blocks_.empty()) {
      grpc::Slice& last = blocks_.back();
      if (used_ == 0) {
        blocks_.pop_back();
      } else if (last.size() - used_ > kMaxUnusedBytes) {
        last = grpc::Slice(last.begin(), used_);  // a copy of the used part
      } else {
        last = last.sub(0, used_);
      }
    }
    *out = grpc::ByteBuffer(blocks_.data(), blocks_.size());
    blocks_.clear();
    used_ = 0;
  }

 private:
  // Every block but the last is full; the last one holds `used_` bytes, from `data_`.
  std::vector<grpc::Slice> blocks_;
  uint8_t* data_ = nullptr;
  size_t used_ = 0;
};

QueryAnswerWriter::QueryAnswerWriter(uint64_t version) : blocks_(std::make_unique<Blocks>()) {
  if (version == 0) return;  // proto3 leaves a zero scalar out
  google::protobuf::io::CodedOutputStream out(blocks_.get());
  out.WriteTag(kVersionTag);
  out.WriteVarint64(version);
}

QueryAnswerWriter::~QueryAnswerWriter() = default;

void QueryAnswerWriter::Add(const v1::QueryResult& result) {
  // The coded stream hands back what it did not use when it goes out of scope.
  google::protobuf::io::CodedOutputStream out(blocks_.get());
  const size_t size = result.ByteSizeLong();
  out.WriteTag(kResultsTag);
  out.WriteVarint32(static_cast<uint32_t>(size));
  result.SerializeWithCachedSizes(&out);
}

uint64_t QueryAnswerWriter::bytes() const { return static_cast<uint64_t>(blocks_->ByteCount()); }

void QueryAnswerWriter::Finish(grpc::ByteBuffer* out) { blocks_->Finish(out); }

}  // namespace collide
