// WatchDispatcher: watchers evaluated on worker threads, away from the scene's writer.
// - Dispatched watchers against the brute-force replay (watch_oracle.h), event for event, on two
//   workers, including one attached midway (its snapshot is the oracle's state at that version).
// - A writer that never waits: hundreds of batches applied back to back while the workers lag;
//   every dispatched watcher's messages are then exactly those of a watcher run inline on the
//   writer (which the oracle test in watcher_test.cc judges), and a tiny-queue watcher resyncs
//   into the same final state.
// - A worker deliberately blocked: the writer still applies every batch at once, the backlog
//   stays within its bound, overflows, and every watcher resyncs into the scene's final state.
// - The contents and queued-bytes budgets: a watch that would pass the contents limit ends
//   (kContentsExhausted) and gives back everything it held; an unread watcher turns queue
//   overflow into a resync within the byte limit.
// - Scene deletion closes the watchers after their last update; hubs retire with their last
//   watcher.

#include "watch/watch_dispatcher.h"

#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "scene/scene.h"
#include "watch/watch_hub.h"
#include "watch/watch_test_util.h"
#include "watch/watcher.h"

namespace collide {
namespace {

using testing::CheckEnter;
using testing::Describe;
using testing::OracleEvent;
using testing::Replica;
using testing::WatchGenerator;
using testing::WatchOracle;

constexpr float kEps = 0.01f;

std::vector<FenceSpec> RandomFences(WatchGenerator& gen) {
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
  return fences;
}

const std::vector<ContactWatchSpec> kContacts = {{.id = 5, .category_a = 1, .category_b = 2},
                                                 {.id = 9}};

// Everything queued for `watcher`, in order.
std::vector<WatchMessage> Drain(Watcher& watcher) {
  std::vector<WatchMessage> out;
  WatchMessage message;
  while (watcher.queue().Pop(&message)) out.push_back(std::move(message));
  return out;
}

// A comparable rendering of a message.
std::vector<std::string> Render(const WatchMessage& message) {
  if (const auto* s = std::get_if<WatchSnapshot>(&message)) {
    std::vector<std::string> out = {
        absl::StrCat("snapshot ", s->version, " ", s->tick, s->resync ? " resync" : "")};
    for (const FenceContents& f : s->fences) {
      out.push_back(absl::StrCat("fence ", f.fence_id, ": ", absl::StrJoin(f.body_ids, " ")));
    }
    for (const ContactPair& p : s->contacts) {
      out.push_back(absl::StrCat("pair ", p.watch_id, " ", p.body_id, " ", p.other_body_id));
    }
    return out;
  }
  const WatchUpdate& u = std::get<WatchUpdate>(message);
  std::vector<std::string> out = {absl::StrCat("update ", u.version, " ", u.tick)};
  for (const std::string& e : Describe(u.events)) out.push_back(e);
  return out;
}

std::vector<std::vector<std::string>> Render(const std::vector<WatchMessage>& messages) {
  std::vector<std::vector<std::string>> out;
  for (const WatchMessage& m : messages) out.push_back(Render(m));
  return out;
}

// A fresh watcher's starting snapshot of `scene` now (run inline).
WatchSnapshot Probe(const std::shared_ptr<Scene>& scene, std::vector<FenceSpec> fences,
                    std::vector<ContactWatchSpec> contacts) {
  Watcher probe(std::move(fences), std::move(contacts), 1 << 20);
  EXPECT_TRUE(probe.Attach(scene).ok());
  WatchMessage message;
  EXPECT_TRUE(probe.queue().Pop(&message));
  return std::get<WatchSnapshot>(message);
}

TEST(WatchDispatcher, DispatchedWatchersMatchABruteForceReplayEventForEvent) {
  for (uint32_t seed : {21u, 22u}) {
    WatchGenerator gen(seed);
    const std::vector<FenceSpec> fences = RandomFences(gen);
    WatchOracle oracle(fences, kContacts, kEps);
    auto scene = std::make_shared<Scene>("arena", SceneOptions{});
    WatchDispatcher dispatcher(WatchDispatcher::Options{.threads = 2});
    std::vector<std::shared_ptr<Watcher>> watchers;
    std::vector<std::unique_ptr<WatchDispatcher::Attachment>> attachments;
    for (int k = 0; k < 3; ++k) {
      watchers.push_back(std::make_shared<Watcher>(fences, kContacts, 1 << 20));
      attachments.push_back(dispatcher.Attach(scene, watchers.back()));
    }
    dispatcher.WaitIdle();
    for (auto& w : watchers) {
      std::vector<WatchMessage> first = Drain(*w);
      ASSERT_EQ(first.size(), 1u);
      ASSERT_TRUE(std::holds_alternative<WatchSnapshot>(first[0]));
      EXPECT_EQ(std::get<WatchSnapshot>(first[0]).version, 0u);
    }
    int enters = 0, skipped = 0, late_events = 0;
    for (int step = 0; step < 200; ++step) {
      UpdateBatch batch;
      std::vector<OracleEvent> expected;
      if (!gen.UnambiguousBatch(oracle, &batch, &expected)) {
        ++skipped;
        continue;
      }
      oracle.Commit(batch);
      auto applied = scene->Apply(batch);
      ASSERT_TRUE(applied.ok()) << applied.status();
      dispatcher.WaitIdle();
      std::vector<WatchEvent> want;
      for (const OracleEvent& e : expected) want.push_back(e.event);
      for (size_t k = 0; k < watchers.size(); ++k) {
        std::vector<WatchMessage> got = Drain(*watchers[k]);
        ASSERT_LE(got.size(), 1u) << "one message per batch";
        std::vector<WatchEvent> events;
        if (!got.empty()) {
          const WatchUpdate* update = std::get_if<WatchUpdate>(&got[0]);
          ASSERT_NE(update, nullptr) << "seed " << seed << " step " << step;
          EXPECT_EQ(update->version, applied->version);
          events = update->events;
        }
        ASSERT_EQ(Describe(events), Describe(want))
            << "seed " << seed << " step " << step << " watcher " << k;
        if (k == 0) {
          for (size_t i = 0; i < events.size(); ++i) {
            if (events[i].kind != WatchEventKind::kEnter) continue;
            ++enters;
            CheckEnter(events[i], expected[i], seed, step);
          }
        }
        if (k == 3) late_events += static_cast<int>(events.size());
      }
      if (step == 100) {
        // A watcher attached midway starts from the oracle's state at this version.
        watchers.push_back(std::make_shared<Watcher>(fences, kContacts, 1 << 20));
        attachments.push_back(dispatcher.Attach(scene, watchers.back()));
        dispatcher.WaitIdle();
        std::vector<WatchMessage> first = Drain(*watchers.back());
        ASSERT_EQ(first.size(), 1u);
        const WatchSnapshot& snapshot = std::get<WatchSnapshot>(first[0]);
        EXPECT_FALSE(snapshot.resync);
        EXPECT_EQ(snapshot.version, applied->version);
        Replica replica;
        replica.Take(first[0]);
        replica.Compare(oracle.Snapshot());
      }
    }
    EXPECT_GT(enters, 100) << "seed " << seed;
    EXPECT_GT(late_events, 20) << "seed " << seed;
    EXPECT_LT(skipped, 10) << "seed " << seed;
  }
}

TEST(WatchDispatcher, AWriterThatNeverWaitsGetsTheSameMessagesAsAnInlineWatcher) {
  WatchGenerator gen(41);
  const std::vector<FenceSpec> fences = RandomFences(gen);
  WatchOracle bodies({}, {}, kEps);  // the body table, to generate valid batches
  auto scene = std::make_shared<Scene>("arena", SceneOptions{});
  Watcher inline_watcher(fences, kContacts, 1 << 20);
  ASSERT_TRUE(inline_watcher.Attach(scene).ok());
  WatchDispatcher dispatcher(WatchDispatcher::Options{.threads = 2, .batches_per_turn = 3});
  std::vector<std::shared_ptr<Watcher>> watchers;
  std::vector<std::unique_ptr<WatchDispatcher::Attachment>> attachments;
  for (int k = 0; k < 6; ++k) {
    watchers.push_back(std::make_shared<Watcher>(fences, kContacts, 1 << 20));
    attachments.push_back(dispatcher.Attach(scene, watchers.back()));
  }
  // A slow one: four events fit in its queue, so it resyncs.
  auto slow = std::make_shared<Watcher>(fences, kContacts, 4);
  attachments.push_back(dispatcher.Attach(scene, slow));
  // A second scene's watcher takes turns with this one's on the same workers.
  auto other_scene = std::make_shared<Scene>("other", SceneOptions{});
  auto other = std::make_shared<Watcher>(fences, kContacts, 1 << 20);
  attachments.push_back(dispatcher.Attach(other_scene, other));
  dispatcher.WaitIdle();

  for (int step = 0; step < 400; ++step) {
    const UpdateBatch batch = gen.Batch(bodies.bodies());
    bodies.Commit(batch);
    ASSERT_TRUE(scene->Apply(batch).ok());
    ASSERT_TRUE(other_scene->Apply(batch).ok());
  }
  dispatcher.WaitIdle();
  const std::vector<WatchMessage> want = Drain(inline_watcher);
  ASSERT_GT(want.size(), 100u);
  const auto rendered = Render(want);
  for (auto& w : watchers) EXPECT_EQ(Render(Drain(*w)), rendered);
  EXPECT_EQ(Render(Drain(*other)), rendered);
  Replica expected, resynced;
  for (const WatchMessage& m : want) expected.Take(m);
  for (const WatchMessage& m : Drain(*slow)) resynced.Take(m);
  EXPECT_GT(resynced.resyncs, 0);
  EXPECT_EQ(resynced.version, expected.version);
  EXPECT_EQ(resynced.inside, expected.inside);
  EXPECT_EQ(resynced.contacts, expected.contacts);
  inline_watcher.Detach();
}

// The plates of the concurrency test: thin boxes across the bodies' path.
std::vector<FenceSpec> Plates() {
  std::vector<FenceSpec> fences;
  for (uint64_t i = 0; i < 8; ++i) {
    fences.push_back(FenceSpec{.id = i + 1,
                               .shape = Box{{0.05f, 20.0f, 20.0f}},
                               .pose = Pose{Quat::Identity(), {-8.0f + 2.0f * i, 0.0f, 0.0f}}});
  }
  return fences;
}

// Bodies 1..40 in a column at x = -10.
std::shared_ptr<Scene> ColumnScene() {
  auto scene = std::make_shared<Scene>("arena", SceneOptions{});
  UpdateBatch create;
  for (uint64_t id = 1; id <= 40; ++id) {
    create.ops.push_back(UpsertOp(BodyDesc{
        .id = id, .shape = Sphere{0.2f}, .pose = Pose{Quat::Identity(), {-10, 0.3f * id, 0}}}));
  }
  EXPECT_TRUE(scene->Apply(create).ok());
  return scene;
}

// Moves bodies [first, first + count) to x.
UpdateBatch Sweep(uint64_t first, uint64_t count, float x) {
  UpdateBatch batch;
  for (uint64_t id = first; id < first + count; ++id) {
    batch.ops.push_back(SetPoseOp(id, Pose{Quat::Identity(), {x, 0.3f * id, 0}}));
  }
  return batch;
}

TEST(WatchDispatcher, ABlockedWorkerNeverHoldsTheWriterAndAnOverflowedBacklogResyncs) {
  auto scene = ColumnScene();
  const uint64_t backlog_limit = 4 * WatchHub::BatchBytes(10);
  WatchDispatcher dispatcher(
      WatchDispatcher::Options{.threads = 1, .limits = {.max_backlog_bytes = backlog_limit}});
  // The blocker: its listener, run on the worker, waits for the test once armed.
  auto blocker = std::make_shared<Watcher>(
      std::vector<FenceSpec>{
          {.id = 1, .shape = Sphere{1.0f}, .pose = Pose{Quat::Identity(), {30, 0.3f, 0}}}},
      std::vector<ContactWatchSpec>{}, 1 << 20);
  std::atomic<bool> armed{false};
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  blocker->queue().SetListener([&] {
    if (armed.exchange(false)) {
      entered.set_value();
      released.wait();
    }
  });
  std::vector<std::shared_ptr<Watcher>> watchers;
  std::vector<std::unique_ptr<WatchDispatcher::Attachment>> attachments;
  attachments.push_back(dispatcher.Attach(scene, blocker));
  // Queues large enough that only the backlog's overflow makes them resync.
  const WatcherOptions options{.max_queued_events = 1 << 20, .budget = &dispatcher.budget()};
  for (int k = 0; k < 3; ++k) {
    watchers.push_back(
        std::make_shared<Watcher>(Plates(), std::vector<ContactWatchSpec>{}, options));
    attachments.push_back(dispatcher.Attach(scene, watchers.back()));
  }
  dispatcher.WaitIdle();
  std::vector<Replica> replicas(watchers.size());
  for (size_t k = 0; k < watchers.size(); ++k) {
    for (const WatchMessage& m : Drain(*watchers[k])) replicas[k].Take(m);
  }
  Drain(*blocker);

  // Body 1 enters the blocker's fence: the worker blocks in its listener.
  armed = true;
  ASSERT_TRUE(scene->Apply(Sweep(1, 1, 30.0f)).ok());
  ASSERT_EQ(entered.get_future().wait_for(std::chrono::seconds(60)), std::future_status::ready);

  // Meanwhile the writer applies 30 batches: none waits for the worker (a generous bound: the
  // writer only copies records; a writer waiting for the blocked worker would never finish).
  uint64_t most_backlog = 0;
  auto writer = std::async(std::launch::async, [&] {
    for (int b = 0; b < 30; ++b) {
      const float x = b % 2 == 0 ? 10.0f : -10.0f;
      if (!scene->Apply(Sweep(2, 10, x)).ok()) return false;
      most_backlog = std::max(most_backlog, dispatcher.budget().backlog_bytes.used());
    }
    return true;
  });
  ASSERT_EQ(writer.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "the writer waited for a blocked watch worker";
  EXPECT_TRUE(writer.get());
  EXPECT_LE(most_backlog, backlog_limit);
  EXPECT_GT(most_backlog, 0u);
  const uint64_t final_version = scene->version();

  release.set_value();
  dispatcher.WaitIdle();
  const WatchSnapshot truth = Probe(scene, Plates(), {});
  for (size_t k = 0; k < watchers.size(); ++k) {
    for (const WatchMessage& m : Drain(*watchers[k])) replicas[k].Take(m);
    EXPECT_GT(replicas[k].resyncs, 0) << k;
    EXPECT_EQ(replicas[k].version, final_version) << k;
    replicas[k].Compare(truth);
  }
  EXPECT_GE(dispatcher.budget().resyncs.load(), watchers.size());
  EXPECT_EQ(dispatcher.budget().backlog_bytes.used(), 0u);
}

// A hub keeps the buffers of the batches it evaluated for the next ones (a tick loop's batch of
// every body would otherwise be a fresh mapping, faulted in every tick): at most kSpareBuffers
// of each kind (moves, change records), never one past kSpareBufferBytes. (Every dispatcher test
// here runs on reused buffers: their answers are unchanged by it.)
TEST(WatchHub, KeepsTheBuffersOfEvaluatedBatchesForTheNextWithinItsBound) {
  auto scene = ColumnScene();
  auto hub = std::make_shared<WatchHub>(scene, nullptr, [](std::shared_ptr<WatchHub>) {});
  hub->Step(16);  // the first step registers with the scene
  EXPECT_EQ(hub->spare_move_buffers(), 0u);
  // Batches of moves come as moves.
  ASSERT_TRUE(scene->Apply(Sweep(1, 10, 5.0f)).ok());
  EXPECT_EQ(hub->spare_move_buffers(), 0u);
  hub->Step(16);
  EXPECT_EQ(hub->spare_move_buffers(), 1u);
  EXPECT_EQ(hub->spare_change_buffers(), 0u);
  // The next batch takes the kept buffer; the two after it new ones; all three kept, up to two.
  for (int b = 0; b < 3; ++b) ASSERT_TRUE(scene->Apply(Sweep(1, 20, -5.0f + b)).ok());
  EXPECT_EQ(hub->spare_move_buffers(), 0u);
  hub->Step(16);
  EXPECT_EQ(hub->spare_move_buffers(), WatchHub::kSpareBuffers);
  // Batches that create bodies come as change records, kept likewise.
  auto create = [](uint64_t first, uint64_t count) {
    UpdateBatch batch;
    for (uint64_t id = first; id < first + count; ++id) {
      batch.ops.push_back(UpsertOp(BodyDesc{
          .id = id, .shape = Sphere{0.2f}, .pose = Pose{Quat::Identity(), {20, 0.3f * id, 0}}}));
    }
    return batch;
  };
  ASSERT_TRUE(scene->Apply(create(1000, 10)).ok());
  hub->Step(16);
  EXPECT_EQ(hub->spare_change_buffers(), 1u);
  EXPECT_EQ(hub->spare_move_buffers(), WatchHub::kSpareBuffers);
  // A batch whose records pass kSpareBufferBytes takes a kept buffer and grows it: freed after.
  const uint64_t large = WatchHub::kSpareBufferBytes / sizeof(BodyChange) + 100;
  ASSERT_TRUE(scene->Apply(create(2000, large)).ok());
  EXPECT_EQ(hub->spare_change_buffers(), 0u);
  hub->Step(16);
  EXPECT_EQ(hub->spare_change_buffers(), 0u);
  // So does a batch of moves past it.
  const uint64_t many = WatchHub::kSpareBufferBytes / sizeof(BodyMove) + 100;
  ASSERT_TRUE(scene->Apply(create(2000 + large, many)).ok());
  hub->Step(16);
  ASSERT_TRUE(scene->Apply(Sweep(2000, large + many, 25.0f)).ok());
  EXPECT_EQ(hub->spare_move_buffers(), WatchHub::kSpareBuffers - 1);
  hub->Step(16);
  EXPECT_EQ(hub->spare_move_buffers(), WatchHub::kSpareBuffers - 1);
  hub->Unregister();
}

TEST(WatchDispatcher, AWatchThatWouldPassTheContentsLimitEndsAndGivesBackWhatItHeld) {
  auto scene = ColumnScene();  // 40 bodies at x = -10
  WatchDispatcher dispatcher(WatchDispatcher::Options{.limits = {.max_contents = 50}});
  WatchBudget& budget = dispatcher.budget();
  // A box around the column holds all 40.
  const FenceSpec column{.id = 1,
                         .shape = Box{{1.0f, 20.0f, 1.0f}},
                         .pose = Pose{Quat::Identity(), {-10.0f, 6.0f, 0.0f}}};
  WatcherOptions options{.max_queued_events = 1 << 16, .budget = &budget};
  auto first = std::make_shared<Watcher>(std::vector<FenceSpec>{column},
                                         std::vector<ContactWatchSpec>{}, options);
  auto a1 = dispatcher.Attach(scene, first);
  dispatcher.WaitIdle();
  EXPECT_EQ(budget.contents.used(), 40u);
  std::vector<WatchMessage> got = Drain(*first);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(std::get<WatchSnapshot>(got[0]).fences[0].body_ids.size(), 40u);

  // A second watch of the same column does not fit: it ends at its start, holding nothing.
  auto second = std::make_shared<Watcher>(std::vector<FenceSpec>{column},
                                          std::vector<ContactWatchSpec>{}, options);
  auto a2 = dispatcher.Attach(scene, second);
  dispatcher.WaitIdle();
  EXPECT_TRUE(second->ended());
  EXPECT_TRUE(second->queue().Finished());
  EXPECT_EQ(second->queue().end_reason(), WatchEnd::kContentsExhausted);
  EXPECT_EQ(budget.exhausted.load(), 1u);
  EXPECT_EQ(budget.contents.used(), 40u);

  // A small watch (body 1 alone) fits beside the first.
  auto small = std::make_shared<Watcher>(
      std::vector<FenceSpec>{
          {.id = 2, .shape = Sphere{0.05f}, .pose = Pose{Quat::Identity(), {-10, 0.3f, 0}}}},
      std::vector<ContactWatchSpec>{}, options);
  auto a3 = dispatcher.Attach(scene, small);
  dispatcher.WaitIdle();
  EXPECT_FALSE(small->ended());
  EXPECT_EQ(budget.contents.used(), 41u);

  // Upserting 20 more bodies into the column takes the first watch past the limit: it ends at
  // that batch and gives back its 40 entries; the small one goes on.
  UpdateBatch more;
  for (uint64_t id = 101; id <= 120; ++id) {
    more.ops.push_back(
        UpsertOp(BodyDesc{.id = id,
                          .shape = Sphere{0.1f},
                          .pose = Pose{Quat::Identity(), {-10, 1.0f + 0.5f * (id - 100), 0}}}));
  }
  ASSERT_TRUE(scene->Apply(more).ok());
  dispatcher.WaitIdle();
  EXPECT_TRUE(first->ended());
  EXPECT_EQ(first->queue().end_reason(), WatchEnd::kContentsExhausted);
  EXPECT_FALSE(small->ended());
  EXPECT_EQ(budget.exhausted.load(), 2u);
  EXPECT_EQ(budget.contents.used(), 1u);
  Drain(*first);
  EXPECT_TRUE(first->queue().Finished());

  // A pair counts 2 + 2 entries per contact watch: the column's 39 overlapping neighbours
  // (radius 0.2, 0.3 apart) are 156 entries for one contact watch, over the limit.
  UpdateBatch touching;
  for (uint64_t id = 1; id <= 40; ++id) {
    touching.ops.push_back(SetPoseOp(id, Pose{Quat::Identity(), {-30, 0.3f * id, 0}}));
  }
  ASSERT_TRUE(scene->Apply(touching).ok());
  dispatcher.WaitIdle();
  const uint64_t before = budget.contents.used();  // body 1 left the small fence: 0
  EXPECT_EQ(before, 0u);
  auto contacts = std::make_shared<Watcher>(std::vector<FenceSpec>{},
                                            std::vector<ContactWatchSpec>{{.id = 1}}, options);
  auto a4 = dispatcher.Attach(scene, contacts);
  dispatcher.WaitIdle();
  EXPECT_TRUE(contacts->ended());
  EXPECT_EQ(contacts->queue().end_reason(), WatchEnd::kContentsExhausted);
  EXPECT_EQ(budget.contents.used(), before);
  // With room for them, the same pairs are held: 156 entries.
  WatchDispatcher roomy(WatchDispatcher::Options{.limits = {.max_contents = 156}});
  auto fits = std::make_shared<Watcher>(
      std::vector<FenceSpec>{}, std::vector<ContactWatchSpec>{{.id = 1}},
      WatcherOptions{.max_queued_events = 1 << 16, .budget = &roomy.budget()});
  auto a5 = roomy.Attach(scene, fits);
  roomy.WaitIdle();
  EXPECT_FALSE(fits->ended());
  EXPECT_EQ(roomy.budget().contents.used(), 156u);
  std::vector<WatchMessage> pairs = Drain(*fits);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(std::get<WatchSnapshot>(pairs[0]).contacts.size(), 39u);
  a5.reset();

  a1.reset();
  a2.reset();
  a3.reset();
  a4.reset();
  dispatcher.WaitIdle();
  first.reset();
  second.reset();
  small.reset();
  contacts.reset();
  EXPECT_EQ(budget.contents.used(), 0u);
}

TEST(WatchDispatcher, AnUnreadWatcherResyncsWithinTheQueuedBytesLimit) {
  auto scene = ColumnScene();
  // Room for about three updates of 40 events.
  WatchUpdate sample;
  sample.events.resize(40);
  const uint64_t limit = 3 * WatchQueue::UpdateBytes(sample);
  WatchDispatcher dispatcher(WatchDispatcher::Options{.limits = {.max_queued_bytes = limit}});
  WatcherOptions options{.max_queued_events = 1 << 20, .budget = &dispatcher.budget()};
  auto watcher = std::make_shared<Watcher>(Plates(), std::vector<ContactWatchSpec>{}, options);
  auto attachment = dispatcher.Attach(scene, watcher);
  uint64_t most = 0;
  for (int b = 0; b < 20; ++b) {
    // Each batch sweeps the 40 bodies across a plate or two (an enter and an exit each).
    ASSERT_TRUE(scene->Apply(Sweep(1, 40, b % 2 == 0 ? -7.0f : -10.0f)).ok());
    dispatcher.WaitIdle();
    most = std::max(most, dispatcher.budget().queued_bytes.used());
  }
  EXPECT_LE(most, limit);
  EXPECT_GT(most, 0u);
  Replica replica;
  for (const WatchMessage& m : Drain(*watcher)) replica.Take(m);
  EXPECT_GT(replica.resyncs, 0);
  EXPECT_EQ(replica.version, scene->version());
  replica.Compare(Probe(scene, Plates(), {}));
  EXPECT_EQ(dispatcher.budget().queued_bytes.used(), 0u);
}

TEST(WatchDispatcher, DeletingTheSceneClosesItsWatchersAfterTheirLastUpdateAndHubsRetire) {
  auto scene = ColumnScene();
  WatchDispatcher dispatcher(WatchDispatcher::Options{});
  auto watcher = std::make_shared<Watcher>(Plates(), std::vector<ContactWatchSpec>{}, 1 << 16);
  auto attachment = dispatcher.Attach(scene, watcher);
  dispatcher.WaitIdle();
  EXPECT_EQ(dispatcher.hub_count(), 1u);
  ASSERT_TRUE(scene->Apply(Sweep(1, 40, 10.0f)).ok());
  const uint64_t last = scene->version();
  ASSERT_TRUE(scene->MarkDeleted([] { return absl::OkStatus(); }).ok());
  dispatcher.WaitIdle();
  std::vector<WatchMessage> got = Drain(*watcher);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(std::get<WatchUpdate>(got[1]).version, last);
  EXPECT_TRUE(watcher->queue().Finished());
  EXPECT_EQ(watcher->queue().end_reason(), WatchEnd::kSceneDeleted);
  // A watcher attached after the deletion is closed at once.
  auto late = std::make_shared<Watcher>(Plates(), std::vector<ContactWatchSpec>{}, 1 << 16);
  auto late_attachment = dispatcher.Attach(scene, late);
  dispatcher.WaitIdle();
  EXPECT_TRUE(late->queue().Finished());
  EXPECT_TRUE(Drain(*late).empty());
  attachment.reset();
  late_attachment.reset();
  dispatcher.WaitIdle();
  EXPECT_EQ(dispatcher.hub_count(), 0u);

  // On a live scene, the hub goes with the last watcher, and a new watcher brings a new one.
  auto live = ColumnScene();
  auto w1 = std::make_shared<Watcher>(Plates(), std::vector<ContactWatchSpec>{}, 1 << 16);
  auto a1 = dispatcher.Attach(live, w1);
  dispatcher.WaitIdle();
  a1.reset();
  dispatcher.WaitIdle();
  EXPECT_EQ(dispatcher.hub_count(), 0u);
  auto w2 = std::make_shared<Watcher>(Plates(), std::vector<ContactWatchSpec>{}, 1 << 16);
  auto a2 = dispatcher.Attach(live, w2);
  dispatcher.WaitIdle();
  ASSERT_TRUE(live->Apply(Sweep(1, 40, 10.0f)).ok());
  dispatcher.WaitIdle();
  std::vector<WatchMessage> messages = Drain(*w2);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(std::get<WatchSnapshot>(messages[0]).version, 1u);
  EXPECT_EQ(std::get<WatchUpdate>(messages[1]).version, live->version());
  EXPECT_EQ(dispatcher.hub_count(), 1u);
  // A watcher attached right after a batch (no wait) starts at that batch's version or later.
  ASSERT_TRUE(live->Apply(Sweep(1, 40, -10.0f)).ok());
  const uint64_t applied = live->version();
  auto w3 = std::make_shared<Watcher>(Plates(), std::vector<ContactWatchSpec>{}, 1 << 16);
  auto a3 = dispatcher.Attach(live, w3);
  dispatcher.WaitIdle();
  messages = Drain(*w3);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_GE(std::get<WatchSnapshot>(messages[0]).version, applied);
}

TEST(WatchDispatcher, AnAttachmentMayOutliveItsDispatcher) {
  auto scene = ColumnScene();
  auto dispatcher = std::make_unique<WatchDispatcher>(WatchDispatcher::Options{});
  auto watcher = std::make_shared<Watcher>(Plates(), std::vector<ContactWatchSpec>{}, 1 << 16);
  auto attachment = dispatcher->Attach(scene, watcher);
  dispatcher->WaitIdle();
  dispatcher.reset();
  // The scene has no observer left, and the detach schedules nothing.
  ASSERT_TRUE(scene->Apply(Sweep(1, 40, 10.0f)).ok());
  attachment.reset();
  std::vector<WatchMessage> got = Drain(*watcher);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<WatchSnapshot>(got[0]));
}

TEST(Allowance, TakesOnlyWhatFitsUpToTheLargestLimit) {
  Allowance none(0);
  EXPECT_TRUE(none.TryTake(0));
  EXPECT_FALSE(none.TryTake(1));
  Allowance most;  // 2^64 - 1
  EXPECT_TRUE(most.TryTake(most.limit() - 1));
  EXPECT_TRUE(most.TryTake(1));
  EXPECT_FALSE(most.TryTake(1));
  most.Give(most.limit());
  EXPECT_EQ(most.used(), 0u);
  EXPECT_FALSE(most.TryTake(most.limit()) && most.TryTake(most.limit()));
  Allowance ten(10);
  EXPECT_TRUE(ten.TryTake(7));
  EXPECT_FALSE(ten.TryTake(4));
  EXPECT_TRUE(ten.TryTake(3));
  EXPECT_EQ(ten.used(), 10u);
}

TEST(ContentsMeter, TakesChunksWhenItCanAndGivesBackAtTrimAndDestruction) {
  Allowance pool(2 * ContentsMeter::kChunk);
  {
    ContentsMeter a(&pool);
    ASSERT_TRUE(a.Add(1));
    EXPECT_EQ(pool.used(), 1 + ContentsMeter::kChunk);  // a chunk of slack while it grows
    a.Trim();
    EXPECT_EQ(pool.used(), 1u);
    ContentsMeter b(&pool);
    // More than a chunk of slack does not fit: b takes exactly what it needs.
    ASSERT_TRUE(b.Add(ContentsMeter::kChunk + 100));
    EXPECT_EQ(pool.used(), ContentsMeter::kChunk + 101);
    EXPECT_FALSE(a.Add(ContentsMeter::kChunk));  // (chunk + 101) + chunk > 2 chunks
    EXPECT_EQ(a.in_use(), 1u);
    b.Remove(100);
    b.Trim();
    EXPECT_EQ(pool.used(), ContentsMeter::kChunk + 1);
  }
  EXPECT_EQ(pool.used(), 0u);
}

}  // namespace
}  // namespace collide
