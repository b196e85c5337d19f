// collide-load: a load generator for collide-server (or, with --target=echo, for
// collide-echo-server, the transport ceiling) on the gRPC callback client API. --target=both
// starts both servers and alternates the same closed-loop workload between them run by run (the
// echo first), so that each pair of runs shares a moment of a shared machine, and reports each
// pair's collide / echo ratio and their median.
//
// Workloads (--workload):
//   unary   one-off queries (Raycast / SphereCast / Overlap by --query_mix), --concurrency calls
//           in flight (closed loop) or --rate calls/s (open loop).
//   stream  QueryStream batches of --batch queries on --streams streams, each with --in_flight
//           batches outstanding (closed loop) or --rate batches/s in all (open loop).
//   ingest  UpdateStream batches of --moves body moves (PoseColumns) on --streams streams with
//           --in_flight outstanding, while one QueryStream sends --query_rate batches/s of
//           --query_batch raycasts (open loop); reports moves/s and the queries' latency.
// Closed loop measures the maximum throughput; open loop sends at fixed intended times and
// measures each latency from its intended send time (no coordinated omission: a late send
// counts its lateness). --rate_fraction=F first measures the closed-loop maximum for
// --probe_seconds, then runs open loop at F times it.
//
// The scene is the reference scene of shared/bench/README.md (--bodies, --side), or with
// --level=city|terrain one of collide-bench-mesh's reference levels (bench/mesh_levels.h: the
// city of 1,243,538 triangles as a mesh asset, or the 1,000 x 1,000 terrain as a heightfield
// asset), uploaded through the C++ client and placed by one static body; the queries are then
// its game rays (from eye height towards a point of the level, as far as that point: nearly all
// hit), and the echo server it starts answers a hit with a triangle on every query. Without
// --address the generator starts the server itself (collide-server or collide-echo-server next
// to this binary's build tree, on 127.0.0.1:0 with --port_file) and stops it at the end.
//
//   collide-load --workload=unary --target=echo --concurrency=8 --seconds=5
//   collide-load --workload=unary --rate_fraction=0.5
//   collide-load --workload=stream --batch=256 --in_flight=4
//   collide-load --workload=stream --level=city --target=both
//   collide-load --workload=ingest --moves=1000 --query_rate=200
//   collide-load --workload=ingest --durability=replicated --nats_nodes=3 --bodies=10000
//                --moves=100 --in_flight=1 --query_rate=0   (acknowledged after the quorum)
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "base/program_flags.h"
#include "bench/load/drivers.h"
#include "bench/load/echo.grpc.pb.h"
#include "bench/load/latency_histogram.h"
#include "bench/load/workload.h"
#include "bench/mesh_levels.h"
#include "bench/reference_messages.h"
#include "bench/reference_scene.h"
#include "bench/stats.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "collide/v1/collide.grpc.pb.h"
#include "collide/version.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "support/nats_cluster.h"
#include "support/server_process.h"

ABSL_FLAG(std::string, workload, "unary", "unary, stream or ingest");
ABSL_FLAG(std::string, target, "collide",
          "collide, echo (the transport ceiling) or both (alternating runs, closed loop)");
ABSL_FLAG(std::string, address, "", "server address; empty: start the server on 127.0.0.1:0");
ABSL_FLAG(std::string, server_bin, "", "the server binary to start (default: the build tree's)");
ABSL_FLAG(std::vector<std::string>, server_flag, {},
          "more collide-server flags when this starts the server, comma-separated (e.g. "
          "--server_flag=--metrics_address=127.0.0.1:0 for metrics on)");
ABSL_FLAG(std::string, token, "", "bearer token");
ABSL_FLAG(int, bodies, 100000, "reference scene size");
ABSL_FLAG(double, side, 250, "reference scene side L");
ABSL_FLAG(std::string, query_mix, "ray:1", "weights, e.g. ray:8,sphere:1,overlap:1");
ABSL_FLAG(int, batch, 256, "queries per QueryStream batch");
ABSL_FLAG(int, streams, 1, "streams (stream and ingest workloads)");
ABSL_FLAG(int, in_flight, 4, "batches outstanding per stream (closed loop)");
ABSL_FLAG(int, concurrency, 8, "unary calls in flight (closed loop)");
ABSL_FLAG(double, rate, 0, "open loop: calls/s (unary) or batches/s (stream); 0: closed loop");
ABSL_FLAG(double, rate_fraction, 0, "open loop at this fraction of the measured closed-loop max");
ABSL_FLAG(double, probe_seconds, 3, "closed-loop probe before a --rate_fraction run");
ABSL_FLAG(double, seconds, 5, "measured duration of a run");
ABSL_FLAG(double, warmup_seconds, 1, "unmeasured warm-up before each run");
ABSL_FLAG(int, runs, 3, "runs; medians are printed");
ABSL_FLAG(int, moves, 1000, "ingest: moves per UpdateBatch");
ABSL_FLAG(
    std::string, durability, "periodic",
    "ingest: scene durability (none/periodic/always/replicated; replicated needs --nats_nodes "
    "or a --server_flag=--nats_url=...)");
ABSL_FLAG(int, nats_nodes, 0,
          "when this starts the server: first start a NATS JetStream cluster of this many local "
          "nats-server nodes and pass the server its --nats_url (0: none)");
ABSL_FLAG(double, query_rate, 200, "ingest: query batches/s on the concurrent query stream");
ABSL_FLAG(int, query_batch, 16, "ingest: raycasts per concurrent query batch");
ABSL_FLAG(double, fat_margin, 0, "the scene's fat_margin (0: the server's default)");
ABSL_FLAG(std::string, level, "",
          "unary and stream: query a reference level instead of the reference scene: city (a "
          "mesh of --level_lots^2 buildings) or terrain (a 1,000 x 1,000 heightfield)");
ABSL_FLAG(int, level_lots, collide::bench::kCityLots,
          "--level=city: lots a side (100: 1,243,538 triangles)");

namespace collide::load {
namespace {

using bench::LatencyHistogram;
using bench::Median;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// ---------------------------------------------------------------------------------------------
// Starting the server.

std::string DefaultServerBinary(const std::string& target) {
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  // build/bench/load/collide-load: build/server/collide-server, build/bench/load/collide-echo.
  if (target == "echo") return (self.parent_path() / "collide-echo-server").string();
  return (self.parent_path().parent_path().parent_path() / "server" / "collide-server").string();
}

// ---------------------------------------------------------------------------------------------
// Runs.

struct RunResult {
  double rate = 0;  // units per second
  LatencyHistogram latency{};
  double side_rate = 0;  // ingest: query results per second
  LatencyHistogram side_latency{};
};

// Runs warm-up then the measured window with `recorders` measuring, calling `stop` after.
void Measure(const std::vector<Recorder*>& recorders, double* elapsed) {
  std::this_thread::sleep_for(std::chrono::duration<double>(absl::GetFlag(FLAGS_warmup_seconds)));
  for (Recorder* r : recorders) r->Begin();
  const Clock::time_point t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(absl::GetFlag(FLAGS_seconds)));
  *elapsed = Seconds(Clock::now() - t0);
}

template <typename Stub>
RunResult RunUnary(Stub* stub, const Workload& w, const std::vector<Kind>& mix, double rate) {
  Recorder recorder;
  UnaryDriver<Stub> driver(stub, w, mix, absl::GetFlag(FLAGS_token), &recorder);
  std::atomic<bool> stop{false};
  std::thread pacer;
  if (rate > 0) {
    pacer = std::thread([&] { driver.RunOpen(rate, stop); });
  } else {
    driver.StartClosed(absl::GetFlag(FLAGS_concurrency));
  }
  double elapsed = 0;
  Measure({&recorder}, &elapsed);
  auto [hist, units] = recorder.End();
  stop = true;
  driver.Stop();
  if (pacer.joinable()) pacer.join();
  driver.Wait();
  return RunResult{.rate = static_cast<double>(units) / elapsed, .latency = hist};
}

using QueryDriver = StreamDriver<v1::QueryBatch, v1::QueryBatchResult>;
using UpdateDriver = StreamDriver<v1::UpdateBatch, v1::UpdateAck>;

// Every query result and hit the streams received (the warm-up's too): the hit fraction.
std::atomic<uint64_t> stream_results{0}, stream_hits{0};

uint64_t QueryUnits(const v1::QueryBatch&, const v1::QueryBatchResult& r) {
  if (r.has_error()) {
    std::fprintf(stderr, "batch error: %s\n", r.error().message().c_str());
    std::exit(1);
  }
  uint64_t hits = 0;
  for (const v1::QueryResult& result : r.results()) hits += result.hits_size() > 0 ? 1 : 0;
  stream_results.fetch_add(static_cast<uint64_t>(r.results_size()), std::memory_order_relaxed);
  stream_hits.fetch_add(hits, std::memory_order_relaxed);
  return static_cast<uint64_t>(r.results_size());
}

uint64_t UpdateUnits(const v1::UpdateBatch& b, const v1::UpdateAck& a) {
  if (a.has_error()) {
    std::fprintf(stderr, "update error: %s\n", a.error().message().c_str());
    std::exit(1);
  }
  return static_cast<uint64_t>(b.moves().ids_size());
}

template <typename Stub>
std::vector<std::unique_ptr<QueryDriver>> StartQueryStreams(Stub* stub,
                                                            const std::vector<v1::QueryBatch>& b,
                                                            int streams, int in_flight, bool open,
                                                            Recorder* recorder) {
  std::vector<std::unique_ptr<QueryDriver>> drivers;
  for (int s = 0; s < streams; ++s) {
    drivers.push_back(std::make_unique<QueryDriver>(b, in_flight, open, QueryUnits, recorder));
    drivers.back()->Start(
        absl::GetFlag(FLAGS_token),
        [stub](grpc::ClientContext* c, QueryDriver* d) { stub->async()->QueryStream(c, d); });
  }
  return drivers;
}

template <typename Driver>
void StopAll(const std::vector<std::unique_ptr<Driver>>& drivers) {
  for (auto& d : drivers) d->Stop();
  for (auto& d : drivers) {
    if (grpc::Status s = d->Wait(); !s.ok()) {
      std::fprintf(stderr, "stream ended: %s\n", s.error_message().c_str());
    }
  }
}

template <typename Stub>
RunResult RunStream(Stub* stub, const Workload& w, double rate) {
  Recorder recorder;
  auto drivers = StartQueryStreams(stub, w.query_batches, absl::GetFlag(FLAGS_streams),
                                   absl::GetFlag(FLAGS_in_flight), rate > 0, &recorder);
  std::atomic<bool> stop{false};
  std::thread pacer;
  if (rate > 0) pacer = std::thread([&] { PaceStreams(drivers, rate, stop); });
  double elapsed = 0;
  Measure({&recorder}, &elapsed);
  auto [hist, units] = recorder.End();
  stop = true;
  if (pacer.joinable()) pacer.join();
  StopAll(drivers);
  return RunResult{.rate = static_cast<double>(units) / elapsed, .latency = hist};
}

template <typename Stub>
RunResult RunIngest(Stub* stub, const Workload& w) {
  Recorder updates, queries;
  std::vector<std::unique_ptr<UpdateDriver>> writers;
  for (int s = 0; s < absl::GetFlag(FLAGS_streams); ++s) {
    writers.push_back(std::make_unique<UpdateDriver>(
        w.update_batches, absl::GetFlag(FLAGS_in_flight), false, UpdateUnits, &updates));
    writers.back()->Start(
        absl::GetFlag(FLAGS_token),
        [stub](grpc::ClientContext* c, UpdateDriver* d) { stub->async()->UpdateStream(c, d); });
  }
  const double query_rate = absl::GetFlag(FLAGS_query_rate);
  auto readers = StartQueryStreams(stub, w.query_batches, 1, 1, true, &queries);
  std::atomic<bool> stop{false};
  std::thread pacer;
  if (query_rate > 0) pacer = std::thread([&] { PaceStreams(readers, query_rate, stop); });
  double elapsed = 0;
  Measure({&updates, &queries}, &elapsed);
  auto [uhist, moves] = updates.End();
  auto [qhist, results] = queries.End();
  stop = true;
  if (pacer.joinable()) pacer.join();
  StopAll(writers);
  StopAll(readers);
  return RunResult{.rate = static_cast<double>(moves) / elapsed,
                   .latency = uhist,
                   .side_rate = static_cast<double>(results) / elapsed,
                   .side_latency = qhist};
}

// ---------------------------------------------------------------------------------------------
// Set-up and report.

// A client of the server with the workload's scene created, empty, for `max_bodies` bodies.
std::unique_ptr<client::Client> CreateScene(const std::string& address, const std::string& scene,
                                            uint32_t max_bodies, v1::Durability durability) {
  client::ClientOptions options;
  options.address = address;
  options.bearer_token = absl::GetFlag(FLAGS_token);
  options.enable_http_proxy = false;
  options.default_deadline = absl::Seconds(120);
  auto c = client::Client::Connect(options);
  if (!c.ok()) {
    std::fprintf(stderr, "connect: %s\n", c.status().ToString().c_str());
    return nullptr;
  }
  v1::CreateSceneRequest create;
  create.set_scene(scene);
  create.mutable_options()->set_durability(durability);
  create.mutable_options()->set_max_bodies(max_bodies);
  if (const double margin = absl::GetFlag(FLAGS_fat_margin); margin > 0) {
    create.mutable_options()->set_fat_margin(static_cast<float>(margin));
  }
  if (auto s = (*c)->CreateScene(create); !s.ok()) {
    std::fprintf(stderr, "create scene: %s\n", s.status().ToString().c_str());
    return nullptr;
  }
  return *std::move(c);
}

bool LoadScene(const std::string& address, const bench::ReferenceScene& ref, Workload* w,
               v1::Durability durability) {
  std::unique_ptr<client::Client> c =
      CreateScene(address, w->scene, static_cast<uint32_t>(ref.shapes.size()), durability);
  return c != nullptr && bench::UpsertReferenceBodies(*c, w->scene, ref);
}

// A reference level of bench/mesh_levels.h (the city mesh or the terrain heightfield) and the
// game rays of collide-bench-mesh over it.
struct Level {
  std::string kind;  // "city" or "terrain"
  bench::LevelMesh city;
  std::vector<float> heights;  // the terrain's, kTerrainSide x kTerrainSide
  std::vector<Ray> rays;
};

Level MakeLevel(const std::string& kind, int rays) {
  Level level;
  level.kind = kind;
  if (kind == "city") {
    level.city = bench::MakeCity(std::max(2, absl::GetFlag(FLAGS_level_lots)), bench::kCitySplit,
                                 bench::kCitySeed);
    level.rays = bench::GameRays(level.city.bounds, 0.0f, bench::kEye, rays, 2);
  } else {
    level.heights =
        bench::MakeTerrainHeights(bench::kTerrainSide, bench::kTerrainSide, bench::kTerrainSeed);
    const Aabb bounds = bench::TerrainMesh(level.heights, bench::kTerrainSide, bench::kTerrainSide,
                                           bench::kTerrainSpacing)
                            .bounds;
    level.rays = bench::TerrainGameRays(level.heights, bench::kTerrainSide, bench::kTerrainSide,
                                        bench::kTerrainSpacing, bounds, bench::kEye, rays, 4);
  }
  return level;
}

// Uploads the level as an asset of the workload's scene through the C++ client and places it
// with one static body at the origin.
bool LoadLevel(const std::string& address, const Level& level, const Workload& w,
               v1::Durability durability) {
  std::unique_ptr<client::Client> c = CreateScene(address, w.scene, 1, durability);
  if (c == nullptr) return false;
  const Clock::time_point t0 = Clock::now();
  absl::StatusOr<v1::UploadAssetResponse> uploaded;
  v1::Shape shape;
  if (level.kind == "city") {
    std::vector<float> vertices;
    vertices.reserve(3 * level.city.vertices.size());
    for (const Vec3& v : level.city.vertices) vertices.insert(vertices.end(), {v.x, v.y, v.z});
    uploaded = c->UploadMesh(w.scene, "city", client::MeshArrays{vertices, level.city.indices});
    shape = client::MakeMesh("city");
  } else {
    uploaded = c->UploadHeightfield(w.scene, "terrain",
                                    client::HeightfieldArrays{.rows = bench::kTerrainSide,
                                                              .columns = bench::kTerrainSide,
                                                              .spacing_x = bench::kTerrainSpacing,
                                                              .spacing_z = bench::kTerrainSpacing,
                                                              .heights = level.heights,
                                                              .holes = {}});
    shape = client::MakeHeightfield("terrain");
  }
  if (!uploaded.ok()) {
    std::fprintf(stderr, "upload %s: %s\n", level.kind.c_str(),
                 uploaded.status().ToString().c_str());
    return false;
  }
  std::printf("level %s uploaded: %llu triangles, %llu bytes, %llu bytes in memory, %.2f s\n",
              level.kind.c_str(),
              static_cast<unsigned long long>(uploaded->asset().triangle_count()),
              static_cast<unsigned long long>(uploaded->asset().source_bytes()),
              static_cast<unsigned long long>(uploaded->asset().memory_bytes()),
              Seconds(Clock::now() - t0));
  auto placed =
      c->UpsertBodies(w.scene, std::vector<v1::Body>{client::MakeStaticBody(
                                   1, shape, client::MakePose(client::MakeVec3(0, 0, 0)))});
  if (!placed.ok()) {
    std::fprintf(stderr, "place %s: %s\n", level.kind.c_str(), placed.status().ToString().c_str());
    return false;
  }
  return true;
}

// The workload's messages: queries along `rays`; for ingest, moves of the reference scene's
// bodies.
void BuildMessages(const std::vector<Ray>& rays, const bench::ReferenceScene& ref,
                   const std::vector<Kind>& mix, const std::string& workload, Workload* w) {
  const int batch =
      workload == "ingest" ? absl::GetFlag(FLAGS_query_batch) : absl::GetFlag(FLAGS_batch);
  for (size_t i = 0; i < rays.size(); ++i) {
    w->queries.push_back(MakeQuery(i, Kind::kRay, rays[i]));
  }
  const size_t batches = std::max<size_t>(1, rays.size() / static_cast<size_t>(batch));
  w->query_batches.resize(batches);
  for (size_t b = 0; b < batches; ++b) {
    w->query_batches[b].set_scene(w->scene);
    for (int k = 0; k < batch; ++k) {
      const size_t i = (b * static_cast<size_t>(batch) + static_cast<size_t>(k)) % rays.size();
      const Kind kind = workload == "ingest" ? Kind::kRay : mix[i % mix.size()];
      *w->query_batches[b].add_queries() = MakeQuery(i, kind, rays[i]);
    }
  }
  if (workload != "ingest") return;
  // Four rounds of moves over every body (each a small step from the reference pose), in
  // batches of --moves.
  const size_t n = ref.shapes.size();
  const size_t per = static_cast<size_t>(std::max(1, absl::GetFlag(FLAGS_moves)));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> step(-0.5f, 0.5f);
  for (int round = 0; round < 4; ++round) {
    for (size_t first = 0; first < n; first += per) {
      v1::UpdateBatch& b = w->update_batches.emplace_back();
      b.set_scene(w->scene);
      v1::PoseColumns* m = b.mutable_moves();
      for (size_t i = first; i < std::min(n, first + per); ++i) {
        const Pose& p = ref.poses[i];
        m->add_ids(i);
        for (float v :
             {p.position.x + step(rng), p.position.y + step(rng), p.position.z + step(rng),
              p.rotation.x, p.rotation.y, p.rotation.z, p.rotation.w}) {
          m->add_poses(v);
        }
      }
    }
  }
}

void PrintLatency(const char* label, const LatencyHistogram& h) {
  std::printf("%s p50 %.1f us, p90 %.1f us, p99 %.1f us, p99.9 %.1f us (%llu samples)", label,
              h.Percentile(0.5) / 1e3, h.Percentile(0.9) / 1e3, h.Percentile(0.99) / 1e3,
              h.Percentile(0.999) / 1e3, static_cast<unsigned long long>(h.count()));
}

template <typename Stub>
int Drive(Stub* stub, const Workload& w, const std::vector<Kind>& mix) {
  const std::string workload = absl::GetFlag(FLAGS_workload);
  const int runs = std::max(1, absl::GetFlag(FLAGS_runs));
  double rate = absl::GetFlag(FLAGS_rate);
  const double fraction = absl::GetFlag(FLAGS_rate_fraction);
  const char* unit = workload == "unary"    ? "calls/s"
                     : workload == "ingest" ? "moves/s"
                                            : "queries/s";
  std::vector<double> rates, p50, p90, p99, p999, side_rates, side_p50, side_p99, maxes;
  for (int run = 0; run < runs; ++run) {
    if (fraction > 0 && workload != "ingest") {
      // The closed-loop maximum of this run, then open loop at a fraction of it.
      const double saved = absl::GetFlag(FLAGS_seconds);
      absl::SetFlag(&FLAGS_seconds, absl::GetFlag(FLAGS_probe_seconds));
      RunResult probe = workload == "unary" ? RunUnary(stub, w, mix, 0) : RunStream(stub, w, 0);
      absl::SetFlag(&FLAGS_seconds, saved);
      maxes.push_back(probe.rate);
      rate = fraction * probe.rate;
      if (workload == "stream") rate /= absl::GetFlag(FLAGS_batch);  // batches/s
      std::printf("run %d: closed-loop max %.0f %s; open loop at %.0f%%: ", run + 1, probe.rate,
                  unit, 100 * fraction);
    } else {
      std::printf("run %d: ", run + 1);
    }
    RunResult r;
    if (workload == "unary") {
      r = RunUnary(stub, w, mix, rate);
    } else if (workload == "stream") {
      r = RunStream(stub, w, rate);
    } else {
      r = RunIngest(stub, w);
    }
    rates.push_back(r.rate);
    p50.push_back(r.latency.Percentile(0.5) / 1e3);
    p90.push_back(r.latency.Percentile(0.9) / 1e3);
    p99.push_back(r.latency.Percentile(0.99) / 1e3);
    p999.push_back(r.latency.Percentile(0.999) / 1e3);
    std::printf("%.0f %s; ", r.rate, unit);
    PrintLatency(workload == "ingest" ? "ack" : "latency", r.latency);
    if (workload == "ingest") {
      side_rates.push_back(r.side_rate);
      side_p50.push_back(r.side_latency.Percentile(0.5) / 1e3);
      side_p99.push_back(r.side_latency.Percentile(0.99) / 1e3);
      std::printf("; concurrent queries %.0f/s, ", r.side_rate);
      PrintLatency("batch", r.side_latency);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  const std::string level = absl::GetFlag(FLAGS_level);
  std::printf("\nmedians over %d run(s): workload %s, target %s%s%s\n", runs, workload.c_str(),
              absl::GetFlag(FLAGS_target).c_str(), level.empty() ? "" : ", level ", level.c_str());
  std::printf("%-28s %14s\n", "figure", "value");
  if (!maxes.empty()) std::printf("%-28s %14.0f\n", "closed_loop_max_per_s", Median(maxes));
  std::printf("%-28s %14.0f\n", workload == "ingest" ? "moves_per_s" : "throughput_per_s",
              Median(rates));
  if (workload == "ingest") {
    std::printf("%-28s %14.1f\n", "batches_per_s",
                Median(rates) / std::max(1, absl::GetFlag(FLAGS_moves)));
  }
  std::printf("%-28s %14.1f\n", "p50_us", Median(p50));
  std::printf("%-28s %14.1f\n", "p90_us", Median(p90));
  std::printf("%-28s %14.1f\n", "p99_us", Median(p99));
  std::printf("%-28s %14.1f\n", "p99.9_us", Median(p999));
  if (workload == "stream" && stream_results.load() > 0) {
    std::printf(
        "%-28s %14.3f\n", "hit_fraction",
        static_cast<double>(stream_hits.load()) / static_cast<double>(stream_results.load()));
  }
  if (workload == "ingest") {
    std::printf("%-28s %14.0f\n", "query_results_per_s", Median(side_rates));
    std::printf("%-28s %14.1f\n", "query_p50_us", Median(side_p50));
    std::printf("%-28s %14.1f\n", "query_p99_us", Median(side_p99));
  }
  return 0;
}

// --target=both: the workload (unary or stream, closed loop) on the echo server and on collide,
// alternating run by run; each pair's ratio, and the medians.
template <typename EchoStub, typename CollideStub>
int DriveBoth(EchoStub* echo, CollideStub* collide, const Workload& w,
              const std::vector<Kind>& mix) {
  const std::string workload = absl::GetFlag(FLAGS_workload);
  const int runs = std::max(1, absl::GetFlag(FLAGS_runs));
  const char* unit = workload == "unary" ? "calls/s" : "queries/s";
  std::vector<double> echo_rates, collide_rates, ratios, p50, p99;
  uint64_t results = 0, hits = 0;
  for (int run = 0; run < runs; ++run) {
    const RunResult e = workload == "unary" ? RunUnary(echo, w, mix, 0) : RunStream(echo, w, 0);
    const uint64_t results_before = stream_results.load(), hits_before = stream_hits.load();
    const RunResult c =
        workload == "unary" ? RunUnary(collide, w, mix, 0) : RunStream(collide, w, 0);
    results += stream_results.load() - results_before;
    hits += stream_hits.load() - hits_before;
    echo_rates.push_back(e.rate);
    collide_rates.push_back(c.rate);
    ratios.push_back(e.rate > 0 ? c.rate / e.rate : 0);
    p50.push_back(c.latency.Percentile(0.5) / 1e3);
    p99.push_back(c.latency.Percentile(0.99) / 1e3);
    std::printf("run %d: echo %.0f %s, collide %.0f %s, collide / echo %.2f; collide ", run + 1,
                e.rate, unit, c.rate, unit, ratios.back());
    PrintLatency("latency", c.latency);
    std::printf("\n");
    std::fflush(stdout);
  }
  const std::string level = absl::GetFlag(FLAGS_level);
  std::printf("\nmedians over %d run(s): workload %s, target both%s%s\n", runs, workload.c_str(),
              level.empty() ? "" : ", level ", level.c_str());
  std::printf("%-28s %14s\n", "figure", "value");
  std::printf("%-28s %14.0f\n", "echo_throughput_per_s", Median(echo_rates));
  std::printf("%-28s %14.0f\n", "collide_throughput_per_s", Median(collide_rates));
  std::printf("%-28s %14.2f\n", "collide_over_echo", Median(ratios));
  std::printf("%-28s %14.1f\n", "collide_p50_us", Median(p50));
  std::printf("%-28s %14.1f\n", "collide_p99_us", Median(p99));
  if (results > 0) {
    std::printf("%-28s %14.3f\n", "hit_fraction",
                static_cast<double>(hits) / static_cast<double>(results));
  }
  return 0;
}

// Starts `target` (collide or echo) on 127.0.0.1:0 for a run against `level_kind` (empty: the
// reference scene); null after printing why when it cannot.
std::unique_ptr<testing::ServerProcess> StartServer(const std::string& target,
                                                    const std::string& level_kind,
                                                    const std::string& durability,
                                                    const std::string& nats_url) {
  testing::ServerConfig config;
  if (target == "collide") config.binary = absl::GetFlag(FLAGS_server_bin);
  if (config.binary.empty()) config.binary = DefaultServerBinary(target);
  config.collide_server_flags = target == "collide";
  if (target == "collide") {
    config.extra_flags = {"--durability=" + durability};
    if (!nats_url.empty()) config.extra_flags.push_back("--nats_url=" + nats_url);
    for (const std::string& flag : absl::GetFlag(FLAGS_server_flag)) {
      config.extra_flags.push_back(flag);
    }
  }
  // Against a level nearly every ray hits, and its hits name a triangle: the echo's answers
  // have that size too.
  if (target == "echo" && !level_kind.empty()) {
    config.extra_flags = {"--hit_every=1", "--hit_triangle"};
  }
  absl::StatusOr<std::unique_ptr<testing::ServerProcess>> started =
      testing::ServerProcess::Start(std::move(config));
  if (!started.ok()) {
    std::fprintf(stderr, "cannot start %s: %s\n", target.c_str(),
                 started.status().ToString().c_str());
    return nullptr;
  }
  return *std::move(started);
}

int Main(int argc, char** argv) {
  ParseProgramFlags(argc, argv,
                    {.name = "collide-load",
                     .usage = "a load generator for collide-server and collide-echo-server (see "
                              "the comment at the top of bench/load/load_main.cc for the "
                              "workloads and examples).",
                     .flags_file = "bench/load/load_main.cc",
                     .version = kVersionLine});
  const std::string workload = absl::GetFlag(FLAGS_workload);
  const std::string target = absl::GetFlag(FLAGS_target);
  if (workload != "unary" && workload != "stream" && workload != "ingest") {
    std::fprintf(stderr, "--workload: unary, stream or ingest\n");
    return 2;
  }
  if (target != "collide" && target != "echo" && target != "both") {
    std::fprintf(stderr, "--target: collide, echo or both\n");
    return 2;
  }
  if (target == "both" &&
      (workload == "ingest" || !absl::GetFlag(FLAGS_address).empty() ||
       absl::GetFlag(FLAGS_rate) > 0 || absl::GetFlag(FLAGS_rate_fraction) > 0)) {
    std::fprintf(stderr,
                 "--target=both: unary or stream workloads in closed loop, on servers it starts "
                 "(no --address, --rate or --rate_fraction)\n");
    return 2;
  }
  const std::string level_kind = absl::GetFlag(FLAGS_level);
  if (!level_kind.empty() && level_kind != "city" && level_kind != "terrain") {
    std::fprintf(stderr, "--level: city or terrain (or empty: the reference scene)\n");
    return 2;
  }
  if (!level_kind.empty() && workload == "ingest") {
    std::fprintf(stderr, "--level: for the unary and stream workloads (ingest moves bodies)\n");
    return 2;
  }
  const std::string durability = absl::GetFlag(FLAGS_durability);
  const v1::Durability scene_durability = durability == "none"         ? v1::DURABILITY_NONE
                                          : durability == "always"     ? v1::DURABILITY_ALWAYS
                                          : durability == "replicated" ? v1::DURABILITY_REPLICATED
                                                                       : v1::DURABILITY_PERIODIC;
  // With --nats_nodes, a NATS JetStream cluster the collide server replicates its scenes on.
  std::unique_ptr<testing::NatsCluster> nats;
  std::string nats_url;
  if (const int nodes = absl::GetFlag(FLAGS_nats_nodes);
      nodes > 0 && target != "echo" && absl::GetFlag(FLAGS_address).empty()) {
    absl::StatusOr<std::unique_ptr<testing::NatsCluster>> cluster =
        testing::NatsCluster::Start(nodes);
    if (!cluster.ok()) {
      std::fprintf(stderr, "cannot start the NATS cluster: %s\n",
                   cluster.status().ToString().c_str());
      return 1;
    }
    nats = *std::move(cluster);
    nats_url = nats->urls();
    std::printf("collide-load: NATS JetStream cluster of %d nodes (%s)\n", nodes, nats_url.c_str());
  }
  // The server (collide's, with --target=both) and the echo server with --target=both.
  std::unique_ptr<testing::ServerProcess> process, echo_process;
  std::string address = absl::GetFlag(FLAGS_address);
  if (address.empty()) {
    process = StartServer(target == "both" ? "collide" : target, level_kind, durability, nats_url);
    if (process == nullptr) return 1;
    address = process->address();
  }
  if (target == "both") {
    echo_process = StartServer("echo", level_kind, durability, "");
    if (echo_process == nullptr) return 1;
  }
  const std::vector<Kind> mix = ParseMix(absl::GetFlag(FLAGS_query_mix));
  constexpr int kRays = 200000;
  bench::ReferenceScene ref;
  Level level;
  if (level_kind.empty()) {
    ref = bench::MakeReferenceScene(absl::GetFlag(FLAGS_bodies),
                                    static_cast<float>(absl::GetFlag(FLAGS_side)), kRays, 0);
  } else {
    level = MakeLevel(level_kind, kRays);
  }
  Workload w;
  w.scene = "load-" + std::to_string(::getpid());
  BuildMessages(level_kind.empty() ? ref.rays : level.rays, ref, mix, workload, &w);
  if (level_kind.empty()) {
    std::printf("collide-load: workload %s, target %s (%s), %d bodies (L = %g)\n", workload.c_str(),
                target.c_str(), address.c_str(), absl::GetFlag(FLAGS_bodies),
                absl::GetFlag(FLAGS_side));
  } else {
    std::printf("collide-load: workload %s, target %s (%s), level %s (%s), game rays\n",
                workload.c_str(), target.c_str(), address.c_str(), level_kind.c_str(),
                level_kind == "city"
                    ? (std::to_string(level.city.triangle_count()) + " triangles").c_str()
                    : "1000 x 1000 heightfield");
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
  auto channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  if (target != "echo") {
    if (level_kind.empty() ? !LoadScene(address, ref, &w, scene_durability)
                           : !LoadLevel(address, level, w, scene_durability)) {
      return 1;
    }
    auto stub = v1::Collide::NewStub(channel);
    if (target == "collide") return Drive(stub.get(), w, mix);
    auto echo_stub = bench::v1::Echo::NewStub(grpc::CreateCustomChannel(
        echo_process->address(), grpc::InsecureChannelCredentials(), args));
    return DriveBoth(echo_stub.get(), stub.get(), w, mix);
  }
  auto stub = bench::v1::Echo::NewStub(channel);
  return Drive(stub.get(), w, mix);
}

}  // namespace
}  // namespace collide::load

int main(int argc, char** argv) { return collide::load::Main(argc, argv); }
