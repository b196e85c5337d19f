// A writer's acknowledgement latency with many Watch streams open on its scene, through a
// running collide-server: for each watcher count, a scene of `bodies` small spheres, that many
// Watch streams (one thin plate across the whole scene, which a body crosses in every batch, so
// that every watcher gets an update per batch, plus `fences - 1` random boxes), each read as fast
// as it arrives by a callback reactor; then batches of `batch` moves through one UpdateStream:
//
// - closed loop: a batch, its ack, then a wait until every watcher has the batch's version
//   (or a later snapshot): ack latency and delivery latency (the last watcher's);
// - back to back: `batches` batches sent one after the other, each after the previous ack:
//   ack latency while the watchers' work piles up, and the resyncs the watchers saw.
//
//   collide-bench-watch-fanout [--address 127.0.0.1:50051] [--watchers 0,100,1000,10000]
//                              [--fences 4] [--bodies 1000] [--batch 100] [--batches 30]
//                              [--connections 20] [--server_pid P]
//
// Start the server first with room for the streams, e.g. collide-server --durability=none
// --max_streams=30000 (and --max_watch_streams=30000 where that flag exists). With --server_pid
// the server's resident memory (VmRSS) is printed before and after each count.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "bench/stats.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "collide/v1/collide.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

namespace collide::bench {
namespace {

using Clock = std::chrono::steady_clock;
using client::MakeBody;
using client::MakeBox;
using client::MakePose;
using client::MakeSphere;
using client::MakeVec3;

struct Config {
  std::string address = "127.0.0.1:50051";
  std::vector<int> watchers = {0, 100, 1000, 10000};
  int fences = 4;
  int bodies = 1000;
  int batch = 100;
  int batches = 30;
  int connections = 20;
  int server_pid = 0;
};

constexpr float kSide = 100.0f;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The server's resident memory in MiB (VmRSS of /proc/<pid>/status), or -1.
double RssMiB(int pid) {
  if (pid <= 0) return -1.0;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  }
  return -1.0;
}

// Counters every watcher reports into.
struct Board {
  std::mutex mu;
  std::condition_variable cv;
  int started = 0;
  int ended = 0;
  int refused = 0;
  uint64_t resyncs = 0;
  std::string first_error;
  void Notify() { cv.notify_all(); }
};

// One Watch read by a callback reactor: keeps the latest version it has.
class Watcher final : public grpc::ClientReadReactor<v1::WatchResponse> {
 public:
  Watcher(v1::Collide::Stub* stub, const v1::WatchRequest& request, Board* board) : board_(board) {
    context_.AddMetadata("x-collide-scene", request.scene());
    stub->async()->Watch(&context_, &request, this);
    StartRead(&message_);
    StartCall();
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;
    if (message_.has_snapshot()) {
      version_.store(message_.snapshot().version());
      std::lock_guard<std::mutex> lock(board_->mu);
      if (message_.snapshot().resync()) {
        ++board_->resyncs;
      } else {
        ++board_->started;
      }
      board_->Notify();
    } else {
      version_.store(message_.update().version());
      board_->Notify();
    }
    StartRead(&message_);
  }
  void OnDone(const grpc::Status& status) override {
    std::lock_guard<std::mutex> lock(board_->mu);
    ++board_->ended;
    if (!status.ok() && status.error_code() != grpc::StatusCode::CANCELLED) {
      if (board_->first_error.empty()) board_->first_error = status.error_message();
      ++board_->refused;
    }
    done_ = true;
    board_->Notify();
  }
  void Cancel() { context_.TryCancel(); }
  uint64_t version() const { return version_.load(); }
  bool done() const { return done_; }

 private:
  Board* board_;
  grpc::ClientContext context_;
  v1::WatchResponse message_;
  std::atomic<uint64_t> version_{0};
  bool done_ = false;  // under board_->mu
};

std::shared_ptr<grpc::Channel> NewConnection(const std::string& address, int id) {
  grpc::ChannelArguments args;
  args.SetInt("collide.bench_connection", id);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

// The moves of one batch: body 1 crosses the plate at x = 0 (left and right in turn), the others
// hop to random places.
v1::UpdateBatch MakeBatch(const std::string& scene, const Config& c, int index, std::mt19937* rng) {
  std::uniform_real_distribution<float> u(-kSide / 2, kSide / 2);
  std::uniform_int_distribution<int> pick(2, c.bodies);
  v1::UpdateBatch batch;
  batch.set_scene(scene);
  const float x = index % 2 == 0 ? 10.0f : -10.0f;
  client::AddMove(1, MakePose(MakeVec3(x, 0, 0)), batch.mutable_moves());
  std::vector<int> ids;
  while (static_cast<int>(ids.size()) < c.batch - 1) {
    const int id = pick(*rng);
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  for (int id : ids) {
    client::AddMove(static_cast<uint64_t>(id), MakePose(MakeVec3(u(*rng), u(*rng), u(*rng))),
                    batch.mutable_moves());
  }
  return batch;
}

int RunCount(const Config& c, client::Client& admin, int count) {
  const std::string scene = "fanout-" + std::to_string(getpid()) + "-" + std::to_string(count);
  v1::SceneOptions options;
  options.set_durability(v1::DURABILITY_NONE);
  if (!admin.CreateScene(scene, options).ok()) {
    std::fprintf(stderr, "cannot create scene %s\n", scene.c_str());
    return 1;
  }
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-kSide / 2, kSide / 2);
  std::vector<v1::Body> bodies;
  bodies.push_back(MakeBody(1, MakeSphere(0.2f), MakePose(MakeVec3(-10, 0, 0))));
  for (int i = 2; i <= c.bodies; ++i) {
    bodies.push_back(MakeBody(static_cast<uint64_t>(i), MakeSphere(0.5f),
                              MakePose(MakeVec3(u(rng), u(rng), u(rng)))));
  }
  if (!admin.UpsertBodies(scene, bodies).ok()) return 1;

  const double rss_before = RssMiB(c.server_pid);
  std::vector<std::unique_ptr<v1::Collide::Stub>> stubs;
  for (int i = 0; i < c.connections; ++i) {
    stubs.push_back(v1::Collide::NewStub(NewConnection(c.address, count * 1000 + i)));
  }
  Board board;
  std::vector<std::unique_ptr<Watcher>> watchers;
  const Clock::time_point open_start = Clock::now();
  for (int w = 0; w < count; ++w) {
    v1::WatchRequest request;
    request.set_scene(scene);
    v1::Fence* plate = request.add_fences();
    plate->set_id(1);
    *plate->mutable_shape() = MakeBox(0.01f, kSide, kSide);
    *plate->mutable_pose() = MakePose(MakeVec3(0, 0, 0));
    for (int f = 1; f < c.fences; ++f) {
      v1::Fence* fence = request.add_fences();
      fence->set_id(static_cast<uint64_t>(f + 1));
      *fence->mutable_shape() = MakeBox(5, 5, 5);
      *fence->mutable_pose() = MakePose(MakeVec3(u(rng), u(rng), u(rng)));
    }
    watchers.push_back(std::make_unique<Watcher>(stubs[w % stubs.size()].get(), request, &board));
  }
  {
    std::unique_lock<std::mutex> lock(board.mu);
    board.cv.wait_for(lock, std::chrono::seconds(300),
                      [&] { return board.started + board.refused >= count; });
  }
  const double open_ms = Ms(Clock::now() - open_start);
  const double rss_open = RssMiB(c.server_pid);
  int live = 0;
  {
    std::lock_guard<std::mutex> lock(board.mu);
    live = board.started;
  }

  auto writer = admin.OpenUpdateStream(scene, 0);
  if (!writer.ok()) return 1;
  // Waits until every live watcher holds `version` (or has ended); returns false after 120 s.
  auto delivered = [&](uint64_t version) {
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(120);
    std::unique_lock<std::mutex> lock(board.mu);
    return board.cv.wait_until(lock, deadline, [&] {
      for (const auto& w : watchers) {
        if (!w->done() && w->version() < version) return false;
      }
      return true;
    });
  };
  std::vector<double> closed_ack, delivery;
  for (int b = 0; b < c.batches; ++b) {
    const v1::UpdateBatch batch = MakeBatch(scene, c, b, &rng);
    const Clock::time_point t0 = Clock::now();
    auto ack = (*writer)->Apply(batch);
    const Clock::time_point t1 = Clock::now();
    if (!ack.ok() || ack->has_error()) return 1;
    if (!delivered(ack->version())) std::fprintf(stderr, "delivery timed out\n");
    const Clock::time_point t2 = Clock::now();
    closed_ack.push_back(Ms(t1 - t0));
    delivery.push_back(Ms(t2 - t0));
  }
  uint64_t resyncs_before;
  {
    std::lock_guard<std::mutex> lock(board.mu);
    resyncs_before = board.resyncs;
  }
  std::vector<double> open_ack;
  uint64_t last = 0;
  const Clock::time_point burst = Clock::now();
  for (int b = 0; b < c.batches; ++b) {
    const v1::UpdateBatch batch = MakeBatch(scene, c, b, &rng);
    const Clock::time_point t0 = Clock::now();
    auto ack = (*writer)->Apply(batch);
    if (!ack.ok() || ack->has_error()) return 1;
    open_ack.push_back(Ms(Clock::now() - t0));
    last = ack->version();
  }
  const double burst_ms = Ms(Clock::now() - burst);
  delivered(last);
  const double drained_ms = Ms(Clock::now() - burst);
  const double rss_load = RssMiB(c.server_pid);
  uint64_t resyncs;
  {
    std::lock_guard<std::mutex> lock(board.mu);
    resyncs = board.resyncs - resyncs_before;
  }
  (void)(*writer)->Finish();
  for (auto& w : watchers) w->Cancel();
  {
    std::unique_lock<std::mutex> lock(board.mu);
    board.cv.wait_for(lock, std::chrono::seconds(120), [&] { return board.ended >= count; });
  }
  watchers.clear();
  (void)admin.DeleteScene(scene);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double rss_after = RssMiB(c.server_pid);
  std::printf(
      "%8d %6d %8.0f | %7.2f %7.2f %9.1f | %7.2f %7.2f %8.0f %8.0f %7llu | %7.0f %7.0f %7.0f "
      "%7.0f\n",
      count, live, open_ms, Percentile(closed_ack, 0.5), Percentile(closed_ack, 0.9),
      Percentile(delivery, 0.5), Percentile(open_ack, 0.5), Percentile(open_ack, 0.9), burst_ms,
      drained_ms, static_cast<unsigned long long>(resyncs), rss_before, rss_open, rss_load,
      rss_after);
  if (!board.first_error.empty())
    std::printf("         first refusal: %s\n", board.first_error.c_str());
  std::fflush(stdout);
  return 0;
}

int Main(int argc, char** argv) {
  Config c;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--address") {
      c.address = value;
    } else if (flag == "--watchers") {
      c.watchers.clear();
      for (absl::string_view part : absl::StrSplit(value, ',')) {
        int n = 0;
        if (!absl::SimpleAtoi(part, &n)) return 2;
        c.watchers.push_back(n);
      }
    } else if (flag == "--fences") {
      c.fences = std::max(1, std::atoi(value));
    } else if (flag == "--bodies") {
      c.bodies = std::max(2, std::atoi(value));
    } else if (flag == "--batch") {
      c.batch = std::max(1, std::atoi(value));
    } else if (flag == "--batches") {
      c.batches = std::max(1, std::atoi(value));
    } else if (flag == "--connections") {
      c.connections = std::max(1, std::atoi(value));
    } else if (flag == "--server_pid") {
      c.server_pid = std::atoi(value);
    } else {
      std::fprintf(stderr, "unknown flag %s (see the comment at the top of the source)\n", argv[i]);
      return 2;
    }
  }
  c.batch = std::min(c.batch, c.bodies);
  client::ClientOptions options;
  options.address = c.address;
  options.default_deadline = absl::Seconds(600);
  auto admin = client::Client::Connect(options);
  if (!admin.ok()) return 1;
  std::printf(
      "%d bodies, batches of %d moves, %d fences per watcher (a plate crossed in every batch), "
      "%d batches per phase, %d connections\n",
      c.bodies, c.batch, c.fences, c.batches, c.connections);
  std::printf("%8s %6s %8s | %7s %7s %9s | %7s %7s %8s %8s %7s | %7s %7s %7s %7s\n", "watchers",
              "live", "open ms", "ack p50", "ack p90", "deliv p50", "b2b p50", "b2b p90",
              "burst ms", "drain ms", "resyncs", "rss MiB", "open", "load", "after");
  for (int count : c.watchers) {
    if (RunCount(c, **admin, count) != 0) {
      std::fprintf(stderr, "run with %d watchers failed\n", count);
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace collide::bench

int main(int argc, char** argv) { return collide::bench::Main(argc, argv); }
