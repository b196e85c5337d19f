#include "server/replication/stream_message.h"

#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/field_error.h"

namespace collide {
namespace {

constexpr size_t kMaxHeaderBytes = 512;

constexpr absl::string_view KindName(MessageKind kind) {
  switch (kind) {
    case MessageKind::kRecord:
      return "record";
    case MessageKind::kTakeover:
      return "takeover";
    case MessageKind::kSnapshotPart:
      return "part";
    case MessageKind::kSnapshot:
      return "snapshot";
  }
  return "?";
}

// The fields each kind has (besides kind, incarnation and epoch).
std::set<std::string> FieldsOf(MessageKind kind) {
  switch (kind) {
    case MessageKind::kRecord:
      return {"prev", "first", "part"};
    case MessageKind::kTakeover:
      return {"prev"};
    case MessageKind::kSnapshotPart:
      return {"part"};
    case MessageKind::kSnapshot:
      return {"first", "parts", "bytes", "crc32c", "covers_epoch", "covers"};
  }
  return {};
}

}  // namespace

std::string EncodeMessageHeader(const MessageHeader& h) {
  std::string text = absl::StrFormat("kind=%s incarnation=%016x epoch=%d",
                                     std::string(KindName(h.kind)), h.incarnation, h.epoch);
  switch (h.kind) {
    case MessageKind::kRecord:
      absl::StrAppend(&text, " prev=", h.prev, " first=", h.first, " part=", h.part, "/", h.parts);
      break;
    case MessageKind::kTakeover:
      absl::StrAppend(&text, " prev=", h.prev);
      break;
    case MessageKind::kSnapshotPart:
      absl::StrAppend(&text, " part=", h.part, "/", h.parts);
      break;
    case MessageKind::kSnapshot:
      absl::StrAppend(&text, " first=", h.first, " parts=", h.parts, " bytes=", h.bytes,
                      absl::StrFormat(" crc32c=%08x", h.crc32c), " covers_epoch=", h.covers_epoch,
                      " covers=", h.covers);
      break;
  }
  return text;
}

absl::StatusOr<MessageHeader> ParseMessageHeader(absl::string_view text) {
  if (text.size() > kMaxHeaderBytes) {
    return InvalidFieldError(kMessageHeader, absl::StrCat("longer than ", kMaxHeaderBytes));
  }
  MessageHeader h;
  std::set<std::string> seen;
  bool have_kind = false;
  for (absl::string_view item : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    const size_t eq = item.find('=');
    if (eq == absl::string_view::npos) {
      return InvalidFieldError(kMessageHeader, absl::StrCat("\"", item, "\" is not name=value"));
    }
    const std::string name(item.substr(0, eq));
    const absl::string_view value = item.substr(eq + 1);
    if (!seen.insert(name).second) return InvalidFieldError(name, "given twice");
    auto number = [&](uint64_t* out) -> absl::Status {
      return absl::SimpleAtoi(value, out) ? absl::OkStatus()
                                          : InvalidFieldError(name, "not a number");
    };
    absl::Status status;
    if (name == "kind") {
      have_kind = true;
      if (value == "record") {
        h.kind = MessageKind::kRecord;
      } else if (value == "takeover") {
        h.kind = MessageKind::kTakeover;
      } else if (value == "part") {
        h.kind = MessageKind::kSnapshotPart;
      } else if (value == "snapshot") {
        h.kind = MessageKind::kSnapshot;
      } else {
        return InvalidFieldError(name, absl::StrCat("unknown kind \"", value, "\""));
      }
    } else if (name == "incarnation") {
      if (value.size() != 16 || !absl::SimpleHexAtoi(value, &h.incarnation)) {
        return InvalidFieldError(name, "not 16 hexadecimal digits");
      }
    } else if (name == "crc32c") {
      if (value.size() != 8 || !absl::SimpleHexAtoi(value, &h.crc32c)) {
        return InvalidFieldError(name, "not 8 hexadecimal digits");
      }
    } else if (name == "part") {
      const size_t slash = value.find('/');
      if (slash == absl::string_view::npos || !absl::SimpleAtoi(value.substr(0, slash), &h.part) ||
          !absl::SimpleAtoi(value.substr(slash + 1), &h.parts)) {
        return InvalidFieldError(name, "not I/N");
      }
    } else if (name == "parts") {
      if (!absl::SimpleAtoi(value, &h.parts)) return InvalidFieldError(name, "not a number");
    } else if (name == "epoch") {
      status = number(&h.epoch);
    } else if (name == "prev") {
      status = number(&h.prev);
    } else if (name == "first") {
      status = number(&h.first);
    } else if (name == "bytes") {
      status = number(&h.bytes);
    } else if (name == "covers_epoch") {
      status = number(&h.covers_epoch);
    } else if (name == "covers") {
      status = number(&h.covers);
    } else {
      return InvalidFieldError(name, "unknown field");
    }
    if (!status.ok()) return status;
  }
  if (!have_kind) return InvalidFieldError("kind", "missing");
  std::set<std::string> expected = FieldsOf(h.kind);
  expected.insert({"kind", "incarnation", "epoch"});
  for (const std::string& name : expected) {
    if (!seen.contains(name)) return InvalidFieldError(name, "missing");
  }
  for (const std::string& name : seen) {
    if (!expected.contains(name)) {
      return InvalidFieldError(name, absl::StrCat("not a field of kind ", KindName(h.kind)));
    }
  }
  if (h.parts < 1 || h.parts > kMaxParts) {
    return InvalidFieldError("parts", absl::StrCat("not from 1 to ", kMaxParts));
  }
  if (h.part < 1 || h.part > h.parts) return InvalidFieldError("part", "not from 1 to N");
  if (h.epoch == 0) return InvalidFieldError("epoch", "must be at least 1");
  return h;
}

std::vector<absl::string_view> SplitParts(absl::string_view payload, size_t max_part) {
  std::vector<absl::string_view> parts;
  size_t at = 0;
  do {
    const size_t n = std::min(max_part, payload.size() - at);
    parts.push_back(payload.substr(at, n));
    at += n;
  } while (at < payload.size());
  return parts;
}

absl::StatusOr<bool> PartAssembler::Add(uint64_t first, uint32_t part, uint32_t parts,
                                        absl::string_view data) {
  if (next_part_ == 1) {
    if (part != 1) {
      return absl::DataLossError(absl::StrCat("part ", part, "/", parts, " of the record at ",
                                              first, " without its first part"));
    }
    first_ = first;
    parts_ = parts;
    data_.clear();
  } else if (first != first_ || part != next_part_ || parts != parts_) {
    return absl::DataLossError(absl::StrCat("part ", part, "/", parts, " of the record at ", first,
                                            " while part ", next_part_, "/", parts_,
                                            " of the record at ", first_, " was due"));
  }
  if (data_.size() + data.size() > max_bytes_) {
    return absl::DataLossError(
        absl::StrCat("the record at ", first, " is longer than ", max_bytes_, " bytes"));
  }
  data_.append(data.data(), data.size());
  if (part == parts) {
    next_part_ = 1;
    return true;
  }
  next_part_ = part + 1;
  return false;
}

std::string PartAssembler::Take() {
  std::string out;
  out.swap(data_);
  next_part_ = 1;
  return out;
}

void PartAssembler::Reset() {
  data_.clear();
  next_part_ = 1;
}

}  // namespace collide
