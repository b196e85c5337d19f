#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace collide::fuzz {

/// The framing of the fuzz inputs that carry several parts (messages of a request stream, files
/// of a data directory): a sequence of records `<tag: 1 byte><length: 2 bytes, little endian>
/// <length bytes>`. A truncated last record keeps the bytes that are there, so every input
/// parses. Seeds are written with AppendRecord (tests/fuzz/make_seeds.cc).
class RecordReader {
 public:
  /// Reads records from `data` (which must outlive the reader).
  explicit RecordReader(absl::string_view data) : data_(data) {}

  /// The next record's tag and bytes, or nullopt at the end of the input.
  std::optional<std::pair<uint8_t, absl::string_view>> Next() {
    if (data_.empty()) return std::nullopt;
    const uint8_t tag = static_cast<uint8_t>(data_[0]);
    size_t length = 0;
    if (data_.size() >= 3) {
      length = static_cast<uint8_t>(data_[1]) |
               (static_cast<size_t>(static_cast<uint8_t>(data_[2])) << 8);
    }
    data_.remove_prefix(data_.size() >= 3 ? 3 : data_.size());
    if (length > data_.size()) length = data_.size();
    absl::string_view body = data_.substr(0, length);
    data_.remove_prefix(length);
    return std::make_pair(tag, body);
  }

 private:
  absl::string_view data_;
};

/// Appends one record (see RecordReader) to `out`; `bytes` must be under 64 KiB.
inline void AppendRecord(uint8_t tag, absl::string_view bytes, std::string* out) {
  out->push_back(static_cast<char>(tag));
  out->push_back(static_cast<char>(bytes.size() & 0xff));
  out->push_back(static_cast<char>((bytes.size() >> 8) & 0xff));
  out->append(bytes.data(), bytes.size());
}

}  // namespace collide::fuzz
