// collide-server: flags -> ServerOptions, logging, signals, port file. See collide_contract.md.

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bvh/simd_level.h"
#include "collide/version.h"
#include "server/infra/memory_release.h"
#include "server/infra/metrics.h"
#include "server/infra/shutdown_signals.h"
#include "server/infra/slow_query_log.h"
#include "server/server.h"
#include "server/service_options.h"
#include "server/viewer/viewer_endpoint.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace collide {
namespace {

// The CPUs this process may run on (its affinity mask: taskset, a container's cpuset), else the
// machine's; at least 1, at most kMaxQueryThreads. --query_threads' default.
uint32_t UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  if (cpus <= 0) cpus = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp<uint32_t>(static_cast<uint32_t>(std::max(cpus, 1)), 1, kMaxQueryThreads);
}

}  // namespace
}  // namespace collide

ABSL_FLAG(std::string, address, "127.0.0.1:50051",
          "Listen address host:port; port 0 picks a free port.");
ABSL_FLAG(std::string, port_file, "",
          "When set, the bound port is written to this file (decimal, newline), atomically, once "
          "the server is serving.");
ABSL_FLAG(std::string, data_dir, "./data", "Data directory (created if missing).");
ABSL_FLAG(std::string, durability, "always",
          "none / periodic / always: the durability of scenes created with DURABILITY_DEFAULT.");
ABSL_FLAG(int, sync_interval_ms, 100, "Periodic fsync interval, in milliseconds.");
ABSL_FLAG(std::string, recovery, "strict",
          "strict / skip: what start-up does with a logged update that no longer applies to its "
          "scene (one an older server accepted that validation now refuses). strict refuses to "
          "start, naming the segment and offset; skip drops each such record (logging it), keeps "
          "every other, and snapshots the scenes so the dropped records are never read again.");
ABSL_FLAG(std::string, log_level, "info",
          "trace / debug / info / warn / error / off. debug adds one access line per call.");
ABSL_FLAG(double, slow_query_ms, 0,
          "Log (at warn) every query batch and unary query whose answer takes at least this many "
          "milliseconds: rpc, scene, query kinds and counts, duration, version. 0: off; "
          "fractions allowed (0.000001, one nanosecond, logs every one); at most 86400000.");
ABSL_FLAG(std::string, token_file, "",
          "Enables auth: one `<token> <role> [<prefix>,...]` per line (role reader, writer or "
          "admin).");
ABSL_FLAG(bool, allow_insecure_remote, false,
          "Without a token file, allow binding a non-loopback address.");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain: serve TLS (with --tls_key).");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert.");
ABSL_FLAG(std::string, tls_ca, "", "PEM CA certificates: require and verify client certificates.");
ABSL_FLAG(int, max_message_bytes, 16777216, "gRPC max receive message size, in bytes.");

// The ServiceLimits fields set by a flag of the same name (server/service_options.h has each
// default): X(type, name, help) each.
#define COLLIDE_LIMIT_FLAGS(X)                                                               \
  X(uint32_t, max_batch_ops,                                                                 \
    "Ops + moves per update batch; bodies per UpsertBodies; ids per RemoveBodies or "        \
    "GetBodies.")                                                                            \
  X(uint32_t, max_queries_per_batch, "Queries per QueryBatch.")                              \
  X(uint32_t, max_scenes, "The most scenes the server holds.")                               \
  X(uint32_t, max_bodies_per_scene,                                                          \
    "Upper bound of SceneOptions.max_bodies (and cap of its default of 1,000,000).")         \
  X(uint32_t, max_hits, "Max max_hits per query.")                                           \
  X(uint32_t, max_excluded_ids, "Max Filter.excluded_ids length.")                           \
  X(uint32_t, max_answer_bytes,                                                              \
    "The most bytes one QueryStream answer may take (4096 to 2147483647). A batch whose "    \
    "largest possible answer is larger (59 bytes per hit its queries' max_hits allow, at "   \
    "least 1051 per query, plus 11) is refused with RESOURCE_EXHAUSTED before it runs. A "   \
    "client that stops reading costs the server at most one answer per stream.")             \
  X(uint32_t, max_version_wait_ms,                                                           \
    "The longest a query with a min_version waits for its scene to reach it (ms; also "      \
    "bounded by the call's deadline); then DEADLINE_EXCEEDED.")                              \
  X(uint32_t, max_inflight_per_stream,                                                       \
    "Batches read but not yet answered, per stream (then the server stops reading).")        \
  X(uint32_t, max_streams,                                                                   \
    "The most UpdateStream + QueryStream + Watch + ExportScene + ImportScene calls open at " \
    "once on the server (then a new stream ends at once with RESOURCE_EXHAUSTED).")          \
  X(uint32_t, max_watch_streams,                                                             \
    "The most Watch calls open at once (they count toward --max_streams too; then a new "    \
    "Watch ends at once with RESOURCE_EXHAUSTED; 0: no Watch).")                             \
  X(uint32_t, max_watch_fences,                                                              \
    "Fences plus contact watches over all live watches (then a new Watch ends at once with " \
    "RESOURCE_EXHAUSTED).")                                                                  \
  X(uint32_t, max_watch_contents,                                                            \
    "Entries all live watches may hold: 1 per body inside a fence, 2 + 2 per contact watch " \
    "for each overlapping pair, 1 per candidate pair of a batch being evaluated (a watch "   \
    "that would pass it ends with RESOURCE_EXHAUSTED).")                                     \
  X(uint64_t, max_watch_queued_bytes,                                                        \
    "Bytes of updates queued for all watchers together (an update that does not fit "        \
    "replaces its watcher's queue by a resync snapshot).")                                   \
  X(uint64_t, max_watch_backlog_bytes,                                                       \
    "Bytes of applied batches waiting to be evaluated for watchers, all scenes together (a " \
    "batch that does not fit makes its scene's watchers resync).")                           \
  X(uint32_t, stream_stall_timeout_ms,                                                       \
    "A stream whose answer cannot be written for this long (its client stopped reading), "   \
    "or an import whose client sends nothing for this long, ends with RESOURCE_EXHAUSTED "   \
    "(ms; 0: never).")                                                                       \
  X(uint64_t, max_import_bytes,                                                              \
    "The most bytes of messages one ImportScene stream may send (then RESOURCE_EXHAUSTED); " \
    "the import holds about 3 times this in memory at its end.")                             \
  X(uint32_t, max_concurrent_imports,                                                        \
    "The most ImportScene calls open at once (they count toward --max_streams too; then a "  \
    "new import ends at once with RESOURCE_EXHAUSTED; 0: no import). Imports take at most "  \
    "about 3 x --max_import_bytes x this of memory.")

#define COLLIDE_DEFINE_LIMIT_FLAG(type, name, help) \
  ABSL_FLAG(type, name, collide::ServiceLimits{}.name, help);
COLLIDE_LIMIT_FLAGS(COLLIDE_DEFINE_LIMIT_FLAG)
#undef COLLIDE_DEFINE_LIMIT_FLAG

ABSL_FLAG(int, drain_timeout_ms, 5000, "Graceful shutdown deadline, in milliseconds.");
ABSL_FLAG(uint32_t, watch_threads, 2,
          "Threads that evaluate watches, away from the writers (1 to 64).");
ABSL_FLAG(uint32_t, query_threads, collide::UsableCpus(),
          "The threads one QueryStream batch of 64 queries or more runs on, the gRPC thread that "
          "received it included (1 to 1024; 1: each batch on that thread alone). The default is "
          "the number of CPUs the server may run on. The workers (query_threads - 1) are shared "
          "by all streams; answers are the same, in the same order, whatever the value. The "
          "workers also help writers end their batches (the history's index beside the trees' "
          "refit).");
ABSL_FLAG(std::string, simd, "auto",
          "The instruction set of the tree traversal: auto (the best this CPU has), sse, avx2 or "
          "avx512. Answers are the same at every level; a level the CPU lacks stops the start.");
ABSL_FLAG(int, max_metadata_bytes, 16384,
          "The largest request metadata of a call (per entry, name + value + 32), in bytes; a "
          "call over it fails alone with RESOURCE_EXHAUSTED. The HTTP/2 layer accepts twice it "
          "and closes the whole connection beyond.");
ABSL_FLAG(std::string, metrics_address, "",
          "Serve Prometheus metrics at http://HOST:PORT/metrics (host:port; port 0 picks a free "
          "port; empty: off, nothing is counted). A non-loopback host needs --token_file or "
          "--allow_insecure_remote, like --address; /metrics itself takes no token.");
ABSL_FLAG(std::string, metrics_port_file, "",
          "When set, the bound metrics port is written to this file (decimal, newline), "
          "atomically, once the server is serving.");
ABSL_FLAG(uint32_t, metrics_max_scenes, 100,
          "The most scenes with their own collide_scene_* series (in name order); the rest are "
          "summed into scene=\"_other\" (0: every scene is).");
ABSL_FLAG(std::string, viewer_address, "",
          "Serve the browser viewer at http://HOST:PORT/viewer/ (host:port; port 0 picks a free "
          "port; empty: off). Read-only; same address rules as --metrics_address; with "
          "--token_file every call needs a token.");
ABSL_FLAG(std::string, viewer_port_file, "",
          "When set, the bound viewer port is written to this file (decimal, newline), "
          "atomically, once the server is serving.");
ABSL_FLAG(int, viewer_max_streams, 8, "The most live viewer streams at once (1 to 64).");
ABSL_FLAG(int, max_streams_per_connection, 1024,
          "The most concurrent calls on one HTTP/2 connection (SETTINGS_MAX_CONCURRENT_STREAMS).");

namespace collide {
namespace {

// The smallest --max_answer_bytes: room for the answer to one MODE_ALL query of the default 64
// hits (11 + 19 + 64 x 59 bytes, server/convert/query_answer.h).
constexpr uint32_t kMinAnswerBytes = 4096;

// Writes `port` and a newline to `path` atomically (temp file + rename).
bool WritePortFile(const std::string& path, int port) {
  const std::string temp = absl::StrCat(path, ".tmp.", getpid());
  {
    std::ofstream out(temp, std::ios::trunc);
    out << port << "\n";
    out.flush();
    if (!out) return false;
  }
  return std::rename(temp.c_str(), path.c_str()) == 0;
}

int Main() {
  auto logger = spdlog::stderr_color_mt("collide");
  spdlog::set_default_logger(logger);
  const std::string level_name = absl::GetFlag(FLAGS_log_level);
  const spdlog::level::level_enum level = spdlog::level::from_str(level_name);
  if (level == spdlog::level::off && level_name != "off") {
    spdlog::error("--log_level: unknown level \"{}\"", level_name);
    return 2;
  }
  spdlog::set_level(level);

  ServerOptions options;
  options.address = absl::GetFlag(FLAGS_address);
  options.data_dir = absl::GetFlag(FLAGS_data_dir);
  absl::StatusOr<DurabilityPolicy> durability =
      ParseDurabilityPolicy(absl::GetFlag(FLAGS_durability));
  if (!durability.ok() || *durability == DurabilityPolicy::kDefault) {
    spdlog::error("--durability: must be none, periodic or always");
    return 2;
  }
  options.durability = *durability;
  if (absl::GetFlag(FLAGS_sync_interval_ms) < 0 || absl::GetFlag(FLAGS_drain_timeout_ms) < 0 ||
      absl::GetFlag(FLAGS_max_message_bytes) <= 0 || absl::GetFlag(FLAGS_max_metadata_bytes) <= 0 ||
      absl::GetFlag(FLAGS_max_streams_per_connection) <= 0) {
    spdlog::error(
        "--sync_interval_ms, --drain_timeout_ms must be >= 0; --max_message_bytes, "
        "--max_metadata_bytes, --max_streams_per_connection > 0");
    return 2;
  }
  options.sync_interval = std::chrono::milliseconds(absl::GetFlag(FLAGS_sync_interval_ms));
  if (!SlowQueryThresholdFromMs(absl::GetFlag(FLAGS_slow_query_ms),
                                &options.slow_query_threshold)) {
    spdlog::error("--slow_query_ms: must be a number in [0, 86400000] (0: off), got {}",
                  absl::GetFlag(FLAGS_slow_query_ms));
    return 2;
  }
  const std::string recovery = absl::GetFlag(FLAGS_recovery);
  if (recovery == "strict") {
    options.recovery = RecoveryMode::kStrict;
  } else if (recovery == "skip") {
    options.recovery = RecoveryMode::kSkip;
  } else {
    spdlog::error("--recovery: must be strict or skip, got \"{}\"", recovery);
    return 2;
  }
  options.token_file = absl::GetFlag(FLAGS_token_file);
  options.allow_insecure_remote = absl::GetFlag(FLAGS_allow_insecure_remote);
  options.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key = absl::GetFlag(FLAGS_tls_key);
  options.tls_ca = absl::GetFlag(FLAGS_tls_ca);
  options.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.max_metadata_bytes = absl::GetFlag(FLAGS_max_metadata_bytes);
  options.max_streams_per_connection = absl::GetFlag(FLAGS_max_streams_per_connection);
  options.drain_timeout = std::chrono::milliseconds(absl::GetFlag(FLAGS_drain_timeout_ms));
  ServiceLimits& limits = options.limits;
#define COLLIDE_SET_LIMIT(type, name, help) limits.name = absl::GetFlag(FLAGS_##name);
  COLLIDE_LIMIT_FLAGS(COLLIDE_SET_LIMIT)
#undef COLLIDE_SET_LIMIT
  options.watch_threads = absl::GetFlag(FLAGS_watch_threads);
  if (options.watch_threads == 0 || options.watch_threads > kMaxWatchThreads) {
    spdlog::error("--watch_threads: must be 1 to {}", kMaxWatchThreads);
    return 2;
  }
  options.query_threads = absl::GetFlag(FLAGS_query_threads);
  if (options.query_threads == 0 || options.query_threads > kMaxQueryThreads) {
    spdlog::error(
        "--query_threads: must be 1 to {} (1: each query batch on its gRPC thread alone), got {}; "
        "the default is the number of CPUs the server may run on ({} here)",
        kMaxQueryThreads, options.query_threads, UsableCpus());
    return 2;
  }
  const std::string simd = absl::GetFlag(FLAGS_simd);
  SimdLevel simd_level = BestSimdLevel();
  if (simd != "auto" && !ParseSimdLevel(simd, &simd_level)) {
    spdlog::error("--simd: must be auto, sse, avx2 or avx512, got \"{}\"", simd);
    return 2;
  }
  if (!SetSimdLevel(simd_level)) {
    spdlog::error("--simd: this CPU lacks {} (the best it has is {}; --simd=auto picks it)",
                  SimdLevelName(simd_level), SimdLevelName(BestSimdLevel()));
    return 2;
  }
  if (limits.max_inflight_per_stream == 0 || limits.max_scenes == 0 ||
      limits.max_bodies_per_scene == 0 || limits.max_streams == 0) {
    spdlog::error(
        "--max_inflight_per_stream, --max_scenes, --max_bodies_per_scene, --max_streams must be "
        "> 0");
    return 2;
  }
  if (limits.max_answer_bytes < kMinAnswerBytes || limits.max_answer_bytes > INT32_MAX) {
    spdlog::error("--max_answer_bytes: must be in [{}, {}]", kMinAnswerBytes, INT32_MAX);
    return 2;
  }

  // Block the signals before gRPC starts its threads, so that only the wait below sees them.
  ShutdownSignals shutdown_signals;
  signal(SIGPIPE, SIG_IGN);
  // Past a file size limit (RLIMIT_FSIZE) a write then fails with EFBIG, which the store handles
  // as a full disk, instead of the signal killing the process.
  signal(SIGXFSZ, SIG_IGN);

  spdlog::info(
      "starting: address {}, data_dir {}, recovery {}, durability {}, sync_interval_ms {}, auth "
      "{}, tls {}{}, "
      "max_message_bytes {}, max_batch_ops {}, max_queries_per_batch {}, max_scenes {}, "
      "max_bodies_per_scene {}, max_hits {}, max_answer_bytes {}, max_excluded_ids {}, "
      "max_inflight_per_stream {}, "
      "max_streams {}, stream_stall_timeout_ms {}, max_metadata_bytes {}, "
      "max_streams_per_connection {}, drain_timeout_ms {}, max_watch_streams {}, "
      "max_watch_fences {}, max_watch_contents {}, max_watch_queued_bytes {}, "
      "max_watch_backlog_bytes {}, watch_threads {}, query_threads {}, slow_query_ms {}, "
      "max_import_bytes {}, max_concurrent_imports {}, simd {} (best {})",
      options.address, options.data_dir, recovery,
      std::string(DurabilityPolicyName(options.durability)), options.sync_interval.count(),
      options.token_file.empty() ? "off" : "token file", options.tls_cert.empty() ? "off" : "on",
      options.tls_ca.empty() ? "" : " (client certs)", options.max_message_bytes,
      limits.max_batch_ops, limits.max_queries_per_batch, limits.max_scenes,
      limits.max_bodies_per_scene, limits.max_hits, limits.max_answer_bytes,
      limits.max_excluded_ids, limits.max_inflight_per_stream, limits.max_streams,
      limits.stream_stall_timeout_ms, options.max_metadata_bytes,
      options.max_streams_per_connection, options.drain_timeout.count(), limits.max_watch_streams,
      limits.max_watch_fences, limits.max_watch_contents, limits.max_watch_queued_bytes,
      limits.max_watch_backlog_bytes, options.watch_threads, options.query_threads,
      absl::GetFlag(FLAGS_slow_query_ms), limits.max_import_bytes, limits.max_concurrent_imports,
      SimdLevelName(ActiveSimdLevel()), SimdLevelName(BestSimdLevel()));
  if (options.token_file.empty() && options.allow_insecure_remote) {
    spdlog::warn("serving without authentication (--allow_insecure_remote)");
  }

  // Memory freed after large answers and bursts of calls goes back to the system
  // (memory_release.h).
  TuneAllocator();
  MemoryReleaser releaser;

  // /metrics first: a bad or busy metrics address stops the start before the data is opened.
  std::unique_ptr<ServerMetrics> metrics;
  if (const std::string address = absl::GetFlag(FLAGS_metrics_address); !address.empty()) {
    absl::StatusOr<std::unique_ptr<ServerMetrics>> started = ServerMetrics::Start(MetricsOptions{
        .address = address,
        .max_scenes = absl::GetFlag(FLAGS_metrics_max_scenes),
        .allow_remote = !options.token_file.empty() || options.allow_insecure_remote});
    if (!started.ok()) {
      spdlog::error("cannot start: {}", started.status().ToString());
      return 1;
    }
    metrics = *std::move(started);
  } else if (!absl::GetFlag(FLAGS_metrics_port_file).empty()) {
    spdlog::error("--metrics_port_file: needs --metrics_address");
    return 2;
  }
  absl::StatusOr<std::unique_ptr<CollideServer>> server =
      CollideServer::Start(options, metrics != nullptr ? metrics->Hooks() : ServerHooks{});
  if (!server.ok()) {
    spdlog::error("cannot start: {}", server.status().ToString());
    return 1;
  }
  std::printf("collide-server listening on %s\n", (*server)->bound_address().c_str());
  if (metrics != nullptr) {
    metrics->Attach(server->get());
    std::printf("collide-server metrics on %s\n", metrics->bound_address().c_str());
    spdlog::info("metrics on http://{}/metrics (per-scene series for at most {} scenes)",
                 metrics->bound_address(), absl::GetFlag(FLAGS_metrics_max_scenes));
  }
  std::unique_ptr<ViewerEndpoint> viewer;
  if (const std::string address = absl::GetFlag(FLAGS_viewer_address); !address.empty()) {
    const int max_streams = absl::GetFlag(FLAGS_viewer_max_streams);
    absl::Status started = absl::OkStatus();
    if (max_streams < 1 || max_streams > 64) {
      started = absl::InvalidArgumentError(
          absl::StrCat("viewer_max_streams: ", max_streams, " is not from 1 to 64"));
    } else {
      absl::StatusOr<std::unique_ptr<ViewerEndpoint>> endpoint = ViewerEndpoint::Start(
          ViewerOptions{
              .address = address,
              .allow_remote = !options.token_file.empty() || options.allow_insecure_remote,
              .max_streams = max_streams},
          (*server)->database(), (*server)->authenticator(),
          (*server)->watches() != nullptr ? &(*server)->watches()->directory() : nullptr,
          (*server)->query_samples());
      if (endpoint.ok()) {
        viewer = *std::move(endpoint);
      } else {
        started = endpoint.status();
      }
    }
    if (!started.ok()) {
      spdlog::error("cannot start: {}", started.ToString());
      if (metrics != nullptr) metrics->Stop();
      (*server)->Shutdown().IgnoreError();
      return 1;
    }
    std::printf("collide-server viewer on http://%s/viewer/\n", viewer->bound_address().c_str());
  } else if (!absl::GetFlag(FLAGS_viewer_port_file).empty()) {
    spdlog::error("--viewer_port_file: needs --viewer_address");
    (*server)->Shutdown().IgnoreError();
    return 2;
  }
  std::fflush(stdout);
  spdlog::info("serving on {}", (*server)->bound_address());
  if (const std::string viewer_port_file = absl::GetFlag(FLAGS_viewer_port_file);
      !viewer_port_file.empty() && !WritePortFile(viewer_port_file, viewer->port())) {
    spdlog::error("--viewer_port_file: cannot write {}", viewer_port_file);
    viewer->Stop();
    if (metrics != nullptr) metrics->Stop();
    (*server)->Shutdown().IgnoreError();
    return 1;
  }
  const std::string port_file = absl::GetFlag(FLAGS_port_file);
  const std::string metrics_port_file = absl::GetFlag(FLAGS_metrics_port_file);
  // The metrics port first: a reader that sees the port file finds both.
  if ((!metrics_port_file.empty() && !WritePortFile(metrics_port_file, metrics->port())) ||
      (!port_file.empty() && !WritePortFile(port_file, (*server)->port()))) {
    spdlog::error("--metrics_port_file, --port_file: cannot write {}",
                  metrics_port_file.empty() ? port_file : metrics_port_file);
    if (metrics != nullptr) metrics->Stop();
    (*server)->Shutdown().IgnoreError();
    return 1;
  }

  const int signal_number = shutdown_signals.Wait();
  spdlog::info("signal {}: shutting down (drain {} ms)", signal_number,
               options.drain_timeout.count());
  // Scrapes and viewers read the store: they stop first.
  if (viewer != nullptr) viewer->Stop();
  if (metrics != nullptr) metrics->Stop();
  absl::Status status = (*server)->Shutdown();
  if (!status.ok()) {
    spdlog::error("shutdown: {}", status.ToString());
    return 1;
  }
  spdlog::info("stopped");
  return 0;
}

}  // namespace
}  // namespace collide

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "the collide collision query server (gRPC service collide.v1.Collide).");
  // --help lists this file's flags (by default absl matches files named like the binary).
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "server/main.cc");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  usage.version_string = [] {
    return std::string("collide-server ") + collide::kVersionLine + "\n";
  };
  absl::SetFlagsUsageConfig(usage);
  absl::ParseCommandLine(argc, argv);
  return collide::Main();
}
