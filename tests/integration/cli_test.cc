// The collide command-line client against the real server: every subcommand, human-readable
// and JSON output, errors as `error: <CODE>: <message>` with a non-zero exit (JSON on stderr
// with --json), COLLIDE_ADDRESS, both flag forms, help everywhere, bad input, --version; the
// queries' --pos (and --at), --at_tick and --min_version; suggestions for a typo.

#include <chrono>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/cpp/builders.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
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
  std::string point = Ok({"point", "arena", "--pos=0,0,0", "--radius=4"});
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

TEST_F(CliTest, FlagsTakeTheirValueAfterASpaceOrAnEqualsSign) {
  Ok({"scene", "create", "arena"});
  EXPECT_TRUE(absl::StrContains(
      Ok({"body", "add", "arena", "--id", "1", "--sphere", "0.5", "--pos", "-1,0,5"}),
      "upserted body 1 into arena"));
  Ok({"body", "add", "arena", "--id=2", "--sphere=0.5", "--pos=-1,0,9"});
  // Global flags anywhere on the line, in either form.
  std::string ray = Ok({"raycast", "--json", "arena", "--from", "-1,0,0", "--dir=0,0,1"});
  v1::QueryResponse response;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ray, &response).ok()) << ray;
  ASSERT_EQ(response.hits_size(), 1);
  EXPECT_EQ(response.hits(0).body_id(), 1u);
  CommandResult result =
      RunCommand({CliPath(), "scene", "list", "--address", server_->address(), "--timeout", "5"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StartsWith(result.out, "arena  version 2")) << result.out;
}

TEST_F(CliTest, EveryCommandHasHelpAndAGroupAloneListsItsVerbs) {
  for (std::vector<std::string> command : {std::vector<std::string>{"scene", "create"},
                                           {"scene", "delete"},
                                           {"scene", "list"},
                                           {"scene", "get"},
                                           {"body", "add"},
                                           {"body", "move"},
                                           {"body", "remove"},
                                           {"body", "get"},
                                           {"raycast"},
                                           {"spherecast"},
                                           {"overlap"},
                                           {"point"},
                                           {"aabb"},
                                           {"watch"},
                                           {"interest"},
                                           {"stats"},
                                           {"health"},
                                           {"mesh", "upload"},
                                           {"mesh", "list"},
                                           {"mesh", "delete"}}) {
    std::string name = absl::StrJoin(command, " ");
    for (const char* help : {"--help", "-h"}) {
      std::vector<std::string> words = {CliPath()};
      words.insert(words.end(), command.begin(), command.end());
      words.push_back(help);
      CommandResult result = RunCommand(words);
      EXPECT_EQ(result.exit_code, 0) << name << " " << help << ": " << result.err;
      EXPECT_TRUE(absl::StartsWith(result.out, "usage: collide " + name)) << result.out;
    }
  }
  for (const char* group : {"scene", "body"}) {
    CommandResult alone = RunCommand({CliPath(), group});
    EXPECT_EQ(alone.exit_code, 2);
    EXPECT_EQ(alone.out, "");
    EXPECT_TRUE(absl::StrContains(alone.err, absl::StrCat("  ", group, " get SCENE"))) << alone.err;
    CommandResult help = RunCommand({CliPath(), group, "--help"});
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_EQ(help.out, alone.err);
    CommandResult via_help = RunCommand({CliPath(), "help", group});
    EXPECT_EQ(via_help.exit_code, 0);
    EXPECT_EQ(via_help.out, alone.err);
  }
  CommandResult help = RunCommand({CliPath(), "-h"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* command : {"watch SCENE", "interest SCENE", "stats", "health"}) {
    EXPECT_TRUE(absl::StrContains(help.out, command)) << command;
  }
}

TEST_F(CliTest, VersionNamesTheProjectVersion) {
  CommandResult result = RunCommand({CliPath(), "--version"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StartsWith(result.out, "collide " COLLIDE_TEST_VERSION " (")) << result.out;
  EXPECT_TRUE(absl::StrContains(result.out, " build)")) << result.out;
}

// A --json error: one JSON object on stderr, nothing on stdout, a non-zero exit.
void ExpectJsonError(const CommandResult& result, int exit_code, absl::string_view code) {
  EXPECT_EQ(result.exit_code, exit_code) << result.err;
  EXPECT_EQ(result.out, "");
  google::protobuf::Struct error;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(result.err, &error).ok()) << result.err;
  const google::protobuf::Struct& fields = error.fields().at("error").struct_value();
  EXPECT_EQ(fields.fields().at("code").string_value(), code) << result.err;
  EXPECT_FALSE(fields.fields().at("message").string_value().empty()) << result.err;
}

TEST_F(CliTest, JsonErrorsAreJsonOnStderr) {
  ExpectJsonError(Cli({"--json", "scene", "get", "nowhere"}), 1, "NOT_FOUND");
  ExpectJsonError(Cli({"scene", "get", "nowhere", "--json"}), 1, "NOT_FOUND");
  ExpectJsonError(Cli({"--json", "raycast", "arena", "--bogus"}), 2, "INVALID_ARGUMENT");
  ExpectJsonError(Cli({"--json", "raycast", "arena", "--from"}), 2, "INVALID_ARGUMENT");
  ExpectJsonError(Cli({"--json", "frobnicate"}), 2, "INVALID_ARGUMENT");
  ExpectJsonError(Cli({"--json", "body", "get", "arena", "--id=\"x\\\n"}), 2, "INVALID_ARGUMENT");
}

TEST_F(CliTest, BadInputGivesAClearErrorAndAnExitCodeNotACrash) {
  Ok({"scene", "create", "arena"});
  struct Case {
    std::vector<std::string> words;
    int exit_code;
    std::string error;
  };
  const std::string max64 = "18446744073709551615";
  const std::string over64 = "18446744073709551616";
  for (const Case& bad : std::vector<Case>{
           {{"raycast", "arena", "--from=0,0,0", "--dir=0,0,1", "--bogus"},
            2,
            "--bogus: not a flag"},
           {{"raycast", "arena", "--from=0,0,0", "--dir"}, 2, "--dir"},
           {{"body", "add", "arena", "--id"}, 2, "--id"},
           {{"raycast", "arena", "--from=nan,0,0", "--dir=0,0,1"}, 1, "INVALID_ARGUMENT: ray"},
           {{"raycast", "arena", "--from=0,0,0", "--dir=0,0,1", "--max=nan"},
            1,
            "INVALID_ARGUMENT"},
           {{"raycast", "arena", "--from=0,0,0", "--dir=0,0,1", "--max=x"}, 2, "--max"},
           {{"body", "add", "arena", "--id=1", "--sphere=0.5", "--category=" + max64},
            2,
            "--category: at most 4294967295"},
           {{"body", "add", "arena", "--id=" + over64, "--sphere=0.5"}, 2, "--id"},
           {{"body", "add", "arena", "--id=-1", "--sphere=0.5"}, 2, "--id"},
           {{"scene", "create", "big", "--max_bodies=" + max64}, 2, "--max_bodies"},
           {{"scene", "create", "old", "--history_ticks=" + max64}, 2, "--history_ticks"},
           {{"scene", "create", "old", "--history_ticks=ten"}, 2, "--history_ticks"},
           {{"raycast", "arena", "--from=0,0,0", "--dir=0,0,1", "--max_hits=" + max64},
            2,
            "--max_hits"},
           {{"watch", "arena", "--fence=1:sphere=nan"}, 2, "--fence"},
           {{"watch", "arena", "--fence=" + over64 + ":sphere=1"}, 2, "--fence"},
           {{"watch", "arena", "--fence=1:cube=1"}, 2, "--fence"},
           {{"watch", "arena", "--fence"}, 2, "--fence"},
           {{"watch", "arena"}, 2, "--fence"},
           {{"watch", "arena", "--fence=1:sphere=1", "--count=-1"}, 2, "--count"},
           {{"watch", "nowhere", "--fence=1:sphere=1"}, 1, "NOT_FOUND: scene"},
           {{"interest", "arena", "--observer=1:nan"}, 2, "--observer"},
           {{"interest", "arena", "--observer=" + over64 + ":1"}, 2, "--observer"},
           {{"interest", "arena", "--observer=-1:1"}, 2, "--observer"},
           {{"interest", "arena", "--observer=1:1,2,3"}, 2, "--observer"},
           {{"interest", "arena", "--observer=1:1@0,0"}, 2, "--observer"},
           {{"interest", "arena", "--observer=1:1/x"}, 2, "--observer"},
           {{"interest", "arena"}, 2, "--observer"},
           {{"interest", "arena", "--observer=1:1", "--max=" + max64}, 2, "--max"},
           {{"interest", "arena", "--observer=1:1", "--count=-1"}, 2, "--count"},
           {{"interest", "arena", "--observer=1:5,4"},
            1,
            "INVALID_ARGUMENT: messages[0].observers[0].leave_radius"},
           {{"interest", "nowhere", "--observer=1:1"}, 1, "NOT_FOUND: scene"},
           {{"body", "move", "nowhere", "--id=1", "--pos=0,0,0"}, 1, "NOT_FOUND: scene"},
           {{"scene", "create", "late", "--timeout=nan"}, 2, "--timeout"},
           {{"scene", "get"}, 2, "usage: collide scene get SCENE"},
           {{"scene", "get", "a", "b"}, 2, "usage"},
           {{"stats", "extra"}, 2, "unexpected argument"},
           {{"stats", "--max_scenes=-1"}, 2, "--max_scenes"},
           {{"stats", "--max_scenes=4294967296"}, 2, "--max_scenes"},
           {{"stats", "--max_scenes=many"}, 2, "--max_scenes"},
           {{"scene", "list", "--shards="}, 2, "--shards"},
           {{"scene", "list", "--shards=,"}, 2, "--shards: expected comma-separated"},
           {{"scene", "list", "--shards"}, 2, "--shards"},
           {{"scene", "list", "--shards=" + server_->address() + ",,"}, 2, "--shards: expected"},
           {{"scene", "list", "--shards=" + server_->address() + "," + server_->address()},
            2,
            "is named twice"},
           // The new query flags at their edges: a clear answer from the CLI or the server.
           {{"raycast", "arena", "--from=0,0,0", "--dir=0,0,1", "--at_tick=" + over64},
            2,
            "--at_tick"},
           {{"raycast", "arena", "--from=0,0,0", "--dir=0,0,1", "--at_tick=" + max64},
            1,
            "OUT_OF_RANGE: at_tick"},
           {{"point", "arena", "--pos=0,0,0", "--radius=1", "--at_tick=" + max64},
            1,
            "OUT_OF_RANGE: queries[0].at_tick"},
           {{"overlap", "arena", "--sphere=1", "--at_tick=0", "--tick_fraction=nan"},
            1,
            "INVALID_ARGUMENT: tick_fraction"},
           {{"spherecast", "arena", "--from=0,0,0", "--dir=0,0,1", "--radius=1",
             "--min_version=-1"},
            2,
            "--min_version"},
           {{"aabb", "arena", "--min=0,0,0", "--max=1,1,1", "--min_version=" + over64},
            2,
            "--min_version"},
       }) {
    CommandResult result = Cli(bad.words);
    std::string line = absl::StrJoin(bad.words, " ");
    EXPECT_EQ(result.exit_code, bad.exit_code) << line << ": " << result.err;
    EXPECT_TRUE(absl::StartsWith(result.err, "error: ")) << line << ": " << result.err;
    EXPECT_TRUE(absl::StrContains(result.err, bad.error)) << line << ": " << result.err;
    EXPECT_EQ(result.out, "") << line;
  }
  // A body id of 2^64-1 is an id like any other.
  EXPECT_TRUE(
      absl::StrContains(Ok({"body", "get", "arena", "--id=" + max64}), "missing: " + max64));
}

// scene list --shards asks each server named (here one) and starts every line with it.
TEST_F(CliTest, SceneListShardsNamesTheShardOfEveryScene) {
  const std::string shards = "--shards=" + server_->address();
  EXPECT_EQ(Ok({"scene", "list", shards}), "no scenes\n");
  Ok({"scene", "create", "b"});
  Ok({"scene", "create", "a"});
  std::string text = Ok({"scene", "list", shards});
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << text;
  EXPECT_TRUE(absl::StartsWith(lines[0], server_->address() + "  a  version ")) << text;
  EXPECT_TRUE(absl::StartsWith(lines[1], server_->address() + "  b  version ")) << text;
  std::string json = Ok({"--json", "scene", "list", shards});
  EXPECT_TRUE(absl::StartsWith(json, "{\"shards\":[{\"shard\":\"" + server_->address() +
                                         "\",\"scenes\":{\"scenes\":[{\"name\":\"a\""))
      << json;
}

// scene list --shards with a shard down: the others are listed, the missing one named, and the
// command fails (exit 1) so that a script sees the list is incomplete.
TEST_F(CliTest, SceneListShardsListsWhatItReachesAndNamesWhatItCannot) {
  Ok({"scene", "create", "a"});
  const std::string down = "127.0.0.1:1";
  CommandResult result = Cli({"scene", "list", "--shards=" + server_->address() + "," + down});
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_TRUE(absl::StartsWith(result.out, server_->address() + "  a  version ")) << result.out;
  EXPECT_TRUE(absl::StrContains(result.err, "error: UNAVAILABLE: shard " + down + ": "))
      << result.err;
  EXPECT_TRUE(absl::StrContains(result.err, "the scenes of the other shards are listed"))
      << result.err;
  CommandResult json =
      Cli({"--json", "scene", "list", "--shards=" + down + "," + server_->address()});
  EXPECT_EQ(json.exit_code, 1) << json.err;
  EXPECT_TRUE(absl::StartsWith(
      json.out, "{\"shards\":[{\"shard\":\"" + down + "\",\"error\":\"UNAVAILABLE: "))
      << json.out;
  EXPECT_TRUE(absl::StrContains(json.out, "{\"shard\":\"" + server_->address() +
                                              "\",\"scenes\":{\"scenes\":[{\"name\":\"a\""))
      << json.out;
  // Every shard down: nothing listed, each named.
  CommandResult none = Cli({"scene", "list", "--shards=" + down + ",127.0.0.1:2"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.out, "");
  EXPECT_TRUE(absl::StrContains(none.err, "unreachable shards: shard " + down + ": ")) << none.err;
  EXPECT_TRUE(absl::StrContains(none.err, "shard 127.0.0.1:2: ")) << none.err;
}

TEST_F(CliTest, StatsShowsEveryFieldOfGetServerStats) {
  Ok({"scene", "create", "arena"});
  Ok({"scene", "create", "bravo"});
  Ok({"body", "add", "arena", "--id=1", "--sphere=0.5", "--pos=0,0,5"});
  Ok({"body", "add", "arena", "--id=2", "--sphere=0.5", "--pos=0,0,9", "--static"});
  std::string text = Ok({"stats"});
  const google::protobuf::Descriptor* descriptor = v1::GetServerStatsResponse::descriptor();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const std::string& name = descriptor->field(i)->name();
    if (name == "write_error") continue;  // shown only when there is one
    // The scene list is a table under its own heading line.
    const std::string after =
        descriptor->field(i)->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE ? "\n"
                                                                                        : " ";
    EXPECT_TRUE(absl::StrContains(text, "\n" + name + after) ||
                absl::StartsWith(text, name + after))
        << name << "\n"
        << text;
  }
  // Every column of a scene's row is named in the table's header.
  const google::protobuf::Descriptor* scene = v1::ServerSceneStats::descriptor();
  for (int i = 0; i < scene->field_count(); ++i) {
    EXPECT_TRUE(absl::StrContains(text, scene->field(i)->name())) << scene->field(i)->name();
  }
  EXPECT_TRUE(absl::StrContains(text, "\nscenes                   2\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "\nwritable                 yes\n")) << text;
  EXPECT_TRUE(absl::StartsWith(text, "server_version           " COLLIDE_TEST_VERSION "\n"))
      << text;
  // arena: 2 bodies, 1 static, version 2 (two upserts); bravo: empty, version 0.
  const std::vector<std::string> lines = absl::StrSplit(text, '\n');
  auto row_of = [&lines](absl::string_view name) -> std::vector<std::string> {
    for (const std::string& line : lines) {
      std::vector<std::string> cells = absl::StrSplit(line, ' ', absl::SkipEmpty());
      if (!cells.empty() && cells[0] == name) return cells;
    }
    return {};
  };
  std::vector<std::string> arena = row_of("arena");
  ASSERT_EQ(arena.size(), 12u) << text;
  EXPECT_EQ(arena[1], "2") << text;
  EXPECT_EQ(arena[2], "1") << text;
  EXPECT_EQ(arena[3], "2") << text;
  EXPECT_NE(arena[5], "0") << text;  // memory_bytes
  EXPECT_NE(arena[7], "0") << text;  // log_bytes: two records since no snapshot
  EXPECT_EQ(arena[8], "0") << text;  // asset_count: no asset uploaded
  std::vector<std::string> bravo = row_of("bravo");
  ASSERT_EQ(bravo.size(), 12u) << text;
  EXPECT_EQ(bravo[1], "0") << text;
  EXPECT_EQ(bravo[3], "0") << text;
  EXPECT_TRUE(absl::StrContains(text, "\nscenes_omitted           0\n")) << text;

  std::string json = Ok({"stats", "--json"});
  v1::GetServerStatsResponse stats;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &stats).ok()) << json;
  EXPECT_EQ(stats.scenes(), 2u);
  EXPECT_TRUE(stats.writable());
  EXPECT_EQ(stats.server_version(), COLLIDE_TEST_VERSION);
  EXPECT_GT(stats.resident_memory_bytes(), 0u);
  EXPECT_GT(stats.start_time_unix_seconds(), 0);
  ASSERT_EQ(stats.scene_stats_size(), 2) << json;
  EXPECT_EQ(stats.scene_stats(0).name(), "arena");
  EXPECT_EQ(stats.scene_stats(0).body_count(), 2u);
  EXPECT_EQ(stats.scene_stats(0).static_body_count(), 1u);
  EXPECT_EQ(stats.scene_stats(1).name(), "bravo");
  for (int i = 0; i < descriptor->field_count(); ++i) {
    EXPECT_TRUE(absl::StrContains(json, "\"" + descriptor->field(i)->name() + "\":")) << json;
  }

  // --max_scenes bounds the list; the rest is counted.
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(Ok({"stats", "--json", "--max_scenes=1"}), &stats)
          .ok());
  ASSERT_EQ(stats.scene_stats_size(), 1);
  EXPECT_EQ(stats.scene_stats(0).name(), "arena");
  EXPECT_EQ(stats.scenes_omitted(), 1u);
  text = Ok({"stats", "--max_scenes=0"});
  EXPECT_FALSE(absl::StrContains(text, "\nscene_stats\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "\nscenes_omitted           2\n")) << text;
}

TEST_F(CliTest, HealthIsServingOnlyWhenTheServerSaysSo) {
  CommandResult result = Cli({"health"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "SERVING\n");
  EXPECT_EQ(Ok({"health", "--json"}), "{\"status\":\"SERVING\"}\n");
  EXPECT_EQ(Ok({"health", "--service=collide.v1.Collide"}), "SERVING\n");

  result = Cli({"health", "--service=no.such.Service"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(absl::StartsWith(result.err, "error: NOT_FOUND")) << result.err;

  // Nothing listening: not serving, a non-zero exit.
  std::string address = server_->address();
  server_.reset();
  result = RunCommand({CliPath(), "--address=" + address, "--timeout=2", "health"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_TRUE(absl::StartsWith(result.err, "error: UNAVAILABLE")) << result.err;
}

TEST_F(CliTest, WatchPrintsTheSnapshotThenEventsUntilCount) {
  Ok({"scene", "create", "arena"});
  Ok({"body", "add", "arena", "--id=1", "--sphere=0.5", "--pos=0,0,0"});
  std::future<CommandResult> watch = std::async(std::launch::async, [this] {
    return Cli({"watch", "arena", "--fence", "1:sphere=2@0,0,0", "--fence=2:box=1,1,1@0,0,50",
                "--count", "2"});
  });
  // Body 2 goes in and out of fence 1 until the watch has seen its two events.
  bool inside = false;
  for (int i = 0;
       i < 400 && watch.wait_for(std::chrono::milliseconds(25)) != std::future_status::ready; ++i) {
    inside = !inside;
    Ok({"body", "add", "arena", "--id=2", "--sphere=0.5", inside ? "--pos=1,0,0" : "--pos=9,0,0"});
  }
  ASSERT_EQ(watch.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  CommandResult result = watch.get();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  std::vector<std::string> lines = absl::StrSplit(result.out, '\n', absl::SkipEmpty());
  ASSERT_GE(lines.size(), 5u) << result.out;
  EXPECT_TRUE(absl::StartsWith(lines[0], "snapshot version ")) << result.out;
  EXPECT_TRUE(absl::StrContains(lines[1], "fence 1: bodies 1")) << result.out;
  EXPECT_EQ(lines[2], "  fence 2: empty") << result.out;
  // Exactly --count events, body 2 entering then leaving (or leaving then entering, when the
  // snapshot already held it).
  ASSERT_EQ(lines.size(), 5u) << result.out;
  EXPECT_TRUE(absl::StrContains(lines[3], "fence 1  body 2")) << result.out;
  EXPECT_TRUE(absl::StrContains(lines[4], "fence 1  body 2")) << result.out;
  EXPECT_NE(absl::StrContains(lines[3], "enter"), absl::StrContains(lines[4], "enter"))
      << result.out;
}

TEST_F(CliTest, InterestPrintsTheSetsThenDeltasUntilCount) {
  Ok({"scene", "create", "arena"});
  Ok({"body", "add", "arena", "--id=1", "--sphere=0.5", "--pos=0,0,0"});
  Ok({"body", "add", "arena", "--id=3", "--sphere=0.5", "--pos=40,0,0"});
  std::future<CommandResult> interest = std::async(std::launch::async, [this] {
    return Cli(
        {"interest", "arena", "--observer", "1:2,3@0,0,0", "--observer=2:5/3", "--count", "2"});
  });
  // Body 2 comes near observer 1 and goes away until the stream has shown two deltas.
  bool inside = false;
  for (int i = 0;
       i < 400 && interest.wait_for(std::chrono::milliseconds(25)) != std::future_status::ready;
       ++i) {
    inside = !inside;
    Ok({"body", "add", "arena", "--id=2", "--sphere=0.5", inside ? "--pos=1,0,0" : "--pos=9,0,0"});
  }
  ASSERT_EQ(interest.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  CommandResult result = interest.get();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  std::vector<std::string> lines = absl::StrSplit(result.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 5u) << result.out;
  EXPECT_TRUE(absl::StartsWith(lines[0], "snapshot version ")) << result.out;
  EXPECT_TRUE(absl::StrContains(lines[1], "observer 1: bodies 1")) << result.out;
  EXPECT_EQ(lines[2], "  observer 2: empty") << result.out;
  // Exactly --count deltas of observer 1, body 2 entering then leaving (or the other way round
  // when the snapshot already held it).
  EXPECT_TRUE(absl::StrContains(lines[3], "observer 1  ")) << result.out;
  EXPECT_TRUE(absl::StrContains(lines[4], "observer 1  ")) << result.out;
  EXPECT_NE(absl::StrContains(lines[3], "entered 2  left none"),
            absl::StrContains(lines[4], "entered 2  left none"))
      << result.out;
  EXPECT_NE(absl::StrContains(lines[3], "entered none  left 2"),
            absl::StrContains(lines[4], "entered none  left 2"))
      << result.out;
}

TEST_F(CliTest, SceneCreateSetsHistoryTicks) {
  EXPECT_TRUE(absl::StrContains(Ok({"scene", "create", "arena", "--history_ticks", "8"}),
                                "history_ticks 8)"));
  v1::GetSceneResponse scene;
  std::string json = Ok({"scene", "get", "arena", "--json"});
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &scene).ok()) << json;
  EXPECT_EQ(scene.scene().options().history_ticks(), 8u);
}

TEST_F(CliTest, BodyMoveKeepsTheRotationUnlessRotIsGiven) {
  Ok({"scene", "create", "arena"});
  Ok({"body", "add", "arena", "--id=1", "--box=1,2,3", "--rot=0,0,0.6,0.8"});
  Ok({"body", "move", "arena", "--id=1", "--pos=5,0,0"});
  std::string body = Ok({"body", "get", "arena", "--id=1"});
  EXPECT_TRUE(absl::StrContains(body, "position (5, 0, 0)  rotation (0, 0, 0.6, 0.8)")) << body;
  Ok({"body", "move", "arena", "--id=1", "--pos=6,0,0", "--rot=0,0,0,1"});
  body = Ok({"body", "get", "arena", "--id=1"});
  EXPECT_TRUE(absl::StrContains(body, "position (6, 0, 0)  rotation (0, 0, 0, 1)")) << body;
}

TEST_F(CliTest, NegativeZeroIsNeverPrinted) {
  Ok({"scene", "create", "arena"});
  Ok({"body", "add", "arena", "--id=1", "--sphere=0.5", "--pos=-0,-0,5", "--rot=-0,-0,-0,1"});
  std::string text = Ok({"body", "get", "arena"});
  EXPECT_TRUE(absl::StrContains(text, "position (0, 0, 5)  rotation (0, 0, 0, 1)")) << text;
  EXPECT_FALSE(absl::StrContains(text, "-0")) << text;
  std::string json = Ok({"body", "get", "arena", "--json"});
  EXPECT_FALSE(absl::StrContains(json, "-0")) << json;
  std::string ray = Ok({"raycast", "arena", "--from=-0,-0,0", "--dir=-0,-0,1"});
  EXPECT_FALSE(absl::StrContains(ray, "-0")) << ray;
  ray = Ok({"raycast", "arena", "--from=-0,-0,0", "--dir=-0,-0,1", "--json"});
  EXPECT_FALSE(absl::StrContains(ray, "-0")) << ray;
}

TEST_F(CliTest, TheAddressComesFromCollideAddressWhenNotGiven) {
  CommandResult result = RunCommand({CliPath(), "scene", "create", "arena"},
                                    {"COLLIDE_ADDRESS=" + server_->address()});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StrContains(result.out, "created scene arena"));
}

// --pos is the position of every query command that takes one (point, overlap); --at, point's
// earlier spelling, is accepted on both.
TEST_F(CliTest, QueryPositionsTakePosAndTheOlderAt) {
  Ok({"scene", "create", "arena"});
  Ok({"body", "add", "arena", "--id=1", "--sphere=0.5", "--pos=0,0,5"});
  for (const char* flag : {"--pos", "--at"}) {
    SCOPED_TRACE(flag);
    std::string point = Ok({"point", "arena", absl::StrCat(flag, "=0,0,0"), "--radius=6"});
    EXPECT_TRUE(absl::StrContains(point, "body 1  distance 4.5")) << point;
    std::string overlap = Ok({"overlap", "arena", "--sphere=1", absl::StrCat(flag, "=0,0,5")});
    EXPECT_TRUE(absl::StrContains(overlap, "1 hit")) << overlap;
    overlap = Ok({"overlap", "arena", "--sphere=1", flag, "0,0,-5"});
    EXPECT_TRUE(absl::StrContains(overlap, "no hits")) << overlap;
  }
  std::string help = Ok({"help", "point"});
  EXPECT_TRUE(absl::StrContains(help, "--pos=X,Y,Z")) << help;
  EXPECT_TRUE(absl::StrContains(help, "(also --at)")) << help;
}

// --at_tick, --tick_fraction and --min_version on every query command map to the requests'
// fields: a query at a past tick sees the body where it was then.
TEST_F(CliTest, QueriesTakeAtTickTickFractionAndMinVersion) {
  Ok({"scene", "create", "arena", "--history_ticks=8"});
  auto client = server_->NewClient();
  for (uint64_t tick = 1; tick <= 3; ++tick) {
    v1::UpdateBatch batch;
    batch.set_scene("arena");
    batch.set_tick(tick);
    const v1::Pose pose =
        client::MakePose(client::MakeVec3(static_cast<float>(tick) * 10.0f, 0, 0));
    if (tick == 1) {
      *batch.add_ops() = client::MakeUpsertOp(client::MakeBody(1, client::MakeSphere(0.5f), pose));
    } else {
      batch.mutable_moves()->add_ids(1);
      for (float v : {pose.position().x(), 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f}) {
        batch.mutable_moves()->add_poses(v);
      }
    }
    auto writer = client->OpenUpdateStream("arena", 0);
    ASSERT_TRUE(IsOk(writer));
    auto ack = (*writer)->Apply(batch);
    ASSERT_TRUE(IsOk(ack));
    ASSERT_FALSE(ack->has_error()) << ack->error().message();
  }
  // Now at x = 30; at the end of tick 1 at x = 10; halfway to tick 2: x = 15.
  const std::vector<std::string> ray = {"--from=0,0,0", "--dir=1,0,0", "--max=100"};
  auto with = [&](std::vector<std::string> words, const std::vector<std::string>& more) {
    words.insert(words.end(), more.begin(), more.end());
    return Ok(words);
  };
  EXPECT_TRUE(absl::StrContains(with({"raycast", "arena"}, ray), "distance 29.5"));
  EXPECT_TRUE(absl::StrContains(with({"raycast", "arena", "--at_tick=1"}, ray), "distance 9.5"));
  const std::string between = with({"raycast", "arena", "--at_tick=1", "--tick_fraction=0.5"}, ray);
  EXPECT_TRUE(absl::StrContains(between, "distance 14.5")) << between;
  EXPECT_TRUE(absl::StrContains(with({"spherecast", "arena", "--radius=0.5", "--at_tick=2"}, ray),
                                "distance 19"));
  EXPECT_TRUE(absl::StrContains(
      Ok({"overlap", "arena", "--sphere=1", "--pos=10,0,0", "--at_tick=1"}), "1 hit"));
  EXPECT_TRUE(absl::StrContains(Ok({"overlap", "arena", "--sphere=1", "--pos=10,0,0"}), "no hits"));
  EXPECT_TRUE(absl::StrContains(Ok({"point", "arena", "--pos=10,0,0", "--radius=1", "--at_tick=1"}),
                                "body 1"));
  EXPECT_TRUE(absl::StrContains(
      Ok({"aabb", "arena", "--min=9,-1,-1", "--max=11,1,1", "--at_tick=1"}), "body 1"));
  // A version already reached answers at once; the scene is at version 3.
  EXPECT_TRUE(absl::StrContains(with({"raycast", "arena", "--min_version=3"}, ray), "version 3"));
  EXPECT_TRUE(absl::StrContains(
      Ok({"point", "arena", "--pos=30,0,0", "--radius=1", "--min_version=3"}), "version 3"));
  // One not reached waits, then ends with the deadline.
  CommandResult waited =
      Cli({"--timeout=0.3", "raycast", "arena", "--from=0,0,0", "--dir=1,0,0", "--min_version=9"});
  EXPECT_EQ(waited.exit_code, 1) << waited.err;
  EXPECT_TRUE(absl::StrContains(waited.err, "DEADLINE_EXCEEDED")) << waited.err;
}

// A mistyped flag or command names the nearest known one.
TEST_F(CliTest, ATypoGetsTheNearestFlagOrCommand) {
  Ok({"scene", "create", "arena"});
  struct Case {
    std::vector<std::string> words;
    std::string error;
  };
  for (const Case& typo : std::vector<Case>{
           {{"overlap", "arena", "--sphere=1", "--poss=0,0,0"}, "(did you mean --pos?)"},
           {{"raycast", "arena", "--form=0,0,0", "--dir=0,0,1"}, "(did you mean --from?)"},
           {{"raycast", "arena", "--from=0,0,0", "--dir=0,0,1", "--max_hit=3"},
            "(did you mean --max_hits?)"},
           {{"raycast", "arena", "--from=0,0,0", "--dir=0,0,1", "--jsno"},
            "(did you mean --json?)"},
           {{"raycats", "arena"}, "unknown command \"raycats\" (did you mean raycast?)"},
           {{"scene", "craete", "x"}, "(did you mean create?)"},
           {{"help", "overlpa"}, "(did you mean overlap?)"},
           {{"--adress=x", "scene", "list"}, "(did you mean --address?)"},
       }) {
    CommandResult result = Cli(typo.words);
    const std::string line = absl::StrJoin(typo.words, " ");
    EXPECT_EQ(result.exit_code, 2) << line << ": " << result.err;
    EXPECT_TRUE(absl::StrContains(result.err, typo.error)) << line << ": " << result.err;
  }
  // Nothing near: no suggestion.
  CommandResult far = Cli({"raycast", "arena", "--from=0,0,0", "--dir=0,0,1", "--zzzzzzzz"});
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_FALSE(absl::StrContains(far.err, "did you mean")) << far.err;
}

// An OBJ file's triangles uploaded as a mesh, listed, placed by a body, hit by a ray that names
// the triangle, refused deletion while placed, deleted once not; a file that is no mesh is a
// clear error.
TEST_F(CliTest, MeshUploadsAnObjFileThatBodiesPlaceAndRaysHitByTriangle) {
  Ok({"scene", "create", "arena"});
  const TempDir dir("cli-mesh");
  // A wall in the plane z = 0, 4 wide and 2 high: two triangles, (1 2 3) and (1 3 4).
  const std::string obj = dir.File("wall.obj");
  {
    std::ofstream out(obj);
    out << "# a wall\no wall\nv -2 0 0\nv 2 0 0\nv 2 2 0\nv -2 2 0\nvn 0 0 1\n"
        << "f 1//1 2//1 3//1\nf 1//1 3//1 4//1\n";
  }
  std::string uploaded = Ok({"mesh", "upload", "arena", "wall", obj});
  EXPECT_TRUE(
      absl::StartsWith(uploaded, "uploaded mesh wall into arena: 2 triangles, 4 vertices, sha256 "))
      << uploaded;
  // The same content again changes nothing.
  EXPECT_TRUE(absl::StartsWith(Ok({"mesh", "upload", "arena", "wall", obj}),
                               "mesh wall already in arena: 2 triangles"));
  std::string listed = Ok({"mesh", "list", "arena"});
  EXPECT_TRUE(absl::StartsWith(listed, "wall  mesh  2 triangles")) << listed;
  EXPECT_TRUE(absl::StrContains(listed, "bounds (-2, 0, 0) .. (2, 2, 0)")) << listed;
  EXPECT_TRUE(absl::StrContains(listed, "  0 bodies  sha256 ")) << listed;
  // Placed 5 along z, scaled by 2: the wall spans x in [-4, 4], y in [0, 4] at z = 5.
  Ok({"body", "add", "arena", "--id=7", "--mesh=wall", "--scale=2", "--pos=0,0,5", "--static"});
  std::string body = Ok({"body", "get", "arena", "--id=7"});
  EXPECT_TRUE(absl::StrContains(body, "mesh wall scale 2")) << body;
  // Seen from +z the quad's triangles are counter-clockwise (front faces): (3, 1) lies in the
  // first, (-4, 0) (4, 0) (4, 4) once scaled, and (-3, 3) in the second.
  std::string ray = Ok({"raycast", "arena", "--from=3,1,10", "--dir=0,0,-1"});
  EXPECT_TRUE(absl::StrContains(ray, "body 7  triangle 0  distance 5  point (3, 1, 5)")) << ray;
  ray = Ok({"raycast", "arena", "--from=-3,3,10", "--dir=0,0,-1"});
  EXPECT_TRUE(absl::StrContains(ray, "body 7  triangle 1  distance 5")) << ray;
  // From behind: two-sided, the back face said.
  ray = Ok({"raycast", "arena", "--from=3,1,0", "--dir=0,0,1"});
  EXPECT_TRUE(absl::StrContains(ray, "body 7  triangle 0  back_face  distance 5")) << ray;
  CommandResult used = Cli({"mesh", "delete", "arena", "wall"});
  EXPECT_NE(used.exit_code, 0);
  EXPECT_TRUE(absl::StartsWith(used.err, "error: FAILED_PRECONDITION: name")) << used.err;
  Ok({"body", "remove", "arena", "--id=7"});
  EXPECT_EQ(Ok({"mesh", "delete", "arena", "wall"}), "deleted asset wall of arena\n");
  EXPECT_EQ(Ok({"mesh", "list", "arena"}), "no assets\n");
  // Files that hold no mesh: a clear error, nothing uploaded.
  CommandResult missing = Cli({"mesh", "upload", "arena", "none", dir.File("missing.obj")});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_TRUE(absl::StartsWith(missing.err, "error: INVALID_ARGUMENT: ")) << missing.err;
  const std::string empty = dir.File("empty.obj");
  {
    std::ofstream out(empty);
    out << "v 0 0 0\n";
  }
  CommandResult no_faces = Cli({"mesh", "upload", "arena", "none", empty});
  EXPECT_NE(no_faces.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(no_faces.err, "no faces")) << no_faces.err;
  const std::string bad_index = dir.File("bad_index.obj");
  {
    std::ofstream out(bad_index);
    out << "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1e40 0 0\nf 1 2 4\n";
  }
  CommandResult bad = Cli({"mesh", "upload", "arena", "bad", bad_index});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_TRUE(absl::StartsWith(bad.err, "error: INVALID_ARGUMENT: vertices[3]")) << bad.err;
  EXPECT_EQ(Ok({"mesh", "list", "arena"}), "no assets\n");
  // A polygon is split into triangles by the loader: a quad makes two.
  const std::string quad = dir.File("quad.obj");
  {
    std::ofstream out(quad);
    out << "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n";
  }
  EXPECT_TRUE(absl::StartsWith(Ok({"mesh", "upload", "arena", "quad", quad}),
                               "uploaded mesh quad into arena: 2 triangles, 4 vertices"));
}

}  // namespace
}  // namespace collide::integration
