// The viewer's API below HTTP: query strings, the live stream's diffs (coalesced, bounded per
// event, nothing lost across events), body JSON.

#include "server/viewer/viewer_api.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "scene/scene.h"
#include "scene/update_batch.h"

namespace collide {
namespace {

std::shared_ptr<Scene> MakeScene(int bodies) {
  auto scene = std::make_shared<Scene>("viewer", SceneOptions{});
  UpdateBatch batch;
  for (int i = 1; i <= bodies; ++i) {
    BodyDesc desc;
    desc.id = static_cast<uint64_t>(i);
    desc.shape = Sphere{1.0f};
    desc.pose.position = Vec3{static_cast<float>(i), 0, 0};
    batch.ops.push_back(UpsertOp(desc));
  }
  EXPECT_TRUE(scene->Apply(batch).ok());
  return scene;
}

void Move(Scene& scene, uint64_t id, float y) {
  UpdateBatch batch;
  batch.ops.push_back(SetPoseOp(id, Pose{Quat::Identity(), Vec3{static_cast<float>(id), y, 0}}));
  ASSERT_TRUE(scene.Apply(batch).ok());
}

// The ids of the moves (`"poses":[["id",...` entries) of an update event, with their y.
std::map<uint64_t, float> MovesOf(const std::string& event) {
  std::map<uint64_t, float> moves;
  const size_t start = event.find("\"poses\":[");
  const size_t end = event.find("],\"removed\"");
  if (start == std::string::npos || end == std::string::npos) return moves;
  const std::string list = event.substr(start + 9, end - start - 9);
  for (absl::string_view entry : absl::StrSplit(list, "],[")) {
    std::vector<std::string> fields = absl::StrSplit(entry, ',');
    if (fields.size() < 3) continue;
    std::string id = fields[0];
    id.erase(std::remove_if(id.begin(), id.end(), [](char c) { return c == '"' || c == '['; }),
             id.end());
    uint64_t parsed = 0;
    float y = 0;
    EXPECT_TRUE(absl::SimpleAtoi(id, &parsed)) << entry;
    EXPECT_TRUE(absl::SimpleAtof(fields[2], &y)) << entry;
    moves[parsed] = y;
  }
  return moves;
}

TEST(ParseQueryParamsTest, DecodesAndRefusesUnknownRepeatedAndMalformed) {
  absl::StatusOr<QueryParams> params = ParseQueryParams("name=a%20b&limit=3", {"name", "limit"});
  ASSERT_TRUE(params.ok()) << params.status();
  ASSERT_EQ(params->size(), 2u);
  EXPECT_EQ((*params)[0].second, "a b");
  EXPECT_EQ((*params)[1].second, "3");

  auto message = [](absl::string_view query) {
    return std::string(ParseQueryParams(query, {"name", "limit"}).status().message());
  };
  EXPECT_TRUE(absl::StartsWith(message("nope=1"), "query: unknown parameter \"nope\""))
      << message("nope=1");
  EXPECT_TRUE(absl::StartsWith(message("name=a&name=b"), "name: given more than once"));
  EXPECT_TRUE(absl::StartsWith(message("name=%4"), "name: a % escape"));
  EXPECT_TRUE(absl::StartsWith(message("name=%zz"), "name: a % escape"));
  EXPECT_TRUE(absl::StartsWith(message("%="), "query: a % escape"));
  EXPECT_TRUE(absl::StartsWith(message(std::string(3000, 'a')), "query: 3000 bytes"));
  // A NUL or control byte in a name is quoted, not copied raw.
  EXPECT_TRUE(absl::StrContains(message("%01x=1"), "\\u0001x"));
}

TEST(SceneStreamTest, SendsNothingUntilAChangeThenTheChangeCoalesced) {
  std::shared_ptr<Scene> scene = MakeScene(10);
  SceneStream stream(scene, 64 * 1024);
  EXPECT_TRUE(absl::StrContains(stream.Hello(), "\"version\":1"));
  EXPECT_EQ(stream.Poll(), "");
  for (int i = 1; i <= 5; ++i) Move(*scene, 3, static_cast<float>(i));
  const std::string event = stream.Poll();
  EXPECT_TRUE(absl::StartsWith(event, "event: update\n")) << event;
  EXPECT_EQ(MovesOf(event), (std::map<uint64_t, float>{{3, 5.0f}}));
  EXPECT_TRUE(absl::StrContains(event, "\"version\":6")) << event;
  EXPECT_EQ(stream.Poll(), "");
}

TEST(SceneStreamTest, SendsTheRotationOfAMoveOnlyWhenItChanged) {
  std::shared_ptr<Scene> scene = MakeScene(3);
  SceneStream stream(scene, 64 * 1024);
  const Quat turned{0, 0, 0.6f, 0.8f};
  UpdateBatch batch;
  batch.ops.push_back(SetPoseOp(2, Pose{turned, Vec3{2, 1, 0}}));
  ASSERT_TRUE(scene->Apply(batch).ok());
  std::string event = stream.Poll();
  EXPECT_TRUE(absl::StrContains(event, "\"poses\":[[\"2\",2,1,0,0,0,0.6,0.8]]")) << event;
  // The same rotation again: the position only.
  batch.ops.clear();
  batch.ops.push_back(SetPoseOp(2, Pose{turned, Vec3{2, 5, 0}}));
  ASSERT_TRUE(scene->Apply(batch).ok());
  event = stream.Poll();
  EXPECT_TRUE(absl::StrContains(event, "\"poses\":[[\"2\",2,5,0]]")) << event;
  // Back to no rotation: sent in full.
  Move(*scene, 2, 6);
  event = stream.Poll();
  EXPECT_TRUE(absl::StrContains(event, "\"poses\":[[\"2\",2,6,0,0,0,0,1]]")) << event;
}

TEST(SceneStreamTest, BoundsEachEventAndLosesNothingAcrossEvents) {
  constexpr int kBodies = 5000;
  std::shared_ptr<Scene> scene = MakeScene(kBodies);
  constexpr size_t kMaxEventBytes = 16 * 1024;
  SceneStream stream(scene, kMaxEventBytes);
  UpdateBatch batch;
  for (int i = 1; i <= kBodies; ++i) {
    batch.ops.push_back(SetPoseOp(static_cast<uint64_t>(i),
                                  Pose{Quat::Identity(), Vec3{static_cast<float>(i), 7, 0}}));
  }
  ASSERT_TRUE(scene->Apply(batch).ok());
  std::map<uint64_t, float> seen;
  int events = 0;
  for (std::string event = stream.Poll(); !event.empty(); event = stream.Poll()) {
    ++events;
    ASSERT_LE(event.size(), kMaxEventBytes);
    for (const auto& [id, y] : MovesOf(event)) {
      EXPECT_FALSE(seen.contains(id)) << "sent twice: " << id;
      seen[id] = y;
    }
    ASSERT_LT(events, 1000);
  }
  EXPECT_GT(events, 1);
  ASSERT_EQ(seen.size(), static_cast<size_t>(kBodies));
  for (const auto& [id, y] : seen) EXPECT_EQ(y, 7.0f) << id;
}

TEST(SceneStreamTest, SendsNewBodiesInFullAndRemovedIds) {
  std::shared_ptr<Scene> scene = MakeScene(3);
  SceneStream stream(scene, 64 * 1024);
  UpdateBatch batch;
  BodyDesc box;
  box.id = 18446744073709551615ull;
  box.shape = Box{Vec3{1, 2, 3}};
  box.kind = BodyKind::kStatic;
  batch.ops.push_back(UpsertOp(box));
  batch.ops.push_back(RemoveOp(2));
  ASSERT_TRUE(scene->Apply(batch).ok());
  const std::string event = stream.Poll();
  EXPECT_TRUE(absl::StrContains(
      event, "{\"id\":\"18446744073709551615\",\"shape\":\"box\",\"half_extents\":[1,2,3]"))
      << event;
  EXPECT_TRUE(absl::StrContains(event, "\"static\":true")) << event;
  EXPECT_TRUE(absl::StrContains(event, "\"removed\":[\"2\"]")) << event;
  EXPECT_EQ(stream.Poll(), "");
}

TEST(ErrorReplyTest, MapsCodesToHttpStatusAndEscapesTheMessage) {
  EXPECT_EQ(ErrorReply(absl::InvalidArgumentError("x")).http_status, 400);
  EXPECT_EQ(ErrorReply(absl::UnauthenticatedError("x")).http_status, 401);
  EXPECT_EQ(ErrorReply(absl::PermissionDeniedError("x")).http_status, 403);
  EXPECT_EQ(ErrorReply(absl::NotFoundError("x")).http_status, 404);
  EXPECT_EQ(ErrorReply(absl::UnavailableError("x")).http_status, 503);
  EXPECT_EQ(ErrorReply(absl::InvalidArgumentError("a\"b\\c\n")).body,
            "{\"error\":\"a\\\"b\\\\c\\u000a\"}\n");
}

}  // namespace
}  // namespace collide
