#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <ostream>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collide/v1/collide.pb.h"

namespace collide::client {

/// How an export is stored in a file: the messages of ExportScene in order, as
/// - kPb: length-delimited protobuf (each SceneExportMessage preceded by its length as a
///   varint; compact and fast), or
/// - kJsonl: one JSON object per line (the proto3 JSON form of each SceneExportMessage with the
///   proto's field names: {"header": {...}}, {"chunk": {"bodies": [...]}}, {"trailer": {...}}),
///   for people and tools.
enum class ExportFormat : uint8_t { kPb, kJsonl };

/// "pb" or "jsonl"; INVALID_ARGUMENT `--format: ...` otherwise.
absl::StatusOr<ExportFormat> ParseExportFormat(std::string_view name);
/// "pb" or "jsonl".
const char* ExportFormatName(ExportFormat format);
/// The format of a file that starts with `first_bytes` (its first two bytes or fewer): a JSON
/// line starts with `{"`, which no delimited SceneExportMessage does (its byte after a length
/// of 123 would be the tag of field 4, which does not exist).
ExportFormat GuessExportFormat(std::string_view first_bytes);

/// Writes export messages to a stream in one format.
class ExportFileWriter {
 public:
  /// `out` must outlive the writer.
  ExportFileWriter(std::ostream* out, ExportFormat format) : out_(out), format_(format) {}
  /// Appends `message`; UNAVAILABLE when the stream fails.
  absl::Status Write(const v1::SceneExportMessage& message);

 private:
  std::ostream* const out_;
  const ExportFormat format_;
};

/// Reads export messages from a stream.
class ExportFileReader {
 public:
  /// `in` (seekable when the format is to be guessed) must outlive the reader; `format`:
  /// nullopt guesses it from the first bytes (GuessExportFormat).
  ExportFileReader(std::istream* in, std::optional<ExportFormat> format);
  /// The format read.
  ExportFormat format() const { return format_; }
  /// The next message: true, false at the end of the stream, or INVALID_ARGUMENT naming the
  /// message (`message 3: ...`) that does not parse.
  absl::StatusOr<bool> Next(v1::SceneExportMessage* message);

 private:
  std::istream* const in_;
  ExportFormat format_ = ExportFormat::kPb;
  uint64_t index_ = 0;
};

}  // namespace collide::client
