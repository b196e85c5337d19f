// collide-server: flags -> ServerOptions -> Validate -> every listener bound -> the data
// directory opened -> serving. docs/SERVER.md has the flags and the start-up order.

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/program_flags.h"
#include "base/status_macros.h"
#include "bvh/simd_level.h"
#include "collide/version.h"
#include "server/infra/memory_release.h"
#include "server/infra/metrics.h"
#include "server/infra/shutdown_signals.h"
#include "server/server.h"
#include "server/service_options.h"
#include "server/viewer/viewer_endpoint.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

// One flag per ServerOptions field and per ServiceLimits field, of the field's name, type and
// default (server/service_options.h has the lists and each help text).
#define COLLIDE_DEFINE_OPTION_FLAG(type, name, default_value, range, help) \
  ABSL_FLAG(type, name, collide::DefaultServerOptions().name, help);
COLLIDE_SERVER_OPTIONS(COLLIDE_DEFINE_OPTION_FLAG)
#undef COLLIDE_DEFINE_OPTION_FLAG
#define COLLIDE_DEFINE_LIMIT_FLAG(type, name, default_value, range, help) \
  ABSL_FLAG(type, name, collide::ServiceLimits{}.name, help);
COLLIDE_SERVICE_LIMITS(COLLIDE_DEFINE_LIMIT_FLAG)
#undef COLLIDE_DEFINE_LIMIT_FLAG

namespace collide {
namespace {

ServerOptions OptionsFromFlags() {
  ServerOptions options;
#define COLLIDE_GET_OPTION(type, name, default_value, range, help) \
  options.name = absl::GetFlag(FLAGS_##name);
  COLLIDE_SERVER_OPTIONS(COLLIDE_GET_OPTION)
#undef COLLIDE_GET_OPTION
#define COLLIDE_GET_LIMIT(type, name, default_value, range, help) \
  options.limits.name = absl::GetFlag(FLAGS_##name);
  COLLIDE_SERVICE_LIMITS(COLLIDE_GET_LIMIT)
#undef COLLIDE_GET_LIMIT
  return options;
}

spdlog::level::level_enum SpdlogLevel(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace:
      return spdlog::level::trace;
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarn:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
    case LogLevel::kOff:
      break;
  }
  return spdlog::level::off;
}

// Writes `port` and a newline to `path` atomically (temp file + rename).
absl::Status WritePortFile(absl::string_view flag, const std::string& path, int port) {
  const std::string temp = absl::StrCat(path, ".tmp.", getpid());
  {
    std::ofstream out(temp, std::ios::trunc);
    out << port << "\n";
    out.flush();
    if (out && std::rename(temp.c_str(), path.c_str()) == 0) return absl::OkStatus();
  }
  std::remove(temp.c_str());
  return absl::UnavailableError(absl::StrCat(flag, ": cannot write ", path));
}

// Everything collide-server runs. Start binds every listener before it opens the data
// directory; Stop (the one clean-up, also on every failed start) stops them in reverse.
class Running {
 public:
  Running() = default;
  Running(const Running&) = delete;
  Running& operator=(const Running&) = delete;
  ~Running() { Stop().IgnoreError(); }

  // Binds /metrics, the viewer and the gRPC address (CollideServer reserves it before it opens
  // the data directory), then opens the data directory and serves.
  absl::Status Start(const ServerOptions& options) {
    const bool allow_remote = !options.token_file.empty() || options.allow_insecure_remote;
    if (!options.metrics_address.empty()) {
      absl::StatusOr<std::unique_ptr<ServerMetrics>> metrics =
          ServerMetrics::Start(MetricsOptions{.address = options.metrics_address,
                                              .max_scenes = options.metrics_max_scenes,
                                              .allow_remote = allow_remote});
      if (!metrics.ok()) return metrics.status();
      metrics_ = *std::move(metrics);
    }
    if (!options.viewer_address.empty()) {
      absl::StatusOr<std::unique_ptr<ViewerEndpoint>> viewer =
          ViewerEndpoint::Start(ViewerOptions{.address = options.viewer_address,
                                              .allow_remote = allow_remote,
                                              .max_streams = options.viewer_max_streams,
                                              .service_limits = options.limits,
                                              .default_durability = options.durability});
      if (!viewer.ok()) return viewer.status();
      viewer_ = *std::move(viewer);
    }
    ServerHooks hooks;
    if (metrics_ != nullptr) {
      hooks.counters = metrics_->counters();
      hooks.interceptors.push_back(metrics_->InterceptorFactory());
    }
    absl::StatusOr<std::unique_ptr<CollideServer>> server =
        CollideServer::Start(options, std::move(hooks));
    if (!server.ok()) return server.status();
    server_ = *std::move(server);
    if (metrics_ != nullptr) {
      metrics_->Attach(MetricsSources{.streams = server_->streams(),
                                      .watches = server_->watches(),
                                      .database = server_->database(),
                                      .replication = server_->replication()});
    }
    if (viewer_ != nullptr) {
      viewer_->Attach(server_->database(), server_->authenticator(),
                      server_->watches() != nullptr ? &server_->watches()->directory() : nullptr,
                      server_->query_samples(), server_->replication(),
                      server_->advertised_address());
    }
    return absl::OkStatus();
  }

  // Says where the server listens (stdout, the log, the port files; the gRPC port file last: a
  // reader that sees it finds the others).
  absl::Status Announce(const ServerOptions& options) {
    std::printf("collide-server listening on %s\n", server_->bound_address().c_str());
    if (metrics_ != nullptr) {
      std::printf("collide-server metrics on %s\n", metrics_->bound_address().c_str());
      spdlog::info("metrics on http://{}/metrics (per-scene series for at most {} scenes)",
                   metrics_->bound_address(), options.metrics_max_scenes);
    }
    if (viewer_ != nullptr) {
      std::printf("collide-server viewer on http://%s/viewer/\n", viewer_->bound_address().c_str());
    }
    std::fflush(stdout);
    spdlog::info("serving on {}", server_->bound_address());
    if (viewer_ != nullptr && !options.viewer_port_file.empty()) {
      COLLIDE_RETURN_IF_ERROR(
          WritePortFile("viewer_port_file", options.viewer_port_file, viewer_->port()));
    }
    if (metrics_ != nullptr && !options.metrics_port_file.empty()) {
      COLLIDE_RETURN_IF_ERROR(
          WritePortFile("metrics_port_file", options.metrics_port_file, metrics_->port()));
    }
    if (!options.port_file.empty()) {
      COLLIDE_RETURN_IF_ERROR(WritePortFile("port_file", options.port_file, server_->port()));
    }
    return absl::OkStatus();
  }

  // Scrapes and viewers read the store: they stop first; then the server drains and closes the
  // data directory. Idempotent; the server's shutdown status.
  absl::Status Stop() {
    if (viewer_ != nullptr) viewer_->Stop();
    if (metrics_ != nullptr) metrics_->Stop();
    absl::Status status = server_ != nullptr ? server_->Shutdown() : absl::OkStatus();
    server_.reset();
    viewer_.reset();
    metrics_.reset();
    return status;
  }

 private:
  std::unique_ptr<ServerMetrics> metrics_;
  std::unique_ptr<ViewerEndpoint> viewer_;
  std::unique_ptr<CollideServer> server_;
};

int Main(const ServerOptions& options) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("collide"));
  spdlog::set_level(SpdlogLevel(options.log_level));
  if (absl::Status valid = options.Validate(); !valid.ok()) {
    spdlog::error("--{}", std::string(valid.message()));
    return 2;
  }
  SetSimdLevel(ChosenSimdLevel(options.simd));  // Validate checked that the CPU has it

  // Block the signals before gRPC starts its threads, so that only the wait below sees them.
  ShutdownSignals shutdown_signals;
  signal(SIGPIPE, SIG_IGN);
  // Past a file size limit (RLIMIT_FSIZE) a write then fails with EFBIG, which the store handles
  // as a full disk, instead of the signal killing the process.
  signal(SIGXFSZ, SIG_IGN);

  std::vector<std::string> described;
  for (const auto& [name, value] : options.Describe()) {
    described.push_back(absl::StrCat(name, "=", value));
  }
  spdlog::info("starting: {}", absl::StrJoin(described, ", "));
  spdlog::info("simd {} (best {})", SimdLevelName(ActiveSimdLevel()),
               SimdLevelName(BestSimdLevel()));
  if (options.token_file.empty() && options.allow_insecure_remote) {
    spdlog::warn("serving without authentication (--allow_insecure_remote)");
  }

  // Memory freed after large answers and bursts of calls goes back to the system
  // (memory_release.h).
  TuneAllocator();
  MemoryReleaser releaser;

  Running running;
  absl::Status started = running.Start(options);
  if (started.ok()) started = running.Announce(options);
  if (!started.ok()) {
    spdlog::error("cannot start: {}", started.ToString());
    running.Stop().IgnoreError();
    return 1;
  }

  const int signal_number = shutdown_signals.Wait();
  spdlog::info("signal {}: shutting down (drain {} ms)", signal_number, options.drain_timeout_ms);
  if (absl::Status stopped = running.Stop(); !stopped.ok()) {
    spdlog::error("shutdown: {}", stopped.ToString());
    return 1;
  }
  spdlog::info("stopped");
  return 0;
}

}  // namespace
}  // namespace collide

int main(int argc, char** argv) {
  collide::ParseProgramFlags(
      argc, argv,
      {.name = "collide-server",
       .usage = "the collide collision query server (gRPC service collide.v1.Collide).",
       .flags_file = "server/main.cc",
       .version = collide::kVersionLine});
  return collide::Main(collide::OptionsFromFlags());
}
