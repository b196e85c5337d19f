#pragma once

#include "scene/query_sampler.h"
#include "scene/scene_options.h"
#include "scene/scene_query.h"
#include "server/infra/auth.h"
#include "server/infra/replication_control.h"
#include "server/infra/service_counters.h"
#include "server/infra/slow_query_log.h"
#include "server/infra/slow_update_log.h"
#include "server/infra/stream_registry.h"
#include "server/service_options.h"
#include "store/database.h"
#include "watch/watch_dispatcher.h"

namespace collide {

/// What every handler and stream of the service needs: the store, the token checker, the
/// limits and the server's default durability. The pointers outlive the service.
struct ServiceContext {
  /// The durable scene store.
  Database* db = nullptr;
  /// Checks each call's bearer token (AllowAll() without a token file).
  const Authenticator* auth = nullptr;
  /// Request limits.
  ServiceLimits limits;
  /// The largest request metadata of a call, in bytes (CheckMetadataSize); 0: not checked.
  int max_metadata_bytes = 0;
  /// The policy that DURABILITY_DEFAULT resolves to.
  DurabilityPolicy default_durability = DurabilityPolicy::kAlways;
  /// The open streams (stall watchdog, max_streams, counters); null: streams are not tracked.
  StreamRegistry* streams = nullptr;
  /// Evaluates watches away from the scenes' writers, within the server-wide watch limits;
  /// null: each watch runs on its scene's writer, unbounded (tests).
  WatchDispatcher* watches = nullptr;
  /// Where queries and updates are counted for /metrics; null (metrics off): nothing is counted.
  ServiceCounters* counters = nullptr;
  /// Logs query batches and unary queries slower than --slow_query_ms (off by default).
  SlowQueryLog slow_queries;
  /// Logs writes slower than --slow_update_ms, with where their time went (off by default).
  SlowUpdateLog slow_updates;
  /// How a QueryStream batch spreads over the server's query threads (--query_threads); no
  /// pool: each batch runs on the gRPC thread that received it.
  QuerySplit query_split;
  /// The sample of answered casts the viewer draws: each query rpc offers what AnswerQueries
  /// answered; null: nothing is offered.
  QuerySampler* query_samples = nullptr;
  /// Replicated scenes (--nats_url): their creation and figures; null: none.
  ReplicationControl* replication = nullptr;
  /// The routers' map (--router_admin): a scene imported here is routed here before the import
  /// is answered; null: no router.
  RouterControl* router = nullptr;
  /// This server's address as clients reach it (GetServerStats, the viewer).
  std::string address;
};

}  // namespace collide
