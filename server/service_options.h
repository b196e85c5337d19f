#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "scene/scene_options.h"
#include "store/recovery.h"

namespace collide {

/// The limits the service enforces on every request (the collide-server flags of the same names).
struct ServiceLimits {
  /// Ops + moves per update batch; bodies per UpsertBodies; ids per RemoveBodies or GetBodies
  /// (and bodies per GetBodies response). Over it: RESOURCE_EXHAUSTED.
  uint32_t max_batch_ops = 100000;
  /// Queries per QueryBatch. Over it: RESOURCE_EXHAUSTED.
  uint32_t max_queries_per_batch = 10000;
  /// The most scenes the server holds. A create beyond it: RESOURCE_EXHAUSTED.
  uint32_t max_scenes = 1024;
  /// The largest SceneOptions.max_bodies accepted, and the cap of its default.
  uint32_t max_bodies_per_scene = 10000000;
  /// The largest Query.max_hits accepted (0 asks for min(kDefaultMaxHits, this), query/batch.h).
  uint32_t max_hits = 4096;
  /// The most bytes one QueryStream answer may take, encoded. A batch whose largest possible
  /// answer (MaxAnswer, server/convert/query_answer.h: 59 bytes per hit its queries may return, at
  /// least 1,051 per query) is larger is refused before it runs: RESOURCE_EXHAUSTED `queries`.
  /// Bounds the memory a stream holds for a client that does not read. At most 2^31 - 1.
  uint32_t max_answer_bytes = 16 << 20;
  /// The longest Filter.excluded_ids accepted.
  uint32_t max_excluded_ids = 64;
  /// Batches a stream has read but not answered yet; at this many the stream stops reading
  /// (HTTP/2 flow control then pushes back on the client).
  uint32_t max_inflight_per_stream = 64;
  /// The longest a query asking for a min_version waits for the scene to reach it (ms), whatever
  /// its deadline.
  uint32_t max_version_wait_ms = 10000;
  /// Fences per Watch request. Over it: RESOURCE_EXHAUSTED.
  uint32_t max_fences_per_watch = 100000;
  /// The largest WatchRequest.max_queued_events (larger values are lowered to it).
  uint32_t max_watch_queued_events = 1 << 20;
  /// The most streams (UpdateStream + QueryStream + Watch) open at once on the server; past it a
  /// new stream ends at once with RESOURCE_EXHAUSTED.
  uint32_t max_streams = 10000;
  /// The most of those that are Watch streams (long-lived readers cannot take every stream from
  /// writers); past it a new Watch ends at once with RESOURCE_EXHAUSTED `streams`.
  uint32_t max_watch_streams = 1000;
  /// Fences plus contact watches over all live watches; a Watch that would pass it ends at once
  /// with RESOURCE_EXHAUSTED `fences`.
  uint32_t max_watch_fences = 200000;
  /// Entries the live watches' state may hold together (WatchBudget::contents: bodies inside
  /// fences, contact pairs, a batch's candidate pairs); a watch that would pass it ends with
  /// RESOURCE_EXHAUSTED `fences`.
  uint32_t max_watch_contents = 4000000;
  /// Bytes of updates queued for all watchers together; an update that does not fit replaces
  /// its watcher's queue by a resync snapshot.
  uint64_t max_watch_queued_bytes = 128u << 20;
  /// Bytes of applied batches waiting for the watch workers, all scenes together; a batch that
  /// does not fit drops its scene's backlog, and its watchers resync.
  uint64_t max_watch_backlog_bytes = 64u << 20;
  /// A stream whose answer could not be written for this long (its client stopped reading) is
  /// ended with RESOURCE_EXHAUSTED (ms; 0: never).
  uint32_t stream_stall_timeout_ms = 30000;
  /// The most bytes of messages one ImportScene stream may send (RESOURCE_EXHAUSTED past it).
  /// The stream's memory is about 1.5 times this while it is read (the bodies received) and
  /// about 3 times at its end (the scene built and its log record encoded). A scene of 1,000,000
  /// bodies is about 60 MB of messages.
  uint64_t max_import_bytes = 256u << 20;
  /// The most ImportScene streams open at once (they count toward max_streams too); past it a
  /// new import ends at once with RESOURCE_EXHAUSTED `streams`. With max_import_bytes this
  /// bounds the memory imports take: about 3 x max_import_bytes x max_concurrent_imports.
  uint32_t max_concurrent_imports = 4;
};

/// The most watch threads a server runs.
inline constexpr uint32_t kMaxWatchThreads = 64;

/// The most threads a QueryStream batch may run on (--query_threads).
inline constexpr uint32_t kMaxQueryThreads = 1024;

/// Everything collide-server is configured with (flags are parsed only in server/main.cc).
struct ServerOptions {
  /// The listen address, `host:port`; port 0 picks a free port (see CollideServer::port()).
  std::string address = "127.0.0.1:50051";
  /// The data directory (created if missing).
  std::string data_dir = "./data";
  /// The policy of scenes created with DURABILITY_DEFAULT (never kDefault).
  DurabilityPolicy durability = DurabilityPolicy::kAlways;
  /// What start-up does with a logged record that no longer applies (strict: refuse to start).
  RecoveryMode recovery = RecoveryMode::kStrict;
  /// The periodic fsync interval.
  std::chrono::milliseconds sync_interval{100};
  /// When not empty, the token file that enables auth (auth.h).
  std::string token_file;
  /// Without a token file, binding a non-loopback address is refused unless this is set.
  bool allow_insecure_remote = false;
  /// PEM files of the server's certificate chain and key: serve TLS when set (both or neither).
  std::string tls_cert;
  std::string tls_key;
  /// PEM file of the CA that client certificates must chain to: requires client certificates.
  std::string tls_ca;
  /// The largest request message accepted, in bytes.
  int max_message_bytes = 16 << 20;
  /// The largest request metadata (headers) accepted, in bytes.
  int max_metadata_bytes = 16 << 10;
  /// The most concurrent streams (calls) on one HTTP/2 connection
  /// (SETTINGS_MAX_CONCURRENT_STREAMS).
  int max_streams_per_connection = 1024;
  /// Threads that evaluate watches (1 to kMaxWatchThreads).
  uint32_t watch_threads = 2;
  /// The threads one QueryStream batch of at least 64 queries runs on, the gRPC thread that
  /// received it included (1 to kMaxQueryThreads; 1: each batch on its gRPC thread alone). The
  /// server starts query_threads - 1 workers, shared by all streams (scene/scene_query.h,
  /// QuerySplit). collide-server's default is the number of CPUs it may run on.
  uint32_t query_threads = 1;
  /// How long a graceful shutdown waits for calls in progress before cancelling them.
  std::chrono::milliseconds drain_timeout{5000};
  /// Request limits.
  ServiceLimits limits;
  /// Query batches and unary queries that take at least this long are logged at warn (0: none;
  /// slow_query_log.h).
  std::chrono::nanoseconds slow_query_threshold{0};
};

}  // namespace collide
