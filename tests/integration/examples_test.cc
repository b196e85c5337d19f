// The example programs against a real server: a short run of collide-arena (the 60 Hz tick
// loop), flat and on its level (the level's ground checked against the server's heightfield,
// its shots against segment-box and terrain-bound oracles), and collide-scenario-cpp, whose JSON
// lines are parsed back and checked against the reference engine (and the format of the
// cross-language scenario).

#include <algorithm>
#include <cmath>
#include <random>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "examples/arena/cpp/level.h"
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

TEST(Examples, ArenaOnItsLevelReportsTheShotsTheLevelBlocked) {
  auto server = ServerProcess::Start();
  ASSERT_TRUE(IsOk(server));
  CommandResult run = RunCommand({COLLIDE_ARENA_PATH, "--address=" + (*server)->address(),
                                  "--scene=hills", "--ticks=30", "--bodies=200", "--rays=20",
                                  "--casts=5", "--players=0", "--level"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(absl::StrContains(run.out, "errors 0")) << run.out;
  EXPECT_TRUE(absl::StrContains(run.out, "level: terrain 111 x 111 samples 2 m apart")) << run.out;
  std::smatch m;
  static const std::regex kShots(
      "level: ([0-9]+) aimed shots, ([0-9]+) blocked by the level \\(([0-9]+) by the terrain, "
      "([0-9]+) by buildings\\), ([0-9]+) reached a body, ([0-9]+) met nothing");
  ASSERT_TRUE(std::regex_search(run.out, m, kShots)) << run.out;
  const uint64_t shots = std::stoull(m[1].str()), blocked = std::stoull(m[2].str()),
                 terrain = std::stoull(m[3].str()), buildings = std::stoull(m[4].str()),
                 reached = std::stoull(m[5].str()), nothing = std::stoull(m[6].str());
  EXPECT_EQ(shots, 30u * 20u);
  EXPECT_EQ(blocked, terrain + buildings);
  EXPECT_EQ(shots, blocked + reached + nothing);
  // Shots aimed at bodies across a field of hills and 16 buildings: some stop at each, some
  // arrive. (Each aims at a body's centre, so one that met nothing missed it.)
  EXPECT_GT(terrain, 0u) << run.out;
  EXPECT_GT(buildings, 0u) << run.out;
  EXPECT_GT(reached, 0u) << run.out;
  auto scenes = (*server)->NewClient()->ListScenes();
  ASSERT_TRUE(IsOk(scenes));
  EXPECT_TRUE(scenes->empty());
}

// The arena's level in a scene of its own: the terrain (body 1), the buildings (body 2).
class ArenaLevelTest : public ::testing::Test {
 protected:
  static constexpr char kScene[] = "level";
  static constexpr uint64_t kTerrain = 1, kBuildings = 2, kShooter = 10, kTarget = 11;

  void SetUp() override {
    auto server = ServerProcess::Start();
    ASSERT_TRUE(IsOk(server));
    server_ = *std::move(server);
    client_ = server_->NewClient();
    ASSERT_TRUE(IsOk(client_->CreateScene(kScene)));
    level_ = arena::MakeLevel(100);
    ASSERT_TRUE(IsOk(arena::UploadLevel(*client_, kScene, level_, kTerrain, kBuildings)));
  }

  // The closest hit of `query` (a raycast) in the scene.
  v1::QueryResult Answer(const v1::Query& query) {
    v1::RaycastRequest request;
    request.set_scene(kScene);
    *request.mutable_ray() = query.raycast();
    *request.mutable_filter() = query.filter();
    request.set_mode(query.mode());
    absl::StatusOr<v1::QueryResponse> response = client_->Raycast(request);
    EXPECT_TRUE(IsOk(response));
    v1::QueryResult result;
    if (response.ok()) *result.mutable_hits() = response->hits();
    return result;
  }

  // A shooter standing at (x0, z0) aims the arena's shot at a body standing at (x1, z1).
  v1::QueryResult Shoot(float x0, float z0, float x1, float z1) {
    const float y0 = arena::GroundHeight(level_, x0, z0) + 1,
                y1 = arena::GroundHeight(level_, x1, z1) + 1;
    EXPECT_TRUE(IsOk(client_->UpsertBodies(
        kScene, std::vector<v1::Body>{client::MakeBody(kShooter, client::MakeCapsule(0.4f, 0.5f),
                                                       MakePose(MakeVec3(x0, y0, z0))),
                                      client::MakeBody(kTarget, client::MakeCapsule(0.4f, 0.5f),
                                                       MakePose(MakeVec3(x1, y1, z1)))})));
    return Answer(arena::AimedShot(1, kShooter, MakeVec3(x0, y0 + 0.6f, z0), MakeVec3(x1, y1, z1)));
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<client::Client> client_;
  arena::Level level_;
};

struct Point {
  float x, y, z;
};

// The oracle for buildings: whether the segment from a to b meets the box [lo, hi] (slabs:
// the segment's parameter interval inside each pair of planes, intersected).
bool SegmentMeetsBox(const Point& a, const Point& b, const Point& lo, const Point& hi) {
  double t0 = 0, t1 = 1;
  const double from[3] = {a.x, a.y, a.z}, to[3] = {b.x, b.y, b.z};
  const double low[3] = {lo.x, lo.y, lo.z}, high[3] = {hi.x, hi.y, hi.z};
  for (int k = 0; k < 3; ++k) {
    const double d = to[k] - from[k];
    if (std::abs(d) < 1e-12) {
      if (from[k] < low[k] || from[k] > high[k]) return false;
      continue;
    }
    double ta = (low[k] - from[k]) / d, tb = (high[k] - from[k]) / d;
    if (ta > tb) std::swap(ta, tb);
    t0 = std::max(t0, ta);
    t1 = std::min(t1, tb);
    if (t0 > t1) return false;
  }
  return true;
}

bool MeetsABuilding(const arena::Level& level, const Point& a, const Point& b, float margin) {
  for (const arena::Building& building : level.buildings) {
    if (SegmentMeetsBox(
            a, b, {building.min_x - margin, level.bottom, building.min_z - margin},
            {building.max_x + margin, building.top + margin, building.max_z + margin})) {
      return true;
    }
  }
  return false;
}

// The oracle for the terrain, from the samples alone: over a cell the surface lies between its
// four samples' lowest and highest heights. The segment from a to b, walked in steps of 5 cm,
// clears the terrain if every step is `margin` above its cell's highest sample, and is blocked
// by it if a step is `margin` below its cell's lowest.
enum class TerrainSays { kClear, kBlocked, kUnsure };
TerrainSays TerrainBetween(const arena::Level& level, const Point& a, const Point& b,
                           float margin) {
  const double length = std::hypot(b.x - a.x, b.y - a.y, b.z - a.z);
  const int steps = std::max(2, static_cast<int>(length / 0.05));
  bool clear = true;
  for (int s = 0; s <= steps; ++s) {
    const double t = static_cast<double>(s) / steps;
    const double x = a.x + t * (b.x - a.x), y = a.y + t * (b.y - a.y), z = a.z + t * (b.z - a.z);
    const int j = std::clamp(static_cast<int>(std::floor((x - level.origin_x) / level.spacing)), 0,
                             static_cast<int>(level.columns) - 2);
    const int i = std::clamp(static_cast<int>(std::floor((z - level.origin_z) / level.spacing)), 0,
                             static_cast<int>(level.rows) - 2);
    double lowest = 1e30, highest = -1e30;
    for (int di = 0; di < 2; ++di) {
      for (int dj = 0; dj < 2; ++dj) {
        const double h = level.heights[static_cast<size_t>(i + di) * level.columns + j + dj];
        lowest = std::min(lowest, h);
        highest = std::max(highest, h);
      }
    }
    if (y < lowest - margin) return TerrainSays::kBlocked;
    if (y <= highest + margin) clear = false;
  }
  return clear ? TerrainSays::kClear : TerrainSays::kUnsure;
}

TEST_F(ArenaLevelTest, BodiesStandOnTheServersTerrain) {
  // The ground the arena stands its bodies on is the surface the server's heightfield answers
  // for: a ray straight down (past the buildings) meets it at GroundHeight, within the server's
  // 16-bit height quantisation.
  std::mt19937 rng(29);
  std::uniform_real_distribution<float> at(-100, 100);
  for (int n = 0; n < 300; ++n) {
    const float x = at(rng), z = at(rng);
    v1::Query down = client::MakeRaycastQuery(
        0, client::MakeRaycast(MakeVec3(x, 50, z), MakeVec3(0, -1, 0), 100));
    const uint64_t excluded = kBuildings;
    *down.mutable_filter() = client::MakeFilter(~0u, ~0u, {&excluded, 1});
    const v1::QueryResult result = Answer(down);
    ASSERT_EQ(result.hits_size(), 1) << "seed 29, ray " << n << " at " << x << ", " << z;
    EXPECT_EQ(result.hits(0).body_id(), kTerrain);
    EXPECT_NEAR(50 - result.hits(0).distance(), arena::GroundHeight(level_, x, z), 2e-3)
        << "seed 29, ray " << n << " at " << x << ", " << z;
  }
}

TEST_F(ArenaLevelTest, AShotThroughABuildingIsBlockedAndOneInTheOpenIsNot) {
  // Through each building: from 4 m before its west wall to 4 m past its east wall, at its
  // middle, where the terrain oracle says the line clears the ground.
  int through = 0;
  for (const arena::Building& b : level_.buildings) {
    const float z = 0.5f * (b.min_z + b.max_z), x0 = b.min_x - 4, x1 = b.max_x + 4;
    const Point eye{x0, arena::GroundHeight(level_, x0, z) + 1.6f, z};
    const Point aim{x1, arena::GroundHeight(level_, x1, z) + 1, z};
    ASSERT_TRUE(
        SegmentMeetsBox(eye, aim, {b.min_x, level_.bottom, b.min_z}, {b.max_x, b.top, b.max_z}));
    if (TerrainBetween(level_, eye, aim, 0.05f) != TerrainSays::kClear) continue;
    const v1::QueryResult shot = Shoot(x0, z, x1, z);
    ASSERT_GE(shot.hits_size(), 1);
    EXPECT_EQ(arena::EndOf(shot, kTerrain, kBuildings), arena::ShotEnd::kBuildings)
        << "through the building at x " << b.min_x << ".." << b.max_x << ", z " << z
        << ": hit body " << shot.hits(0).body_id();
    // At the west wall: the ray's parameter where x = min_x, along a line of slope (dy / dx).
    const double run = aim.x - eye.x, rise = aim.y - eye.y;
    EXPECT_NEAR(shot.hits(0).distance(), (b.min_x - eye.x) * std::hypot(run, rise) / run, 1e-3);
    ++through;
  }
  EXPECT_GE(through, 8) << "too few buildings with clear ground either side";

  // In the open and over the hills: shooters and targets 5 to 60 m apart at random, classified
  // by the oracles (no building within 0.5 m of the line; the terrain clear of it by 5 cm, or
  // the line 5 cm inside a hill).
  std::mt19937 rng(2929);
  std::uniform_real_distribution<float> at(-95, 95), angle(0, 6.2831853f), distance(5, 60);
  int open = 0, hill = 0;
  for (int n = 0; n < 4000 && (open < 20 || hill < 10); ++n) {
    const float x0 = at(rng), z0 = at(rng), a = angle(rng), d = distance(rng);
    const float x1 = x0 + d * std::sin(a), z1 = z0 + d * std::cos(a);
    if (std::abs(x1) > 95 || std::abs(z1) > 95) continue;
    const Point eye{x0, arena::GroundHeight(level_, x0, z0) + 1.6f, z0};
    const Point aim{x1, arena::GroundHeight(level_, x1, z1) + 1, z1};
    if (MeetsABuilding(level_, eye, aim, 0.5f) || arena::InsideBuilding(level_, x0, z0, 1.5f) ||
        arena::InsideBuilding(level_, x1, z1, 1.5f)) {
      continue;
    }
    const TerrainSays terrain = TerrainBetween(level_, eye, aim, 0.05f);
    if (terrain == TerrainSays::kUnsure || (terrain == TerrainSays::kClear && open >= 20) ||
        (terrain == TerrainSays::kBlocked && hill >= 10)) {
      continue;
    }
    const v1::QueryResult shot = Shoot(x0, z0, x1, z1);
    const std::string where = "seed 2929, case " + std::to_string(n) + ": from " +
                              std::to_string(x0) + ", " + std::to_string(z0) + " to " +
                              std::to_string(x1) + ", " + std::to_string(z1);
    ASSERT_GE(shot.hits_size(), 1) << where;
    if (terrain == TerrainSays::kClear) {
      EXPECT_EQ(arena::EndOf(shot, kTerrain, kBuildings), arena::ShotEnd::kBody) << where;
      EXPECT_EQ(shot.hits(0).body_id(), kTarget) << where;
      ++open;
    } else {
      EXPECT_EQ(arena::EndOf(shot, kTerrain, kBuildings), arena::ShotEnd::kTerrain) << where;
      ++hill;
    }
  }
  EXPECT_EQ(open, 20);
  EXPECT_EQ(hill, 10);
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
