#include "store/record_format.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace collide {
namespace {

// A segment of `count` records with sequences first, first + 1, ...; offsets of each record.
std::string MakeSegment(uint64_t first, int count, std::vector<size_t>* offsets) {
  std::string data;
  for (int i = 0; i < count; ++i) {
    offsets->push_back(data.size());
    AppendRecord(first + i, std::string(10 + i * 7, static_cast<char>('a' + i)), &data);
  }
  return data;
}

TEST(RecordFormat, RoundTripsASegment) {
  std::vector<size_t> offsets;
  const std::string data = MakeSegment(41, 6, &offsets);
  SegmentScan scan = ScanSegment(data, 41);
  EXPECT_EQ(scan.end, SegmentEnd::kClean);
  EXPECT_EQ(scan.valid_bytes, data.size());
  ASSERT_EQ(scan.records.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(scan.records[i].sequence, 41u + i);
    EXPECT_EQ(scan.records[i].offset, offsets[i]);
    EXPECT_EQ(scan.records[i].payload, std::string(10 + i * 7, static_cast<char>('a' + i)));
  }
  EXPECT_EQ(ScanSegment("", 1).end, SegmentEnd::kClean);
}

TEST(RecordFormat, HeaderIsLengthChecksumSequenceLittleEndian) {
  std::string data;
  AppendRecord(0x0102030405060708ull, "xyz", &data);
  ASSERT_EQ(data.size(), kRecordHeaderBytes + 3);
  EXPECT_EQ(data.substr(0, 4), std::string("\x03\x00\x00\x00", 4));
  EXPECT_EQ(data.substr(8, 8), std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));
  EXPECT_EQ(data.substr(16), "xyz");
}

TEST(RecordFormat, EveryCutInsideTheLastRecordIsATornTail) {
  std::vector<size_t> offsets;
  const std::string data = MakeSegment(1, 5, &offsets);
  for (size_t cut = offsets[4] + 1; cut < data.size(); ++cut) {
    SegmentScan scan = ScanSegment(absl::string_view(data).substr(0, cut), 1);
    ASSERT_EQ(scan.end, SegmentEnd::kTornTail) << "cut at " << cut;
    EXPECT_EQ(scan.records.size(), 4u);
    EXPECT_EQ(scan.valid_bytes, offsets[4]);
    EXPECT_EQ(scan.bad_offset, offsets[4]);
  }
}

TEST(RecordFormat, ZerosAfterTheLastRecordAreATornTail) {
  std::vector<size_t> offsets;
  std::string data = MakeSegment(1, 3, &offsets);
  const size_t end = data.size();
  data.append(4096, '\0');
  SegmentScan scan = ScanSegment(data, 1);
  EXPECT_EQ(scan.end, SegmentEnd::kTornTail);
  EXPECT_EQ(scan.valid_bytes, end);
  EXPECT_EQ(scan.problem, "record length is zero or too large");
}

TEST(RecordFormat, ABitFlipInTheLastRecordIsATornTail) {
  std::vector<size_t> offsets;
  const std::string clean = MakeSegment(1, 5, &offsets);
  for (size_t byte = offsets[4]; byte < clean.size(); ++byte) {
    std::string data = clean;
    data[byte] ^= 0x10;
    SegmentScan scan = ScanSegment(data, 1);
    ASSERT_EQ(scan.end, SegmentEnd::kTornTail) << "byte " << byte;
    EXPECT_EQ(scan.bad_offset, offsets[4]);
  }
}

TEST(RecordFormat, ABitFlipBeforeTheLastRecordIsCorruption) {
  std::vector<size_t> offsets;
  const std::string clean = MakeSegment(1, 5, &offsets);
  // Every byte of records 0..3, header fields included: a damaged length cannot hide the
  // intact records behind it.
  for (size_t byte = 0; byte < offsets[4]; ++byte) {
    std::string data = clean;
    data[byte] ^= 0x01;
    SegmentScan scan = ScanSegment(data, 1);
    ASSERT_EQ(scan.end, SegmentEnd::kCorrupt) << "byte " << byte;
    const size_t record =
        std::upper_bound(offsets.begin(), offsets.end(), byte) - offsets.begin() - 1;
    EXPECT_EQ(scan.bad_offset, offsets[record]) << "byte " << byte;
    EXPECT_EQ(scan.records.size(), record);
  }
}

TEST(RecordFormat, AnIntactRecordOutOfSequenceIsCorruption) {
  std::string data;
  AppendRecord(1, "a", &data);
  AppendRecord(3, "b", &data);
  SegmentScan scan = ScanSegment(data, 1);
  EXPECT_EQ(scan.end, SegmentEnd::kCorrupt);
  EXPECT_EQ(scan.problem, "record has sequence 3, expected 2");
  EXPECT_EQ(ScanSegment(data, 7).end, SegmentEnd::kCorrupt);  // the first one already
}

TEST(RecordFormat, SingleRecordFiles) {
  std::string data;
  AppendRecord(9, "snapshot", &data);
  absl::StatusOr<RecordView> record = ReadSingleRecord(data, "s.snap");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->sequence, 9u);
  EXPECT_EQ(record->payload, "snapshot");
  std::string longer = data + "x";
  EXPECT_EQ(ReadSingleRecord(longer, "s.snap").status().code(), absl::StatusCode::kDataLoss);
  data[20] ^= 1;
  absl::Status damaged = ReadSingleRecord(data, "s.snap").status();
  EXPECT_EQ(damaged.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(damaged.message(), "s.snap at offset 0: checksum mismatch");
  EXPECT_EQ(ReadSingleRecord("", "e.snap").status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace collide
