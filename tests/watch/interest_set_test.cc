// InterestSet against a brute force over every body for every batch (InterestOracle): random
// scenes whose bodies sit on an integer lattice half of the time (so that distances tie exactly
// and the N nearest are decided by id), bodies created, moved, teleported, refiltered and
// removed, observers fixed or attached to bodies that move in the same batches (or to bodies
// that do not exist yet), with hysteresis, cones and filters, added, changed, removed and added
// again between batches. Plus hand-made cases for each rule.

#include "watch/interest_set.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "scene/scene.h"
#include "watch/interest_oracle.h"
#include "watch/interest_rules.h"
#include "watch/scene_mirror.h"

namespace collide {
namespace {

using testing::InterestOracle;

// Copies every applied batch's records, as a watch hub receives them.
class Recorder final : public SceneObserver {
 public:
  void OnApplied(const AppliedBatch& batch, const SceneView&) override {
    changes.assign(batch.changes.begin(), batch.changes.end());
  }
  void OnDeleted() override {}
  std::vector<BodyChange> changes;
};

// One scene with a mirror (with its grid) and an InterestSet driven as a hub drives them.
struct Rig {
  Rig() : scene("arena", SceneOptions{}), mirror(SceneMirror::Parts{.world = false, .grid = true}) {
    EXPECT_TRUE(scene.AddObserver(&recorder, [](const SceneView&) {}).ok());
    mirror.Capture(scene);
  }
  // Applies `batch` to the scene, the mirror and the set; the set's update in `*update`.
  void Apply(const UpdateBatch& batch, InterestUpdate* update) {
    auto applied = scene.Apply(batch);
    ASSERT_TRUE(applied.ok()) << applied.status();
    mirror.Apply(recorder.changes, scene.version(), scene.tick());
    *update = InterestUpdate{};
    ASSERT_TRUE(set.Apply(AppliedBatch{.changes = recorder.changes}, mirror, update));
  }
  void Change(const std::vector<InterestSet::Change>& changes, InterestUpdate* update) {
    *update = InterestUpdate{};
    ASSERT_TRUE(set.ApplyChanges(changes, mirror, update));
  }
  Scene scene;
  Recorder recorder;
  SceneMirror mirror;
  InterestSet set;
};

std::string Join(const std::vector<uint64_t>& ids) {
  std::string out;
  for (uint64_t id : ids) out += std::to_string(id) + " ";
  return out;
}

// The deltas of `update` by observer: (full, entered, left).
struct Delta {
  bool full = false;
  std::vector<uint64_t> entered, left;
};
std::map<uint64_t, Delta> DeltasOf(const InterestUpdate& update, std::string* order_error) {
  std::map<uint64_t, Delta> out;
  size_t at = 0;
  uint64_t last = 0;
  for (size_t i = 0; i < update.deltas.size(); ++i) {
    const ObserverDelta& d = update.deltas[i];
    if (i > 0 && d.observer_id <= last) *order_error = "deltas out of observer id order";
    last = d.observer_id;
    Delta& delta = out[d.observer_id];
    delta.full = d.full;
    delta.entered.assign(update.ids.begin() + at, update.ids.begin() + at + d.entered);
    at += d.entered;
    delta.left.assign(update.ids.begin() + at, update.ids.begin() + at + d.left);
    at += d.left;
  }
  if (at != update.ids.size()) *order_error = "ids left over";
  return out;
}

std::vector<uint64_t> Minus(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  std::vector<uint64_t> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {}
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  float Uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng_); }
  // Half the time a lattice point (exact ties), else anywhere.
  Vec3 Position() {
    if (Pick(2) == 0) {
      return Vec3{static_cast<float>(Pick(25) - 12), static_cast<float>(Pick(25) - 12),
                  static_cast<float>(Pick(25) - 12)};
    }
    return Vec3{Uniform(-12, 12), Uniform(-12, 12), Uniform(-12, 12)};
  }
  Quat Rotation() {
    if (Pick(3) == 0) return Quat::Identity();
    std::normal_distribution<float> g;
    return Normalize(Quat{g(rng_), g(rng_), g(rng_), g(rng_)});
  }
  uint32_t Category() {
    static const uint32_t kBits[] = {1, 2, 4, 3};
    return kBits[Pick(4)];
  }
  Vec3 Step(const Vec3& p) {
    if (Pick(10) == 0) return Position();  // a teleport
    if (p.x == std::floor(p.x) && Pick(2) == 0) {
      // Along the lattice.
      return Vec3{p.x + static_cast<float>(Pick(3) - 1), p.y + static_cast<float>(Pick(3) - 1),
                  p.z + static_cast<float>(Pick(3) - 1)};
    }
    return p + Vec3{Uniform(-1.5f, 1.5f), Uniform(-1.5f, 1.5f), Uniform(-1.5f, 1.5f)};
  }

  // A valid batch for `bodies` (by id): `all` moves every body.
  UpdateBatch Batch(const std::map<uint64_t, BodyState>& bodies, bool all) {
    UpdateBatch batch;
    if (all) {
      for (const auto& [id, body] : bodies) {
        batch.ops.push_back(SetPoseOp(id, Pose{body.pose.rotation, Step(body.pose.position)}));
      }
      return batch;
    }
    std::set<uint64_t> used;
    const int n = 1 + Pick(8);
    for (int i = 0; i < n; ++i) {
      const uint64_t id = 1 + Pick(kBodyIds);
      if (!used.insert(id).second) continue;
      auto it = bodies.find(id);
      if (it == bodies.end()) {
        if (Pick(2) == 0) continue;
        batch.ops.push_back(UpsertOp(BodyDesc{.id = id,
                                              .shape = Sphere{0.5f},
                                              .pose = Pose{Rotation(), Position()},
                                              .category = Category(),
                                              .mask = Pick(4) == 0 ? 2u : ~0u}));
        continue;
      }
      const int roll = Pick(100);
      if (roll < 6) {
        batch.ops.push_back(RemoveOp(id));
      } else if (roll < 12) {
        batch.ops.push_back(SetFilterOp(id, Category(), Pick(3) == 0 ? 2u : ~0u));
      } else if (roll < 16) {
        batch.ops.push_back(UpsertOp(BodyDesc{.id = id,
                                              .shape = Sphere{0.5f},
                                              .pose = Pose{Rotation(), Position()},
                                              .category = Category()}));
      } else {
        batch.ops.push_back(SetPoseOp(id, Pose{Pick(4) == 0 ? Rotation() : it->second.pose.rotation,
                                               Step(it->second.pose.position)}));
      }
    }
    return batch;
  }

  ObserverSpec Observer(uint64_t id) {
    ObserverSpec spec;
    spec.id = id;
    if (Pick(3) != 0) {
      spec.attached_to = 1 + Pick(kBodyIds + 10);  // now and then a body that never exists
      spec.pose = Pose{Rotation(), Pick(2) == 0 ? Vec3{} : Vec3{Uniform(-1, 1), 0, Uniform(-1, 1)}};
    } else {
      spec.pose = Pose{Rotation(), Position()};
    }
    spec.enter_radius = Pick(3) == 0 ? static_cast<float>(Pick(8)) : Uniform(0.0f, 9.0f);
    spec.leave_radius = spec.enter_radius + (Pick(4) == 0 ? 0.0f : Uniform(0.0f, 3.0f));
    if (Pick(3) == 0) {
      ViewCone cone;
      cone.direction =
          Normalize(Vec3{Uniform(-1, 1), Uniform(-1, 1), Uniform(-1, 1)} + Vec3{0.01f, 0, 0});
      const float pi = static_cast<float>(std::acos(-1.0));
      cone.half_angle = Pick(8) == 0 ? pi : Uniform(0.2f, 2.5f);
      cone.leave_half_angle = std::min(pi, cone.half_angle + (Pick(3) == 0 ? 0.0f : 0.3f));
      spec.cone = cone;
    }
    spec.category = Category();
    spec.mask = Pick(3) == 0 ? Category() : ~0u;
    static const uint32_t kLimits[] = {1, 2, 3, 5, 8, 1000};
    spec.max_relevant = kLimits[Pick(6)];
    return spec;
  }

  static constexpr int kBodyIds = 160;

 private:
  std::mt19937 rng_;
};

std::map<uint64_t, BodyState> ById(const std::vector<BodyState>& bodies) {
  std::map<uint64_t, BodyState> out;
  for (const BodyState& b : bodies) out[b.id] = b;
  return out;
}

TEST(InterestSet, EqualsBruteForceOverThousandsOfBatches) {
  for (uint32_t seed : {11u, 12u, 13u}) {
    Generator gen(seed);
    Rig rig;
    InterestOracle oracle;
    InterestUpdate update;
    // Some bodies to start with.
    {
      UpdateBatch batch;
      for (uint64_t id = 1; id <= 120; ++id) {
        batch.ops.push_back(UpsertOp(BodyDesc{.id = id,
                                              .shape = Sphere{0.5f},
                                              .pose = Pose{gen.Rotation(), gen.Position()},
                                              .category = gen.Category()}));
      }
      rig.Apply(batch, &update);
    }
    int partial = 0, whole = 0, full_deltas = 0, changed_deltas = 0;
    for (int step = 0; step < 1500; ++step) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " step " + std::to_string(step));
      const std::vector<BodyState> before = InterestOracle::BodiesOf(rig.scene);
      if (step % 15 == 0) {
        // The client changes its observers: new ones, changes (filters, radii, hosts), removals,
        // and removals followed by a new spec (the observer starts afresh).
        std::vector<InterestSet::Change> changes;
        std::set<uint64_t> named;
        for (int k = 0; k < 1 + gen.Pick(8); ++k) {
          const uint64_t id = 1 + gen.Pick(40);
          if (!named.insert(id).second) continue;
          const int roll = gen.Pick(10);
          if (roll < 2) {
            changes.push_back({.id = id, .spec = std::nullopt, .reset = true});
          } else if (roll < 4) {
            changes.push_back({.id = id, .spec = gen.Observer(id), .reset = true});
          } else {
            changes.push_back({.id = id, .spec = gen.Observer(id), .reset = false});
          }
        }
        std::sort(changes.begin(), changes.end(),
                  [](const auto& a, const auto& b) { return a.id < b.id; });
        const std::map<uint64_t, std::vector<uint64_t>> old_sets = oracle.sets();
        rig.Change(changes, &update);
        oracle.ApplyChanges(changes, before);
        std::string order_error;
        const std::map<uint64_t, Delta> deltas = DeltasOf(update, &order_error);
        EXPECT_EQ(order_error, "");
        for (const InterestSet::Change& c : changes) {
          if (!c.spec.has_value()) {
            EXPECT_FALSE(deltas.contains(c.id)) << "removed observer " << c.id;
            continue;
          }
          const std::vector<uint64_t>& want = oracle.sets().at(c.id);
          auto old = old_sets.find(c.id);
          const bool fresh = c.reset || old == old_sets.end();
          auto it = deltas.find(c.id);
          if (fresh) {
            ASSERT_NE(it, deltas.end()) << "a new observer gets its full set: " << c.id;
            EXPECT_TRUE(it->second.full);
            EXPECT_EQ(Join(it->second.entered), Join(want)) << "observer " << c.id;
            EXPECT_TRUE(it->second.left.empty());
            ++full_deltas;
          } else if (old->second == want) {
            EXPECT_EQ(it, deltas.end()) << "observer " << c.id << " did not change";
          } else {
            ASSERT_NE(it, deltas.end()) << "observer " << c.id;
            EXPECT_FALSE(it->second.full);
            EXPECT_EQ(Join(it->second.entered), Join(Minus(want, old->second)));
            EXPECT_EQ(Join(it->second.left), Join(Minus(old->second, want)));
          }
        }
      }
      // A batch: most touch a few bodies, every seventh moves every body.
      const bool all = step % 7 == 3;
      const UpdateBatch batch = gen.Batch(ById(before), all);
      const std::map<uint64_t, std::vector<uint64_t>> old_sets = oracle.sets();
      rig.Apply(batch, &update);
      if (::testing::Test::HasFatalFailure()) return;
      oracle.Evaluate(InterestOracle::BodiesOf(rig.scene));
      if (rig.set.last_evaluated() < rig.set.size()) {
        ++partial;
      } else {
        ++whole;
      }
      std::string order_error;
      const std::map<uint64_t, Delta> deltas = DeltasOf(update, &order_error);
      EXPECT_EQ(order_error, "");
      ASSERT_EQ(rig.set.size(), oracle.sets().size());
      for (const auto& [id, want] : oracle.sets()) {
        const std::optional<std::vector<uint64_t>> got = rig.set.SetOf(id);
        ASSERT_TRUE(got.has_value()) << "observer " << id;
        ASSERT_EQ(Join(*got), Join(want))
            << "observer " << id << " of spec max_relevant " << oracle.specs().at(id).max_relevant;
        const std::vector<uint64_t>& was = old_sets.at(id);
        auto it = deltas.find(id);
        if (was == want) {
          EXPECT_EQ(it, deltas.end()) << "observer " << id << " did not change";
          continue;
        }
        ASSERT_NE(it, deltas.end()) << "observer " << id << " changed";
        EXPECT_FALSE(it->second.full);
        EXPECT_EQ(Join(it->second.entered), Join(Minus(want, was))) << "observer " << id;
        EXPECT_EQ(Join(it->second.left), Join(Minus(was, want))) << "observer " << id;
        ++changed_deltas;
      }
    }
    // Both ways of choosing the observers to evaluate ran, and the sets changed often.
    EXPECT_GT(partial, 100) << "seed " << seed;
    EXPECT_GT(whole, 100) << "seed " << seed;
    EXPECT_GT(full_deltas, 50) << "seed " << seed;
    EXPECT_GT(changed_deltas, 1000) << "seed " << seed;
  }
}

ObserverSpec Fixed(uint64_t id, Vec3 at, float enter, float leave, uint32_t n = 1000) {
  ObserverSpec spec;
  spec.id = id;
  spec.pose.position = at;
  spec.enter_radius = enter;
  spec.leave_radius = leave;
  spec.max_relevant = n;
  return spec;
}

UpdateOp Ball(uint64_t id, Vec3 at, uint32_t category = 1) {
  return UpsertOp(
      BodyDesc{.id = id, .shape = Sphere{0.5f}, .pose = Pose{{}, at}, .category = category});
}

// Every body moves in every batch (as in a game's tick), on a lattice so that distances tie
// exactly, with bodies removed and created in the same batches (their slots reused at once): the
// sets are checked against the brute force after every batch, with the bodies packed into one
// grid cell, spread far from the origin, and on a coarse lattice whose points fall on cell
// borders.
TEST(InterestSet, EqualsBruteForceWhenEveryBodyMovesInOneCellAndFarFromTheOrigin) {
  struct Placement {
    const char* name;
    float step;   // lattice spacing
    int extent;   // lattice points per axis
    Vec3 offset;  // where the lattice starts
  };
  const Placement placements[] = {
      {"one cell", 0.25f, 3, Vec3{0, 0, 0}},
      {"far from the origin", 1.0f, 9, Vec3{1048576.0f, -1048576.0f, 524288.0f}},
      {"coarse lattice", 4.0f, 6, Vec3{-12, -12, -12}},
  };
  for (const Placement& place : placements) {
    for (uint32_t seed : {21u, 22u}) {
      SCOPED_TRACE(std::string(place.name) + " seed " + std::to_string(seed));
      std::mt19937 rng(seed);
      auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
      auto point = [&] {
        return place.offset + Vec3{place.step * static_cast<float>(pick(place.extent)),
                                   place.step * static_cast<float>(pick(place.extent)),
                                   place.step * static_cast<float>(pick(place.extent))};
      };
      Rig rig;
      InterestOracle oracle;
      InterestUpdate update;
      std::map<uint64_t, Vec3> at;
      UpdateBatch create;
      for (uint64_t id = 1; id <= 60; ++id) {
        at[id] = point();
        create.ops.push_back(Ball(id, at[id]));
      }
      rig.Apply(create, &update);
      std::vector<InterestSet::Change> changes;
      for (uint64_t id = 1; id <= 12; ++id) {
        static const uint32_t kLimits[] = {1, 2, 3, 5, 8, 40};
        ObserverSpec spec = Fixed(id, point(), 6 * place.step, 8 * place.step, kLimits[id % 6]);
        if (id % 2 == 0) {
          spec.attached_to = id;  // riding on a body that moves every batch
          spec.pose.position = Vec3{};
        }
        changes.push_back({.id = id, .spec = spec});
      }
      rig.Change(changes, &update);
      oracle.ApplyChanges(changes, InterestOracle::BodiesOf(rig.scene));
      uint64_t next_id = 61;
      for (int step = 0; step < 200; ++step) {
        SCOPED_TRACE("step " + std::to_string(step));
        UpdateBatch batch;
        // Now and then a body goes and another comes (it takes the freed slot).
        if (step % 3 == 0) {
          auto victim = std::next(at.begin(), pick(static_cast<int>(at.size())));
          batch.ops.push_back(RemoveOp(victim->first));
          at.erase(victim);
          at[next_id] = point();
          batch.ops.push_back(Ball(next_id, at[next_id]));
          ++next_id;
        }
        for (auto& [id, p] : at) {
          if (id >= next_id - 1 && step % 3 == 0) continue;  // just created
          p = p + Vec3{place.step * static_cast<float>(pick(3) - 1),
                       place.step * static_cast<float>(pick(3) - 1),
                       place.step * static_cast<float>(pick(3) - 1)};
          batch.ops.push_back(SetPoseOp(id, Pose{{}, p}));
        }
        rig.Apply(batch, &update);
        if (::testing::Test::HasFatalFailure()) return;
        oracle.Evaluate(InterestOracle::BodiesOf(rig.scene));
        for (const auto& [id, want] : oracle.sets()) {
          ASSERT_EQ(Join(*rig.set.SetOf(id)), Join(want)) << "observer " << id;
        }
      }
    }
  }
}

// A body removed and another created in the same batch takes the freed slot: the newcomer is
// not a member for the hysteresis (it lies between the radii: it stays out), the one removed
// leaves.
TEST(InterestSet, ABodyInAFreedSlotIsNotTheMemberThatWasThere) {
  Rig rig;
  InterestUpdate update;
  rig.Apply(UpdateBatch{.ops = {Ball(5, {1, 0, 0}), Ball(9, {2, 0, 0})}}, &update);
  rig.Change({{.id = 1, .spec = Fixed(1, {}, 30, 35)}}, &update);
  EXPECT_EQ(Join(*rig.set.SetOf(1)), "5 9 ");
  rig.Apply(UpdateBatch{.ops = {RemoveOp(5), Ball(6, {32, 0, 0})}}, &update);
  EXPECT_EQ(Join(*rig.set.SetOf(1)), "9 ");
  ASSERT_EQ(update.deltas.size(), 1u);
  EXPECT_EQ(update.deltas[0].entered, 0u);
  EXPECT_EQ(Join(update.ids), "5 ");
  // And a member that stays keeps its hysteresis across the change of layout.
  rig.Apply(UpdateBatch{.ops = {SetPoseOp(9, Pose{{}, {33, 0, 0}})}}, &update);
  EXPECT_EQ(Join(*rig.set.SetOf(1)), "9 ");
}

TEST(InterestSet, TiesAmongTheNearestGoToTheLowerIds) {
  Rig rig;
  InterestUpdate update;
  // Six bodies at distance 2 (exact in float), one nearer.
  rig.Apply(UpdateBatch{.ops = {Ball(9, {2, 0, 0}), Ball(4, {-2, 0, 0}), Ball(7, {0, 2, 0}),
                                Ball(3, {0, -2, 0}), Ball(8, {0, 0, 2}), Ball(5, {0, 0, -2}),
                                Ball(20, {1, 0, 0})}},
            &update);
  rig.Change({{.id = 1, .spec = Fixed(1, {}, 5, 5, 3)}}, &update);
  EXPECT_EQ(Join(*rig.set.SetOf(1)), "3 4 20 ");
  // Body 3 leaves: the next id at the tie comes in.
  rig.Apply(UpdateBatch{.ops = {RemoveOp(3)}}, &update);
  EXPECT_EQ(Join(*rig.set.SetOf(1)), "4 5 20 ");
}

TEST(InterestSet, HysteresisKeepsABodyUntilTheLeaveRadius) {
  Rig rig;
  InterestUpdate update;
  rig.Apply(UpdateBatch{.ops = {Ball(1, {32, 0, 0})}}, &update);
  rig.Change({{.id = 7, .spec = Fixed(7, {}, 30, 35)}}, &update);
  EXPECT_EQ(Join(*rig.set.SetOf(7)), "");  // between the radii, never in: stays out
  const float steps[] = {29, 34, 35, 35.5f, 33, 30, 30.5f};
  const char* want[] = {"1 ", "1 ", "1 ", "", "", "1 ", "1 "};
  for (int i = 0; i < 7; ++i) {
    rig.Apply(UpdateBatch{.ops = {SetPoseOp(1, Pose{{}, {steps[i], 0, 0}})}}, &update);
    EXPECT_EQ(Join(*rig.set.SetOf(7)), want[i]) << "at " << steps[i];
  }
}

TEST(InterestSet, AnObserverMovesWithItsHostInTheSameBatch) {
  Rig rig;
  InterestUpdate update;
  rig.Apply(UpdateBatch{.ops = {Ball(1, {0, 0, 0}), Ball(2, {100, 0, 0}), Ball(3, {3, 0, 0})}},
            &update);
  ObserverSpec spec = Fixed(5, {}, 10, 10);
  spec.attached_to = 1;
  rig.Change({{.id = 5, .spec = spec}}, &update);
  EXPECT_EQ(Join(*rig.set.SetOf(5)), "3 ");  // never its own host
  // Host and a body move together: the set is decided at both new positions.
  rig.Apply(
      UpdateBatch{.ops = {SetPoseOp(1, Pose{{}, {95, 0, 0}}), SetPoseOp(3, Pose{{}, {-3, 0, 0}})}},
      &update);
  EXPECT_EQ(Join(*rig.set.SetOf(5)), "2 ");
  ASSERT_EQ(update.deltas.size(), 1u);
  EXPECT_EQ(Join(update.ids), "2 3 ");  // entered 2, left 3
}

TEST(InterestSet, AnObserverOfAMissingHostHoldsNothingUntilItExists) {
  Rig rig;
  InterestUpdate update;
  rig.Apply(UpdateBatch{.ops = {Ball(1, {1, 0, 0})}}, &update);
  ObserverSpec spec = Fixed(5, {}, 10, 10);
  spec.attached_to = UINT64_MAX;
  rig.Change({{.id = 5, .spec = spec}}, &update);
  ASSERT_EQ(update.deltas.size(), 1u);
  EXPECT_TRUE(update.deltas[0].full);
  EXPECT_EQ(update.ids.size(), 0u);
  rig.Apply(UpdateBatch{.ops = {Ball(UINT64_MAX, {0, 0, 0})}}, &update);
  EXPECT_EQ(Join(*rig.set.SetOf(5)), "1 ");
  rig.Apply(UpdateBatch{.ops = {RemoveOp(UINT64_MAX)}}, &update);
  EXPECT_EQ(Join(*rig.set.SetOf(5)), "");
}

TEST(InterestSet, ACategoryChangeMakesABodyLeave) {
  Rig rig;
  InterestUpdate update;
  rig.Apply(UpdateBatch{.ops = {Ball(1, {1, 0, 0}, 1), Ball(2, {2, 0, 0}, 2)}}, &update);
  ObserverSpec spec = Fixed(5, {}, 10, 10);
  spec.mask = 1;
  rig.Change({{.id = 5, .spec = spec}}, &update);
  EXPECT_EQ(Join(*rig.set.SetOf(5)), "1 ");
  rig.Apply(UpdateBatch{.ops = {SetFilterOp(1, 2, ~0u), SetFilterOp(2, 1, ~0u)}}, &update);
  EXPECT_EQ(Join(*rig.set.SetOf(5)), "2 ");
}

TEST(InterestSet, AConeLetsInWhatItFacesAndKeepsWhatItsLeaveAngleHolds) {
  Rig rig;
  InterestUpdate update;
  const double pi = std::acos(-1.0);
  // Bodies at 30, 50 and 70 degrees from +x, distance 5.
  auto at = [](double deg) {
    const double r = deg * std::acos(-1.0) / 180.0;
    return Vec3{static_cast<float>(5 * std::cos(r)), static_cast<float>(5 * std::sin(r)), 0};
  };
  rig.Apply(UpdateBatch{.ops = {Ball(1, at(30)), Ball(2, at(50)), Ball(3, at(70))}}, &update);
  ObserverSpec spec = Fixed(5, {}, 10, 10);
  spec.cone = ViewCone{.direction = {1, 0, 0},
                       .half_angle = static_cast<float>(40 * pi / 180),
                       .leave_half_angle = static_cast<float>(60 * pi / 180)};
  rig.Change({{.id = 5, .spec = spec}}, &update);
  EXPECT_EQ(Join(*rig.set.SetOf(5)), "1 ");
  // Body 1 swings to 55 degrees: kept (within 60); body 2 to 35: enters.
  rig.Apply(UpdateBatch{.ops = {SetPoseOp(1, Pose{{}, at(55)}), SetPoseOp(2, Pose{{}, at(35)})}},
            &update);
  EXPECT_EQ(Join(*rig.set.SetOf(5)), "1 2 ");
  // Body 1 to 65: leaves.
  rig.Apply(UpdateBatch{.ops = {SetPoseOp(1, Pose{{}, at(65)})}}, &update);
  EXPECT_EQ(Join(*rig.set.SetOf(5)), "2 ");
}

// The rules themselves against an independent formulation: angles by acos and distances in
// double, on random cases away from the boundary (by a margin far above float rounding).
TEST(InterestRules, AgreeWithAnglesAndDistancesInDouble) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-50, 50);
  std::uniform_real_distribution<float> angle(0.05f, 3.1f);
  int inside = 0, outside = 0;
  for (int i = 0; i < 200000; ++i) {
    const Vec3 o{u(rng), u(rng), u(rng)};
    const Vec3 b{u(rng), u(rng), u(rng)};
    Vec3 axis{u(rng), u(rng), u(rng)};
    axis = Normalize(axis);
    const double half = angle(rng);
    const double dx = double{b.x} - o.x, dy = double{b.y} - o.y, dz = double{b.z} - o.z;
    const double len = std::sqrt(dx * dx + dy * dy + dz * dz);
    const double cosine = (dx * axis.x + dy * axis.y + dz * axis.z) / len;
    const double between = std::acos(std::clamp(cosine, -1.0, 1.0));
    const bool within = WithinCone(b.x - o.x, b.y - o.y, b.z - o.z, axis, std::cos(half));
    if (between < half - 1e-4) {
      EXPECT_TRUE(within) << "seed 7 case " << i;
      ++inside;
    } else if (between > half + 1e-4) {
      EXPECT_FALSE(within) << "seed 7 case " << i;
      ++outside;
    }
    const float r = std::fabs(u(rng)) * 1.5f;
    const bool near = InterestDistance2(o, b) <= r * r;
    if (len < r * (1 - 1e-5)) {
      EXPECT_TRUE(near) << "seed 7 case " << i;
    } else if (len > r * (1 + 1e-5)) {
      EXPECT_FALSE(near) << "seed 7 case " << i;
    }
  }
  EXPECT_GT(inside, 10000);
  EXPECT_GT(outside, 10000);
  // Edge cases: the observer's own position is in every cone; a cone of pi holds the direction
  // straight behind it only through leave/enter_everywhere (RulesOf).
  EXPECT_TRUE(WithinCone(0, 0, 0, {1, 0, 0}, std::cos(0.1)));
  ObserverSpec spec;
  spec.cone = ViewCone{.direction = {1, 0, 0},
                       .half_angle = static_cast<float>(std::acos(-1.0)),
                       .leave_half_angle = static_cast<float>(std::acos(-1.0))};
  spec.enter_radius = spec.leave_radius = 10;
  const ObserverRules rules = RulesOf(spec);
  EXPECT_TRUE(rules.enter_everywhere);
  const ObserverFrame frame = FrameOf(spec, rules, nullptr);
  EXPECT_TRUE(Eligible(rules, frame, {-3, 0, 0}, 9.0f, [] { return false; }));
  // Far from the origin: distances between nearby points stay exact enough to tie.
  const Vec3 far{1e6f, -1e6f, 1e6f};
  EXPECT_EQ(InterestDistance2(far, far + Vec3{2, 0, 0}),
            InterestDistance2(far, far + Vec3{0, 2, 0}));
}

}  // namespace
}  // namespace collide
