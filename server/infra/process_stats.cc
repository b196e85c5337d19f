#include "server/infra/process_stats.h"

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace collide {

uint64_t StatusFieldBytes(absl::string_view status_text, absl::string_view field) {
  for (absl::string_view line : absl::StrSplit(status_text, '\n')) {
    if (!absl::ConsumePrefix(&line, field) || !absl::ConsumePrefix(&line, ":")) continue;
    line = absl::StripAsciiWhitespace(line);
    if (!absl::ConsumeSuffix(&line, "kB")) return 0;
    uint64_t kib = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &kib)) return 0;
    return kib * 1024;
  }
  return 0;
}

uint64_t ResidentMemoryBytes() {
  std::ifstream in("/proc/self/status");
  if (!in) return 0;
  std::stringstream text;
  text << in.rdbuf();
  return StatusFieldBytes(text.str(), "VmRSS");
}

}  // namespace collide
