// InterestWatcher: an interest stream's standing query, driven by hand on a mirror and through a
// WatchDispatcher.
// - Its messages: the starting snapshot (the observers of the messages submitted before it),
//   one update per batch that changed a set, one per round of client changes (even without a
//   delta: requests_applied tells the client its messages are in effect).
// - Client changes coalesced per observer: a removal then a new spec before the worker runs
//   makes the observer start afresh (a full set), not change.
// - A consumer rebuilding the sets from the messages of a dispatched watcher (with changes
//   submitted while batches are applied back to back) ends with exactly the brute force's sets;
//   an unread watcher with a tiny queue resyncs into the same sets.
// - The contents budget: a stream whose sets would pass it ends (kContentsExhausted) and gives
//   back what it held.

#include "watch/interest_watcher.h"

#include <map>
#include <memory>
#include <random>
#include <set>
#include <variant>
#include <vector>

#include "gtest/gtest.h"
#include "scene/scene.h"
#include "watch/interest_oracle.h"
#include "watch/watch_dispatcher.h"

namespace collide {
namespace {

using testing::InterestOracle;

class Recorder final : public SceneObserver {
 public:
  void OnApplied(const AppliedBatch& batch, const SceneView&) override {
    changes.assign(batch.changes.begin(), batch.changes.end());
  }
  void OnDeleted() override {}
  std::vector<BodyChange> changes;
};

// The sets a client rebuilds from the messages.
struct Client {
  std::map<uint64_t, std::set<uint64_t>> sets;
  uint64_t version = 0;
  uint64_t requests_applied = 0;
  int snapshots = 0;
  int resyncs = 0;
  int updates = 0;

  void Take(const InterestMessage& message) {
    if (const auto* s = std::get_if<InterestSnapshot>(&message)) {
      sets.clear();
      size_t at = 0;
      for (const RelevantSet& r : s->sets) {
        sets[r.observer_id].insert(s->ids.begin() + at, s->ids.begin() + at + r.count);
        at += r.count;
      }
      EXPECT_EQ(at, s->ids.size());
      EXPECT_GE(s->version, version);
      version = s->version;
      requests_applied = s->requests_applied;
      ++snapshots;
      resyncs += s->resync;
      return;
    }
    const InterestUpdate& u = std::get<InterestUpdate>(message);
    EXPECT_GE(u.version, version);
    EXPECT_GE(u.requests_applied, requests_applied);
    version = u.version;
    requests_applied = u.requests_applied;
    ++updates;
    size_t at = 0;
    for (const ObserverDelta& d : u.deltas) {
      std::set<uint64_t>& set = sets[d.observer_id];
      if (d.full) set.clear();
      set.insert(u.ids.begin() + at, u.ids.begin() + at + d.entered);
      at += d.entered;
      for (uint32_t k = 0; k < d.left; ++k) {
        EXPECT_EQ(set.erase(u.ids[at + k]), 1u) << "left but not held: " << u.ids[at + k];
      }
      at += d.left;
    }
    EXPECT_EQ(at, u.ids.size());
  }
  void Drain(InterestWatcher& watcher) {
    InterestMessage message;
    while (watcher.queue().Pop(&message)) Take(message);
  }
  // Drops the sets of observers the client removed (what a client library does).
  void Forget(uint64_t id) { sets.erase(id); }
};

ObserverSpec Spec(uint64_t id, Vec3 at, float enter, float leave, uint32_t n) {
  ObserverSpec spec;
  spec.id = id;
  spec.pose.position = at;
  spec.enter_radius = enter;
  spec.leave_radius = leave;
  spec.max_relevant = n;
  return spec;
}

UpdateOp Ball(uint64_t id, Vec3 at) {
  return UpsertOp(BodyDesc{.id = id, .shape = Sphere{0.5f}, .pose = Pose{{}, at}});
}

TEST(InterestWatcher, StartsWithTheSetsOfItsFirstMessageThenSendsDeltasAndChanges) {
  Scene scene("arena", SceneOptions{});
  Recorder recorder;
  ASSERT_TRUE(scene.AddObserver(&recorder, [](const SceneView&) {}).ok());
  ASSERT_TRUE(scene.Apply(UpdateBatch{.ops = {Ball(1, {1, 0, 0}), Ball(2, {5, 0, 0})}}).ok());
  SceneMirror mirror(SceneMirror::Parts{.world = false, .grid = true});
  mirror.Capture(scene);

  InterestWatcher watcher(InterestWatcherOptions{});
  watcher.Submit(ObserverChanges{.upserts = {Spec(7, {}, 3, 4, 10)}});
  watcher.Start(mirror);
  InterestMessage message;
  ASSERT_TRUE(watcher.queue().Pop(&message));
  const auto& start = std::get<InterestSnapshot>(message);
  EXPECT_FALSE(start.resync);
  EXPECT_EQ(start.requests_applied, 1u);
  ASSERT_EQ(start.sets.size(), 1u);
  EXPECT_EQ(start.sets[0], (RelevantSet{.observer_id = 7, .count = 1}));
  EXPECT_EQ(start.ids, (std::vector<uint64_t>{1}));

  // A batch that changes nothing relevant sends nothing; one that does sends its delta.
  ASSERT_TRUE(scene.Apply(UpdateBatch{.ops = {SetPoseOp(2, Pose{{}, {6, 0, 0}})}}).ok());
  mirror.Apply(recorder.changes, scene.version(), scene.tick());
  watcher.OnApplied(AppliedBatch{.changes = recorder.changes}, mirror);
  EXPECT_FALSE(watcher.queue().Pop(&message));
  ASSERT_TRUE(scene.Apply(UpdateBatch{.ops = {SetPoseOp(2, Pose{{}, {2, 0, 0}})}}).ok());
  mirror.Apply(recorder.changes, scene.version(), scene.tick());
  watcher.OnApplied(AppliedBatch{.changes = recorder.changes}, mirror);
  ASSERT_TRUE(watcher.queue().Pop(&message));
  {
    const auto& u = std::get<InterestUpdate>(message);
    EXPECT_EQ(u.version, scene.version());
    ASSERT_EQ(u.deltas.size(), 1u);
    EXPECT_EQ(u.deltas[0], (ObserverDelta{.observer_id = 7, .full = false, .entered = 1}));
    EXPECT_EQ(u.ids, (std::vector<uint64_t>{2}));
  }

  // Nothing submitted: Refresh sends nothing.
  watcher.Refresh(mirror);
  EXPECT_FALSE(watcher.queue().Pop(&message));
  // A message that changes no set still reports that it is in effect.
  watcher.Submit(ObserverChanges{.upserts = {Spec(7, {}, 3, 4, 10)}});
  watcher.Refresh(mirror);
  ASSERT_TRUE(watcher.queue().Pop(&message));
  EXPECT_EQ(std::get<InterestUpdate>(message).requests_applied, 2u);
  EXPECT_TRUE(std::get<InterestUpdate>(message).deltas.empty());
  // Removed then added again before the worker saw either: it starts afresh, a full set.
  watcher.Submit(ObserverChanges{.removes = {7}});
  watcher.Submit(ObserverChanges{.upserts = {Spec(7, {}, 1.5f, 1.5f, 10)}});
  watcher.Refresh(mirror);
  ASSERT_TRUE(watcher.queue().Pop(&message));
  {
    const auto& u = std::get<InterestUpdate>(message);
    EXPECT_EQ(u.requests_applied, 4u);
    ASSERT_EQ(u.deltas.size(), 1u);
    EXPECT_EQ(u.deltas[0], (ObserverDelta{.observer_id = 7, .full = true, .entered = 1}));
    EXPECT_EQ(u.ids, (std::vector<uint64_t>{1}));
  }
  // A change of radius (no removal): a delta from the set held.
  watcher.Submit(ObserverChanges{.upserts = {Spec(7, {}, 3, 3, 10)}});
  watcher.Refresh(mirror);
  ASSERT_TRUE(watcher.queue().Pop(&message));
  {
    const auto& u = std::get<InterestUpdate>(message);
    ASSERT_EQ(u.deltas.size(), 1u);
    EXPECT_EQ(u.deltas[0], (ObserverDelta{.observer_id = 7, .full = false, .entered = 1}));
    EXPECT_EQ(u.ids, (std::vector<uint64_t>{2}));
  }
  // A removal sends nothing about the observer.
  watcher.Submit(ObserverChanges{.removes = {7, 12345}});
  watcher.Refresh(mirror);
  ASSERT_TRUE(watcher.queue().Pop(&message));
  EXPECT_TRUE(std::get<InterestUpdate>(message).deltas.empty());
  scene.RemoveObserver(&recorder);
}

TEST(InterestWatcher, DispatchedMessagesRebuildTheBruteForceSets) {
  for (uint32_t seed : {21u, 22u}) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-20, 20);
    auto scene = std::make_shared<Scene>("arena", SceneOptions{});
    {
      UpdateBatch batch;
      for (uint64_t id = 1; id <= 300; ++id)
        batch.ops.push_back(Ball(id, {u(rng), u(rng), u(rng)}));
      ASSERT_TRUE(scene->Apply(batch).ok());
    }
    WatchDispatcher dispatcher(WatchDispatcher::Options{.threads = 2});
    auto watcher =
        std::make_shared<InterestWatcher>(InterestWatcherOptions{.budget = &dispatcher.budget()});
    // A slow consumer: a queue of 16 events, never read until the end.
    auto slow = std::make_shared<InterestWatcher>(
        InterestWatcherOptions{.max_queued_events = 16, .budget = &dispatcher.budget()});
    std::map<uint64_t, ObserverSpec> declared;
    auto random_spec = [&](uint64_t id) {
      ObserverSpec spec =
          Spec(id, {u(rng), u(rng), u(rng)}, 4 + std::fabs(u(rng)) / 4, 0, 1 + id % 9);
      spec.leave_radius = spec.enter_radius + 1;
      if (id % 2 == 0) {
        spec.attached_to = id * 3;
        spec.pose.position = {};
      }
      return spec;
    };
    ObserverChanges first;
    for (uint64_t id = 1; id <= 30; ++id) {
      first.upserts.push_back(random_spec(id));
      declared[id] = first.upserts.back();
    }
    watcher->Submit(first);
    slow->Submit(first);
    Client client;
    watcher->queue().SetListener([] {});
    auto attached = dispatcher.AttachQuery(scene, watcher);
    auto attached_slow = dispatcher.AttachQuery(scene, slow);
    // Both started (the hub follows the scene from here on), so every batch below reaches them.
    dispatcher.WaitIdle();
    for (int step = 0; step < 200; ++step) {
      // Batches of 40 moves make the sets evaluate every observer (the hub then writes no change
      // records: InterestSet::ReadsChanges); batches of 5 only those the moves may change (the
      // last 20 steps, so that the final sets depend on them).
      const int moves = step % 3 == 0 || step >= 180 ? 5 : 40;
      UpdateBatch batch;
      for (int k = 0; k < moves; ++k) {
        const uint64_t id = 1 + rng() % 300;
        bool dup = false;
        for (const UpdateOp& op : batch.ops) dup = dup || op.body_id == id;
        if (!dup) batch.ops.push_back(SetPoseOp(id, Pose{{}, {u(rng), u(rng), u(rng)}}));
      }
      ASSERT_TRUE(scene->Apply(batch).ok());
      if (step % 10 == 5) {
        // The client changes its observers while batches go on.
        ObserverChanges changes;
        const uint64_t id = 1 + rng() % 40;
        if (declared.contains(id) && rng() % 3 == 0) {
          changes.removes.push_back(id);
          declared.erase(id);
        } else {
          changes.upserts.push_back(random_spec(id));
          declared[id] = changes.upserts.back();
        }
        watcher->Submit(changes);
        slow->Submit(changes);
        attached->Poke();
      }
      if (step % 3 == 0) client.Drain(*watcher);
    }
    dispatcher.WaitIdle();
    client.Drain(*watcher);
    // The client keeps only the observers it declared (deltas of removed ones may arrive before
    // their removal takes effect).
    for (auto it = client.sets.begin(); it != client.sets.end();) {
      it = declared.contains(it->first) ? std::next(it) : client.sets.erase(it);
    }
    // The oracle from scratch has no hysteresis of its own: compare the rebuilt sets with the
    // watcher's own sets, and each with a brute force given the watcher's sets as the past.
    const std::vector<BodyState> bodies = InterestOracle::BodiesOf(*scene);
    ASSERT_EQ(client.sets.size(), declared.size()) << "seed " << seed;
    EXPECT_EQ(client.version, scene->version());
    EXPECT_EQ(client.requests_applied, 1u + 20u);
    Client resynced;
    resynced.Drain(*slow);
    EXPECT_GT(resynced.resyncs, 0) << "seed " << seed;
    for (const auto& [id, spec] : declared) {
      const std::vector<uint64_t> got(client.sets[id].begin(), client.sets[id].end());
      // Idempotent: evaluating again with no batch between gives the same set.
      EXPECT_EQ(InterestOracle::Compute(spec, got, bodies), got) << "seed " << seed << " " << id;
      const std::vector<uint64_t> slow_got(resynced.sets[id].begin(), resynced.sets[id].end());
      EXPECT_EQ(slow_got, got) << "seed " << seed << " observer " << id;
    }
  }
}

TEST(InterestWatcher, EndsWhenItsSetsWouldPassTheContentsBudget) {
  auto scene = std::make_shared<Scene>("arena", SceneOptions{});
  {
    UpdateBatch batch;
    for (uint64_t id = 1; id <= 100; ++id) {
      batch.ops.push_back(Ball(id, {static_cast<float>(id % 10), static_cast<float>(id / 10), 0}));
    }
    ASSERT_TRUE(scene->Apply(batch).ok());
  }
  WatchDispatcher dispatcher(
      WatchDispatcher::Options{.threads = 1, .limits = WatchLimits{.max_contents = 150}});
  auto watcher =
      std::make_shared<InterestWatcher>(InterestWatcherOptions{.budget = &dispatcher.budget()});
  watcher->Submit(ObserverChanges{.upserts = {Spec(1, {}, 100, 100, 1000)}});
  auto attached = dispatcher.AttachQuery(scene, watcher);
  dispatcher.WaitIdle();
  InterestMessage message;
  ASSERT_TRUE(watcher->queue().Pop(&message));  // 100 bodies: within the budget
  EXPECT_EQ(std::get<InterestSnapshot>(message).ids.size(), 100u);
  // A second observer of the same 100 bodies would hold 200.
  watcher->Submit(ObserverChanges{.upserts = {Spec(2, {}, 100, 100, 1000)}});
  attached->Poke();
  dispatcher.WaitIdle();
  EXPECT_FALSE(watcher->queue().Pop(&message));
  EXPECT_TRUE(watcher->queue().Finished());
  EXPECT_EQ(watcher->queue().end_reason(), WatchEnd::kContentsExhausted);
  EXPECT_EQ(dispatcher.budget().contents.used(), 0u);
  EXPECT_EQ(dispatcher.budget().exhausted.load(), 1u);
}

}  // namespace
}  // namespace collide
