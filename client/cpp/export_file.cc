#include "client/cpp/export_file.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/util/json_util.h"

namespace collide::client {
namespace {

// The largest message read from a file (a chunk is about 1 MiB; a header holds at most 32,768
// marks).
constexpr uint32_t kMaxFileMessageBytes = 64u << 20;

}  // namespace

absl::StatusOr<ExportFormat> ParseExportFormat(std::string_view name) {
  if (name == "pb") return ExportFormat::kPb;
  if (name == "jsonl") return ExportFormat::kJsonl;
  return absl::InvalidArgumentError(
      absl::StrCat("--format: expected pb or jsonl, got \"", std::string(name), "\""));
}

const char* ExportFormatName(ExportFormat format) {
  return format == ExportFormat::kJsonl ? "jsonl" : "pb";
}

ExportFormat GuessExportFormat(std::string_view first_bytes) {
  return first_bytes.size() >= 2 && first_bytes[0] == '{' && first_bytes[1] == '"'
             ? ExportFormat::kJsonl
             : ExportFormat::kPb;
}

absl::Status ExportFileWriter::Write(const v1::SceneExportMessage& message) {
  if (format_ == ExportFormat::kJsonl) {
    std::string line;
    google::protobuf::util::JsonPrintOptions options;
    options.preserve_proto_field_names = true;
    auto status = google::protobuf::util::MessageToJsonString(message, &line, options);
    if (!status.ok()) {
      return absl::InternalError(absl::StrCat("jsonl: ", std::string(status.message())));
    }
    *out_ << line << '\n';
  } else {
    const std::string bytes = message.SerializeAsString();
    std::string prefix;
    {
      google::protobuf::io::StringOutputStream stream(&prefix);
      google::protobuf::io::CodedOutputStream coded(&stream);
      coded.WriteVarint32(static_cast<uint32_t>(bytes.size()));
    }
    out_->write(prefix.data(), static_cast<std::streamsize>(prefix.size()));
    out_->write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  if (!out_->good()) return absl::UnavailableError("could not write the export file");
  return absl::OkStatus();
}

ExportFileReader::ExportFileReader(std::istream* in, std::optional<ExportFormat> format) : in_(in) {
  if (format.has_value()) {
    format_ = *format;
    return;
  }
  char first[2] = {0, 0};
  in_->read(first, 2);
  const std::streamsize got = in_->gcount();
  in_->clear();
  in_->seekg(0);
  format_ = GuessExportFormat(std::string_view(first, static_cast<size_t>(got)));
}

absl::StatusOr<bool> ExportFileReader::Next(v1::SceneExportMessage* message) {
  const uint64_t index = index_++;
  message->Clear();
  if (format_ == ExportFormat::kJsonl) {
    std::string line;
    while (std::getline(*in_, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank line
      auto status = google::protobuf::util::JsonStringToMessage(line, message);
      if (!status.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("message ", index,
                                                       ": not a JSON export message (",
                                                       std::string(status.message()), ")"));
      }
      return true;
    }
    if (in_->bad()) return absl::UnavailableError("could not read the export file");
    return false;
  }
  // Length-delimited: a varint length, then the message.
  uint32_t length = 0;
  int shift = 0;
  int ch = 0;
  for (int i = 0;; ++i) {
    ch = in_->get();
    if (ch == std::char_traits<char>::eof()) {
      if (i == 0) return false;
      return absl::InvalidArgumentError(
          absl::StrCat("message ", index, ": the file ends inside its length"));
    }
    if (i == 5)
      return absl::InvalidArgumentError(absl::StrCat("message ", index, ": a bad length"));
    length |= static_cast<uint32_t>(ch & 0x7f) << shift;
    shift += 7;
    if ((ch & 0x80) == 0) break;
  }
  if (length > kMaxFileMessageBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("message ", index, ": ", length, " bytes, more than ", kMaxFileMessageBytes));
  }
  std::string bytes(length, '\0');
  in_->read(bytes.data(), length);
  if (static_cast<uint32_t>(in_->gcount()) != length) {
    return absl::InvalidArgumentError(absl::StrCat("message ", index, ": the file ends inside it"));
  }
  if (!message->ParseFromString(bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("message ", index, ": not a protobuf export message (", length, " bytes)"));
  }
  return true;
}

}  // namespace collide::client
