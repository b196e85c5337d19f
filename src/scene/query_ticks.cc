#include "scene/query_ticks.h"

#include <string>

#include "absl/strings/str_format.h"

namespace collide {
namespace {

absl::Status Check(const PoseHistory& history, const Query& query, const std::string& prefix) {
  if (!query.at_tick.has_value()) return absl::OkStatus();
  const uint64_t t = *query.at_tick;
  if (!history.Retains(t)) {
    return absl::OutOfRangeError(
        absl::StrFormat("%sat_tick: tick %d is not retained (retained: %d..%d)", prefix, t,
                        history.oldest_tick(), history.tick()));
  }
  if (query.tick_fraction > 0.0f && !history.Retains(t + 1)) {
    return absl::OutOfRangeError(absl::StrFormat(
        "%stick_fraction: interpolating from tick %d needs tick %d, which is not retained "
        "(retained: %d..%d)",
        prefix, t, t + 1, history.oldest_tick(), history.tick()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckQueryTick(const PoseHistory& history, const Query& query, size_t index,
                            absl::string_view list) {
  return Check(history, query, absl::StrFormat("%s[%d].", list, index));
}

absl::Status CheckQueryTick(const PoseHistory& history, const Query& query) {
  return Check(history, query, "");
}

}  // namespace collide
