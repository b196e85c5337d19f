// Client input quoted back in an error: a scene name far beyond any limit is answered with a
// bounded message, and the connection goes on serving (a status message larger than gRPC's
// metadata limit would tear the connection down instead of answering the call).

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "client/cpp/client.h"
#include "gtest/gtest.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

TEST(LongNamesTest, AHugeUnknownSceneNameIsAnsweredAndTheConnectionGoesOn) {
  auto server = ServerProcess::Start(ServerConfig{});
  ASSERT_TRUE(IsOk(server));
  std::unique_ptr<client::Client> client = (*server)->NewClient();
  ASSERT_TRUE(IsOk(client->CreateScene("arena")));
  for (size_t length : {size_t{129}, size_t{8'000}, size_t{70'000}, size_t{500'000}}) {
    const std::string name(length, 'n');
    const absl::Status status = client->GetScene(name).status();
    EXPECT_FALSE(status.ok()) << length;
    EXPECT_NE(status.code(), absl::StatusCode::kDeadlineExceeded) << length << ": " << status;
    EXPECT_NE(status.code(), absl::StatusCode::kUnavailable) << length << ": " << status;
    EXPECT_TRUE(absl::StartsWith(status.message(), "scene: ")) << status.message().substr(0, 60);
    EXPECT_LE(status.message().size(), 1024u) << length;
    // The same channel still answers.
    EXPECT_TRUE(IsOk(client->GetScene("arena"))) << "after a name of " << length << " bytes";
  }
}

}  // namespace
}  // namespace collide::integration
