// WatchDirectory: the listing of open watches and their fence events for readers (the viewer).
// - A registered watch is listed with its fences while its tap lives; the generation moves on
//   each open and close.
// - Fence events are kept only while a reader follows the scene (contact events never), from
//   the reader's cursor on, at most `max` per call (the rest stay), and past the ring's bound the
//   oldest are dropped and counted.

#include "watch/watch_directory.h"

#include <memory>
#include <vector>

#include "gtest/gtest.h"

namespace collide {
namespace {

// Any address serves as the scene's key: the directory never reads a scene.
const Scene* SceneKey(int n) {
  static int keys[4];
  return reinterpret_cast<const Scene*>(&keys[n]);
}

FenceSpec Fence(uint64_t id, float radius) {
  FenceSpec fence;
  fence.id = id;
  fence.shape.type = ShapeType::kSphere;
  fence.shape.sphere.radius = radius;
  return fence;
}

WatchUpdate Update(uint64_t version, std::vector<WatchEvent> events) {
  return WatchUpdate{.version = version, .tick = 0, .events = std::move(events)};
}

WatchEvent Enter(uint64_t fence, uint64_t body) {
  return WatchEvent{.kind = WatchEventKind::kEnter, .watch_id = fence, .body_id = body};
}

TEST(WatchDirectoryTest, ListsAWatchWhileItsTapLives) {
  WatchDirectory directory;
  EXPECT_TRUE(directory.Watches(SceneKey(0)).empty());
  const uint64_t before = directory.WatchesGeneration(SceneKey(0));
  std::unique_ptr<WatchTap> a = directory.Register(SceneKey(0), {Fence(4, 1), Fence(7, 2)});
  std::unique_ptr<WatchTap> b = directory.Register(SceneKey(1), {Fence(1, 3)});
  std::vector<ListedWatch> listed = directory.Watches(SceneKey(0));
  ASSERT_EQ(listed.size(), 1u);
  ASSERT_EQ(listed[0].fences.size(), 2u);
  EXPECT_EQ(listed[0].fences[1].id, 7u);
  EXPECT_EQ(listed[0].fences[1].shape.sphere.radius, 2.0f);
  const uint64_t open = directory.WatchesGeneration(SceneKey(0));
  EXPECT_NE(open, before);
  a.reset();
  EXPECT_TRUE(directory.Watches(SceneKey(0)).empty());
  EXPECT_NE(directory.WatchesGeneration(SceneKey(0)), open);
  EXPECT_EQ(directory.Watches(SceneKey(1)).size(), 1u);
}

TEST(WatchDirectoryTest, KeepsFenceEventsOnlyWhileFollowedFromTheCursorOn) {
  WatchDirectory directory;
  std::unique_ptr<WatchTap> tap = directory.Register(SceneKey(0), {Fence(4, 1)});
  tap->Post(Update(1, {Enter(4, 10)}));  // nobody follows: not kept
  const uint64_t cursor = directory.Follow(SceneKey(0));
  WatchEvent contact{
      .kind = WatchEventKind::kContactBegin, .watch_id = 1, .body_id = 1, .other_body_id = 2};
  tap->Post(Update(2, {Enter(4, 11), contact,
                       WatchEvent{.kind = WatchEventKind::kExit, .watch_id = 4, .body_id = 12}}));
  tap->Post(Update(3, {Enter(4, 13)}));
  ListedEvents first = directory.EventsAfter(SceneKey(0), cursor, 2);
  ASSERT_EQ(first.events.size(), 2u);
  EXPECT_EQ(first.dropped, 0u);
  EXPECT_EQ(first.events[0].event.body_id, 11u);
  EXPECT_EQ(first.events[0].version, 2u);
  EXPECT_EQ(first.events[1].event.kind, WatchEventKind::kExit);
  ListedEvents rest = directory.EventsAfter(SceneKey(0), first.next, 2);
  ASSERT_EQ(rest.events.size(), 1u);
  EXPECT_EQ(rest.events[0].event.body_id, 13u);
  EXPECT_TRUE(directory.EventsAfter(SceneKey(0), rest.next, 2).events.empty());
  directory.Unfollow(SceneKey(0));
  tap->Post(Update(4, {Enter(4, 14)}));
  const uint64_t again = directory.Follow(SceneKey(0));
  EXPECT_TRUE(directory.EventsAfter(SceneKey(0), again, 10).events.empty());
  directory.Unfollow(SceneKey(0));
}

TEST(WatchDirectoryTest, DropsTheOldestPastTheBoundAndCountsThem) {
  WatchDirectory directory;
  std::unique_ptr<WatchTap> tap = directory.Register(SceneKey(2), {Fence(4, 1)});
  const uint64_t cursor = directory.Follow(SceneKey(2));
  const size_t posted = WatchDirectory::kMaxEventsPerScene + 10;
  for (size_t i = 0; i < posted; ++i) tap->Post(Update(i + 1, {Enter(4, i)}));
  ListedEvents events = directory.EventsAfter(SceneKey(2), cursor, posted);
  EXPECT_EQ(events.dropped, 10u);
  ASSERT_EQ(events.events.size(), WatchDirectory::kMaxEventsPerScene);
  EXPECT_EQ(events.events.front().event.body_id, 10u);
  EXPECT_EQ(events.events.back().event.body_id, posted - 1);
  EXPECT_EQ(events.next, posted);
  directory.Unfollow(SceneKey(2));
}

}  // namespace
}  // namespace collide
