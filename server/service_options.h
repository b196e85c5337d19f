#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "bvh/simd_level.h"
#include "mesh/triangle_mesh.h"
#include "query/body.h"
#include "scene/scene_options.h"
#include "store/recovery.h"

namespace collide {

/// The most watch threads a server runs.
inline constexpr uint32_t kMaxWatchThreads = 64;

/// The most threads a QueryStream batch may run on (--query_threads).
inline constexpr uint32_t kMaxQueryThreads = 1024;

/// The smallest --max_answer_bytes: room for the answer to one MODE_ALL query of the default 64
/// hits (11 + 19 + 64 x 67 bytes, server/convert/query_answer.h), rounded up.
inline constexpr uint32_t kMinAnswerBytes = 4352;

/// An option any value of its type may take.
struct AnyValue {};
/// An option's range, both ends included.
template <typename T>
struct ValueRange {
  T min;
  T max;
};
/// The range [min, max] of an option.
template <typename T>
constexpr ValueRange<T> Between(T min, T max) {
  return {min, max};
}
/// 1 to the type's largest value: a count that must not be 0.
template <typename T>
constexpr ValueRange<T> AtLeastOne() {
  return {T{1}, std::numeric_limits<T>::max()};
}

// X(type, name, default, range, help) for every ServiceLimits field: the field, and the
// collide-server flag of the same name, its default, the values Validate() accepts (AnyValue or
// a ValueRange) and its help text (which is the field's documentation). docs/SERVER.md's flag
// table and docs/SECURITY.md's limits table have a row for each.
#define COLLIDE_SERVICE_LIMITS(X)                                                                 \
  X(uint32_t, max_batch_ops, 100000, AnyValue{},                                                  \
    "Ops + moves per update batch; bodies per UpsertBodies; ids per RemoveBodies or GetBodies "   \
    "(and bodies per GetBodies answer). Over it: RESOURCE_EXHAUSTED.")                            \
  X(uint32_t, max_queries_per_batch, 10000, AnyValue{},                                           \
    "Queries per QueryBatch. Over it: RESOURCE_EXHAUSTED.")                                       \
  X(uint32_t, max_scenes, 1024, AtLeastOne<uint32_t>(),                                           \
    "The most scenes the server holds (1 or more); a create beyond it: RESOURCE_EXHAUSTED.")      \
  X(uint32_t, max_bodies_per_scene, 10000000, AtLeastOne<uint32_t>(),                             \
    "Upper bound of SceneOptions.max_bodies (and cap of its default of 1,000,000); 1 or more.")   \
  X(uint32_t, max_hits, 4096, AnyValue{}, "Max max_hits per query (0 asks for min(64, this)).")   \
  X(uint32_t, max_answer_bytes, 16u << 20,                                                        \
    Between<uint32_t>(kMinAnswerBytes, std::numeric_limits<int32_t>::max()),                      \
    "The most bytes one QueryStream answer may take (4352 to 2147483647). A batch whose answer "  \
    "passes it is refused with RESOURCE_EXHAUSTED (a batch whose largest possible answer is "     \
    "larger runs in segments whose hits take about this much memory). A client that stops "       \
    "reading costs the server at most one answer per stream.")                                    \
  X(uint32_t, max_excluded_ids, 64, AnyValue{}, "Max Filter.excluded_ids length.")                \
  X(uint32_t, max_inflight_per_stream, 64, AtLeastOne<uint32_t>(),                                \
    "Batches read but not yet answered, per stream (1 or more; then the server stops reading, "   \
    "and HTTP/2 flow control holds the client back).")                                            \
  X(uint32_t, max_version_wait_ms, 10000, AnyValue{},                                             \
    "The longest a query with a min_version waits for its scene to reach it (ms; also bounded "   \
    "by the call's deadline); then DEADLINE_EXCEEDED.")                                           \
  X(uint32_t, max_fences_per_watch, 100000, AnyValue{},                                           \
    "Fences of one Watch request; more: the Watch ends at once with RESOURCE_EXHAUSTED "          \
    "`fences: ...` (0: no fences).")                                                              \
  X(uint32_t, max_watch_queued_events, 1u << 20, AtLeastOne<uint32_t>(),                          \
    "The largest WatchRequest.max_queued_events (events queued for one watch before a resync "    \
    "replaces them; larger values are lowered to it; 1 or more).")                                \
  X(uint32_t, max_streams, 10000, AtLeastOne<uint32_t>(),                                         \
    "The most UpdateStream + QueryStream + Watch + Interest + ExportScene + ImportScene calls "   \
    "open at once on the server (1 or more; then a new stream ends at once with "                 \
    "RESOURCE_EXHAUSTED).")                                                                       \
  X(uint32_t, max_watch_streams, 1000, AnyValue{},                                                \
    "The most Watch calls open at once (they count toward --max_streams too; then a new Watch "   \
    "ends at once with RESOURCE_EXHAUSTED; 0: no Watch).")                                        \
  X(uint32_t, max_watch_fences, 200000, AnyValue{},                                               \
    "Fences plus contact watches over all live watches (then a new Watch ends at once with "      \
    "RESOURCE_EXHAUSTED).")                                                                       \
  X(uint32_t, max_watch_contents, 4000000, AnyValue{},                                            \
    "Entries all live watches and Interest streams may hold: 1 per body inside a fence, 2 + 2 "   \
    "per contact watch for each overlapping pair, 1 per candidate pair of a batch being "         \
    "evaluated, 1 per body in an observer's set (a stream that would pass it ends with "          \
    "RESOURCE_EXHAUSTED).")                                                                       \
  X(uint64_t, max_watch_queued_bytes, uint64_t{128} << 20, AnyValue{},                            \
    "Bytes of updates queued for all watches and Interest streams together (an update that does " \
    "not fit replaces its stream's queue by a resync snapshot).")                                 \
  X(uint64_t, max_watch_backlog_bytes, uint64_t{64} << 20, AnyValue{},                            \
    "Bytes of applied batches waiting to be evaluated for watches and Interest streams, all "     \
    "scenes together (a batch that does not fit makes its scene's streams resync).")              \
  X(uint32_t, max_interest_streams, 1000, AnyValue{},                                             \
    "The most Interest calls open at once (they count toward --max_streams too; then a new "      \
    "Interest stream ends at once with RESOURCE_EXHAUSTED; 0: no Interest).")                     \
  X(uint32_t, max_observers_per_stream, 100000, AnyValue{},                                       \
    "Observers one Interest stream may hold; a message that would pass it ends the stream with "  \
    "RESOURCE_EXHAUSTED `messages[i].observers: ...` (0: no observers).")                         \
  X(uint64_t, max_interest_observers, 1000000, AnyValue{},                                        \
    "Observers of all live Interest streams together (then the message that would pass it ends "  \
    "its stream with RESOURCE_EXHAUSTED).")                                                       \
  X(uint32_t, max_relevant_per_observer, 1024, AtLeastOne<uint32_t>(),                            \
    "The largest Observer.max_relevant (bodies in one observer's set; 0 asks for this; larger: "  \
    "INVALID_ARGUMENT; 1 or more). The bodies of all sets count toward --max_watch_contents.")    \
  X(uint32_t, stream_stall_timeout_ms, 30000, AnyValue{},                                         \
    "A stream whose answer cannot be written for this long (its client stopped reading), or an "  \
    "import whose client sends nothing for this long, ends with RESOURCE_EXHAUSTED (ms; 0: "      \
    "never).")                                                                                    \
  X(uint64_t, max_import_bytes, uint64_t{256} << 20, AnyValue{},                                  \
    "The most bytes of messages one ImportScene stream may send (then RESOURCE_EXHAUSTED); the "  \
    "import holds about 3 times this in memory at its end (0 refuses every import).")             \
  X(uint32_t, max_concurrent_imports, 4, AnyValue{},                                              \
    "The most ImportScene and UploadAsset calls open at once, together (they count toward "       \
    "--max_streams too; then a new one ends at once with RESOURCE_EXHAUSTED; 0: none). Imports "  \
    "take at most about 3 x --max_import_bytes x this of memory, uploads about 3 x "              \
    "--max_asset_bytes_per_scene each.")                                                          \
  X(uint32_t, max_mesh_triangles, 1u << 24, Between<uint32_t>(0, kMaxMeshTriangles),              \
    "The most triangles of one mesh asset (0 to 134217728; 0: no mesh); more: "                   \
    "RESOURCE_EXHAUSTED at the upload's header.")                                                 \
  X(uint64_t, max_heightfield_samples, uint64_t{1} << 24, Between<uint64_t>(0, 1u << 27),         \
    "The most samples (rows x columns) of one heightfield asset (0 to 134217728; 0: no "          \
    "heightfield); more: RESOURCE_EXHAUSTED at the upload's header.")                             \
  X(uint32_t, max_assets_per_scene, 1024, Between<uint32_t>(0, kMaxAssetSlots),                   \
    "The most assets one scene holds (0 to 65535; 0: none); an upload or import past it: "        \
    "RESOURCE_EXHAUSTED.")                                                                        \
  X(uint64_t, max_asset_bytes_per_scene, uint64_t{256} << 20,                                     \
    Between<uint64_t>(0, uint64_t{1} << 29),                                                      \
    "The most bytes of asset content one scene holds, as uploaded (12 per vertex and 4 per "      \
    "index, 4 per height; 0 to 536870912): an upload or import past it is RESOURCE_EXHAUSTED. "   \
    "An asset's memory is about 2.5 times its bytes (its content and its built form).")           \
  X(uint64_t, max_asset_bytes, uint64_t{1} << 30, AnyValue{},                                     \
    "The most bytes of asset content all scenes hold together, as uploaded (a content several "   \
    "scenes hold counted once): an upload or import past it is RESOURCE_EXHAUSTED.")              \
  X(uint64_t, max_assets, 16384, AnyValue{},                                                      \
    "The most distinct asset contents all scenes hold together (a content several scenes hold "   \
    "counted once): an upload or import past it is RESOURCE_EXHAUSTED.")

/// The limits the service enforces on every request: one field per COLLIDE_SERVICE_LIMITS entry
/// (its help text says what the field bounds), each a collide-server flag of the same name.
struct ServiceLimits {
#define COLLIDE_LIMIT_FIELD(type, name, default_value, range, help) type name = default_value;
  COLLIDE_SERVICE_LIMITS(COLLIDE_LIMIT_FIELD)
#undef COLLIDE_LIMIT_FIELD
};

/// How much collide-server logs (spdlog's levels; the --log_level flag).
enum class LogLevel : uint8_t { kTrace, kDebug, kInfo, kWarn, kError, kOff };

/// The instruction set the tree traversal uses (the --simd flag): the best the CPU has, or one.
enum class SimdChoice : uint8_t { kAuto, kSse, kAvx2, kAvx512 };

/// The level `choice` names: BestSimdLevel() for kAuto.
SimdLevel ChosenSimdLevel(SimdChoice choice);

// The option types' flag forms (Abseil's flag parser finds them by argument-dependent lookup):
// each parses its names only, and its refusal lists them.
bool AbslParseFlag(absl::string_view text, DurabilityPolicy* policy, std::string* error);
std::string AbslUnparseFlag(DurabilityPolicy policy);
bool AbslParseFlag(absl::string_view text, RecoveryMode* mode, std::string* error);
std::string AbslUnparseFlag(RecoveryMode mode);
bool AbslParseFlag(absl::string_view text, LogLevel* level, std::string* error);
std::string AbslUnparseFlag(LogLevel level);
bool AbslParseFlag(absl::string_view text, SimdChoice* choice, std::string* error);
std::string AbslUnparseFlag(SimdChoice choice);

// X(type, name, default, range, help) for every ServerOptions field besides the limits: the
// field, the collide-server flag of the same name (the help text), its default (the field's;
// the flag's own default differs only for query_threads: see DefaultServerOptions) and the
// values Validate() accepts.
#define COLLIDE_SERVER_OPTIONS(X)                                                                  \
  X(std::string, address, "127.0.0.1:50051", AnyValue{},                                           \
    "Listen address host:port; port 0 picks a free port. A non-loopback host needs "               \
    "--token_file or --allow_insecure_remote.")                                                    \
  X(std::string, port_file, "", AnyValue{},                                                        \
    "When set, the bound port is written to this file (decimal, newline), atomically, once the "   \
    "server is serving (after every listener is bound and the data directory is open).")           \
  X(std::string, data_dir, "./data", AnyValue{},                                                   \
    "Data directory (created if missing), opened once every listener is bound.")                   \
  X(::collide::DurabilityPolicy, durability, DurabilityPolicy::kAlways, AnyValue{},                \
    "none / periodic / always / replicated: the durability of scenes created with "                \
    "DURABILITY_DEFAULT (replicated needs --nats_url).")                                           \
  X(int, sync_interval_ms, 100, Between(0, std::numeric_limits<int>::max()),                       \
    "Periodic fsync interval, in milliseconds.")                                                   \
  X(::collide::RecoveryMode, recovery, RecoveryMode::kStrict, AnyValue{},                          \
    "strict / skip: what start-up does with a logged update that no longer applies to its "        \
    "scene (one an older server accepted that validation now refuses). strict refuses to "         \
    "start, naming the segment and offset; skip drops each such record (logging it), keeps "       \
    "every other, and snapshots the scenes so the dropped records are never read again.")          \
  X(::collide::LogLevel, log_level, LogLevel::kInfo, AnyValue{},                                   \
    "trace / debug / info / warn / error / off. debug adds one access line per call.")             \
  X(double, slow_query_ms, 0, Between(0.0, 86400000.0),                                            \
    "Log (at warn) every query batch and unary query whose answer takes at least this many "       \
    "milliseconds: rpc, scene, query kinds and counts, duration, version. 0: off; fractions "      \
    "allowed (0.000001, one nanosecond, logs every one); at most 86400000.")                       \
  X(double, slow_update_ms, 0, Between(0.0, 86400000.0),                                           \
    "Log (at warn) every write (UpdateStream batch, UpsertBodies, RemoveBodies) that reaches "     \
    "the store and whose acknowledgement takes at least this many milliseconds from its "          \
    "arrival: rpc, scene, op count, version or refusal, duration, and the time of each phase "     \
    "(parse, convert, writer wait, validate, log, apply, observers, acknowledgement). 0: off; "    \
    "fractions allowed; at most 86400000.")                                                        \
  X(std::string, token_file, "", AnyValue{},                                                       \
    "Enables auth: one `<token> <role> [<prefix>,...]` per line (role reader, writer or "          \
    "admin).")                                                                                     \
  X(bool, allow_insecure_remote, false, AnyValue{},                                                \
    "Without a token file, allow binding a non-loopback address (gRPC, metrics, viewer).")         \
  X(std::string, tls_cert, "", AnyValue{}, "PEM certificate chain: serve TLS (with --tls_key).")   \
  X(std::string, tls_key, "", AnyValue{}, "PEM private key of --tls_cert.")                        \
  X(std::string, tls_ca, "", AnyValue{},                                                           \
    "PEM CA certificates: require and verify client certificates.")                                \
  X(int, max_message_bytes, 16 << 20, AtLeastOne<int>(),                                           \
    "gRPC max receive message size, in bytes.")                                                    \
  X(int, max_metadata_bytes, 16 << 10, AtLeastOne<int>(),                                          \
    "The largest request metadata of a call (per entry, name + value + 32), in bytes; a call "     \
    "over it fails alone with RESOURCE_EXHAUSTED. The HTTP/2 layer accepts twice it and closes "   \
    "the whole connection beyond.")                                                                \
  X(int, max_streams_per_connection, 1024, AtLeastOne<int>(),                                      \
    "The most concurrent calls on one HTTP/2 connection (SETTINGS_MAX_CONCURRENT_STREAMS).")       \
  X(int, drain_timeout_ms, 5000, Between(0, std::numeric_limits<int>::max()),                      \
    "Graceful shutdown deadline, in milliseconds.")                                                \
  X(uint32_t, watch_threads, 2, Between<uint32_t>(1, kMaxWatchThreads),                            \
    "Threads that evaluate watches, away from the writers (1 to 64).")                             \
  X(uint32_t, query_threads, 1, Between<uint32_t>(1, kMaxQueryThreads),                            \
    "The threads one QueryStream batch of 64 queries or more runs on, the gRPC thread that "       \
    "received it included (1 to 1024; 1: each batch on that thread alone). The default is the "    \
    "number of CPUs the server may run on. The workers (query_threads - 1) are shared by all "     \
    "streams; answers are the same, in the same order, whatever the value. The workers also "      \
    "help writers end their batches (the history's index beside the trees' refit).")               \
  X(::collide::SimdChoice, simd, SimdChoice::kAuto, AnyValue{},                                    \
    "The instruction set of the tree traversal: auto (the best this CPU has), sse, avx2 or "       \
    "avx512. Answers are the same at every level; a level the CPU lacks stops the start.")         \
  X(std::string, metrics_address, "", AnyValue{},                                                  \
    "Serve Prometheus metrics at http://HOST:PORT/metrics (host:port; port 0 picks a free "        \
    "port; empty: off, nothing is counted). A non-loopback host needs --token_file or "            \
    "--allow_insecure_remote, like --address; /metrics itself takes no token.")                    \
  X(std::string, metrics_port_file, "", AnyValue{},                                                \
    "When set, the bound metrics port is written to this file (decimal, newline), atomically, "    \
    "once the server is serving; needs --metrics_address.")                                        \
  X(uint32_t, metrics_max_scenes, 100, AnyValue{},                                                 \
    "The most scenes with their own collide_scene_* series (in name order); the rest are "         \
    "summed into scene=\"_other\" (0: every scene is).")                                           \
  X(std::string, viewer_address, "", AnyValue{},                                                   \
    "Serve the browser viewer at http://HOST:PORT/viewer/ (host:port; port 0 picks a free "        \
    "port; empty: off). Read-only; same address rules as --metrics_address; with --token_file "    \
    "every call needs a token.")                                                                   \
  X(std::string, viewer_port_file, "", AnyValue{},                                                 \
    "When set, the bound viewer port is written to this file (decimal, newline), atomically, "     \
    "once the server is serving; needs --viewer_address.")                                         \
  X(int, viewer_max_streams, 8, Between(1, 64), "The most live viewer streams at once (1 to 64).") \
  X(std::string, nats_url, "", AnyValue{},                                                         \
    "Replicated scenes (DURABILITY_REPLICATED) on this NATS JetStream cluster: its nodes as "      \
    "nats://host:port, comma-separated. Every server given the same cluster follows every "        \
    "replicated scene and takes one over when its owner stops. Empty: no replication.")            \
  X(std::string, advertise_address, "", AnyValue{},                                                \
    "This server's gRPC address as clients and the other servers reach it (host:port), in the "    \
    "owner records of the scenes it owns and told to writers of those it follows. Empty: the "     \
    "bound --address (needed with --nats_url when --address listens on every interface).")         \
  X(uint32_t, replication_lease_ms, 5000, Between<uint32_t>(200, 600000),                          \
    "How long an owner holds a replicated scene without renewing its key (renewed every third "    \
    "of it); a follower takes the scene over after a whole lease without renewal (200 to "         \
    "600000 ms). The failover time is about this long.")                                           \
  X(uint32_t, replication_replicas, 3, Between<uint32_t>(1, 5),                                    \
    "JetStream replicas of the streams of the replicated scenes this server creates and of the "   \
    "owners' bucket (1 to 5; 3 survives the loss of one NATS node).")                              \
  X(uint32_t, replication_publish_timeout_ms, 5000, Between<uint32_t>(100, 600000),                \
    "How long JetStream may take to store one record before the owner stops writes and looks "     \
    "at the stream (100 to 600000 ms).")                                                           \
  X(std::string, router_admin, "", AnyValue{},                                                     \
    "HAProxy runtime API addresses (host:port of a `stats socket ... level admin`, "               \
    "comma-separated): the routers whose map --router_map this server keeps pointing at "          \
    "--router_backend for the scenes it writes. Empty: off.")                                      \
  X(std::string, router_map, "", AnyValue{},                                                       \
    "The routers' scene map, as HAProxy names it (the file of its map converter); needs "          \
    "--router_admin.")                                                                             \
  X(std::string, router_backend, "", AnyValue{},                                                   \
    "This server's backend in the routers' configuration ([A-Za-z0-9_.-]); needs "                 \
    "--router_admin.")                                                                             \
  X(uint32_t, router_sync_ms, 5000, Between<uint32_t>(100, 3600000),                               \
    "How often the routers' whole map is compared with this server's scenes and corrected "        \
    "(100 to 3600000 ms).")

/// Everything collide-server is configured with: one field per COLLIDE_SERVER_OPTIONS entry
/// (flags are parsed only in server/main.cc, each into the field of its name), and the limits.
struct ServerOptions {
#define COLLIDE_OPTION_FIELD(type, name, default_value, range, help) type name = default_value;
  COLLIDE_SERVER_OPTIONS(COLLIDE_OPTION_FIELD)
#undef COLLIDE_OPTION_FIELD
  /// Request limits (COLLIDE_SERVICE_LIMITS), each a flag too.
  ServiceLimits limits;

  /// Checks every option once, for collide-server's start-up and for CollideServer::Start:
  /// each value within its range, the durability a real policy, the addresses' forms and their
  /// loopback rule (a non-loopback gRPC, metrics or viewer address needs a token file or
  /// allow_insecure_remote: FAILED_PRECONDITION), the TLS files given together, a port file only
  /// with its address, a --simd level this CPU has, the NATS URLs and the advertised address,
  /// durability replicated only with --nats_url, the router flags together. INVALID_ARGUMENT
  /// otherwise; the message starts with the option's (the flag's) name: `viewer_max_streams: 0 is
  /// not from 1 to 64`.
  absl::Status Validate() const;

  /// Every option and limit as `name value` pairs, in flag order, the values as their flags
  /// would spell them (the start-up log; never a token, only the token file's path).
  std::vector<std::pair<std::string, std::string>> Describe() const;
};

/// The nodes of --nats_url (empty for an empty list); INVALID_ARGUMENT `nats_url: ...`.
absl::StatusOr<std::vector<std::string>> ParseNatsUrls(absl::string_view list);
/// The routers of --router_admin (host:port each); INVALID_ARGUMENT `router_admin: ...`.
absl::StatusOr<std::vector<std::string>> ParseRouterAdmin(absl::string_view list);

/// collide-server's defaults: ServerOptions{} with query_threads the number of CPUs this process
/// may run on (UsableCpus).
ServerOptions DefaultServerOptions();

/// The CPUs this process may run on (its affinity mask: taskset, a container's cpuset), else the
/// machine's; at least 1, at most kMaxQueryThreads.
uint32_t UsableCpus();

}  // namespace collide
