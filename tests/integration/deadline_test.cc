// Deadlines on every call: the client's default for unary calls, a per-call override, stream
// deadlines, and wait_for_ready. A query with a min_version that no write reaches waits on the
// server until the call's deadline (the server's own cap, --max_version_wait_ms, is set far
// beyond the test's time), so the deadline is what ends it: were a deadline not applied, the
// call would hang until ctest's timeout and fail. Nothing asserts how long a call took; a call
// that must succeed under a short default deadline gets seconds, not milliseconds.

#include <csignal>
#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

using client::CallOptions;
using client::MakeVec3;

std::unique_ptr<client::Client> ClientWithDefault(const ServerProcess& server,
                                                  absl::Duration deadline) {
  client::ClientOptions options;
  options.address = server.address();
  options.enable_http_proxy = false;
  options.default_deadline = deadline;
  return *client::Client::Connect(options);
}

// A ray that can only be answered once the scene reaches a version far ahead.
v1::RaycastRequest WaitingRay() {
  v1::RaycastRequest request;
  request.set_scene("field");
  *request.mutable_ray() = client::MakeRaycast(MakeVec3(0, 0, 0), MakeVec3(1, 0, 0), 10);
  request.set_min_version(1000000);
  return request;
}

class DeadlineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerConfig config;
    config.extra_flags = {"--max_version_wait_ms=3600000"};
    auto server = ServerProcess::Start(config);
    ASSERT_TRUE(IsOk(server));
    server_ = *std::move(server);
    ASSERT_TRUE(IsOk(server_->NewClient()->CreateScene("field")));
  }
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(DeadlineTest, UnaryCallsEndAtTheClientsDefaultDeadline) {
  // 3 s: long enough for a call that needs no wait on a loaded machine (sanitizers, ctest -j),
  // which must succeed under it before and after the waiting one (each call gets its own).
  auto client = ClientWithDefault(*server_, absl::Seconds(3));
  v1::RaycastRequest now = WaitingRay();
  now.set_min_version(0);
  EXPECT_TRUE(IsOk(client->Raycast(now)));
  EXPECT_TRUE(
      HasError(client->Raycast(WaitingRay()).status(), absl::StatusCode::kDeadlineExceeded, ""));
  EXPECT_TRUE(IsOk(client->Raycast(now)));
}

TEST_F(DeadlineTest, APerCallDeadlineOverridesTheDefault) {
  // No default deadline: only the per-call one can end the waiting call.
  auto client = ClientWithDefault(*server_, absl::ZeroDuration());
  CallOptions call;
  call.deadline = absl::Milliseconds(200);
  EXPECT_TRUE(HasError(client->Raycast(WaitingRay(), call).status(),
                       absl::StatusCode::kDeadlineExceeded, ""));
  // Other calls keep the default.
  EXPECT_TRUE(IsOk(client->GetScene("field")));
}

TEST_F(DeadlineTest, AStreamEndsAtItsDeadline) {
  auto client = ClientWithDefault(*server_, absl::ZeroDuration());
  CallOptions call;
  call.deadline = absl::Milliseconds(300);
  auto session = client->OpenQueryStream("field", call);
  ASSERT_TRUE(IsOk(session));
  v1::QueryBatch batch;
  batch.set_scene("field");
  batch.set_min_version(1000000);
  *batch.add_queries() =
      client::MakeRaycastQuery(1, client::MakeRaycast(MakeVec3(0, 0, 0), MakeVec3(1, 0, 0), 10));
  EXPECT_TRUE(HasError((*session)->Run(batch).status(), absl::StatusCode::kDeadlineExceeded, ""));
}

TEST_F(DeadlineTest, WaitForReadyWaitsForTheServerUpToTheDeadline) {
  auto client = ClientWithDefault(*server_, absl::Seconds(60));
  ASSERT_TRUE(IsOk(client->GetScene("field")));
  ASSERT_TRUE(IsOk(server_->Stop(SIGKILL)));
  CallOptions fail_fast;
  fail_fast.deadline = absl::Seconds(30);
  EXPECT_TRUE(
      HasError(client->GetScene("field", fail_fast).status(), absl::StatusCode::kUnavailable, ""));
  CallOptions wait;
  wait.deadline = absl::Milliseconds(300);
  wait.wait_for_ready = true;
  EXPECT_TRUE(
      HasError(client->GetScene("field", wait).status(), absl::StatusCode::kDeadlineExceeded, ""));
}

}  // namespace
}  // namespace collide::integration
