// BodyIds against an independent oracle (a std::map from id to handle) over random creations,
// removals and replacements in a world whose slots are reused, with ids drawn from a small range
// (so an id comes back in another slot) and from the extremes of uint64_t.

#include "scene/body_ids.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "geom/shapes.h"
#include "query/collision_world.h"

namespace collide {
namespace {

BodyDesc Ball(uint64_t id, float x) {
  return BodyDesc{.id = id, .shape = Sphere{0.5f}, .pose = Pose{.position = Vec3{x, 0, 0}}};
}

TEST(BodyIds, FindsWhatAMapFindsThroughCreationsRemovalsAndReusedSlots) {
  CollisionWorld world;
  BodyIds ids(&world);
  std::map<uint64_t, BodyHandle> oracle;
  std::mt19937_64 rng(20261130);
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  auto draw_id = [&]() -> uint64_t {
    switch (rng() % 4) {
      case 0:
        return kMax - rng() % 8;
      case 1:
        return rng() % 8;
      default:
        return 1000 + rng() % 3000;
    }
  };
  for (int step = 0; step < 20000; ++step) {
    const uint64_t id = draw_id();
    auto it = oracle.find(id);
    if (it == oracle.end()) {
      const BodyHandle handle = world.Add(Ball(id, static_cast<float>(step % 1000)));
      ASSERT_TRUE(ids.Insert(handle)) << "id " << id;
      oracle[id] = handle;
    } else if (rng() % 3 == 0) {
      // A replacement: the same id in the slot the world gives next.
      ids.Erase(id);
      world.Remove(it->second);
      const BodyHandle handle = world.Add(Ball(id, 1.0f));
      ASSERT_TRUE(ids.Insert(handle));
      it->second = handle;
    } else {
      ids.Erase(id);
      world.Remove(it->second);
      oracle.erase(it);
    }
    if (step % 997 == 0) world.FinishUpdates();
    // A body whose id is indexed is refused again, and nothing changes.
    if (!oracle.empty() && step % 7 == 0) {
      const auto& [some_id, some_handle] = *oracle.begin();
      const BodyHandle twin = world.Add(Ball(some_id, 2.0f));
      EXPECT_FALSE(ids.Insert(twin));
      EXPECT_EQ(ids.Find(some_id), some_handle);
      world.Remove(twin);
    }
    ASSERT_EQ(ids.size(), oracle.size());
    const uint64_t probe = draw_id();
    auto want = oracle.find(probe);
    ASSERT_EQ(ids.Find(probe), want == oracle.end() ? kNullBody : want->second) << "id " << probe;
    ASSERT_EQ(ids.Contains(probe), want != oracle.end());
  }
  // Every indexed handle is once in the index, and the index holds nothing else.
  size_t n = 0;
  for (const BodyHandle handle : ids) {
    ASSERT_TRUE(world.IsLive(handle));
    EXPECT_EQ(oracle.at(world.body(handle).id), handle);
    ++n;
  }
  EXPECT_EQ(n, oracle.size());
  // Erasing an id that is not indexed changes nothing.
  ids.Erase(kMax - 100);
  EXPECT_EQ(ids.size(), oracle.size());
}

TEST(BodyIds, HoldsFiveBytesASlot) {
  CollisionWorld world;
  BodyIds ids(&world);
  EXPECT_EQ(ids.MemoryBytes(), 0u);
  constexpr int kBodies = 100000;
  ids.Reserve(kBodies);
  for (int i = 0; i < kBodies; ++i) {
    ASSERT_TRUE(ids.Insert(world.Add(Ball(static_cast<uint64_t>(i) * 7919, 0.0f))));
  }
  // absl keeps at most 7/8 of the slots full and a power of two of them: at most 2^18 slots here.
  EXPECT_LE(ids.MemoryBytes(), (size_t{1} << 18) * 5 + 16);
  EXPECT_GE(ids.MemoryBytes(), kBodies * size_t{5});
}

}  // namespace
}  // namespace collide
