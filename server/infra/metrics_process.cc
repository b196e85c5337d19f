#include "server/infra/metrics_process.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "server/infra/metrics_family.h"

namespace collide {
namespace {

std::string ReadWhole(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// /proc/stat's btime: the boot time, seconds since the epoch (0 when unreadable).
double BootTime() {
  for (absl::string_view line : absl::StrSplit(ReadWhole("/proc/stat"), '\n')) {
    double value = 0;
    if (absl::ConsumePrefix(&line, "btime ") && absl::SimpleAtod(line, &value)) return value;
  }
  return 0;
}

// Entries of /proc/self/fd, less the one the listing itself opens (-1 when unreadable).
double OpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  double count = 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count - 1;
}

}  // namespace

std::optional<ProcessStat> ParseProcessStat(absl::string_view stat, double ticks_per_second,
                                            double page_bytes, double boot_time) {
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses; the fields start after
  // the last ')'.
  const size_t close = stat.rfind(')');
  if (close == absl::string_view::npos) return std::nullopt;
  std::vector<absl::string_view> fields =
      absl::StrSplit(stat.substr(close + 1), ' ', absl::SkipWhitespace());
  // fields[0] is field 3 (state) of proc(5); rss, field 24, is fields[21].
  if (fields.size() < 22) return std::nullopt;
  auto number = [&](int field, double* out) {
    return absl::SimpleAtod(fields[static_cast<size_t>(field - 3)], out);
  };
  double utime = 0, stime = 0, threads = 0, start_ticks = 0, vsize = 0, rss = 0;
  if (!number(14, &utime) || !number(15, &stime) || !number(20, &threads) ||
      !number(22, &start_ticks) || !number(23, &vsize) || !number(24, &rss) ||
      ticks_per_second <= 0) {
    return std::nullopt;
  }
  return ProcessStat{.cpu_seconds = (utime + stime) / ticks_per_second,
                     .start_time_seconds = boot_time + start_ticks / ticks_per_second,
                     .threads = threads,
                     .virtual_bytes = vsize,
                     .resident_bytes = rss * page_bytes};
}

ProcessMetrics::ProcessMetrics(std::string version, std::string commit, std::string build_type)
    : version_(std::move(version)),
      commit_(std::move(commit)),
      build_type_(std::move(build_type)) {}

std::vector<prometheus::MetricFamily> ProcessMetrics::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> families;
  static const double boot_time = BootTime();
  const std::optional<ProcessStat> stat =
      ParseProcessStat(ReadWhole("/proc/self/stat"), static_cast<double>(sysconf(_SC_CLK_TCK)),
                       static_cast<double>(sysconf(_SC_PAGESIZE)), boot_time);
  auto gauge = [&families](const char* name, const char* help, double value) {
    families.push_back(MetricFamilyBuilder(name, help, MetricType::Gauge).Add({}, value).Build());
  };
  if (stat.has_value()) {
    families.push_back(MetricFamilyBuilder("process_cpu_seconds_total",
                                           "Total user and system CPU time spent in seconds.",
                                           MetricType::Counter)
                           .Add({}, stat->cpu_seconds)
                           .Build());
    gauge("process_resident_memory_bytes", "Resident memory size in bytes.", stat->resident_bytes);
    gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", stat->virtual_bytes);
    gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
          stat->start_time_seconds);
    gauge("process_threads", "Number of OS threads in the process.", stat->threads);
  }
  if (const double fds = OpenFds(); fds >= 0) {
    gauge("process_open_fds", "Number of open file descriptors.", fds);
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    gauge("process_max_fds", "Maximum number of open file descriptors.",
          static_cast<double>(limit.rlim_cur));
  }
  families.push_back(
      MetricFamilyBuilder("collide_build_info",
                          "Always 1; the labels name the build of collide-server running.",
                          MetricType::Gauge)
          .Add({{"build_type", build_type_},
                {"commit", commit_.empty() ? "unknown" : commit_},
                {"version", version_}},
               1)
          .Build());
  return families;
}

}  // namespace collide
