// The viewer's live stream below HTTP: each event is its collide.viewer.v1 message in protobuf's
// JSON mapping (read back here with protobuf's parser), the scene's changes coalesced, bounded
// per event, nothing lost across events.

#include "server/viewer/viewer_stream.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "collide/viewer/v1/viewer.pb.h"
#include "google/protobuf/util/json_util.h"
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

// The data of a server-sent event `name`, parsed as `M` (protobuf's JSON parser, unknown fields
// refused): the event is exactly `event: <name>\ndata: <one line>\n\n`.
template <typename M>
M Parse(const std::string& event, absl::string_view name) {
  M message;
  const std::string head = absl::StrCat("event: ", name, "\ndata: ");
  EXPECT_TRUE(absl::StartsWith(event, head)) << event;
  EXPECT_TRUE(absl::EndsWith(event, "\n\n")) << event;
  if (!absl::StartsWith(event, head) || event.size() < head.size() + 2) return message;
  const std::string data = event.substr(head.size(), event.size() - head.size() - 2);
  EXPECT_FALSE(absl::StrContains(data, "\n")) << data;
  const auto parsed = google::protobuf::util::JsonStringToMessage(data, &message);
  EXPECT_TRUE(parsed.ok()) << parsed.ToString() << ": " << data;
  return message;
}

// The y of each moved body of an update (both columns).
std::map<uint64_t, float> MovesOf(const viewer::v1::SceneUpdate& update) {
  std::map<uint64_t, float> moves;
  EXPECT_EQ(update.positions().positions_size(), 3 * update.positions().ids_size());
  EXPECT_EQ(update.poses().poses_size(), 7 * update.poses().ids_size());
  for (int k = 0; k < update.positions().ids_size(); ++k) {
    moves[update.positions().ids(k)] = update.positions().positions(3 * k + 1);
  }
  for (int k = 0; k < update.poses().ids_size(); ++k) {
    moves[update.poses().ids(k)] = update.poses().poses(7 * k + 1);
  }
  return moves;
}

TEST(SceneStreamTest, SendsNothingUntilAChangeThenTheChangeCoalesced) {
  std::shared_ptr<Scene> scene = MakeScene(10);
  SceneStream stream(scene, 64 * 1024);
  const auto hello = Parse<viewer::v1::StreamHello>(stream.Hello(), "hello");
  EXPECT_EQ(hello.version(), 1u);
  EXPECT_EQ(hello.max_event_bytes(), 64u * 1024);
  EXPECT_EQ(stream.Poll(), "");
  for (int i = 1; i <= 5; ++i) Move(*scene, 3, static_cast<float>(i));
  const auto update = Parse<viewer::v1::SceneUpdate>(stream.Poll(), "update");
  EXPECT_EQ(MovesOf(update), (std::map<uint64_t, float>{{3, 5.0f}}));
  EXPECT_EQ(update.version(), 6u);
  EXPECT_FALSE(update.more());
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
  // Floats as protobuf's JSON mapping prints them.
  EXPECT_TRUE(absl::StrContains(event, "\"poses\":{\"ids\":[\"2\"],\"poses\":[2,1,0,0,0,0.6,0.8]}"))
      << event;
  EXPECT_TRUE(absl::StrContains(event, "\"positions\":{\"ids\":[],\"positions\":[]}")) << event;
  // The same rotation again: the position only.
  batch.ops.clear();
  batch.ops.push_back(SetPoseOp(2, Pose{turned, Vec3{2, 5, 0}}));
  ASSERT_TRUE(scene->Apply(batch).ok());
  auto update = Parse<viewer::v1::SceneUpdate>(stream.Poll(), "update");
  EXPECT_EQ(update.positions().ShortDebugString(), "ids: 2 positions: 2 positions: 5 positions: 0");
  EXPECT_EQ(update.poses().ids_size(), 0);
  // Back to no rotation: sent in full.
  Move(*scene, 2, 6);
  update = Parse<viewer::v1::SceneUpdate>(stream.Poll(), "update");
  ASSERT_EQ(update.poses().ids_size(), 1);
  EXPECT_EQ(std::vector<float>(update.poses().poses().begin(), update.poses().poses().end()),
            (std::vector<float>{2, 6, 0, 0, 0, 0, 1}));
}

TEST(SceneStreamTest, BoundsEachEventAndLosesNothingAcrossEvents) {
  constexpr int kBodies = 5000;
  std::shared_ptr<Scene> scene = MakeScene(kBodies);
  constexpr size_t kMaxEventBytes = 16 * 1024;
  SceneStream stream(scene, kMaxEventBytes);
  // Positions whose floats print long (9 digits), half of them turned too, so that the
  // estimate of each item's bytes is tested at its worst.
  UpdateBatch batch;
  for (int i = 1; i <= kBodies; ++i) {
    const Quat rotation = i % 2 == 0 ? Quat{0, 0, 0.70710677f, 0.70710677f} : Quat::Identity();
    batch.ops.push_back(SetPoseOp(
        static_cast<uint64_t>(i),
        Pose{rotation, Vec3{-123456.789f * static_cast<float>(i), 7.0f + 1e-6f * i, -1e-7f}}));
  }
  ASSERT_TRUE(scene->Apply(batch).ok());
  std::map<uint64_t, float> seen;
  int events = 0;
  size_t largest = 0;
  for (std::string event = stream.Poll(); !event.empty(); event = stream.Poll()) {
    ++events;
    ASSERT_LE(event.size(), kMaxEventBytes);
    largest = std::max(largest, event.size());
    const auto update = Parse<viewer::v1::SceneUpdate>(event, "update");
    for (const auto& [id, y] : MovesOf(update)) {
      EXPECT_FALSE(seen.contains(id)) << "sent twice: " << id;
      seen[id] = y;
    }
    ASSERT_LT(events, 1000);
  }
  EXPECT_GT(events, 1);
  // The estimate does not waste the bound: events are filled to most of it.
  EXPECT_GT(largest, kMaxEventBytes * 3 / 4);
  ASSERT_EQ(seen.size(), static_cast<size_t>(kBodies));
  for (const auto& [id, y] : seen) EXPECT_EQ(y, 7.0f + 1e-6f * static_cast<float>(id)) << id;
}

TEST(SceneStreamTest, SendsNewBodiesInFullAndRemovedIds) {
  std::shared_ptr<Scene> scene = MakeScene(3);
  SceneStream stream(scene, 64 * 1024);
  UpdateBatch batch;
  BodyDesc box;
  box.id = 18446744073709551615ull;
  box.shape = Box{Vec3{1, 2, 3}};
  box.kind = BodyKind::kStatic;
  batch.ops.push_back(UpsertOp(box, /*user_data=*/42));
  batch.ops.push_back(RemoveOp(2));
  ASSERT_TRUE(scene->Apply(batch).ok());
  const std::string event = stream.Poll();
  // The API's Body as protobuf prints it: 64-bit integers as strings, enums by name.
  EXPECT_TRUE(absl::StrContains(
      event,
      "{\"id\":\"18446744073709551615\",\"shape\":{\"box\":{\"half_extents\":{\"x\":1,\"y\":2,"
      "\"z\":3}}}"))
      << event;
  const auto update = Parse<viewer::v1::SceneUpdate>(event, "update");
  ASSERT_EQ(update.bodies_size(), 1);
  EXPECT_EQ(update.bodies(0).kind(), v1::BODY_KIND_STATIC);
  EXPECT_EQ(update.bodies(0).user_data(), 42u);
  EXPECT_EQ(std::vector<uint64_t>(update.removed().begin(), update.removed().end()),
            std::vector<uint64_t>{2});
  EXPECT_EQ(stream.Poll(), "");
}

TEST(SceneStreamTest, SaysDeletedOnceAndEnds) {
  std::shared_ptr<Scene> scene = MakeScene(1);
  SceneStream stream(scene, 4096);
  ASSERT_TRUE(scene->MarkDeleted([] { return absl::OkStatus(); }).ok());
  EXPECT_EQ(stream.Poll(), "event: deleted\ndata: {}\n\n");
  EXPECT_TRUE(stream.done());
  EXPECT_EQ(stream.Poll(), "");
}

}  // namespace
}  // namespace collide
