// Raycasts through a running collide-server over gRPC, on the reference scene of
// shared/bench/README.md (100k bodies, L = 250): the latency of unary Raycast calls one at a
// time (p50 / p99 / p99.9), and the rate of closest raycasts sent in QueryStream batches of 256
// with a few batches in flight. For scale, the same rays through the in-process engine on one
// thread (RunBatch, batches of 256) in the same run: the network figure as a fraction of it.
//
//   collide-bench-service [--address 127.0.0.1:50051] [--token T] [--runs 3] [--bodies 100000]
//                         [--side 250] [--unary_calls 20000] [--stream_seconds 3]
//                         [--batch 256] [--in_flight 4]
//
// Start the server first (./scripts/run, or build/server/collide-server --durability=none).
// The bench creates a scene named bench-<pid>, loads it, measures, and deletes it.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "bench/reference_messages.h"
#include "bench/reference_scene.h"
#include "bench/stats.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "client/cpp/query_stream.h"
#include "query/batch.h"
#include "query/collision_world.h"
#include "query/query_engine.h"
#include "query/run_batch.h"

namespace collide::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Config {
  std::string address = "127.0.0.1:50051";
  std::string token;
  int runs = 3;
  int bodies = 100000;
  float side = 250.0f;
  int unary_calls = 20000;
  double stream_seconds = 3.0;
  int batch = 256;
  int in_flight = 4;
};

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

bool Load(client::Client& c, const std::string& scene, const ReferenceScene& ref) {
  v1::CreateSceneRequest create;
  create.set_scene(scene);
  create.mutable_options()->set_durability(v1::DURABILITY_NONE);
  create.mutable_options()->set_max_bodies(static_cast<uint32_t>(ref.shapes.size()));
  if (auto s = c.CreateScene(create); !s.ok()) {
    std::fprintf(stderr, "create scene: %s\n", s.status().ToString().c_str());
    return false;
  }
  return UpsertReferenceBodies(c, scene, ref);
}

v1::Query RayQuery(uint64_t id, const Ray& r) {
  return client::MakeRaycastQuery(id, RaycastAlong(r));
}

// Unary raycasts one at a time: per-call latency in microseconds.
std::vector<double> UnaryLatencies(client::Client& c, const std::string& scene,
                                   const ReferenceScene& ref, int calls) {
  std::vector<double> us;
  us.reserve(calls);
  for (int i = 0; i < calls + calls / 10; ++i) {  // the first tenth warms up
    const Ray& r = ref.rays[i % ref.rays.size()];
    v1::RaycastRequest req;
    req.set_scene(scene);
    *req.mutable_ray() = RaycastAlong(r);
    const Clock::time_point t0 = Clock::now();
    auto res = c.Raycast(req);
    const double elapsed = Seconds(Clock::now() - t0) * 1e6;
    if (!res.ok()) {
      std::fprintf(stderr, "raycast: %s\n", res.status().ToString().c_str());
      std::exit(1);
    }
    if (i >= calls / 10) us.push_back(elapsed);
  }
  return us;
}

// Batched raycasts on one QueryStream with `in_flight` batches outstanding: rays per second.
double StreamRate(client::Client& c, const std::string& scene, const ReferenceScene& ref,
                  const Config& cfg) {
  auto session = c.OpenQueryStream(scene);
  if (!session.ok()) {
    std::fprintf(stderr, "open stream: %s\n", session.status().ToString().c_str());
    std::exit(1);
  }
  // The batches, built once.
  const int batches = static_cast<int>(ref.rays.size()) / cfg.batch;
  std::vector<v1::QueryBatch> prepared(batches);
  for (int b = 0; b < batches; ++b) {
    prepared[b].set_scene(scene);
    for (int k = 0; k < cfg.batch; ++k) {
      const int i = b * cfg.batch + k;
      *prepared[b].add_queries() = RayQuery(i, ref.rays[i]);
    }
  }
  std::atomic<long> answered{0};
  std::atomic<bool> stop{false};
  std::atomic<long> outstanding{0};
  std::thread reader([&] {
    while (true) {
      auto res = (*session)->Read();
      if (!res.ok()) break;
      if (res->has_error()) {
        std::fprintf(stderr, "batch error: %s\n", res->error().message().c_str());
        std::exit(1);
      }
      answered += res->results_size();
      --outstanding;
      if (stop && outstanding == 0) break;
    }
  });
  const Clock::time_point t0 = Clock::now();
  long sent = 0;
  int next = 0;
  while (Seconds(Clock::now() - t0) < cfg.stream_seconds) {
    if (outstanding >= cfg.in_flight) {
      std::this_thread::yield();
      continue;
    }
    ++outstanding;
    if (!(*session)->Send(prepared[next]).ok()) break;
    next = (next + 1) % batches;
    ++sent;
  }
  stop = true;
  while (outstanding > 0) std::this_thread::yield();
  const double elapsed = Seconds(Clock::now() - t0);
  // The reader may be blocked in Read for an answer that never comes: cancel to release it, and
  // Finish only once it is done (the session's contract: Finish after the sender and reader).
  (*session)->Cancel();
  reader.join();
  (void)(*session)->Finish();
  return static_cast<double>(answered.load()) / elapsed;
}

// The reference scene as an in-process world, built once.
CollisionWorld BuildWorld(const ReferenceScene& ref) {
  CollisionWorld world;
  std::vector<BodyDesc> descs(ref.shapes.size());
  for (size_t i = 0; i < descs.size(); ++i) {
    descs[i] = BodyDesc{.id = i, .shape = ref.shapes[i], .pose = ref.poses[i]};
  }
  std::vector<BodyHandle> handles(descs.size());
  world.AddBulk(descs, handles);
  return world;
}

// The same rays through the in-process engine, one thread, batches of `batch`.
double InProcessRate(const CollisionWorld& world, std::span<const Query> queries, int batch) {
  std::vector<QueryResult> results;
  std::vector<QueryHit> hits;
  const Clock::time_point t0 = Clock::now();
  for (size_t i = 0; i + batch <= queries.size(); i += batch) {
    results.clear();
    hits.clear();
    RunBatch(CurrentTree(world), queries.subspan(i, batch), &results, &hits);
  }
  return static_cast<double>(queries.size() / batch * batch) / Seconds(Clock::now() - t0);
}

int Main(int argc, char** argv) {
  Config cfg;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    auto need = [&] {
      if (value == nullptr) {
        std::fprintf(stderr, "%s needs a value\n", flag.c_str());
        std::exit(2);
      }
      ++i;
      return value;
    };
    if (flag == "--address") {
      cfg.address = need();
    } else if (flag == "--token") {
      cfg.token = need();
    } else if (flag == "--runs") {
      cfg.runs = std::max(1, std::atoi(need()));
    } else if (flag == "--bodies") {
      cfg.bodies = std::max(1, std::atoi(need()));
    } else if (flag == "--side") {
      cfg.side = static_cast<float>(std::atof(need()));
    } else if (flag == "--unary_calls") {
      cfg.unary_calls = std::max(10, std::atoi(need()));
    } else if (flag == "--stream_seconds") {
      cfg.stream_seconds = std::max(0.1, std::atof(need()));
    } else if (flag == "--batch") {
      cfg.batch = std::max(1, std::atoi(need()));
    } else if (flag == "--in_flight") {
      cfg.in_flight = std::max(1, std::atoi(need()));
    } else {
      std::fprintf(stderr, "unknown flag %s (see the comment at the top of service_bench.cc)\n",
                   flag.c_str());
      return 2;
    }
  }
  client::ClientOptions options;
  options.address = cfg.address;
  options.bearer_token = cfg.token;
  options.enable_http_proxy = false;
  auto c = client::Client::Connect(options);
  if (!c.ok()) {
    std::fprintf(stderr, "connect: %s\n", c.status().ToString().c_str());
    return 1;
  }
  const ReferenceScene ref = MakeReferenceScene(cfg.bodies, cfg.side, 200000, 0);
  const std::string scene = "bench-" + std::to_string(::getpid());
  std::printf("service bench: %d bodies (L = %g), server %s, %d run(s)\n", cfg.bodies, cfg.side,
              cfg.address.c_str(), cfg.runs);
  if (!Load(**c, scene, ref)) return 1;

  const CollisionWorld world = BuildWorld(ref);
  std::vector<Query> queries(ref.rays.size());
  for (size_t i = 0; i < queries.size(); ++i) {
    queries[i] = Query{.shape_query = RaycastQuery{.ray = ref.rays[i]}};
  }
  std::vector<double> p50, p99, p999, stream, local, ratio;
  for (int run = 0; run < cfg.runs; ++run) {
    std::vector<double> us = UnaryLatencies(**c, scene, ref, cfg.unary_calls);
    p50.push_back(Percentile(us, 0.50));
    p99.push_back(Percentile(us, 0.99));
    p999.push_back(Percentile(us, 0.999));
    stream.push_back(StreamRate(**c, scene, ref, cfg));
    local.push_back(InProcessRate(world, queries, cfg.batch));
    ratio.push_back(stream.back() / local.back());
    std::printf(
        "run %d: unary raycast p50 %.0f us, p99 %.0f us, p99.9 %.0f us (%.0f calls/s one at a "
        "time); stream batches of %d, %d in flight: %.0f rays/s; in-process %.0f rays/s; "
        "ratio %.2f\n",
        run + 1, p50.back(), p99.back(), p999.back(), 1e6 / Median(us), cfg.batch, cfg.in_flight,
        stream.back(), local.back(), ratio.back());
  }
  (void)(*c)->DeleteScene(scene);
  std::printf("\nmedians over %d run(s)\n", cfg.runs);
  std::printf("figure                                   value\n");
  std::printf("unary_raycast_p50_us              %12.0f\n", Median(p50));
  std::printf("unary_raycast_p99_us              %12.0f\n", Median(p99));
  std::printf("unary_raycast_p999_us             %12.0f\n", Median(p999));
  std::printf("stream_raycasts_per_s_batch%-5d %12.0f\n", cfg.batch, Median(stream));
  std::printf("inprocess_raycasts_per_s          %12.0f\n", Median(local));
  std::printf("stream_over_inprocess             %12.2f\n", Median(ratio));
  return 0;
}

}  // namespace
}  // namespace collide::bench

int main(int argc, char** argv) { return collide::bench::Main(argc, argv); }
