#include "store/store_files.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace collide {
namespace {

constexpr absl::string_view kSegmentPrefix = "segment-";
constexpr absl::string_view kSegmentSuffix = ".log";
constexpr absl::string_view kSnapshotPrefix = "snap-";
constexpr absl::string_view kSnapshotSuffix = ".snap";
constexpr size_t kDigits = 20;

bool ParseSequence(absl::string_view digits, uint64_t* value) {
  if (digits.size() != kDigits) return false;
  for (char c : digits) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return absl::SimpleAtoi(digits, value);
}

}  // namespace

std::string SegmentFileName(uint64_t first_sequence) {
  return absl::StrFormat("%s%020d%s", kSegmentPrefix, first_sequence, kSegmentSuffix);
}

bool ParseSegmentFileName(absl::string_view name, uint64_t* first_sequence) {
  if (!absl::ConsumePrefix(&name, kSegmentPrefix) || !absl::ConsumeSuffix(&name, kSegmentSuffix)) {
    return false;
  }
  return ParseSequence(name, first_sequence);
}

std::string SnapshotFileName(absl::string_view scene, uint64_t covered_sequence) {
  return absl::StrFormat("%s%020d-%s%s", kSnapshotPrefix, covered_sequence, scene, kSnapshotSuffix);
}

bool ParseSnapshotFileName(absl::string_view name, std::string* scene, uint64_t* covered_sequence) {
  if (!absl::ConsumePrefix(&name, kSnapshotPrefix) ||
      !absl::ConsumeSuffix(&name, kSnapshotSuffix)) {
    return false;
  }
  if (name.size() < kDigits + 2 || name[kDigits] != '-') return false;
  if (!ParseSequence(name.substr(0, kDigits), covered_sequence)) return false;
  *scene = std::string(name.substr(kDigits + 1));
  return true;
}

}  // namespace collide
