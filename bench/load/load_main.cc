// collide-load: a load generator for collide-server (or, with --target=echo, for
// collide-echo-server, the transport ceiling) on the gRPC callback client API.
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
// The scene is the reference scene of shared/bench/README.md (--bodies, --side). Without
// --address the generator starts the server itself (collide-server or collide-echo-server next
// to this binary's build tree, on 127.0.0.1:0 with --port_file) and stops it at the end.
//
//   collide-load --workload=unary --target=echo --concurrency=8 --seconds=5
//   collide-load --workload=unary --rate_fraction=0.5
//   collide-load --workload=stream --batch=256 --in_flight=4
//   collide-load --workload=ingest --moves=1000 --query_rate=200
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
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "bench/load/echo.grpc.pb.h"
#include "bench/load/latency_histogram.h"
#include "bench/reference_scene.h"
#include "bench/stats.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "collide/v1/collide.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "support/server_process.h"

ABSL_FLAG(std::string, workload, "unary", "unary, stream or ingest");
ABSL_FLAG(std::string, target, "collide", "collide or echo (the transport ceiling)");
ABSL_FLAG(std::string, address, "", "server address; empty: start the server on 127.0.0.1:0");
ABSL_FLAG(std::string, server_bin, "", "the server binary to start (default: the build tree's)");
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
ABSL_FLAG(std::string, durability, "periodic", "ingest: scene durability (none/periodic/always)");
ABSL_FLAG(double, query_rate, 200, "ingest: query batches/s on the concurrent query stream");
ABSL_FLAG(int, query_batch, 16, "ingest: raycasts per concurrent query batch");
ABSL_FLAG(double, fat_margin, 0, "the scene's fat_margin (0: the server's default)");

namespace collide::load {
namespace {

using Clock = std::chrono::steady_clock;
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
// The workload's messages.

v1::Vec3 ToProto(const Vec3& v) { return client::MakeVec3(v.x, v.y, v.z); }

v1::Shape ToProto(const Shape& s) {
  switch (s.type) {
    case ShapeType::kSphere:
      return client::MakeSphere(s.sphere.radius);
    case ShapeType::kBox:
      return client::MakeBox(s.box.half_extents.x, s.box.half_extents.y, s.box.half_extents.z);
    case ShapeType::kCapsule:
      return client::MakeCapsule(s.capsule.radius, s.capsule.half_height);
  }
  return {};
}

enum class Kind { kRay, kSphere, kOverlap };

// The query kinds in proportion to --query_mix, 64 entries to cycle through.
std::vector<Kind> ParseMix(const std::string& mix) {
  std::vector<std::pair<Kind, int>> weights;
  for (absl::string_view part : absl::StrSplit(mix, ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> kv = absl::StrSplit(part, ':');
    int w = 1;
    if (kv.size() == 2 && !absl::SimpleAtoi(kv[1], &w)) w = 0;
    Kind k = kv[0] == "sphere" ? Kind::kSphere : kv[0] == "overlap" ? Kind::kOverlap : Kind::kRay;
    weights.push_back({k, w});
  }
  int total = 0;
  for (auto& [k, w] : weights) total += w;
  std::vector<Kind> cycle;
  for (auto& [k, w] : weights) {
    for (int i = 0; i < (total > 0 ? 64 * w / total : 0); ++i) cycle.push_back(k);
  }
  if (cycle.empty()) cycle.push_back(Kind::kRay);
  std::shuffle(cycle.begin(), cycle.end(), std::mt19937(7));
  return cycle;
}

v1::Query MakeQuery(uint64_t id, Kind kind, const Ray& r) {
  v1::Query q;
  q.set_request_id(id);
  switch (kind) {
    case Kind::kRay:
      *q.mutable_raycast() =
          client::MakeRaycast(ToProto(r.origin), ToProto(r.direction), r.max_distance);
      break;
    case Kind::kSphere: {
      v1::SphereCast* c = q.mutable_sphere_cast();
      *c->mutable_origin() = ToProto(r.origin);
      *c->mutable_direction() = ToProto(r.direction);
      c->set_max_distance(r.max_distance);
      c->set_radius(0.5f);
      break;
    }
    case Kind::kOverlap: {
      v1::Overlap* o = q.mutable_overlap();
      *o->mutable_shape() = client::MakeSphere(2.0f);
      *o->mutable_pose()->mutable_position() = ToProto(r.origin);
      break;
    }
  }
  return q;
}

struct Workload {
  std::string scene;
  std::vector<v1::QueryBatch> query_batches;
  std::vector<v1::Query> queries;  // one per ray, for unary calls
  std::vector<v1::UpdateBatch> update_batches;
};

// ---------------------------------------------------------------------------------------------
// Measurement shared by the drivers.

class Recorder {
 public:
  void Record(Clock::time_point intended, Clock::time_point done, uint64_t units) {
    if (!measuring_.load(std::memory_order_relaxed)) return;
    std::lock_guard<std::mutex> lock(mu_);
    histogram_.Record(
        std::chrono::duration_cast<std::chrono::nanoseconds>(done - intended).count());
    units_ += units;
  }
  void Begin() {
    std::lock_guard<std::mutex> lock(mu_);
    histogram_.Clear();
    units_ = 0;
    measuring_ = true;
  }
  // Stops measuring and returns what was measured since Begin.
  std::pair<LatencyHistogram, uint64_t> End() {
    std::lock_guard<std::mutex> lock(mu_);
    measuring_ = false;
    return {histogram_, units_};
  }

 private:
  std::atomic<bool> measuring_{false};
  std::mutex mu_;
  LatencyHistogram histogram_;
  uint64_t units_ = 0;
};

// Sleeps until `t`. No spinning: on a 2-core machine a spinning pacer takes a core from the
// server. Timer slack makes a send late by tens of microseconds, which the latency (measured
// from the intended time) includes; a late pacer catches up by sending at once.
void SleepUntil(Clock::time_point t) {
  if (Clock::now() < t) std::this_thread::sleep_until(t);
}

// ---------------------------------------------------------------------------------------------
// Unary calls.

template <typename Stub>
class UnaryDriver {
 public:
  UnaryDriver(Stub* stub, const Workload& w, const std::vector<Kind>& mix, std::string token,
              Recorder* recorder)
      : stub_(stub), w_(w), mix_(mix), token_(std::move(token)), recorder_(recorder) {}

  // Closed loop: `concurrency` calls, each issuing the next when it completes, until Stop.
  void StartClosed(int concurrency) {
    for (int i = 0; i < concurrency; ++i) Issue(Clock::now(), true);
  }
  // Open loop: calls at `rate` per second from now until `stop` (this thread paces).
  void RunOpen(double rate, const std::atomic<bool>& stop) {
    const Clock::time_point t0 = Clock::now();
    for (uint64_t i = 0; !stop.load(); ++i) {
      const Clock::time_point t =
          t0 + std::chrono::nanoseconds(static_cast<int64_t>(1e9 * static_cast<double>(i) / rate));
      SleepUntil(t);
      Issue(t, false);
    }
  }
  void Stop() { stop_ = true; }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return outstanding_ == 0; });
  }
  uint64_t errors() const { return errors_; }

 private:
  struct Call {
    grpc::ClientContext context;
    v1::RaycastRequest ray;
    v1::SphereCastRequest sphere;
    v1::OverlapRequest overlap;
    v1::QueryResponse response;
    Clock::time_point intended;
    bool closed = false;
  };

  void Issue(Clock::time_point intended, bool closed) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++outstanding_;
    }
    auto* call = new Call;
    call->intended = intended;
    call->closed = closed;
    if (!token_.empty()) call->context.AddMetadata("authorization", "Bearer " + token_);
    const uint64_t n = next_.fetch_add(1, std::memory_order_relaxed);
    const v1::Query& q = w_.queries[n % w_.queries.size()];
    auto done = [this, call](grpc::Status status) { Done(call, status); };
    switch (mix_[n % mix_.size()]) {
      case Kind::kRay:
        call->ray.set_scene(w_.scene);
        *call->ray.mutable_ray() = q.raycast();
        stub_->async()->Raycast(&call->context, &call->ray, &call->response, done);
        break;
      case Kind::kSphere:
        call->sphere.set_scene(w_.scene);
        *call->sphere.mutable_cast() = MakeQuery(0, Kind::kSphere, RayOf(q)).sphere_cast();
        stub_->async()->SphereCast(&call->context, &call->sphere, &call->response, done);
        break;
      case Kind::kOverlap:
        call->overlap.set_scene(w_.scene);
        *call->overlap.mutable_overlap() = MakeQuery(0, Kind::kOverlap, RayOf(q)).overlap();
        stub_->async()->Overlap(&call->context, &call->overlap, &call->response, done);
        break;
    }
  }
  static Ray RayOf(const v1::Query& q) {
    const v1::Raycast& r = q.raycast();
    return Ray{{r.origin().x(), r.origin().y(), r.origin().z()},
               {r.direction().x(), r.direction().y(), r.direction().z()},
               r.max_distance()};
  }
  void Done(Call* call, const grpc::Status& status) {
    const Clock::time_point now = Clock::now();
    if (status.ok()) {
      recorder_->Record(call->intended, now, 1);
    } else if (errors_.fetch_add(1) == 0) {
      std::fprintf(stderr, "call failed: %s\n", status.error_message().c_str());
    }
    const bool again = call->closed && !stop_.load();
    delete call;
    if (again) Issue(Clock::now(), true);
    std::lock_guard<std::mutex> lock(mu_);
    if (--outstanding_ == 0) cv_.notify_all();
  }

  Stub* const stub_;
  const Workload& w_;
  const std::vector<Kind>& mix_;
  const std::string token_;
  Recorder* const recorder_;
  std::atomic<uint64_t> next_{0};
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> errors_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  int outstanding_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Streams: one bidi stream, batches pipelined (at most `in_flight` outstanding, closed loop) or
// queued at intended times by a pacer (open loop). One write and one read outstanding at a
// time, as the callback API allows; answers come back in order, so each is matched with the
// oldest unanswered send.

template <typename Request, typename Response>
class StreamDriver final : public grpc::ClientBidiReactor<Request, Response> {
 public:
  // `units` counts an answer's work (results or moves).
  StreamDriver(const std::vector<Request>& batches, int in_flight, bool open,
               std::function<uint64_t(const Request&, const Response&)> units, Recorder* recorder)
      : batches_(batches),
        in_flight_(in_flight),
        open_(open),
        units_(std::move(units)),
        recorder_(recorder) {}

  // Starts the call; `start` is the stub's async method bound to the context.
  void Start(const std::string& token,
             const std::function<void(grpc::ClientContext*, StreamDriver*)>& start) {
    if (!token.empty()) context_.AddMetadata("authorization", "Bearer " + token);
    start(&context_, this);
    this->StartRead(&response_);
    this->StartCall();
    Pump();
  }
  // Open loop: one batch due at `intended`.
  void Enqueue(Clock::time_point intended) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      due_.push_back(intended);
    }
    Pump();
  }
  // No more sends; the stream half-closes once every batch is answered.
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    Pump();
  }
  // Waits for the end of the call; its status.
  grpc::Status Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return done_; });
    return status_;
  }

  void OnWriteDone(bool ok) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      writing_ = false;
      if (!ok) stop_ = true;
    }
    Pump();
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;  // the call is ending; OnDone follows
    const Clock::time_point now = Clock::now();
    Clock::time_point intended;
    const Request* sent;
    {
      std::lock_guard<std::mutex> lock(mu_);
      intended = sent_.front().first;
      sent = sent_.front().second;
      sent_.pop_front();
    }
    recorder_->Record(intended, now, units_(*sent, response_));
    this->StartRead(&response_);
    Pump();
  }
  void OnDone(const grpc::Status& status) override {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = status;
    done_ = true;
    cv_.notify_all();
  }

 private:
  // Starts whatever may start now: the next write, or the half-close once all is answered.
  void Pump() {
    const Request* write = nullptr;
    bool writes_done = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (writing_ || closed_) return;
      if (stop_) {
        if (sent_.empty()) {
          closed_ = true;
          writes_done = true;
        }
      } else if (open_ ? !due_.empty() : sent_.size() < static_cast<size_t>(in_flight_)) {
        Clock::time_point intended = Clock::now();
        if (open_) {
          intended = due_.front();
          due_.pop_front();
        }
        write = &batches_[next_++ % batches_.size()];
        sent_.emplace_back(intended, write);
        writing_ = true;
      }
    }
    if (write != nullptr) this->StartWrite(write);
    if (writes_done) this->StartWritesDone();
  }

  const std::vector<Request>& batches_;
  const int in_flight_;
  const bool open_;
  const std::function<uint64_t(const Request&, const Response&)> units_;
  Recorder* const recorder_;
  grpc::ClientContext context_;
  Response response_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Clock::time_point> due_;
  std::deque<std::pair<Clock::time_point, const Request*>> sent_;
  size_t next_ = 0;
  bool writing_ = false;
  bool stop_ = false;
  bool closed_ = false;
  bool done_ = false;
  grpc::Status status_;
};

// Sends `rate` batches/s in all, round robin over `drivers`, until `stop`.
template <typename Driver>
void PaceStreams(const std::vector<std::unique_ptr<Driver>>& drivers, double rate,
                 const std::atomic<bool>& stop) {
  const Clock::time_point t0 = Clock::now();
  for (uint64_t i = 0; !stop.load(); ++i) {
    const Clock::time_point t =
        t0 + std::chrono::nanoseconds(static_cast<int64_t>(1e9 * static_cast<double>(i) / rate));
    SleepUntil(t);
    drivers[i % drivers.size()]->Enqueue(t);
  }
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

uint64_t QueryUnits(const v1::QueryBatch&, const v1::QueryBatchResult& r) {
  if (r.has_error()) {
    std::fprintf(stderr, "batch error: %s\n", r.error().message().c_str());
    std::exit(1);
  }
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

bool LoadScene(const std::string& address, const bench::ReferenceScene& ref, Workload* w,
               v1::Durability durability) {
  client::ClientOptions options;
  options.address = address;
  options.bearer_token = absl::GetFlag(FLAGS_token);
  options.enable_http_proxy = false;
  options.default_deadline = absl::Seconds(120);
  auto c = client::Client::Connect(options);
  if (!c.ok()) return false;
  v1::CreateSceneRequest create;
  create.set_scene(w->scene);
  create.mutable_options()->set_durability(durability);
  create.mutable_options()->set_max_bodies(static_cast<uint32_t>(ref.shapes.size()));
  if (const double margin = absl::GetFlag(FLAGS_fat_margin); margin > 0) {
    create.mutable_options()->set_fat_margin(static_cast<float>(margin));
  }
  if (auto s = (*c)->CreateScene(create); !s.ok()) {
    std::fprintf(stderr, "create scene: %s\n", s.status().ToString().c_str());
    return false;
  }
  constexpr size_t kChunk = 10000;
  for (size_t first = 0; first < ref.shapes.size(); first += kChunk) {
    v1::UpsertBodiesRequest req;
    req.set_scene(w->scene);
    for (size_t i = first; i < std::min(ref.shapes.size(), first + kChunk); ++i) {
      const Quat& q = ref.poses[i].rotation;
      *req.add_bodies() = client::MakeBody(
          i, ToProto(ref.shapes[i]),
          client::MakePose(ToProto(ref.poses[i].position), client::MakeQuat(q.x, q.y, q.z, q.w)));
    }
    if (auto s = (*c)->UpsertBodies(req); !s.ok()) {
      std::fprintf(stderr, "upsert: %s\n", s.status().ToString().c_str());
      return false;
    }
  }
  return true;
}

void BuildMessages(const bench::ReferenceScene& ref, const std::vector<Kind>& mix,
                   const std::string& workload, Workload* w) {
  const int batch =
      workload == "ingest" ? absl::GetFlag(FLAGS_query_batch) : absl::GetFlag(FLAGS_batch);
  for (size_t i = 0; i < ref.rays.size(); ++i) {
    w->queries.push_back(MakeQuery(i, Kind::kRay, ref.rays[i]));
  }
  const size_t batches = std::max<size_t>(1, ref.rays.size() / static_cast<size_t>(batch));
  w->query_batches.resize(batches);
  for (size_t b = 0; b < batches; ++b) {
    w->query_batches[b].set_scene(w->scene);
    for (int k = 0; k < batch; ++k) {
      const size_t i = (b * static_cast<size_t>(batch) + static_cast<size_t>(k)) % ref.rays.size();
      const Kind kind = workload == "ingest" ? Kind::kRay : mix[i % mix.size()];
      *w->query_batches[b].add_queries() = MakeQuery(i, kind, ref.rays[i]);
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
  std::printf("\nmedians over %d run(s): workload %s, target %s\n", runs, workload.c_str(),
              absl::GetFlag(FLAGS_target).c_str());
  std::printf("%-28s %14s\n", "figure", "value");
  if (!maxes.empty()) std::printf("%-28s %14.0f\n", "closed_loop_max_per_s", Median(maxes));
  std::printf("%-28s %14.0f\n", workload == "ingest" ? "moves_per_s" : "throughput_per_s",
              Median(rates));
  std::printf("%-28s %14.1f\n", "p50_us", Median(p50));
  std::printf("%-28s %14.1f\n", "p90_us", Median(p90));
  std::printf("%-28s %14.1f\n", "p99_us", Median(p99));
  std::printf("%-28s %14.1f\n", "p99.9_us", Median(p999));
  if (workload == "ingest") {
    std::printf("%-28s %14.0f\n", "query_results_per_s", Median(side_rates));
    std::printf("%-28s %14.1f\n", "query_p50_us", Median(side_p50));
    std::printf("%-28s %14.1f\n", "query_p99_us", Median(side_p99));
  }
  return 0;
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "a load generator for collide-server and collide-echo-server (see the comment at the top "
      "of bench/load/load_main.cc for the workloads and examples).");
  // --help lists this file's flags (by default absl matches files named like the binary).
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "bench/load/load_main.cc");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
  absl::ParseCommandLine(argc, argv);
  const std::string workload = absl::GetFlag(FLAGS_workload);
  const std::string target = absl::GetFlag(FLAGS_target);
  if (workload != "unary" && workload != "stream" && workload != "ingest") {
    std::fprintf(stderr, "--workload: unary, stream or ingest\n");
    return 2;
  }
  if (target != "collide" && target != "echo") {
    std::fprintf(stderr, "--target: collide or echo\n");
    return 2;
  }
  const std::string durability = absl::GetFlag(FLAGS_durability);
  const v1::Durability scene_durability = durability == "none"     ? v1::DURABILITY_NONE
                                          : durability == "always" ? v1::DURABILITY_ALWAYS
                                                                   : v1::DURABILITY_PERIODIC;
  std::unique_ptr<testing::ServerProcess> process;
  std::string address = absl::GetFlag(FLAGS_address);
  if (address.empty()) {
    testing::ServerConfig config;
    config.binary = absl::GetFlag(FLAGS_server_bin);
    if (config.binary.empty()) config.binary = DefaultServerBinary(target);
    config.collide_server_flags = target == "collide";
    if (target == "collide") config.extra_flags = {"--durability=" + durability};
    absl::StatusOr<std::unique_ptr<testing::ServerProcess>> started =
        testing::ServerProcess::Start(std::move(config));
    if (!started.ok()) {
      std::fprintf(stderr, "cannot start the server: %s\n", started.status().ToString().c_str());
      return 1;
    }
    process = *std::move(started);
    address = process->address();
  }
  const std::vector<Kind> mix = ParseMix(absl::GetFlag(FLAGS_query_mix));
  const bench::ReferenceScene ref = bench::MakeReferenceScene(
      absl::GetFlag(FLAGS_bodies), static_cast<float>(absl::GetFlag(FLAGS_side)), 200000, 0);
  Workload w;
  w.scene = "load-" + std::to_string(::getpid());
  BuildMessages(ref, mix, workload, &w);
  std::printf("collide-load: workload %s, target %s (%s), %d bodies (L = %g)\n", workload.c_str(),
              target.c_str(), address.c_str(), absl::GetFlag(FLAGS_bodies),
              absl::GetFlag(FLAGS_side));
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
  auto channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  if (target == "collide") {
    if (!LoadScene(address, ref, &w, scene_durability)) return 1;
    auto stub = v1::Collide::NewStub(channel);
    return Drive(stub.get(), w, mix);
  }
  auto stub = bench::v1::Echo::NewStub(channel);
  return Drive(stub.get(), w, mix);
}

}  // namespace
}  // namespace collide::load

int main(int argc, char** argv) { return collide::load::Main(argc, argv); }
