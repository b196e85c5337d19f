// The example programs against a real server: a short run of collide-arena (the 60 Hz tick
// loop), and collide-scenario-cpp, whose JSON lines are parsed back and checked against the
// reference engine (and the format of the cross-language scenario).

#include <algorithm>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "gtest/gtest.h"
#include "integration/reference.h"
#include "integration/test_util.h"

#ifndef COLLIDE_ARENA_PATH
#error "COLLIDE_ARENA_PATH must name the collide-arena binary"
#endif
#ifndef COLLIDE_SCENARIO_CPP_PATH
#error "COLLIDE_SCENARIO_CPP_PATH must name the collide-scenario-cpp binary"
#endif

namespace collide::integration {
namespace {

using client::MakePose;
using client::MakeVec3;

TEST(Examples, ArenaRunsATickLoopAndCleansUp) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(IsOk(server));
  CommandResult run =
      RunCommand({COLLIDE_ARENA_PATH, "--address=" + (*server)->address(), "--scene=smoke",
                  "--ticks=30", "--bodies=200", "--rays=20", "--casts=5", "--players=20"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(absl::StrContains(run.out, "ticks 30: tick round trip p50 ")) << run.out;
  EXPECT_TRUE(absl::StrContains(run.out, "errors 0")) << run.out;
  // The players' relevant sets: some bodies each, far fewer than all 200; the bytes saved are
  // what every body to every player (20 x 200 x 36 bytes) would cost less what the sets cost.
  std::smatch m;
  static const std::regex kInterest(
      "interest: 20 players, ([0-9.]+) relevant bodies each; body state a tick ([0-9]+) bytes "
      "with interest vs ([0-9]+) to every player: ([0-9]+) bytes a tick saved");
  ASSERT_TRUE(std::regex_search(run.out, m, kInterest)) << run.out;
  const double each = std::stod(m[1].str());
  const uint64_t with = std::stoull(m[2].str()), every = std::stoull(m[3].str()),
                 saved = std::stoull(m[4].str());
  EXPECT_GT(each, 0.5) << run.out;
  EXPECT_LT(each, 100) << run.out;
  EXPECT_EQ(every, 20u * 200u * 36u);
  EXPECT_EQ(saved, every - with);
  // The scene is gone; nothing else was created.
  auto scenes = (*server)->NewClient()->ListScenes();
  ASSERT_TRUE(IsOk(scenes));
  EXPECT_TRUE(scenes->empty());
}

float Float(const std::string& text) {
  double value = 0;
  EXPECT_TRUE(absl::SimpleAtod(text, &value)) << text;
  return static_cast<float>(value);
}

// One line of the scenario's output as the QueryResult it reports.
v1::QueryResult ParseHits(const std::string& line) {
  static const std::regex kHit(
      R"re(\{"body_id": (\d+), "distance": ([^,]+), "point": \[([^,]+), ([^,]+), ([^\]]+)\], )re"
      R"re("normal": \[([^,]+), ([^,]+), ([^\]]+)\], "depth": ([^,]+), )re"
      R"re("start_overlapping": (true|false)\})re");
  v1::QueryResult result;
  for (std::sregex_iterator it(line.begin(), line.end(), kHit), end; it != end; ++it) {
    const std::smatch& m = *it;
    v1::Hit* hit = result.add_hits();
    uint64_t id = 0;
    EXPECT_TRUE(absl::SimpleAtoi(m[1].str(), &id));
    hit->set_body_id(id);
    hit->set_distance(Float(m[2]));
    *hit->mutable_point() = MakeVec3(Float(m[3]), Float(m[4]), Float(m[5]));
    *hit->mutable_normal() = MakeVec3(Float(m[6]), Float(m[7]), Float(m[8]));
    hit->set_depth(Float(m[9]));
    hit->set_start_overlapping(m[10] == "true");
  }
  return result;
}

TEST(Examples, ScenarioPrintsTheReferenceAnswersAsJsonLines) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(IsOk(server));
  CommandResult run = RunCommand(
      {COLLIDE_SCENARIO_CPP_PATH, "--address", (*server)->address(), "--scene", "scenario"});
  ASSERT_EQ(run.exit_code, 0) << run.err;

  // The scenario's bodies and queries, as the brief lists them.
  std::vector<v1::Body> bodies;
  bodies.push_back(client::MakeBody(1, client::MakeSphere(1), MakePose(MakeVec3(0, 0, 0))));
  bodies.push_back(client::MakeBody(
      2, client::MakeBox(1, 0.5f, 2),
      MakePose(MakeVec3(5, 0, 0), client::MakeQuat(0, 0, 0.25881904f, 0.96592583f))));
  bodies.push_back(client::MakeBody(3, client::MakeCapsule(0.5f, 1), MakePose(MakeVec3(10, 0, 0))));
  bodies.push_back(client::MakeBody(4, client::MakeSphere(0.5f), MakePose(MakeVec3(0, 5, 0))));
  bodies.back().set_category(2);
  bodies.push_back(
      client::MakeStaticBody(5, client::MakeBox(0.5f, 0.5f, 0.5f), MakePose(MakeVec3(-4, 0, 0))));
  ReferenceWorld world(bodies);
  std::vector<v1::Query> queries = {
      client::MakeRaycastQuery(0, client::MakeRaycast(MakeVec3(-10, 0, 0), MakeVec3(1, 0, 0), 100),
                               v1::MODE_ALL),
      client::MakeRaycastQuery(0, client::MakeRaycast(MakeVec3(0, -10, 0), MakeVec3(0, 1, 0), 100),
                               v1::MODE_CLOSEST),
      client::MakeSphereCastQuery(
          0, client::MakeSphereCast(MakeVec3(0, 0, -10), MakeVec3(0, 0, 1), 20, 0.25f),
          v1::MODE_ALL),
      client::MakeOverlapQuery(
          0, client::MakeOverlap(client::MakeSphere(1.5f), MakePose(MakeVec3(4.5f, 0.5f, 0))),
          v1::MODE_ALL, /*detail=*/true),
      client::MakeSphereCastQuery(
          0, client::MakeSphereCast(MakeVec3(-10, 0.8f, 0), MakeVec3(1, 0, 0), 30, 0.4f),
          v1::MODE_ALL),
  };
  queries[1].mutable_filter()->set_mask(2);

  std::vector<std::string> lines = absl::StrSplit(run.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), queries.size()) << run.out;
  const std::string names = "abcde";
  for (size_t q = 0; q < queries.size(); ++q) {
    const std::string& line = lines[q];
    EXPECT_TRUE(absl::StartsWith(
        line, std::string("{\"query\": \"") + names[q] + "\", \"version\": 1, \"hits\": ["))
        << line;
    EXPECT_TRUE(absl::EndsWith(line, "]}")) << line;
    v1::QueryResult got = ParseHits(line);
    EXPECT_EQ(got.hits_size(), static_cast<int>(std::count(line.begin(), line.end(), '{')) - 1)
        << "unparsed hit in " << line;
    EXPECT_TRUE(ResultMatches(queries[q], got, world)) << "query " << names[q] << ": " << line;
  }
  EXPECT_EQ(ParseHits(lines[0]).hits_size(), 4);  // bodies 5, 1, 2, 3 along the x axis
  // The scene was deleted.
  auto scenes = (*server)->NewClient()->ListScenes();
  ASSERT_TRUE(IsOk(scenes));
  EXPECT_TRUE(scenes->empty());
}

TEST(Examples, HelpListsEachProgramsFlagsUnderTheirSourcePath) {
  for (const auto& [binary, file] :
       {std::pair<std::string, std::string>{COLLIDE_ARENA_PATH, "examples/arena/cpp/main.cc"},
        {COLLIDE_SCENARIO_CPP_PATH, "examples/scenario/cpp/main.cc"}}) {
    const CommandResult help = RunCommand({binary, "--help"});
    const std::string text = help.out + help.err;
    EXPECT_TRUE(absl::StrContains(text, "Flags from " + file + ":")) << text;
    EXPECT_FALSE(absl::StrContains(text, "Flags from /")) << text;
    EXPECT_FALSE(absl::StrContains(text, "Flags from ..")) << text;
    const CommandResult version = RunCommand({binary, "--version"});
    EXPECT_TRUE(absl::StrContains(version.out, " build)\n")) << binary << ": " << version.out;
  }
}

}  // namespace
}  // namespace collide::integration
