#include "server/convert/query_answer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "grpcpp/support/slice.h"
#include "server/convert/status_convert.h"

namespace collide {
namespace {

constexpr uint32_t kSeed = 20240615;

// The bytes a ByteBuffer holds, in one string.
std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(buffer.Dump(&slices).ok());
  std::string bytes;
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return bytes;
}

// What `answer` takes when QueryAnswerWriter encodes it.
std::string WriterBytes(const v1::QueryBatchResult& answer) {
  QueryAnswerWriter writer(answer.version());
  for (const v1::QueryResult& result : answer.results()) writer.Add(result);
  const uint64_t counted = writer.bytes();
  grpc::ByteBuffer out;
  writer.Finish(&out);
  EXPECT_EQ(out.Length(), counted);
  return Flatten(out);
}

// A hit with random fields, some of them zero (left out of the encoding) or -0.0 (kept).
v1::Hit RandomHit(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> pick(0, 3);
  std::uniform_real_distribution<float> value(-1e6f, 1e6f);
  auto number = [&] {
    switch (pick(rng)) {
      case 0:
        return 0.0f;
      case 1:
        return -0.0f;
      default:
        return value(rng);
    }
  };
  v1::Hit hit;
  hit.set_body_id(pick(rng) == 0 ? 0 : rng() >> (rng() % 64));
  hit.set_distance(number());
  hit.mutable_point()->set_x(number());
  hit.mutable_point()->set_y(number());
  hit.mutable_point()->set_z(number());
  hit.mutable_normal()->set_x(number());
  hit.mutable_normal()->set_y(number());
  hit.mutable_normal()->set_z(number());
  hit.set_depth(number());
  hit.set_start_overlapping(pick(rng) == 0);
  if (pick(rng) != 0) hit.set_triangle(static_cast<uint32_t>(rng() >> (rng() % 64)));
  hit.set_back_face(pick(rng) == 0);
  return hit;
}

// A Hit with every field at its longest encoding.
v1::Hit LongestHit() {
  v1::Hit hit;
  hit.set_body_id(std::numeric_limits<uint64_t>::max());
  hit.set_distance(1.5f);
  for (v1::Vec3* v : {hit.mutable_point(), hit.mutable_normal()}) {
    v->set_x(-1.0f);
    v->set_y(2.0f);
    v->set_z(-3.0f);
  }
  hit.set_depth(0.25f);
  hit.set_start_overlapping(true);
  hit.set_triangle(std::numeric_limits<uint32_t>::max());
  hit.set_back_face(true);
  return hit;
}

// The bytes `result` adds to a QueryBatchResult: its tag, its length and itself.
uint64_t EntryBytes(const v1::QueryResult& result) {
  const size_t size = result.ByteSizeLong();
  return 1 + google::protobuf::io::CodedOutputStream::VarintSize64(size) + size;
}

TEST(QueryAnswerWriter, WritesTheBytesOfTheWholeMessageSerializedAtOnce) {
  std::mt19937_64 rng(kSeed);
  // From empty answers to ones of several MiB (blocks of up to 1 MiB, the last one cut or
  // copied).
  for (int hits_per_result : {0, 1, 3, 100, 4096}) {
    for (int results : {0, 1, 7, 60}) {
      v1::QueryBatchResult answer;
      answer.set_version(results % 2 == 0 ? 0 : rng());
      for (int r = 0; r < results; ++r) {
        v1::QueryResult* result = answer.add_results();
        result->set_request_id(r % 3 == 0 ? 0 : rng());
        if (r % 5 == 4) {
          ToProtoError(absl::InvalidArgumentError(absl::StrCat("queries[", r, "].kind: not set")),
                       result->mutable_error());
          continue;
        }
        result->set_truncated(r % 2 == 1);
        for (int h = 0; h < hits_per_result; ++h) *result->add_hits() = RandomHit(rng);
      }
      const std::string bytes = WriterBytes(answer);
      EXPECT_EQ(bytes, answer.SerializeAsString())
          << "seed " << kSeed << ", " << results << " results of " << hits_per_result << " hits";
      v1::QueryBatchResult parsed;
      ASSERT_TRUE(parsed.ParseFromString(bytes));
      EXPECT_EQ(parsed.results_size(), results);
    }
  }
}

TEST(QueryAnswerWriter, AnAnswerWithNothingInItIsEmpty) {
  EXPECT_EQ(WriterBytes(v1::QueryBatchResult()), "");
}

TEST(MaxHitBytes, IsWhatTheLongestHitAddsToAResult) {
  v1::QueryResult result;
  const size_t empty = result.ByteSizeLong();
  *result.add_hits() = LongestHit();
  EXPECT_EQ(result.ByteSizeLong() - empty, kMaxHitBytes);
}

TEST(MaxHitBytes, BoundsWhatAnyHitAddsToAResult) {
  std::mt19937_64 rng(kSeed);
  for (int i = 0; i < 10000; ++i) {
    v1::QueryResult result;
    const size_t empty = result.ByteSizeLong();
    *result.add_hits() = RandomHit(rng);
    ASSERT_LE(result.ByteSizeLong() - empty, kMaxHitBytes) << "seed " << kSeed << ", hit " << i;
  }
}

TEST(MaxResultBytes, BoundsAResultBesideItsHits) {
  // The longest request_id and truncated set; hit counts that take the result's length to one,
  // two and three varint bytes.
  for (int hits : {0, 1, 2, 100, 300, 4096, 20000}) {
    v1::QueryResult result;
    result.set_request_id(std::numeric_limits<uint64_t>::max());
    result.set_truncated(true);
    for (int h = 0; h < hits; ++h) *result.add_hits() = LongestHit();
    EXPECT_LE(EntryBytes(result), kMaxResultBytes + static_cast<uint64_t>(hits) * kMaxHitBytes)
        << hits << " hits";
  }
  // The length itself: up to 5 bytes for any result under 4 GiB.
  EXPECT_EQ(google::protobuf::io::CodedOutputStream::VarintSize32(UINT32_MAX), 5u);
}

TEST(MaxResultErrorBytes, IsWhatTheLongestErrorAddsToAResult) {
  // A message of exactly kMaxStatusMessageBytes is kept whole: the longest an Error carries.
  v1::QueryResult result;
  const size_t empty = result.ByteSizeLong();
  ToProtoError(absl::DataLossError(std::string(kMaxStatusMessageBytes, 'x')),
               result.mutable_error());
  EXPECT_EQ(result.ByteSizeLong() - empty, kMaxResultErrorBytes);
  // Longer messages are cut below it, whatever the code.
  for (absl::StatusCode code :
       {absl::StatusCode::kCancelled, absl::StatusCode::kInvalidArgument,
        absl::StatusCode::kOutOfRange, absl::StatusCode::kUnauthenticated}) {
    for (size_t length : {size_t{1025}, size_t{5000}, size_t{1} << 20}) {
      v1::QueryResult cut;
      ToProtoError(absl::Status(code, std::string(length, 'y')), cut.mutable_error());
      EXPECT_LE(cut.ByteSizeLong() - empty, kMaxResultErrorBytes) << length;
    }
  }
}

v1::Query QueryOf(v1::Mode mode, uint32_t max_hits) {
  v1::Query query;
  query.mutable_raycast();
  query.set_mode(mode);
  query.set_max_hits(max_hits);
  return query;
}

TEST(MaxAnswer, CountsEachQueryAsItsHitsOrAnErrorWhicheverIsLonger) {
  ServiceLimits limits;
  limits.max_hits = 4096;
  struct Case {
    v1::Mode mode;
    uint32_t max_hits;
    uint64_t hits;
  };
  const Case cases[] = {
      {v1::MODE_CLOSEST, 0, 1},   {v1::MODE_ANY, 500, 1},     {v1::MODE_ALL, 0, 64},
      {v1::MODE_ALL, 1, 1},       {v1::MODE_ALL, 17, 17},     {v1::MODE_ALL, 18, 18},
      {v1::MODE_ALL, 4096, 4096}, {v1::MODE_ALL, 4097, 4096}, {v1::MODE_ALL, UINT32_MAX, 4096},
  };
  for (const Case& c : cases) {
    v1::QueryBatch batch;
    *batch.add_queries() = QueryOf(c.mode, c.max_hits);
    const AnswerBound bound = MaxAnswer(batch, limits);
    EXPECT_EQ(bound.hits, c.hits) << c.mode << " " << c.max_hits;
    EXPECT_EQ(bound.bytes, kMaxAnswerHeaderBytes + kMaxResultBytes +
                               std::max<uint64_t>(c.hits * kMaxHitBytes, kMaxResultErrorBytes))
        << c.mode << " " << c.max_hits;
  }
  // max_hits 0 asks for min(64, limits.max_hits).
  limits.max_hits = 10;
  v1::QueryBatch batch;
  *batch.add_queries() = QueryOf(v1::MODE_ALL, 0);
  EXPECT_EQ(MaxAnswer(batch, limits).hits, 10u);
  // Queries add up; an empty batch is its version.
  *batch.add_queries() = QueryOf(v1::MODE_CLOSEST, 0);
  EXPECT_EQ(MaxAnswer(batch, limits).hits, 11u);
  EXPECT_EQ(MaxAnswer(batch, limits).bytes,
            kMaxAnswerHeaderBytes + 2 * (kMaxResultBytes + kMaxResultErrorBytes));
  EXPECT_EQ(MaxAnswer(v1::QueryBatch(), limits).bytes, kMaxAnswerHeaderBytes);
}

TEST(MaxAnswer, BoundsEveryAnswerTheBatchCanGet) {
  // Random batches, and answers of the largest encodings each query allows: as many longest
  // hits as it may return, or its longest error, with the longest request_id and version.
  std::mt19937_64 rng(kSeed);
  ServiceLimits limits;
  limits.max_hits = 300;
  for (int round = 0; round < 200; ++round) {
    v1::QueryBatch batch;
    v1::QueryBatchResult answer;
    answer.set_version(std::numeric_limits<uint64_t>::max());
    const int queries = static_cast<int>(rng() % 40);
    for (int q = 0; q < queries; ++q) {
      const v1::Mode mode = static_cast<v1::Mode>(rng() % 3);
      const uint32_t max_hits = static_cast<uint32_t>(rng() % 400);
      *batch.add_queries() = QueryOf(mode, max_hits);
      v1::QueryResult* result = answer.add_results();
      result->set_request_id(std::numeric_limits<uint64_t>::max());
      if (rng() % 4 == 0) {
        ToProtoError(absl::InvalidArgumentError(std::string(kMaxStatusMessageBytes, 'e')),
                     result->mutable_error());
        continue;
      }
      result->set_truncated(true);
      const uint32_t hits =
          mode != v1::MODE_ALL ? 1
                               : std::min<uint32_t>(max_hits == 0 ? 64 : max_hits, limits.max_hits);
      for (uint32_t h = 0; h < hits; ++h) *result->add_hits() = LongestHit();
    }
    ASSERT_LE(answer.ByteSizeLong(), MaxAnswer(batch, limits).bytes)
        << "seed " << kSeed << ", round " << round;
  }
}

}  // namespace
}  // namespace collide
