#include "server/infra/slow_update_log.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "spdlog/spdlog.h"

namespace collide {
namespace {

double Ms(std::chrono::nanoseconds d) { return static_cast<double>(d.count()) / 1e6; }

}  // namespace

std::string SlowUpdateLog::Format(absl::string_view rpc, absl::string_view scene, size_t ops,
                                  const absl::Status& status, uint64_t version,
                                  std::chrono::nanoseconds elapsed, const UpdateTimings& timings) {
  std::string outcome = status.ok()
                            ? absl::StrCat("version ", version)
                            : absl::StrCat("refused ", absl::StatusCodeToString(status.code()));
  std::chrono::nanoseconds rest = elapsed - timings.parse - timings.convert;
  std::string phases =
      absl::StrFormat("parse %.3f, convert %.3f", Ms(timings.parse), Ms(timings.convert));
  if (timings.apply.has_value()) {
    const ApplyTimings& a = *timings.apply;
    absl::StrAppendFormat(
        &phases, ", writer wait %.3f, validate %.3f, log %.3f, apply %.3f, observers %.3f",
        Ms(a.writer_wait), Ms(a.validate), Ms(a.commit), Ms(a.apply), Ms(a.observers));
    rest -= a.writer_wait + a.validate + a.commit + a.apply + a.observers;
  }
  // Each phase is measured on its own clock reads: the rest is at least zero.
  absl::StrAppendFormat(&phases, ", acknowledgement %.3f",
                        Ms(std::max(rest, std::chrono::nanoseconds(0))));
  return absl::StrFormat("slow update: rpc %s, scene \"%s\", %d ops, %s, %.3f ms (%s)", rpc, scene,
                         ops, outcome, Ms(elapsed), phases);
}

void SlowUpdateLog::Record(absl::string_view rpc, absl::string_view scene, size_t ops,
                           const absl::Status& status, uint64_t version,
                           std::chrono::nanoseconds elapsed, const UpdateTimings& timings) const {
  if (!enabled() || elapsed < threshold_) return;
  spdlog::warn("{}", Format(rpc, scene, ops, status, version, elapsed, timings));
}

}  // namespace collide
