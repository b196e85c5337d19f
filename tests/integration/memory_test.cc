// Memory the real server holds for its clients, read from its /proc/<pid>/status (VmRSS, VmHWM),
// against the bounds docs/SECURITY.md states ("Memory per client"):
//  - a QueryStream whose client stops reading after asking for the largest answer allowed holds
//    that answer's bytes and little more, and gives them back when the stream ends;
//  - eight such streams at once stay under eight times the per-stream bound, and once they are
//    ended by the stall watchdog the server's RSS returns to its baseline;
//  - 20 rounds of 1,200 QueryStreams opened and cancelled do not grow the server round over round.
// Every figure (before, during, after) is printed with its bound. Under AddressSanitizer, whose
// allocator keeps freed memory in quarantine and adds red zones, the RSS bounds are not checked
// (the calls, answers and limits are).

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "collide/v1/collide.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"
#include "sanitizers.h"

namespace collide::integration {
namespace {

using client::MakeBody;
using client::MakeOverlap;
using client::MakePose;
using client::MakeSphere;
using client::MakeVec3;
using std::chrono::milliseconds;
using std::chrono::seconds;

// A sanitizer's shadow memory and quarantine make RSS say nothing about the bounds.
constexpr bool kCheckRss = !testing::kSanitized;

constexpr uint64_t kMiB = 1 << 20;

// The bounds of docs/SECURITY.md, with the server's defaults.
// --max_answer_bytes.
constexpr uint64_t kMaxAnswerBytes = 16 * kMiB;
// The largest answer of a batch: 11 bytes + per query 19 + max(59 x its hits, 1,032).
constexpr uint64_t kAnswerHeaderBytes = 11;
constexpr uint64_t kResultBytes = 19;
constexpr uint64_t kHitBytes = 59;
// What a QueryStream holds beside its answer while its client does not read: scratch kept
// between batches (5 vectors of at most 64 KiB), the request arena's first block (16 KiB) and
// gRPC's call state (about 30 KiB measured).
constexpr uint64_t kStreamOverheadBytes = 512 << 10;
// While a batch is computed, its hits too: 48 bytes per hit it may return.
constexpr uint64_t kCoreHitBytes = 48;
// What the process's RSS may move by for reasons of its own (thread stacks, connection buffers,
// pages of the allocator partly in use): the slack of every bound below.
constexpr uint64_t kSlackBytes = 8 * kMiB;
// Free memory the server may keep resident before it trims (server/infra/memory_release.h).
constexpr uint64_t kTrimThresholdBytes = 16 * kMiB;

// The scene: kBodies spheres, scattered so that every query below hits all of them, with ids of
// 10-byte varints (the longest hits).
constexpr int kBodies = 4096;
constexpr uint64_t kFirstId = uint64_t{1} << 63;
// A query of max_hits kBodies and its share of the largest answer.
constexpr uint64_t kQueryBound = kResultBytes + kHitBytes * kBodies;
// The most such queries a batch may hold: 69, 282,624 hits.
constexpr int kMostQueries = static_cast<int>((kMaxAnswerBytes - kAnswerHeaderBytes) / kQueryBound);
static_assert(kMostQueries == 69);

std::shared_ptr<grpc::Channel> NewConnection(const std::string& address, int id) {
  grpc::ChannelArguments args;
  args.SetInt("collide.memory_connection", id);  // its own HTTP/2 connection
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
  args.SetMaxReceiveMessageSize(-1);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

using QueryStream = grpc::ClientReaderWriter<v1::QueryBatch, v1::QueryBatchResult>;

std::vector<v1::Body> ScatteredSpheres() {
  std::mt19937 rng(20240615);
  std::uniform_real_distribution<float> coordinate(-20.0f, 20.0f);
  std::vector<v1::Body> bodies;
  for (int i = 0; i < kBodies; ++i) {
    bodies.push_back(
        MakeBody(kFirstId + static_cast<uint64_t>(i), MakeSphere(0.5f),
                 MakePose(MakeVec3(coordinate(rng), coordinate(rng), coordinate(rng)))));
  }
  return bodies;
}

// `queries` overlaps with detail, each hitting every body: hits with a depth, a contact point
// and a normal (52 bytes each on the wire).
v1::QueryBatch LargeAnswerBatch(int queries, uint32_t max_hits = kBodies) {
  v1::QueryBatch batch;
  batch.set_scene("memory");
  for (int i = 0; i < queries; ++i) {
    v1::Query* query = batch.add_queries();
    query->set_request_id(kFirstId + static_cast<uint64_t>(i));
    *query->mutable_overlap() =
        MakeOverlap(MakeSphere(100.0f), MakePose(MakeVec3(0.25f, -0.5f, 0.75f)));
    query->set_detail(true);
    query->set_mode(v1::MODE_ALL);
    query->set_max_hits(max_hits);
  }
  return batch;
}

void Print(const std::string& what, uint64_t bytes) {
  std::printf("[memory] %-58s %8.1f MiB\n", what.c_str(), static_cast<double>(bytes) / kMiB);
  std::fflush(stdout);
}

// Prints `rss` against `bound` and checks it (not under AddressSanitizer).
void ExpectAtMost(const std::string& what, uint64_t rss, uint64_t bound) {
  std::printf("[memory] %-58s %8.1f MiB (bound %.1f MiB)%s\n", what.c_str(),
              static_cast<double>(rss) / kMiB, static_cast<double>(bound) / kMiB,
              kCheckRss ? "" : " not checked under AddressSanitizer");
  std::fflush(stdout);
  if (kCheckRss) {
    EXPECT_LE(rss, bound) << what;
  }
}

class MemoryTest : public ::testing::Test {
 protected:
  void StartServer(std::vector<std::string> flags) {
    ServerConfig config;
    config.extra_flags = std::move(flags);
    config.extra_flags.push_back("--durability=none");
    auto server = ServerProcess::Start(config);
    ASSERT_TRUE(IsOk(server));
    server_ = *std::move(server);
    client_ = server_->NewClient();
    stub_ = v1::Collide::NewStub(client_->channel());
    ASSERT_TRUE(IsOk(client_->CreateScene("memory")));
    ASSERT_TRUE(IsOk(client_->UpsertBodies("memory", ScatteredSpheres())));
    // Warm up the query path (threads, connection) before the baseline.
    ASSERT_TRUE(ReadAnswer(LargeAnswerBatch(1, 8), stub_.get()).ok());
  }

  static std::unique_ptr<grpc::ClientContext> NewContext() {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + seconds(120));
    return context;
  }

  // Sends `batch` on a new QueryStream of `stub`, reads its answer and half-closes.
  static grpc::Status ReadAnswer(const v1::QueryBatch& batch, v1::Collide::Stub* stub,
                                 v1::QueryBatchResult* answer = nullptr) {
    auto context = NewContext();
    auto stream = stub->QueryStream(context.get());
    v1::QueryBatchResult result;
    if (!stream->Write(batch) || !stream->Read(&result)) return stream->Finish();
    if (answer != nullptr) *answer = std::move(result);
    stream->WritesDone();
    return stream->Finish();
  }

  v1::GetServerStatsResponse Stats() {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(10));
    v1::GetServerStatsResponse stats;
    grpc::Status status = stub_->GetServerStats(&context, v1::GetServerStatsRequest(), &stats);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return stats;
  }

  // Polls the server's counters until `done` holds (up to `limit`), calling `each` with the RSS
  // at every poll; returns the last counters.
  template <typename Done, typename Each>
  v1::GetServerStatsResponse WaitFor(Done done, seconds limit, Each each) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    v1::GetServerStatsResponse stats = Stats();
    each(Rss());
    while (!done(stats) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(20));
      stats = Stats();
      each(Rss());
    }
    return stats;
  }
  template <typename Done>
  v1::GetServerStatsResponse WaitFor(Done done, seconds limit) {
    return WaitFor(done, limit, [](uint64_t) {});
  }

  static bool NoStreams(const v1::GetServerStatsResponse& stats) {
    return stats.update_streams() == 0 && stats.query_streams() == 0 && stats.outbound_bytes() == 0;
  }

  uint64_t Rss() const {
    const uint64_t rss = server_->RssBytes();
    EXPECT_GT(rss, 0u) << "cannot read the server's VmRSS";
    return rss;
  }

  // The RSS once it has moved by less than 1 MiB over 300 ms (at most 5 s).
  uint64_t SettledRss() const {
    uint64_t last = Rss();
    for (int i = 0; i < 17; ++i) {
      std::this_thread::sleep_for(milliseconds(300));
      const uint64_t now = Rss();
      if (now < last + kMiB && last < now + kMiB) return now;
      last = now;
    }
    return last;
  }

  // Polls the RSS until it is at most `bound` (up to `limit`); returns the last reading.
  uint64_t RssFallingTo(uint64_t bound, seconds limit) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    uint64_t rss = Rss();
    while (rss > bound && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(100));
      rss = Rss();
    }
    return rss;
  }

  // Stops the server with SIGTERM: it exits 0 (under AddressSanitizer, LeakSanitizer would make
  // it exit otherwise had the calls above leaked).
  void ExpectCleanExit() {
    stub_.reset();
    client_.reset();
    absl::StatusOr<int> code = server_->Stop(SIGTERM);
    ASSERT_TRUE(code.ok()) << code.status();
    EXPECT_EQ(*code, 0) << server_->Logs();
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<client::Client> client_;
  std::unique_ptr<v1::Collide::Stub> stub_;
};

TEST_F(MemoryTest, AStreamWhoseClientStopsReadingHoldsItsAnswerAndGivesItBack) {
  StartServer({"--stream_stall_timeout_ms=0"});
  const uint64_t baseline = SettledRss();
  Print("baseline (before)", baseline);

  // The limit is on the answer a batch really gets: one whose hits encode to more than
  // --max_answer_bytes (80 queries of 4,096 hits of 52 bytes: about 17 MB) is refused, having
  // been run in segments whose hits took at most about the limit in memory.
  auto stub = v1::Collide::NewStub(NewConnection(server_->address(), 1));
  v1::QueryBatchResult answer;
  ASSERT_TRUE(ReadAnswer(LargeAnswerBatch(80), stub.get(), &answer).ok());
  EXPECT_EQ(answer.error().code(), static_cast<int>(grpc::StatusCode::RESOURCE_EXHAUSTED));
  EXPECT_TRUE(absl::StartsWith(answer.error().message(), "queries: ")) << answer.error().message();
  ExpectAtMost("peak while refusing an answer over the limit (VmHWM)", server_->PeakRssBytes(),
               baseline + 2 * kMaxAnswerBytes + kStreamOverheadBytes + kSlackBytes);
  // One whose largest possible answer passes the limit while the one it gets does not is
  // answered.
  ASSERT_TRUE(ReadAnswer(LargeAnswerBatch(kMostQueries + 1), stub.get(), &answer).ok());
  ASSERT_FALSE(answer.has_error()) << answer.error().message();
  EXPECT_EQ(answer.results_size(), kMostQueries + 1);
  EXPECT_LE(answer.ByteSizeLong(), kMaxAnswerBytes);
  const v1::QueryBatch batch = LargeAnswerBatch(kMostQueries);
  ASSERT_TRUE(ReadAnswer(batch, stub.get(), &answer).ok());
  ASSERT_FALSE(answer.has_error()) << answer.error().message();
  ASSERT_EQ(answer.results_size(), kMostQueries);
  uint64_t hits = 0;
  for (const v1::QueryResult& result : answer.results()) hits += result.hits_size();
  EXPECT_EQ(hits, static_cast<uint64_t>(kMostQueries) * kBodies);
  const uint64_t answer_bytes = answer.ByteSizeLong();
  std::printf("[memory] the largest answer: %d queries, %llu hits, %llu bytes (%.1f per hit)\n",
              kMostQueries, static_cast<unsigned long long>(hits),
              static_cast<unsigned long long>(answer_bytes),
              static_cast<double>(answer_bytes) / static_cast<double>(hits));
  EXPECT_LE(answer_bytes, kMaxAnswerBytes);
  // Computing it holds its hits and its bytes, once.
  ExpectAtMost(
      "peak while answering a reading client (VmHWM)", server_->PeakRssBytes(),
      baseline + kMaxAnswerBytes + kCoreHitBytes * hits + kStreamOverheadBytes + kSlackBytes);
  const uint64_t after_read = SettledRss();
  ExpectAtMost("after the answer was read", after_read, baseline + kSlackBytes);

  // A client that asks for the same answer and reads nothing. Its connection takes what HTTP/2
  // flow control lets through; the server holds the rest, and the answer's bytes are what it
  // holds: GetServerStats counts exactly them.
  auto stalled_stub = v1::Collide::NewStub(NewConnection(server_->address(), 2));
  auto context = NewContext();
  std::unique_ptr<QueryStream> stalled = stalled_stub->QueryStream(context.get());
  ASSERT_TRUE(stalled->Write(batch));
  v1::GetServerStatsResponse stats =
      WaitFor([](const auto& s) { return s.outbound_bytes() > 0; }, seconds(60));
  EXPECT_EQ(stats.outbound_bytes(), answer_bytes);
  const uint64_t during = SettledRss();
  ExpectAtMost("during: one stream holding the largest answer", during,
               baseline + kMaxAnswerBytes + kStreamOverheadBytes + kSlackBytes);

  context->TryCancel();
  EXPECT_FALSE(stalled->Finish().ok());
  stats = WaitFor(NoStreams, seconds(20));
  EXPECT_TRUE(NoStreams(stats)) << stats.DebugString();
  ExpectAtMost("after the stream was cancelled", RssFallingTo(baseline + kSlackBytes, seconds(5)),
               baseline + kSlackBytes);
  ExpectCleanExit();
}

TEST_F(MemoryTest, EightStalledStreamsAreEndedAndTheServerReturnsToItsBaseline) {
  StartServer({"--stream_stall_timeout_ms=3000"});
  const uint64_t baseline = SettledRss();
  Print("baseline (before)", baseline);

  // Eight clients, each on its own connection, ask for the largest answer and read nothing.
  constexpr int kStreams = 8;
  const v1::QueryBatch batch = LargeAnswerBatch(kMostQueries);
  std::vector<std::unique_ptr<v1::Collide::Stub>> stubs;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<QueryStream>> streams;
  for (int i = 0; i < kStreams; ++i) {
    stubs.push_back(v1::Collide::NewStub(NewConnection(server_->address(), 10 + i)));
    contexts.push_back(NewContext());
    streams.push_back(stubs.back()->QueryStream(contexts.back().get()));
    ASSERT_TRUE(streams.back()->Write(batch));
  }
  // Each holds at most its answer and, while it is computed, its hits: whatever the order in
  // which they are computed, held and ended.
  uint64_t most = 0;
  const v1::GetServerStatsResponse stats =
      WaitFor([&](const auto& s) { return s.streams_stalled() == kStreams && NoStreams(s); },
              seconds(120), [&](uint64_t rss) { most = std::max(most, rss); });
  EXPECT_EQ(stats.streams_stalled(), static_cast<uint64_t>(kStreams));
  EXPECT_TRUE(NoStreams(stats)) << stats.DebugString();
  const uint64_t per_stream =
      kMaxAnswerBytes + kCoreHitBytes * kMostQueries * kBodies + kStreamOverheadBytes;
  ExpectAtMost("during: most while eight streams stalled", most,
               baseline + kStreams * per_stream + kSlackBytes);
  ExpectAtMost("peak (VmHWM)", server_->PeakRssBytes(),
               baseline + kStreams * per_stream + kSlackBytes);

  // Each client sees RESOURCE_EXHAUSTED `stream: ...`.
  for (auto& stream : streams) {
    v1::QueryBatchResult result;
    while (stream->Read(&result)) {
    }
    const grpc::Status status = stream->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
    EXPECT_TRUE(absl::StartsWith(status.error_message(), "stream: ")) << status.error_message();
  }
  // The answers' blocks go back when freed; what the allocator kept, at its next trim.
  const uint64_t bound = baseline + kTrimThresholdBytes + kSlackBytes;
  ExpectAtMost("after the eight streams ended", RssFallingTo(bound, seconds(10)), bound);
  ExpectCleanExit();
}

TEST_F(MemoryTest, StreamsOpenedAndCancelledByTheThousandDoNotGrowTheServer) {
  StartServer({});
  const uint64_t baseline = SettledRss();
  Print("baseline (before)", baseline);
  // Under AddressSanitizer the round-over-round comparison is not made (its quarantine holds up
  // to 256 MiB of freed memory), and six rounds (each 3x slower) still open and cancel 7,200
  // streams for the leak check at the server's exit.
  constexpr int kRounds = kCheckRss ? 20 : 6;
  constexpr int kStreamsPerRound = 1200;
  constexpr int kConnections = 4;  // 300 streams each, under --max_streams_per_connection
  std::vector<std::unique_ptr<v1::Collide::Stub>> stubs;
  for (int c = 0; c < kConnections; ++c) {
    stubs.push_back(v1::Collide::NewStub(NewConnection(server_->address(), 100 + c)));
  }
  const v1::QueryBatch small = LargeAnswerBatch(1, 8);
  std::vector<uint64_t> after_round;
  for (int round = 1; round <= kRounds; ++round) {
    std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
    std::vector<std::unique_ptr<QueryStream>> streams;
    // A third is cancelled before it sends anything, a third after reading an answer, a third
    // while its answer is being computed or written.
    for (int i = 0; i < kStreamsPerRound; ++i) {
      contexts.push_back(NewContext());
      streams.push_back(stubs[i % kConnections]->QueryStream(contexts.back().get()));
      if (i % 3 != 0) streams.back()->Write(small);
    }
    for (int i = 0; i < kStreamsPerRound; ++i) {
      if (i % 3 != 1) continue;
      v1::QueryBatchResult result;
      ASSERT_TRUE(streams[i]->Read(&result));
      ASSERT_FALSE(result.has_error()) << result.error().message();
    }
    for (auto& context : contexts) context->TryCancel();
    for (auto& stream : streams) EXPECT_FALSE(stream->Finish().ok());
    const v1::GetServerStatsResponse stats = WaitFor(NoStreams, seconds(30));
    ASSERT_TRUE(NoStreams(stats)) << stats.DebugString();
    after_round.push_back(Rss());
    Print("after round " + std::to_string(round), after_round.back());
  }
  // Round over round, not against an absolute figure: the server's RSS oscillates by some
  // 20 MiB as memory is reused and trimmed, so the most of the last five rounds (16 to 20) is
  // compared with the most of rounds 2 to 6 (without the trims, it grew by about 90 MiB between
  // rounds 5 and 20).
  const uint64_t early = *std::max_element(after_round.begin() + 1, after_round.begin() + 6);
  const uint64_t late = *std::max_element(after_round.end() - 5, after_round.end());
  Print("most after rounds 2 to 6", early);
  ExpectAtMost("most after the last five rounds (after)", late,
               early + kTrimThresholdBytes + kSlackBytes);
  ExpectCleanExit();
}

}  // namespace
}  // namespace collide::integration
