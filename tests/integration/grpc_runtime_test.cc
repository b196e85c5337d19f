// GrpcRuntime (client/cpp/grpc_runtime.h): a program whose last channel is released on another
// thread after main's clients are gone still exits with gRPC shut down and its threads joined.
// Each case runs in a child process of its own (a death test), where gRPC starts from nothing.

#include "client/cpp/grpc_runtime.h"

#include <grpc/grpc.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <memory>
#include <thread>
#include <utility>

namespace collide {
namespace {

long TasksOfThisProcess() {
  const std::filesystem::directory_iterator tasks("/proc/self/task");
  return std::distance(begin(tasks), end(tasks));
}

// Exits 0 when, after the runtime's destructor, gRPC is shut down and no other thread is left;
// 1 when gRPC is still initialised; 2 when a thread is.
[[noreturn]] void ReleaseTheLastChannelLateThenExit(std::chrono::milliseconds late) {
  {
    client::GrpcRuntime grpc;
    std::shared_ptr<grpc::Channel> channel =
        grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials());
    channel->GetState(/*try_to_connect=*/true);
    std::thread([channel = std::move(channel), late]() mutable {
      std::this_thread::sleep_for(late);
      channel.reset();
    }).detach();
  }
  if (grpc_is_initialized()) std::_Exit(1);
  std::_Exit(TasksOfThisProcess() == 1 ? 0 : 2);
}

TEST(GrpcRuntimeDeathTest, WaitsForAChannelReleasedOnAnotherThreadAndForGrpcsThreads) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(ReleaseTheLastChannelLateThenExit(std::chrono::milliseconds(200)),
              ::testing::ExitedWithCode(0), "");
}

TEST(GrpcRuntimeDeathTest, GivesUpAfterTwoSecondsOnAChannelNeverReleased) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const auto start = std::chrono::steady_clock::now();
  // Released after 4 s: the runtime stops waiting at 2 s, and gRPC is still initialised then.
  EXPECT_EXIT(ReleaseTheLastChannelLateThenExit(std::chrono::milliseconds(4000)),
              ::testing::ExitedWithCode(1), "");
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(1900));
  EXPECT_LT(waited, std::chrono::milliseconds(3900));
}

}  // namespace
}  // namespace collide
