// The collide command-line client against the real server: every subcommand, human-readable
// and JSON output, errors as `error: <CODE>: <message>` with a non-zero exit, COLLIDE_ADDRESS.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "client/cpp/builders.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "integration/server_process.h"
#include "integration/test_util.h"

namespace collide::integration {
namespace {

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ServerProcess::Start();
    ASSERT_TRUE(IsOk(server));
    server_ = *std::move(server);
  }

  // Runs `collide --address=<server> words...`.
  CommandResult Cli(std::vector<std::string> words) {
    words.insert(words.begin(), {CliPath(), "--address=" + server_->address()});
    return RunCommand(words);
  }

  // Runs it and expects success; returns stdout.
  std::string Ok(std::vector<std::string> words) {
    CommandResult result = Cli(words);
    EXPECT_EQ(result.exit_code, 0) << words[0] << ": " << result.err;
    EXPECT_EQ(result.err, "");
    return result.out;
  }

  std::unique_ptr<ServerProcess> server_;
};

TEST_F(CliTest, EverySubcommandRunsAndPrintsItsResult) {
  EXPECT_EQ(Ok({"scene", "list"}), "no scenes\n");
  EXPECT_TRUE(absl::StrContains(Ok({"scene", "create", "arena", "--durability=periodic",
                                    "--max_bodies=10", "--fat_margin=0.5"}),
                                "created scene arena (durability periodic, max_bodies 10"));
  EXPECT_TRUE(absl::StrContains(Ok({"scene", "create", "scratch"}), "created scene scratch"));
  EXPECT_TRUE(
      absl::StrContains(Ok({"body", "add", "arena", "--id=1", "--sphere=0.5", "--pos=0,0,5"}),
                        "upserted body 1 into arena: version 1"));
  Ok({"body", "add", "arena", "--id=2", "--box=1,1,1", "--pos=0,0,10", "--rot=0,0,0,1",
      "--category=2", "--user_data=9"});
  Ok({"body", "add", "arena", "--id=3", "--capsule=0.5,1", "--pos=4,0,0", "--static"});
  EXPECT_TRUE(absl::StrContains(Ok({"body", "move", "arena", "--id=1", "--pos=0,0,4"}),
                                "moved body 1 in arena: version 4"));

  std::string ray = Ok({"raycast", "arena", "--from=0,0,0", "--dir=0,0,1"});
  EXPECT_TRUE(absl::StartsWith(ray, "version 4: 1 hit\n")) << ray;
  EXPECT_TRUE(absl::StrContains(ray, "body 1  distance 3.5  point (0, 0, 3.5)  normal (0, 0, -1)"))
      << ray;
  ray = Ok({"raycast", "arena", "--from=0,0,0", "--dir=0,0,1", "--all", "--mask=2"});
  EXPECT_TRUE(absl::StrContains(ray, "body 2  distance 9")) << ray;
  EXPECT_FALSE(absl::StrContains(ray, "body 1 ")) << ray;
  EXPECT_TRUE(absl::StrContains(
      Ok({"spherecast", "arena", "--from=4,0,-5", "--dir=0,0,1", "--radius=0.5", "--max=20"}),
      "body 3  distance 4"));
  std::string overlap = Ok({"overlap", "arena", "--sphere=2.5", "--pos=2,0,2", "--detail"});
  EXPECT_TRUE(absl::StrContains(overlap, "2 hits")) << overlap;
  EXPECT_TRUE(absl::StrContains(overlap, "body 1  depth")) << overlap;
  EXPECT_TRUE(absl::StrContains(overlap, "body 3  depth")) << overlap;
  std::string point = Ok({"point", "arena", "--at=0,0,0", "--radius=4"});
  EXPECT_TRUE(absl::StrContains(point, "body 1  distance 3.5")) << point;
  EXPECT_TRUE(absl::StrContains(point, "body 3  distance 3.5")) << point;
  std::string aabb = Ok({"aabb", "arena", "--min=-1,-1,8", "--max=1,1,12"});
  EXPECT_EQ(aabb, "version 4: 1 hit\n  body 2\n");

  std::string bodies = Ok({"body", "get", "arena", "--id=2,7"});
  EXPECT_TRUE(absl::StrContains(bodies, "body 2  box half_extents (1, 1, 1)  position (0, 0, 10)"))
      << bodies;
  EXPECT_TRUE(absl::StrContains(bodies, "category 0x2")) << bodies;
  EXPECT_TRUE(absl::StrContains(bodies, "user_data 9")) << bodies;
  EXPECT_TRUE(absl::StrContains(bodies, "missing: 7")) << bodies;
  std::string scene = Ok({"scene", "get", "arena"});
  EXPECT_TRUE(absl::StrContains(scene, "version      4")) << scene;
  EXPECT_TRUE(absl::StrContains(scene, "bodies       3 (1 static)")) << scene;
  EXPECT_TRUE(absl::StrContains(Ok({"body", "remove", "arena", "--id=2,3"}),
                                "removed 2 bodies (2, 3) from arena: version 5"));
  EXPECT_TRUE(absl::StrContains(Ok({"scene", "delete", "scratch"}), "deleted scene scratch"));
  std::string list = Ok({"scene", "list"});
  EXPECT_TRUE(absl::StartsWith(list, "arena  version 5  bodies 1 (0 static)")) << list;
}

TEST_F(CliTest, JsonOutputIsTheResponseMessage) {
  Ok({"scene", "create", "arena"});
  Ok({"body", "add", "arena", "--id=7", "--sphere=1", "--pos=10,0,0"});
  std::string text = Ok({"--json", "raycast", "arena", "--from=0,0,0", "--dir=1,0,0"});
  v1::QueryResponse response;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(text, &response).ok()) << text;
  EXPECT_EQ(response.version(), 1u);
  ASSERT_EQ(response.hits_size(), 1);
  EXPECT_EQ(response.hits(0).body_id(), 7u);
  EXPECT_FLOAT_EQ(response.hits(0).distance(), 9.0f);

  text = Ok({"scene", "list", "--json"});
  v1::ListScenesResponse scenes;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(text, &scenes).ok()) << text;
  ASSERT_EQ(scenes.scenes_size(), 1);
  EXPECT_EQ(scenes.scenes(0).name(), "arena");

  text = Ok({"body", "get", "arena", "--json"});
  v1::GetBodiesResponse bodies;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(text, &bodies).ok()) << text;
  ASSERT_EQ(bodies.bodies_size(), 1);
  EXPECT_EQ(bodies.bodies(0).id(), 7u);
}

TEST_F(CliTest, ErrorsPrintTheCodeAndMessageAndExitNonZero) {
  Ok({"scene", "create", "arena"});
  CommandResult result = Cli({"raycast", "arena", "--from=0,0,0", "--dir=0,0,0"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(absl::StartsWith(result.err, "error: INVALID_ARGUMENT: ray.direction")) << result.err;
  EXPECT_EQ(result.out, "");

  result = Cli({"scene", "get", "nowhere"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(absl::StartsWith(result.err, "error: NOT_FOUND: scene")) << result.err;

  result = Cli({"body", "move", "arena", "--id=5", "--pos=1,2,3"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(absl::StartsWith(result.err, "error: NOT_FOUND: ops[0].set_pose")) << result.err;

  // A bad command line is found before any call: exit 2.
  result = Cli({"raycast", "arena", "--from=0,0", "--dir=0,0,1"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(absl::StartsWith(result.err, "error: INVALID_ARGUMENT: --from")) << result.err;
  result = Cli({"body", "add", "arena", "--id=1"});
  EXPECT_EQ(result.exit_code, 2);
  result = Cli({"frobnicate"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(result.err, "unknown command")) << result.err;
}

TEST_F(CliTest, HelpExplainsEachCommand) {
  CommandResult help = RunCommand({CliPath(), "--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* command :
       {"scene create", "scene delete", "scene list", "scene get", "body add", "body move",
        "body remove", "body get", "raycast", "spherecast", "overlap", "point", "aabb"}) {
    EXPECT_TRUE(absl::StrContains(help.out, command)) << command;
  }
  CommandResult raycast = RunCommand({CliPath(), "help", "raycast"});
  EXPECT_EQ(raycast.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(raycast.out, "usage: collide raycast SCENE")) << raycast.out;
  EXPECT_TRUE(absl::StrContains(raycast.out, "--from=X,Y,Z")) << raycast.out;
  CommandResult add = RunCommand({CliPath(), "body", "add", "--help"});
  EXPECT_EQ(add.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(add.out, "--capsule=R,HALF_HEIGHT")) << add.out;
}

TEST_F(CliTest, TheAddressComesFromCollideAddressWhenNotGiven) {
  CommandResult result = RunCommand({CliPath(), "scene", "create", "arena"},
                                    {"COLLIDE_ADDRESS=" + server_->address()});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StrContains(result.out, "created scene arena"));
}

}  // namespace
}  // namespace collide::integration
