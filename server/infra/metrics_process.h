#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "prometheus/collectable.h"

namespace collide {

/// What /proc/self/stat says of the process, in the units of the exposition.
struct ProcessStat {
  double cpu_seconds = 0;         // user + system
  double start_time_seconds = 0;  // since the epoch
  double threads = 0;
  double virtual_bytes = 0;
  double resident_bytes = 0;
};

/// Parses the contents of /proc/<pid>/stat (`ticks_per_second`: sysconf(_SC_CLK_TCK);
/// `page_bytes`: the page size; `boot_time`: /proc/stat's btime, seconds since the epoch).
/// nullopt when the text is not such a line.
std::optional<ProcessStat> ParseProcessStat(absl::string_view stat, double ticks_per_second,
                                            double page_bytes, double boot_time);

/// The process's resources, read from /proc/self at scrape time under the names every
/// Prometheus client uses (process_resident_memory_bytes, process_virtual_memory_bytes,
/// process_open_fds, process_max_fds, process_threads, process_start_time_seconds,
/// process_cpu_seconds_total), and collide_build_info{version,commit,build_type} 1.
class ProcessMetrics final : public prometheus::Collectable {
 public:
  /// The build's labels (collide/version.h).
  ProcessMetrics(std::string version, std::string commit, std::string build_type);

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const std::string version_;
  const std::string commit_;
  const std::string build_type_;
};

}  // namespace collide
