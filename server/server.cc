#include "server/server.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "server/infra/access_log.h"
#include "server/infra/listen_address.h"
#include "server/infra/metadata_limit.h"
#include "server/infra/slow_query_log.h"
#include "spdlog/spdlog.h"

namespace collide {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path, absl::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(what, ": cannot read ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeCredentials(
    const ServerOptions& options) {
  // (Validate checked that the files come together.)
  if (options.tls_cert.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions ssl;
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  absl::StatusOr<std::string> cert = ReadFile(options.tls_cert, "tls_cert");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadFile(options.tls_key, "tls_key");
  if (!key.ok()) return key.status();
  pair.cert_chain = *std::move(cert);
  pair.private_key = *std::move(key);
  ssl.pem_key_cert_pairs.push_back(std::move(pair));
  if (!options.tls_ca.empty()) {
    absl::StatusOr<std::string> ca = ReadFile(options.tls_ca, "tls_ca");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *std::move(ca);
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

// What start-up found in the data directory, for the operator.
void LogRecovery(const RecoveryReport& report, size_t scenes,
                 std::chrono::steady_clock::duration duration) {
  spdlog::info(
      "recovery finished: {} scenes, {} snapshots loaded, {} segments read, {} records replayed, "
      "{} skipped, {:.1f} ms",
      scenes, report.snapshots_loaded, report.segments_read, report.records_replayed,
      report.records_skipped, std::chrono::duration<double, std::milli>(duration).count());
  if (report.torn_tail.has_value()) {
    spdlog::warn("recovery: cut a torn write of {} bytes at the end of {} (offset {}: {})",
                 report.torn_tail->bytes_cut, report.torn_tail->file, report.torn_tail->offset,
                 report.torn_tail->problem);
  }
  if (!report.moved_scenes_problem.empty()) {
    spdlog::warn(
        "recovery: ignored the list of scenes moved away ({}): writes to them get NOT_FOUND "
        "instead of their destination",
        report.moved_scenes_problem);
  } else if (report.moved_scenes > 0) {
    spdlog::info("recovery: {} scenes moved away are remembered with their destinations",
                 report.moved_scenes);
  }
  for (const SkippedRecord& skipped : report.skipped) {
    spdlog::error(
        "recovery: dropped record {} of scene \"{}\" ({} offset {}): it no longer applies: {}",
        skipped.sequence, skipped.scene, skipped.file, skipped.offset, skipped.reason);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<CollideServer>> CollideServer::Start(const ServerOptions& options,
                                                                    ServerHooks hooks) {
  COLLIDE_RETURN_IF_ERROR(options.Validate());
  std::chrono::nanoseconds slow_query_threshold{0}, slow_update_threshold{0};
  SlowLogThresholdFromMs(options.slow_query_ms, &slow_query_threshold);
  SlowLogThresholdFromMs(options.slow_update_ms, &slow_update_threshold);
  auto server = std::unique_ptr<CollideServer>(new CollideServer());
  server->options_ = options;

  if (options.token_file.empty()) {
    server->auth_ = Authenticator::AllowAll();
  } else {
    absl::StatusOr<std::unique_ptr<Authenticator>> auth =
        Authenticator::FromFile(options.token_file);
    if (!auth.ok()) return auth.status();
    server->auth_ = *std::move(auth);
    spdlog::info("auth: {} tokens from {}", server->auth_->token_count(), options.token_file);
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials = MakeCredentials(options);
  if (!credentials.ok()) return credentials.status();
  // The port is held from here, before anything is written to the data directory, so that a
  // busy or foreign address stops the start-up with nothing written.
  COLLIDE_ASSIGN_OR_RETURN(PortReservation reservation,
                           PortReservation::Reserve(options.address, "address"));

  std::error_code error;
  std::filesystem::create_directories(options.data_dir, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("data_dir: cannot create ", options.data_dir, ": ", error.message()));
  }
  DatabaseOptions db_options;
  db_options.durability = options.durability;
  db_options.sync_interval = std::chrono::milliseconds(options.sync_interval_ms);
  db_options.max_scenes = options.limits.max_scenes;
  db_options.max_bodies_per_scene = options.limits.max_bodies_per_scene;
  db_options.scene_assets = SceneAssetLimits{.max_assets = options.limits.max_assets_per_scene,
                                             .max_bytes = options.limits.max_asset_bytes_per_scene};
  db_options.max_asset_bytes = options.limits.max_asset_bytes;
  db_options.max_assets = options.limits.max_assets;
  db_options.recovery = options.recovery;
  // A full disk (or file size limit) stops the log but not the server: writes are refused from
  // then on, nothing unsynced is acknowledged, queries go on. Any other log failure (an fsync
  // error) stops the process, as the store does by default.
  db_options.on_fatal_error = [](const absl::Status& status) {
    if (status.code() == absl::StatusCode::kResourceExhausted ||
        status.code() == absl::StatusCode::kOutOfRange) {
      spdlog::error(
          "store: the log cannot be written ({}): writes are refused until a restart; "
          "queries are still served",
          status.ToString());
      return;
    }
    spdlog::critical("store: fatal log error, stopping: {}", status.ToString());
    spdlog::shutdown();
    std::abort();
  };
  db_options.on_snapshot = [](const SnapshotEvent& snapshot) {
    spdlog::info("snapshot of scene \"{}\": {} bytes, {:.1f} ms", snapshot.scene, snapshot.bytes,
                 static_cast<double>(snapshot.duration.count()) / 1e3);
  };
  // The query workers also help the writers finish their batches (DatabaseOptions::apply_pool).
  server->query_pool_ = std::make_unique<WorkerPool>(options.query_threads);
  db_options.apply_pool = server->query_pool_.get();
  server->advertised_address_ =
      options.advertise_address.empty() ? reservation.address() : options.advertise_address;
  // Replication connects (in the background: the cluster may be down) before the store opens,
  // which hands it the records of replicated scenes.
  if (!options.nats_url.empty()) {
    ReplicatorOptions replication;
    COLLIDE_ASSIGN_OR_RETURN(replication.nats_urls, ParseNatsUrls(options.nats_url));
    replication.address = server->advertised_address_;
    replication.backend = options.router_backend;
    replication.lease = std::chrono::milliseconds(options.replication_lease_ms);
    replication.replicas = static_cast<int>(options.replication_replicas);
    replication.publish_timeout = std::chrono::milliseconds(options.replication_publish_timeout_ms);
    CollideServer* raw = server.get();
    // A scene this server now owns is routed here at once; the map's sync does the rest.
    replication.on_owned = [raw](const std::string& scene) {
      if (raw->router_ != nullptr) raw->router_->Claim(scene, nullptr);
    };
    replication.on_deleted = [raw](const std::string&) {
      if (raw->router_ != nullptr) raw->router_->SyncSoon();
    };
    COLLIDE_ASSIGN_OR_RETURN(server->replicator_, Replicator::Create(std::move(replication)));
    db_options.replication = server->replicator_.get();
    spdlog::info("replication: NATS {} as {} (lease {} ms, {} replicas)", options.nats_url,
                 server->advertised_address_, options.replication_lease_ms,
                 options.replication_replicas);
  }
  const auto open_start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(options.data_dir, db_options);
  if (!db.ok()) return db.status();
  server->db_ = *std::move(db);
  LogRecovery(server->db_->recovery_report(), server->db_->scene_count(),
              std::chrono::steady_clock::now() - open_start);
  spdlog::info("opened data directory {} ({} scenes)", options.data_dir,
               server->db_->scene_count());
  if (!options.router_admin.empty()) {
    RouterClaimsOptions router;
    COLLIDE_ASSIGN_OR_RETURN(router.routers, ParseRouterAdmin(options.router_admin));
    router.map = options.router_map;
    router.backend = options.router_backend;
    router.interval = std::chrono::milliseconds(options.router_sync_ms);
    server->router_ = std::make_unique<RouterClaims>(std::move(router), server->db_.get(),
                                                     server->replicator_.get());
    server->router_->Start();
    spdlog::info("router: keeping map {} on {} pointing at backend {}", options.router_map,
                 options.router_admin, options.router_backend);
  }
  if (server->replicator_ != nullptr) server->replicator_->Start(server->db_.get());

  server->streams_ = std::make_unique<StreamRegistry>(
      options.limits.max_streams, std::chrono::milliseconds(options.limits.stream_stall_timeout_ms),
      options.limits.max_watch_streams, options.limits.max_concurrent_imports,
      options.limits.max_interest_streams);
  server->watches_ = std::make_unique<WatchDispatcher>(WatchDispatcher::Options{
      .threads = options.watch_threads,
      .limits = WatchLimits{.max_fences = options.limits.max_watch_fences,
                            .max_contents = options.limits.max_watch_contents,
                            .max_queued_bytes = options.limits.max_watch_queued_bytes,
                            .max_backlog_bytes = options.limits.max_watch_backlog_bytes,
                            .max_observers = options.limits.max_interest_observers}});
  server->service_ = std::make_unique<CollideService>(
      ServiceContext{.db = server->db_.get(),
                     .auth = server->auth_.get(),
                     .limits = options.limits,
                     .max_metadata_bytes = options.max_metadata_bytes,
                     .default_durability = options.durability,
                     .streams = server->streams_.get(),
                     .watches = server->watches_.get(),
                     .counters = hooks.counters,
                     .slow_queries = SlowQueryLog(slow_query_threshold),
                     .slow_updates = SlowUpdateLog(slow_update_threshold),
                     .query_split = QuerySplit{.pool = server->query_pool_.get()},
                     .query_samples = &server->query_samples_,
                     .replication = server->replicator_.get(),
                     .router = server->router_.get(),
                     .address = server->advertised_address_});

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(reservation.address(), *credentials, &server->port_);
  // gRPC sets SO_REUSEPORT by default, so a second server on the same port would start and take
  // half of the new connections: without it, the second one fails to bind.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Requests are accepted uncompressed only. gRPC inflates a compressed message whole before
  // the size limit applies, so a few hundred kilobytes of gzip could make the server allocate
  // hundreds of megabytes; a compressed call is refused (UNIMPLEMENTED, "Compression algorithm
  // 'gzip' is disabled") when its headers arrive, before any of its data is read.
  builder.SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_DEFLATE, false);
  builder.SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_GZIP, false);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  // The HTTP/2 layer closes the whole connection on a header block over its limit; it gets a
  // larger one, and the service refuses each call over max_metadata_bytes alone (Authorize).
  builder.AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE,
                             TransportMetadataLimit(options.max_metadata_bytes));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, options.max_streams_per_connection);
  // A connection whose client has not sent its HTTP/2 SETTINGS (a silent or slow client) is
  // closed after this, not gRPC's default 120 s: such connections hold a socket each, and a
  // client that keeps opening them needs 12 times more of them to hold as many.
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                             static_cast<int>(kGrpcHandshakeTimeout.count()));
  builder.RegisterService(server->service_.get());
  server->reflection_ = std::make_unique<ReflectionService>(std::vector<std::string>{
      v1::Collide::service_full_name(), "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"});
  builder.RegisterService(server->reflection_.get());
  // SetInterceptorCreators replaces the list: the metrics interceptors (hooks) and the access log
  // (access_log.h: a line per call at debug level) go in one call.
  hooks.interceptors.push_back(NewAccessLogFactory());
  builder.experimental().SetInterceptorCreators(std::move(hooks.interceptors));
  reservation.Release();
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    server->server_.reset();
    server->db_->Close().IgnoreError();
    return absl::UnavailableError(absl::StrCat("address: cannot listen on ", reservation.address(),
                                               " (", WhyCannotListen(reservation.address()), ")"));
  }
  if (absl::StartsWith(options.address, "unix")) {
    server->bound_address_ = options.address;
  } else {
    server->bound_address_ = absl::StrCat(HostOf(reservation.address()), ":", server->port_);
  }
  grpc::HealthCheckServiceInterface* health = server->server_->GetHealthCheckService();
  if (health != nullptr) {
    health->SetServingStatus(true);
    health->SetServingStatus(v1::Collide::service_full_name(), true);
  }
  return server;
}

CollideServer::~CollideServer() { Shutdown().IgnoreError(); }

absl::Status CollideServer::Shutdown() {
  if (shut_down_) return absl::OkStatus();
  shut_down_ = true;
  if (server_ != nullptr) {
    if (grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService()) {
      health->SetServingStatus(false);
    }
    // The scenes this server owns go to their followers now rather than when their leases run
    // out (what was written is stored first).
    if (replicator_ != nullptr) {
      replicator_->Release(std::chrono::milliseconds(std::min(options_.drain_timeout_ms, 2000)));
    }
    server_->Shutdown(std::chrono::system_clock::now() +
                      std::chrono::milliseconds(options_.drain_timeout_ms));
    // Writes still waiting for the replicated log (a NATS cluster without quorum) fail now, so
    // that their calls end.
    if (replicator_ != nullptr) replicator_->Stop();
    server_->Wait();
  }
  if (replicator_ != nullptr) replicator_->Stop();
  if (router_ != nullptr) router_->Stop();
  // Every Watch has ended: stop the watch workers and unregister them from the scenes.
  watches_.reset();
  absl::Status status;
  if (db_ != nullptr) {
    status = db_->Flush();
    absl::Status closed = db_->Close();
    if (status.ok()) status = closed;
  }
  return status;
}

}  // namespace collide
