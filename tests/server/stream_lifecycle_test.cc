#include "server/rpc/stream_lifecycle.h"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <thread>
#include <vector>

namespace collide {
namespace {

grpc::Status Bad() { return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "messages[0]: x"); }

TEST(StreamState, FinishesOnceTheCallIsEndingAndIdle) {
  StreamState state(nullptr);
  EXPECT_FALSE(state.TakeFinish().has_value());  // nothing asked the call to end
  ASSERT_TRUE(state.BeginRead(false));
  EXPECT_FALSE(state.BeginRead(false));  // one read at a time
  ASSERT_TRUE(state.BeginWrite(10));
  EXPECT_FALSE(state.BeginWrite(10));  // one write at a time
  state.Hold();
  state.End(Bad());
  state.End(grpc::Status::OK);  // the first End wins
  EXPECT_TRUE(state.ending());
  EXPECT_FALSE(state.TakeFinish().has_value());  // a read, a write and a hold are in flight
  EXPECT_FALSE(state.EndRead());                 // ending: the read's message is dropped
  EXPECT_FALSE(state.TakeFinish().has_value());
  EXPECT_TRUE(state.EndWrite(true));  // the write went through; the call is not broken
  EXPECT_FALSE(state.TakeFinish().has_value());
  state.Release();
  std::optional<grpc::Status> finish = state.TakeFinish();
  ASSERT_TRUE(finish.has_value());
  EXPECT_EQ(finish->error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(finish->error_message(), "messages[0]: x");
  EXPECT_FALSE(state.TakeFinish().has_value());  // exactly once
}

TEST(StreamState, AnEndWithTheReadOpenDoesNotWaitForTheRead) {
  StreamState state(nullptr);
  ASSERT_TRUE(state.BeginRead(false));  // the client's next message, whenever it comes
  ASSERT_TRUE(state.BeginWrite(10));
  state.EndWithReadOpen(grpc::Status(grpc::StatusCode::NOT_FOUND, "scene: deleted"));
  EXPECT_FALSE(state.TakeFinish().has_value());  // the write is still waited for
  EXPECT_TRUE(state.EndWrite(true));
  std::optional<grpc::Status> finish = state.TakeFinish();
  ASSERT_TRUE(finish.has_value());  // the read is not
  EXPECT_EQ(finish->error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_FALSE(state.EndRead());  // it completes later: nothing more to do
  EXPECT_FALSE(state.TakeFinish().has_value());
  // End alone still waits for a read in flight.
  StreamState waiting(nullptr);
  ASSERT_TRUE(waiting.BeginRead(false));
  waiting.End(Bad());
  EXPECT_FALSE(waiting.TakeFinish().has_value());
  EXPECT_FALSE(waiting.EndRead());
  EXPECT_TRUE(waiting.TakeFinish().has_value());
}

TEST(StreamState, StartsNothingOnceEndingButLetsTheLastWritesOfAnEndGo) {
  StreamState state(nullptr);
  state.End(grpc::Status::OK);
  EXPECT_FALSE(state.BeginRead(false));
  // An end asked by the reactor still lets it write what it owes (the acks before a bad
  // message); a cancel does not.
  ASSERT_TRUE(state.BeginWrite(1));
  EXPECT_TRUE(state.EndWrite(true));
  state.Cancel();
  EXPECT_FALSE(state.BeginWrite(1));
  std::optional<grpc::Status> finish = state.TakeFinish();
  ASSERT_TRUE(finish.has_value());
  EXPECT_EQ(finish->error_code(), grpc::StatusCode::CANCELLED);
}

TEST(StreamState, AFailedWriteOrACancelEndsTheCallAsCancelled) {
  {
    StreamState state(nullptr);
    ASSERT_TRUE(state.BeginWrite(1));
    EXPECT_FALSE(state.EndWrite(false));
    EXPECT_TRUE(state.ending());
    std::optional<grpc::Status> finish = state.TakeFinish();
    ASSERT_TRUE(finish.has_value());
    EXPECT_EQ(finish->error_code(), grpc::StatusCode::CANCELLED);
  }
  {
    // A cancel while a wait holds the call: it finishes when the wait's callback releases it,
    // and that callback's write does not start.
    StreamState state(nullptr);
    state.Hold();
    state.Cancel();
    EXPECT_FALSE(state.TakeFinish().has_value());
    EXPECT_FALSE(state.BeginWrite(1));
    state.Release();
    std::optional<grpc::Status> finish = state.TakeFinish();
    ASSERT_TRUE(finish.has_value());
    EXPECT_EQ(finish->error_code(), grpc::StatusCode::CANCELLED);
  }
}

TEST(StreamState, FinishesExactlyOnceWhatEverThreadsRace) {
  // Completions, releases and a cancel from several threads: one of them finishes the call.
  for (int round = 0; round < 200; ++round) {
    StreamState state(nullptr);
    constexpr int kHolds = 8;
    for (int i = 0; i < kHolds; ++i) state.Hold();
    ASSERT_TRUE(state.BeginWrite(1));
    std::atomic<int> finishes{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < kHolds; ++i) {
      threads.emplace_back([&] {
        state.Release();
        if (state.TakeFinish().has_value()) finishes.fetch_add(1);
      });
    }
    threads.emplace_back([&] {
      state.EndWrite(true);
      if (state.TakeFinish().has_value()) finishes.fetch_add(1);
    });
    threads.emplace_back([&] {
      state.Cancel();
      if (state.TakeFinish().has_value()) finishes.fetch_add(1);
    });
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(finishes.load(), 1) << "round " << round;
  }
}

}  // namespace
}  // namespace collide
