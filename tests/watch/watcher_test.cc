// Watcher against a brute-force replay (watch_oracle.h) of the same update sequence: identical
// event sequences after every batch, contacts judged by the oracle's own first contact, a
// tunnelling case, and a slow watcher that resyncs.

#include "watch/watcher.h"

#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <variant>

#include "geom/oracle.h"
#include "geom/sweep_oracle.h"
#include "gtest/gtest.h"
#include "scene/scene.h"
#include "watch/watch_oracle.h"
#include "watch/watch_test_util.h"

namespace collide {
namespace {

using testing::CheckEnter;
using testing::Describe;
using testing::OracleEvent;
using testing::Replica;
using testing::WatchGenerator;
using testing::WatchOracle;

constexpr float kEps = 0.01f;

TEST(Watcher, MatchesABruteForceReplayEventForEvent) {
  for (uint32_t seed : {11u, 12u, 13u}) {
    WatchGenerator gen(seed);
    std::vector<FenceSpec> fences;
    for (uint64_t i = 0; i < 40; ++i) {
      FenceSpec f{.id = 1000 + 7 * i,
                  .shape = gen.FenceShape(),
                  .pose = Pose{gen.Rotation(), gen.Position(10.0f)}};
      if (i % 5 == 0) {  // attached to one of the first bodies, off its centre
        f.attached_to = 1 + i / 5;
        f.pose.position = gen.Position(1.5f);
      }
      if (i % 3 == 0) f.mask = 1 | 4;
      fences.push_back(f);
    }
    std::vector<ContactWatchSpec> contacts = {{.id = 5, .category_a = 1, .category_b = 2},
                                              {.id = 9}};
    WatchOracle oracle(fences, contacts, kEps);
    auto scene = std::make_shared<Scene>("arena", SceneOptions{});
    Watcher watcher(fences, contacts, 1 << 20);
    // A slow watcher: never read until the end, its queue overflows into resyncs.
    Watcher slow(fences, contacts, 8);
    ASSERT_TRUE(watcher.Attach(scene).ok());
    ASSERT_TRUE(slow.Attach(scene).ok());
    WatchMessage message;
    ASSERT_TRUE(watcher.queue().Pop(&message));
    ASSERT_TRUE(std::holds_alternative<WatchSnapshot>(message));

    uint64_t last_event_version = 0;
    int enters = 0, crossings = 0, contact_events = 0, attached_events = 0, skipped = 0;
    for (int step = 0; step < 250; ++step) {
      UpdateBatch batch;
      std::vector<OracleEvent> expected;
      if (!gen.UnambiguousBatch(oracle, &batch, &expected)) {
        ++skipped;
        continue;
      }
      oracle.Commit(batch);
      auto applied = scene->Apply(batch);
      ASSERT_TRUE(applied.ok()) << applied.status();

      std::vector<WatchEvent> want;
      for (const OracleEvent& e : expected) want.push_back(e.event);
      std::vector<WatchEvent> got;
      if (watcher.queue().Pop(&message)) {
        const WatchUpdate* update = std::get_if<WatchUpdate>(&message);
        ASSERT_NE(update, nullptr);
        EXPECT_EQ(update->version, applied->version);
        got = update->events;
        last_event_version = update->version;
      }
      EXPECT_FALSE(watcher.queue().Pop(&message)) << "one message per batch";
      ASSERT_EQ(Describe(got), Describe(want)) << "seed " << seed << " step " << step;
      for (size_t i = 0; i < got.size(); ++i) {
        const WatchEvent& e = got[i];
        if (e.kind == WatchEventKind::kEnter) {
          ++enters;
          CheckEnter(e, expected[i], seed, step);
          if (i + 1 < got.size() && got[i + 1].kind == WatchEventKind::kExit &&
              got[i + 1].watch_id == e.watch_id && got[i + 1].body_id == e.body_id) {
            ++crossings;
          }
        }
        if (e.kind == WatchEventKind::kContactBegin || e.kind == WatchEventKind::kContactEnd) {
          ++contact_events;
        } else if ((e.watch_id - 1000) % 35 == 0) {
          ++attached_events;
        }
      }
    }
    // The replay exercised what it claims to test.
    EXPECT_GT(enters, 100) << "seed " << seed;
    EXPECT_GT(crossings, 5) << "seed " << seed;
    EXPECT_GT(contact_events, 20) << "seed " << seed;
    EXPECT_GT(attached_events, 10) << "seed " << seed;
    EXPECT_LT(skipped, 10) << "seed " << seed;

    // The slow watcher resynced and, from its messages, holds exactly the final state.
    Replica replica;
    while (slow.queue().Pop(&message)) replica.Take(message);
    EXPECT_GT(slow.queue().overflows(), 0u);
    EXPECT_GT(replica.resyncs, 0);
    EXPECT_EQ(replica.version, last_event_version);
    replica.Compare(oracle.Snapshot());
  }
}

TEST(Watcher, ReportsASmallFastBodyCrossingAThinFenceInOneStep) {
  auto scene = std::make_shared<Scene>("arena", SceneOptions{});
  ASSERT_TRUE(
      scene
          ->Apply({{UpsertOp(BodyDesc{.id = 7,
                                      .shape = Sphere{0.05f},
                                      .pose = Pose{Quat::Identity(), {-50.0f, 0.5f, 0.0f}}})}})
          .ok());
  Watcher watcher({FenceSpec{.id = 3, .shape = Box{{0.01f, 2.0f, 2.0f}}}}, {}, 64);
  ASSERT_TRUE(watcher.Attach(scene).ok());
  WatchMessage message;
  ASSERT_TRUE(watcher.queue().Pop(&message));  // the starting snapshot: fence 3 empty
  ASSERT_TRUE(std::get<WatchSnapshot>(message).fences[0].body_ids.empty());

  auto applied = scene->Apply({{SetPoseOp(7, Pose{Quat::Identity(), {50.0f, 0.5f, 0.0f}})}});
  ASSERT_TRUE(applied.ok());
  ASSERT_TRUE(watcher.queue().Pop(&message));
  const WatchUpdate& update = std::get<WatchUpdate>(message);
  EXPECT_EQ(update.version, applied->version);
  ASSERT_EQ(update.events.size(), 2u);
  EXPECT_EQ(update.events[0].kind, WatchEventKind::kEnter);
  EXPECT_EQ(update.events[0].watch_id, 3u);
  EXPECT_EQ(update.events[0].body_id, 7u);
  EXPECT_NEAR(update.events[0].point.x, -0.01f, 1e-4f);
  EXPECT_NEAR(update.events[0].point.y, 0.5f, 1e-4f);
  EXPECT_NEAR(update.events[0].normal.x, -1.0f, 1e-5f);
  EXPECT_EQ(update.events[1].kind, WatchEventKind::kExit);
  EXPECT_EQ(update.events[1].body_id, 7u);

  // Passing beside the fence (0.05 beyond its edge) yields nothing.
  ASSERT_TRUE(scene->Apply({{SetPoseOp(7, Pose{Quat::Identity(), {50.0f, 2.1f, 0.0f}})}}).ok());
  ASSERT_TRUE(scene->Apply({{SetPoseOp(7, Pose{Quat::Identity(), {-50.0f, 2.1f, 0.0f}})}}).ok());
  EXPECT_FALSE(watcher.queue().Pop(&message));
}

TEST(Watcher, ExitsWhenABodyInsideIsRemovedAndClosesWhenTheSceneIsDeleted) {
  auto scene = std::make_shared<Scene>("arena", SceneOptions{});
  ASSERT_TRUE(scene->Apply({{UpsertOp(BodyDesc{.id = 1, .shape = Sphere{0.5f}})}}).ok());
  Watcher watcher({FenceSpec{.id = 1, .shape = Sphere{2.0f}}}, {}, 64);
  ASSERT_TRUE(watcher.Attach(scene).ok());
  WatchMessage message;
  ASSERT_TRUE(watcher.queue().Pop(&message));
  EXPECT_EQ(std::get<WatchSnapshot>(message).fences[0].body_ids, std::vector<uint64_t>{1});
  ASSERT_TRUE(scene->Apply({{RemoveOp(1)}}).ok());
  ASSERT_TRUE(watcher.queue().Pop(&message));
  ASSERT_EQ(std::get<WatchUpdate>(message).events.size(), 1u);
  EXPECT_EQ(std::get<WatchUpdate>(message).events[0].kind, WatchEventKind::kExit);
  EXPECT_FALSE(watcher.queue().Finished());
  ASSERT_TRUE(scene->MarkDeleted([] { return absl::OkStatus(); }).ok());
  EXPECT_TRUE(watcher.queue().Finished());
}

}  // namespace
}  // namespace collide
