#include "server/replication/owner_record.h"

#include <set>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/field_error.h"
#include "scene/move_destination.h"

namespace collide {
namespace {

// A value without spaces, '=' or control characters, 1 to 256 bytes (an address, a backend name,
// a server id).
absl::Status CheckWord(absl::string_view field, absl::string_view value, bool may_be_empty) {
  if (value.empty()) {
    return may_be_empty ? absl::OkStatus() : InvalidFieldError(field, "is empty");
  }
  if (value.size() > kMaxMoveDestinationLength) {
    return InvalidFieldError(field, absl::StrCat("longer than ", kMaxMoveDestinationLength));
  }
  for (char c : value) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7F || c == '=') {
      return InvalidFieldError(field, "holds a space, '=', a control character or non-ASCII");
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string EncodeOwnerRecord(const OwnerRecord& record) {
  std::string text = absl::StrFormat("address=%s", record.address);
  if (!record.backend.empty()) absl::StrAppend(&text, " backend=", record.backend);
  if (!record.server.empty()) absl::StrAppend(&text, " server=", record.server);
  absl::StrAppend(&text, " epoch=", record.epoch,
                  absl::StrFormat(" incarnation=%016x", record.incarnation),
                  " lease_ms=", record.lease_ms);
  if (record.log > 0) absl::StrAppend(&text, " log=", record.log);
  if (record.released) absl::StrAppend(&text, " released=1");
  if (!record.successor.empty()) absl::StrAppend(&text, " successor=", record.successor);
  return text;
}

absl::StatusOr<OwnerRecord> ParseOwnerRecord(absl::string_view text) {
  if (text.size() > kMaxOwnerRecordBytes) {
    return InvalidFieldError("owner", absl::StrCat("longer than ", kMaxOwnerRecordBytes, " bytes"));
  }
  OwnerRecord record;
  std::set<std::string> seen;
  for (absl::string_view item : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    const size_t eq = item.find('=');
    if (eq == absl::string_view::npos) {
      return InvalidFieldError("owner", absl::StrCat("\"", item, "\" is not name=value"));
    }
    const std::string name(item.substr(0, eq));
    const absl::string_view value = item.substr(eq + 1);
    if (!seen.insert(name).second) return InvalidFieldError(name, "given twice");
    if (name == "address" || name == "backend" || name == "server" || name == "successor") {
      if (absl::Status status = CheckWord(name, value, name != "address"); !status.ok()) {
        return status;
      }
      std::string* out = name == "address"   ? &record.address
                         : name == "backend" ? &record.backend
                         : name == "server"  ? &record.server
                                             : &record.successor;
      *out = std::string(value);
    } else if (name == "epoch") {
      if (!absl::SimpleAtoi(value, &record.epoch) || record.epoch == 0) {
        return InvalidFieldError(name, "not a number from 1 to 2^64-1");
      }
    } else if (name == "incarnation") {
      if (value.size() != 16 || !absl::SimpleHexAtoi(value, &record.incarnation)) {
        return InvalidFieldError(name, "not 16 hexadecimal digits");
      }
    } else if (name == "lease_ms") {
      if (!absl::SimpleAtoi(value, &record.lease_ms) || record.lease_ms == 0) {
        return InvalidFieldError(name, "not a number from 1 to 2^32-1");
      }
    } else if (name == "log") {
      if (!absl::SimpleAtoi(value, &record.log)) {
        return InvalidFieldError(name, "not a number from 0 to 2^64-1");
      }
    } else if (name == "released") {
      if (value != "1") return InvalidFieldError(name, "not 1");
      record.released = true;
    } else {
      return InvalidFieldError(name, "unknown field");
    }
  }
  for (const char* required : {"address", "epoch", "incarnation", "lease_ms"}) {
    if (!seen.contains(required)) return InvalidFieldError(required, "missing");
  }
  if (!record.successor.empty() && !record.released) {
    return InvalidFieldError("successor", "only with released=1");
  }
  return record;
}

}  // namespace collide
