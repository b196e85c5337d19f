// QueryBatcher against a real server: queries from many threads come back to their own callers
// with the answers the reference engine gives; batches go out on size, on Flush and after the
// delay; errors reach the queries concerned; min_version waits for a write.

#include "client/cpp/query_batcher.h"

#include <atomic>
#include <cstdio>
#include <future>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "gtest/gtest.h"
#include "integration/reference.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using client::BatchedQueryResult;
using client::MakePose;
using client::MakeVec3;
using client::QueryBatcher;
using client::QueryBatcherOptions;
using Answer = std::future<absl::StatusOr<BatchedQueryResult>>;

constexpr unsigned kSeed = 20261123;

class QueryBatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ServerProcess::Start();
    ASSERT_TRUE(IsOk(server));
    server_ = *std::move(server);
    client_ = server_->NewClient();
    ASSERT_TRUE(IsOk(client_->CreateScene("field")));
    std::mt19937 rng(kSeed);
    std::uniform_real_distribution<float> at(-20, 20);
    for (uint64_t id = 1; id <= 200; ++id) {
      bodies_.push_back(client::MakeBody(
          id, id % 2 == 0 ? client::MakeSphere(0.7f) : client::MakeBox(0.5f, 1, 0.5f),
          MakePose(MakeVec3(at(rng), at(rng), at(rng)))));
    }
    auto write = client_->UpsertBodies("field", bodies_);
    ASSERT_TRUE(IsOk(write));
    version_ = write->version();
  }

  absl::StatusOr<std::unique_ptr<QueryBatcher>> OpenBatcher(size_t max_batch_size,
                                                            absl::Duration max_delay) {
    QueryBatcherOptions options;
    options.max_batch_size = max_batch_size;
    options.max_delay = max_delay;
    return QueryBatcher::Open(client_.get(), "field", options);
  }

  v1::Query RandomRay(std::mt19937& rng, uint64_t request_id) {
    std::uniform_real_distribution<float> at(-25, 25);
    return client::MakeRaycastQuery(
        request_id,
        client::MakeRaycast(MakeVec3(at(rng), at(rng), -30), MakeVec3(at(rng), at(rng), 40), 80),
        v1::MODE_ALL);
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<client::Client> client_;
  std::vector<v1::Body> bodies_;
  uint64_t version_ = 0;
};

TEST_F(QueryBatcherTest, AnswersEveryCallerFromManyThreads) {
  auto batcher = OpenBatcher(16, absl::Milliseconds(2));
  ASSERT_TRUE(IsOk(batcher));
  ReferenceWorld world(bodies_);
  constexpr int kThreads = 8;
  constexpr int kQueriesPerThread = 50;
  std::vector<std::vector<v1::Query>> queries(kThreads);
  std::vector<std::vector<absl::StatusOr<BatchedQueryResult>>> answers(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(kSeed + t);
      std::vector<Answer> futures;
      for (int q = 0; q < kQueriesPerThread; ++q) {
        queries[t].push_back(RandomRay(rng, 1000 * t + q));
        futures.push_back((*batcher)->Add(queries[t].back()));
      }
      for (Answer& future : futures) answers[t].push_back(future.get());
    });
  }
  for (std::thread& thread : threads) thread.join();
  int hits = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int q = 0; q < kQueriesPerThread; ++q) {
      const auto& answer = answers[t][q];
      ASSERT_TRUE(IsOk(answer)) << "thread " << t << " query " << q << " seed " << kSeed + t;
      EXPECT_EQ(answer->version, version_);
      EXPECT_EQ(answer->result.request_id(), queries[t][q].request_id());
      EXPECT_TRUE(ResultMatches(queries[t][q], answer->result, world))
          << "thread " << t << " query " << q << " seed " << kSeed + t;
      hits += answer->result.hits_size();
    }
  }
  EXPECT_GT(hits, 50);
  // No batch holds more than max_batch_size queries.
  EXPECT_GE((*batcher)->batches_sent(), uint64_t{kThreads * kQueriesPerThread / 16});
}

// A stress test of the batcher's shared state (ThreadSanitizer cannot check it against Debian's
// uninstrumented gRPC and Abseil: see scripts/test). Many producers add queries through futures
// and callbacks, some flush, and a writer keeps bumping the scene's version (with bodies out of
// every ray's reach) while queries ask for versions it has reached. Every query must come back
// exactly once, to its own caller (its request id and the reference engine's hits), at or after
// the version it asked for; batches never exceed max_batch_size.
TEST_F(QueryBatcherTest, ManyProducersEachGetTheirOwnAnswerWhileFlushingAndWriting) {
  constexpr size_t kBatchSize = 7;
  auto batcher = OpenBatcher(kBatchSize, absl::Microseconds(200));
  ASSERT_TRUE(IsOk(batcher));
  ReferenceWorld world(bodies_);
  constexpr int kThreads = 16;
  constexpr int kQueriesPerThread = 250;

  std::atomic<uint64_t> written_version{version_};
  std::atomic<bool> stop_writing{false};
  absl::Status writer_status;
  std::thread writer([&] {
    // Far from every ray (RandomRay stays within 150 of the origin).
    for (uint64_t id = 10001; !stop_writing; ++id) {
      auto write = client_->UpsertBodies(
          "field", std::vector<v1::Body>{client::MakeBody(id, client::MakeSphere(1),
                                                          MakePose(MakeVec3(1e5f, 0, 0)))});
      if (!write.ok()) {
        writer_status = write.status();
        return;
      }
      written_version = write->version();
    }
  });

  struct Asked {
    v1::Query query;
    uint64_t min_version = 0;
  };
  std::vector<std::vector<Asked>> asked(kThreads);
  std::vector<std::vector<absl::StatusOr<BatchedQueryResult>>> answers(kThreads);
  // Per query: how many times its callback ran (callbacks run on the batcher's threads).
  std::vector<std::unique_ptr<std::atomic<int>[]>> calls(kThreads);
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t) {
    asked[t].resize(kQueriesPerThread);
    answers[t].resize(kQueriesPerThread, absl::UnknownError("no answer"));
    calls[t] = std::make_unique<std::atomic<int>[]>(kQueriesPerThread);
    producers.emplace_back([&, t] {
      std::mt19937 rng(kSeed + 100 + t);
      std::vector<std::pair<int, Answer>> futures;
      for (int q = 0; q < kQueriesPerThread; ++q) {
        Asked& a = asked[t][q];
        a.query = RandomRay(rng, 100000 * (t + 1) + q);
        a.min_version = rng() % 3 == 0 ? written_version.load() : 0;
        if (q % 2 == 0) {
          futures.emplace_back(q, (*batcher)->Add(a.query, a.min_version));
        } else {
          (*batcher)->Add(
              a.query,
              [&, t, q](absl::StatusOr<BatchedQueryResult> answer) {
                answers[t][q] = std::move(answer);  // each slot is written by one callback
                calls[t][q].fetch_add(1);
              },
              a.min_version);
        }
        if (rng() % 16 == 0) (*batcher)->Flush();
      }
      for (auto& [q, future] : futures) {
        answers[t][q] = future.get();
        calls[t][q].fetch_add(1);
      }
    });
  }
  for (std::thread& producer : producers) producer.join();
  (*batcher)->Close();  // waits for every answer, so every callback has run
  stop_writing = true;
  writer.join();
  ASSERT_TRUE(IsOk(writer_status));

  int hits = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int q = 0; q < kQueriesPerThread; ++q) {
      SCOPED_TRACE(::testing::Message()
                   << "thread " << t << " query " << q << " seed " << kSeed + 100 + t);
      ASSERT_EQ(calls[t][q].load(), 1);
      const auto& answer = answers[t][q];
      ASSERT_TRUE(IsOk(answer));
      EXPECT_EQ(answer->result.request_id(), asked[t][q].query.request_id());
      EXPECT_GE(answer->version, asked[t][q].min_version);
      EXPECT_TRUE(ResultMatches(asked[t][q].query, answer->result, world));
      hits += answer->result.hits_size();
    }
  }
  EXPECT_GT(hits, 100);
  EXPECT_GE((*batcher)->batches_sent(), uint64_t{kThreads * kQueriesPerThread / kBatchSize});
  std::printf("%d queries in %llu batches, %d hits, scene at version %llu\n",
              kThreads * kQueriesPerThread,
              static_cast<unsigned long long>((*batcher)->batches_sent()), hits,
              static_cast<unsigned long long>(written_version.load()));
}

TEST_F(QueryBatcherTest, SendsFullBatchesAtOnceAndTheRestOnFlush) {
  auto batcher = OpenBatcher(4, absl::Hours(1));
  ASSERT_TRUE(IsOk(batcher));
  std::mt19937 rng(kSeed);
  std::vector<Answer> futures;
  for (int q = 0; q < 10; ++q) futures.push_back((*batcher)->Add(RandomRay(rng, q + 1)));
  // Two full batches go out on size alone.
  for (int q = 0; q < 8; ++q) ASSERT_TRUE(IsOk(futures[q].get())) << q;
  EXPECT_EQ((*batcher)->batches_sent(), 2u);
  (*batcher)->Flush();
  for (int q = 8; q < 10; ++q) ASSERT_TRUE(IsOk(futures[q].get())) << q;
  EXPECT_EQ((*batcher)->batches_sent(), 3u);
}

TEST_F(QueryBatcherTest, SendsAPartialBatchAfterTheDelay) {
  auto batcher = OpenBatcher(1000, absl::Milliseconds(5));
  ASSERT_TRUE(IsOk(batcher));
  std::mt19937 rng(kSeed);
  Answer first = (*batcher)->Add(RandomRay(rng, 1));
  Answer second = (*batcher)->Add(RandomRay(rng, 2));
  EXPECT_TRUE(IsOk(first.get()));
  EXPECT_TRUE(IsOk(second.get()));
  EXPECT_GE((*batcher)->batches_sent(), 1u);
}

TEST_F(QueryBatcherTest, ErrorsReachOnlyTheQueriesConcerned) {
  auto batcher = QueryBatcher::Open(client_.get(), "field");
  ASSERT_TRUE(IsOk(batcher));
  std::mt19937 rng(kSeed);
  Answer good = (*batcher)->Add(RandomRay(rng, 1));
  Answer bad = (*batcher)->Add(
      client::MakeRaycastQuery(2, client::MakeRaycast(MakeVec3(0, 0, 0), MakeVec3(0, 0, 0), 10)));
  (*batcher)->Flush();
  EXPECT_TRUE(IsOk(good.get()));
  EXPECT_TRUE(HasError(bad.get().status(), absl::StatusCode::kInvalidArgument, "queries["));

  // A batch for a scene that does not exist fails every query of it.
  auto nowhere = QueryBatcher::Open(client_.get(), "nowhere");
  ASSERT_TRUE(IsOk(nowhere));
  Answer lost = (*nowhere)->Add(RandomRay(rng, 3));
  (*nowhere)->Flush();
  EXPECT_TRUE(HasError(lost.get().status(), absl::StatusCode::kNotFound, "scene"));

  (*batcher)->Close();
  EXPECT_TRUE(HasError((*batcher)->Add(RandomRay(rng, 4)).get().status(),
                       absl::StatusCode::kFailedPrecondition, ""));
}

TEST_F(QueryBatcherTest, MinVersionWaitsForTheWrite) {
  auto batcher = QueryBatcher::Open(client_.get(), "field");
  ASSERT_TRUE(IsOk(batcher));
  // Body 1 moved onto the ray's path in the next version.
  v1::Query ray = client::MakeRaycastQuery(
      1, client::MakeRaycast(MakeVec3(100, 100, 90), MakeVec3(0, 0, 1), 20));
  Answer answer = (*batcher)->Add(ray, version_ + 1);
  (*batcher)->Flush();
  v1::Body moved = bodies_[0];
  *moved.mutable_pose() = MakePose(MakeVec3(100, 100, 100));
  ASSERT_TRUE(IsOk(client_->UpsertBodies("field", std::vector<v1::Body>{moved})));
  auto result = answer.get();
  ASSERT_TRUE(IsOk(result));
  EXPECT_EQ(result->version, version_ + 1);
  ASSERT_EQ(result->result.hits_size(), 1);
  EXPECT_EQ(result->result.hits(0).body_id(), moved.id());
}

}  // namespace
}  // namespace collide::integration
