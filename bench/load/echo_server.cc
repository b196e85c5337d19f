// collide-echo-server: the Echo service of echo.proto, the transport ceiling for collide-load.
// The same gRPC set-up as collide-server (callback API, ServerBuilder defaults, the same maximum
// message size), answering at once with messages of the sizes
// collide's answers have: a hit on every --hit_every-th query (3: the reference scene's rays;
// collide-load's level workloads start it with 1, as nearly every ray meets the level), with a
// triangle index when --hit_triangle (a hit on a mesh or heightfield carries one).
//
//   collide-echo-server [--address=127.0.0.1:0] [--port_file=PATH]
//                       [--max_message_bytes=16777216] [--hit_every=3] [--hit_triangle]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/flags/flag.h"
#include "base/program_flags.h"
#include "bench/load/echo.grpc.pb.h"
#include "collide/version.h"
#include "grpcpp/server_builder.h"
#include "server/infra/shutdown_signals.h"

ABSL_FLAG(std::string, address, "127.0.0.1:0", "listen address; port 0 picks a free port");
ABSL_FLAG(std::string, port_file, "", "when set, the bound port is written here once serving");
ABSL_FLAG(int, max_message_bytes, 16 << 20, "gRPC max receive message size");
ABSL_FLAG(int, hit_every, 3, "answer a hit on every this many queries (1 to 1000)");
ABSL_FLAG(bool, hit_triangle, false, "hits carry a triangle index, as hits on a level do");

namespace collide::echo {
namespace {

// Which queries get a hit, and whether it names a triangle (the flags, read once).
int hit_every = 3;
bool hit_triangle = false;

bool HasHit(uint64_t n) { return n % static_cast<uint64_t>(hit_every) == 0; }

// A hit of the size collide's have.
void FillHit(uint64_t n, v1::Hit* hit) {
  hit->set_body_id(n);
  if (hit_triangle) hit->set_triangle(static_cast<uint32_t>(n * 2654435761u) >> 10);
  hit->set_distance(12.5f);
  for (v1::Vec3* v : {hit->mutable_point(), hit->mutable_normal()}) {
    v->set_x(1.25f);
    v->set_y(-2.5f);
    v->set_z(0.75f);
  }
}

template <typename Request>
grpc::ServerUnaryReactor* AnswerUnary(grpc::CallbackServerContext* call, const Request& request,
                                      v1::QueryResponse* response) {
  static std::atomic<uint64_t> calls{0};
  const uint64_t n = calls.fetch_add(1, std::memory_order_relaxed);
  response->set_version(1);
  if (HasHit(n)) FillHit(n, response->add_hits());
  grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

// Reads a message, answers it, writes the answer, reads the next: the shape of collide's
// stream reactors, with no work in between.
template <typename Request, typename Response>
class EchoStream final : public grpc::ServerBidiReactor<Request, Response> {
 public:
  EchoStream() { this->StartRead(&request_); }
  void OnReadDone(bool ok) override {
    if (!ok) {
      this->Finish(grpc::Status::OK);
      return;
    }
    Answer();
    this->StartWrite(&response_);
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      this->Finish(grpc::Status::CANCELLED);
      return;
    }
    this->StartRead(&request_);
  }
  void OnDone() override { delete this; }

 private:
  void Answer();

  Request request_;
  Response response_;
};

template <>
void EchoStream<v1::QueryBatch, v1::QueryBatchResult>::Answer() {
  response_.Clear();
  response_.set_version(1);
  for (int i = 0; i < request_.queries_size(); ++i) {
    v1::QueryResult* result = response_.add_results();
    result->set_request_id(request_.queries(i).request_id());
    if (HasHit(static_cast<uint64_t>(i))) FillHit(static_cast<uint64_t>(i), result->add_hits());
  }
}

template <>
void EchoStream<v1::UpdateBatch, v1::UpdateAck>::Answer() {
  response_.Clear();
  response_.set_client_sequence(request_.client_sequence());
  response_.set_version(request_.client_sequence() + 1);
}

class EchoService final : public collide::bench::v1::Echo::CallbackService {
 public:
  grpc::ServerUnaryReactor* Raycast(grpc::CallbackServerContext* call,
                                    const collide::v1::RaycastRequest* request,
                                    collide::v1::QueryResponse* response) override {
    return AnswerUnary(call, *request, response);
  }
  grpc::ServerUnaryReactor* SphereCast(grpc::CallbackServerContext* call,
                                       const collide::v1::SphereCastRequest* request,
                                       collide::v1::QueryResponse* response) override {
    return AnswerUnary(call, *request, response);
  }
  grpc::ServerUnaryReactor* Overlap(grpc::CallbackServerContext* call,
                                    const collide::v1::OverlapRequest* request,
                                    collide::v1::QueryResponse* response) override {
    return AnswerUnary(call, *request, response);
  }
  grpc::ServerBidiReactor<collide::v1::QueryBatch, collide::v1::QueryBatchResult>* QueryStream(
      grpc::CallbackServerContext* call) override {
    return new EchoStream<collide::v1::QueryBatch, collide::v1::QueryBatchResult>();
  }
  grpc::ServerBidiReactor<collide::v1::UpdateBatch, collide::v1::UpdateAck>* UpdateStream(
      grpc::CallbackServerContext* call) override {
    return new EchoStream<collide::v1::UpdateBatch, collide::v1::UpdateAck>();
  }
};

int Main(int argc, char** argv) {
  ParseProgramFlags(
      argc, argv,
      {.name = "collide-echo-server",
       .usage = "the transport ceiling for collide-load: collide's messages answered without work.",
       .flags_file = "bench/load/echo_server.cc",
       .version = kVersionLine});
  hit_every = absl::GetFlag(FLAGS_hit_every);
  hit_triangle = absl::GetFlag(FLAGS_hit_triangle);
  if (hit_every < 1 || hit_every > 1000) {
    std::fprintf(stderr, "--hit_every: must be 1 to 1000, not %d\n", hit_every);
    return 2;
  }
  // Before gRPC starts its threads (server/infra/shutdown_signals.h).
  ShutdownSignals shutdown_signals;
  EchoService service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(absl::GetFlag(FLAGS_address), grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(absl::GetFlag(FLAGS_max_message_bytes));
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::fprintf(stderr, "cannot listen on %s\n", absl::GetFlag(FLAGS_address).c_str());
    return 1;
  }
  if (const std::string path = absl::GetFlag(FLAGS_port_file); !path.empty()) {
    const std::string tmp = path + ".tmp";
    std::ofstream(tmp) << port << "\n";
    std::rename(tmp.c_str(), path.c_str());
  }
  std::printf("collide-echo-server listening on port %d\n", port);
  std::fflush(stdout);
  shutdown_signals.Wait();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  return 0;
}

}  // namespace
}  // namespace collide::echo

int main(int argc, char** argv) { return collide::echo::Main(argc, argv); }
