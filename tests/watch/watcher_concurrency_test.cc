// Watchers attached and detached while a writer applies batches and readers query: every
// watcher's messages, replayed from its first snapshot, end in the state a fresh watcher
// computes at the same version; once with watchers run by the scene's writer, once with
// watchers run by a WatchDispatcher's workers, whose listeners the test clears while a worker
// may be calling them (run under ThreadSanitizer by scripts/test --tsan).

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <thread>
#include <variant>
#include <vector>

#include "gtest/gtest.h"
#include "scene/scene.h"
#include "watch/watch_dispatcher.h"
#include "watch/watch_hub.h"
#include "watch/watcher.h"

namespace collide {
namespace {

std::vector<FenceSpec> Fences() {
  std::vector<FenceSpec> fences;
  for (uint64_t i = 0; i < 20; ++i) {
    FenceSpec f{.id = i + 1,
                .shape = Box{{0.05f, 4.0f, 4.0f}},
                .pose = Pose{Quat::Identity(), {-9.0f + i, 0.0f, 0.0f}}};
    if (i % 4 == 0) f.attached_to = 100 + i;  // rides a body that moves too
    fences.push_back(f);
  }
  return fences;
}

// The scene's bodies: 40 small spheres left of the fences, and the 5 bodies fences ride.
UpdateBatch ArenaBodies() {
  UpdateBatch create;
  for (uint64_t id = 1; id <= 40; ++id) {
    create.ops.push_back(UpsertOp(
        BodyDesc{.id = id, .shape = Sphere{0.2f}, .pose = Pose{Quat::Identity(), {-10, 0, 0}}}));
  }
  for (uint64_t id = 100; id < 120; id += 4) {
    create.ops.push_back(UpsertOp(
        BodyDesc{.id = id, .shape = Sphere{0.1f}, .pose = Pose{Quat::Identity(), {0, 5, 0}}}));
  }
  return create;
}

// The writer's batch `b`: every sphere, every second or every third, and one fence rider moved
// along x.
UpdateBatch Moves(int b, std::mt19937& rng) {
  std::uniform_real_distribution<float> x(-12.0f, 12.0f);
  UpdateBatch batch;
  for (uint64_t id = 1; id <= 40; id += 1 + b % 3) {
    batch.ops.push_back(SetPoseOp(id, Pose{Quat::Identity(), {x(rng), 0.1f * id - 2, 0}}));
  }
  batch.ops.push_back(SetPoseOp(100 + 4 * (b % 5), Pose{Quat::Identity(), {x(rng), 0, 0}}));
  return batch;
}

// The fence contents a consumer rebuilds from the messages it read.
struct Replica {
  std::map<uint64_t, std::set<uint64_t>> inside;
  uint64_t version = 0;
  void Take(const WatchMessage& message) {
    if (const auto* s = std::get_if<WatchSnapshot>(&message)) {
      inside.clear();
      for (const FenceContents& f : s->fences) {
        inside[f.fence_id] = std::set<uint64_t>(f.body_ids.begin(), f.body_ids.end());
      }
      version = s->version;
      return;
    }
    const WatchUpdate& u = std::get<WatchUpdate>(message);
    for (const WatchEvent& e : u.events) {
      if (e.kind == WatchEventKind::kEnter) inside[e.watch_id].insert(e.body_id);
      if (e.kind == WatchEventKind::kExit) inside[e.watch_id].erase(e.body_id);
    }
    version = u.version;
  }
};

TEST(WatcherConcurrency, WatchersComeAndGoWhileBatchesApply) {
  auto scene = std::make_shared<Scene>("arena", SceneOptions{});
  ASSERT_TRUE(scene->Apply(ArenaBodies()).ok());

  std::atomic<bool> stop{false};
  std::thread writer([&] {
    std::mt19937 rng(5);
    for (int b = 0; !stop; ++b) {
      ASSERT_TRUE(scene->Apply(Moves(b, rng)).ok());
      // A writer holding the scene back to back would leave the watchers' attaches waiting.
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  std::thread reader([&] {
    while (!stop)
      scene->Read([](const CollisionWorld& world, uint64_t) { return world.body_count(); });
  });
  // Watchers attach, read a while (every other one slowly: a tiny queue that resyncs), then a
  // probe attaches: its starting snapshot at version V must equal what the watcher's messages up
  // to V rebuild (both are serialised with the batches by the scene's writer lock).
  int compared = 0;
  for (int round = 0; round < 40; ++round) {
    auto watcher = std::make_unique<Watcher>(Fences(), std::vector<ContactWatchSpec>{},
                                             round % 2 == 0 ? 4 : 1 << 16);
    ASSERT_TRUE(watcher->Attach(scene).ok());
    Replica replica;
    WatchMessage message;
    for (int i = 0; i < 20; ++i) {
      if (watcher->queue().Pop(&message)) replica.Take(message);
      std::this_thread::yield();
    }
    Watcher probe(Fences(), std::vector<ContactWatchSpec>{}, 1 << 16);
    ASSERT_TRUE(probe.Attach(scene).ok());
    ASSERT_TRUE(probe.queue().Pop(&message));
    Replica fresh;
    fresh.Take(message);
    probe.Detach();
    bool comparable = true;
    while (watcher->queue().Pop(&message)) {
      const bool is_snapshot = std::holds_alternative<WatchSnapshot>(message);
      const uint64_t version = is_snapshot ? std::get<WatchSnapshot>(message).version
                                           : std::get<WatchUpdate>(message).version;
      if (version > fresh.version) {
        // A later resync replaced messages up to the probe's version: nothing to compare.
        comparable = !is_snapshot;
        break;
      }
      replica.Take(message);
    }
    watcher->Detach();
    if (!comparable) continue;
    EXPECT_EQ(replica.inside, fresh.inside) << "round " << round << " version " << fresh.version;
    ++compared;
  }
  stop = true;
  writer.join();
  reader.join();
  EXPECT_GT(compared, 10);
}

TEST(WatcherConcurrency, DispatchedWatchersComeAndGoWhileBatchesApply) {
  auto scene = std::make_shared<Scene>("arena", SceneOptions{});
  ASSERT_TRUE(scene->Apply(ArenaBodies()).ok());
  WatchDispatcher dispatcher(WatchDispatcher::Options{
      .threads = 2, .limits = {.max_backlog_bytes = 8 * WatchHub::BatchBytes(16)}});

  std::atomic<bool> stop{false};
  std::thread writer([&] {
    std::mt19937 rng(9);
    for (int b = 0; !stop; ++b) {
      ASSERT_TRUE(scene->Apply(Moves(b, rng)).ok());
      if (b % 8 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  std::thread reader([&] {
    while (!stop)
      scene->Read([](const CollisionWorld& world, uint64_t) { return world.body_count(); });
  });
  // Each round: a watcher (a tiny queue every other round) is read for a while, then a probe
  // attaches through the same dispatcher. Both are evaluated on the hub's copy of the scene in
  // version order, so the watcher's messages up to the probe's snapshot version rebuild the
  // probe's state. The watcher's listener counts wake-ups and is cleared while a worker may be
  // calling it.
  int compared = 0;
  for (int round = 0; round < 40; ++round) {
    auto watcher = std::make_shared<Watcher>(Fences(), std::vector<ContactWatchSpec>{},
                                             round % 2 == 0 ? 4 : 1 << 16);
    std::atomic<int> wakeups{0};
    watcher->queue().SetListener([&] { wakeups.fetch_add(1); });
    auto attachment = dispatcher.Attach(scene, watcher);
    Replica replica;
    WatchMessage message;
    for (int i = 0; i < 200 && replica.version == 0; ++i) {
      if (watcher->queue().Pop(&message)) replica.Take(message);
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    auto probe = std::make_shared<Watcher>(Fences(), std::vector<ContactWatchSpec>{}, 1 << 16);
    auto probe_attachment = dispatcher.Attach(scene, probe);
    bool started = false;
    for (int i = 0; i < 20000 && !started; ++i) {
      started = probe->queue().Pop(&message);
      if (!started) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    ASSERT_TRUE(started) << "round " << round;
    Replica fresh;
    fresh.Take(message);
    probe_attachment.reset();
    // The watcher's messages up to the probe's version have been queued by now (the hub ran the
    // watcher on every version before starting the probe).
    bool comparable = replica.version <= fresh.version;
    while (comparable && replica.version < fresh.version && watcher->queue().Pop(&message)) {
      const bool is_snapshot = std::holds_alternative<WatchSnapshot>(message);
      const uint64_t version = is_snapshot ? std::get<WatchSnapshot>(message).version
                                           : std::get<WatchUpdate>(message).version;
      if (version > fresh.version) {
        // A resync past the probe's version replaced the messages up to it.
        comparable = !is_snapshot;
        break;
      }
      replica.Take(message);
    }
    watcher->queue().ClearListener();
    attachment.reset();
    EXPECT_GT(wakeups.load(), 0);
    if (!comparable) continue;
    EXPECT_EQ(replica.inside, fresh.inside) << "round " << round << " version " << fresh.version;
    ++compared;
  }
  stop = true;
  writer.join();
  reader.join();
  EXPECT_GT(compared, 10);
}

}  // namespace
}  // namespace collide
