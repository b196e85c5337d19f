#pragma once

// What the watch tests share: event descriptions, the state a consumer rebuilds from a
// watcher's messages, a generator of random valid batches for a 40-body scene, and the check of
// an enter's contact against the oracle's.

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "geom/oracle.h"
#include "geom/sweep_oracle.h"
#include "gtest/gtest.h"
#include "scene/update_batch.h"
#include "watch/watch_oracle.h"
#include "watch/watch_queue.h"
#include "watch/watch_types.h"

namespace collide::testing {

/// "enter 7 3 0": the kind, watch id, body id and other body id.
inline std::string Describe(const WatchEvent& e) {
  static const char* kNames[] = {"enter", "exit", "begin", "end"};
  return std::string(kNames[static_cast<int>(e.kind)]) + " " + std::to_string(e.watch_id) + " " +
         std::to_string(e.body_id) + " " + std::to_string(e.other_body_id);
}

inline std::vector<std::string> Describe(const std::vector<WatchEvent>& events) {
  std::vector<std::string> out;
  for (const WatchEvent& e : events) out.push_back(Describe(e));
  return out;
}

/// The state a consumer rebuilds from a watcher's messages: fence contents and contact pairs.
struct Replica {
  std::map<uint64_t, std::set<uint64_t>> inside;
  std::set<std::tuple<uint64_t, uint64_t, uint64_t>> contacts;
  uint64_t version = 0;
  int resyncs = 0;

  void Take(const WatchMessage& message) {
    if (const auto* s = std::get_if<WatchSnapshot>(&message)) {
      inside.clear();
      contacts.clear();
      for (const FenceContents& f : s->fences) {
        inside[f.fence_id].insert(f.body_ids.begin(), f.body_ids.end());
      }
      for (const ContactPair& p : s->contacts) {
        contacts.insert({p.watch_id, p.body_id, p.other_body_id});
      }
      version = s->version;
      resyncs += s->resync;
      return;
    }
    const WatchUpdate& u = std::get<WatchUpdate>(message);
    version = u.version;
    for (const WatchEvent& e : u.events) {
      switch (e.kind) {
        case WatchEventKind::kEnter:
          inside[e.watch_id].insert(e.body_id);
          break;
        case WatchEventKind::kExit:
          inside[e.watch_id].erase(e.body_id);
          break;
        case WatchEventKind::kContactBegin:
          contacts.insert({e.watch_id, e.body_id, e.other_body_id});
          break;
        case WatchEventKind::kContactEnd:
          contacts.erase({e.watch_id, e.body_id, e.other_body_id});
          break;
      }
    }
  }
  void Compare(const WatchSnapshot& expected) const {
    for (const FenceContents& f : expected.fences) {
      std::set<uint64_t> want(f.body_ids.begin(), f.body_ids.end());
      auto it = inside.find(f.fence_id);
      EXPECT_EQ(it == inside.end() ? std::set<uint64_t>{} : it->second, want)
          << "fence " << f.fence_id;
    }
    std::set<std::tuple<uint64_t, uint64_t, uint64_t>> want;
    for (const ContactPair& p : expected.contacts) {
      want.insert({p.watch_id, p.body_id, p.other_body_id});
    }
    EXPECT_EQ(contacts, want);
  }
};

class WatchGenerator {
 public:
  explicit WatchGenerator(uint32_t seed) : rng_(seed) {}

  Shape BodyShape() {
    switch (Pick(3)) {
      case 0:
        return Sphere{Uniform(0.1f, 1.0f)};
      case 1:
        return Box{{Uniform(0.1f, 1.0f), Uniform(0.1f, 1.0f), Uniform(0.1f, 1.0f)}};
      default:
        return Capsule{Uniform(0.1f, 0.6f), Uniform(0.1f, 1.0f)};
    }
  }
  Shape FenceShape() {
    switch (Pick(4)) {
      case 0:
        return Sphere{Uniform(0.5f, 3.0f)};
      case 1:
        return Box{{Uniform(0.3f, 3.0f), Uniform(0.3f, 3.0f), Uniform(0.3f, 3.0f)}};
      case 2:  // a thin plate, which fast bodies cross within one step
        return Box{{0.03f, Uniform(1.0f, 4.0f), Uniform(1.0f, 4.0f)}};
      default:
        return Capsule{Uniform(0.3f, 2.0f), Uniform(0.2f, 2.0f)};
    }
  }
  Quat Rotation() {
    if (Pick(2) == 0) return Quat::Identity();
    std::normal_distribution<float> g;
    return Normalize(Quat{g(rng_), g(rng_), g(rng_), g(rng_)});
  }
  Vec3 Position(float reach) {
    return {Uniform(-reach, reach), Uniform(-reach, reach), Uniform(-reach, reach)};
  }
  uint32_t Category() {
    static const uint32_t kBits[] = {1, 2, 4, 3};
    return kBits[Pick(4)];
  }

  // A batch of distinct bodies' operations valid for `bodies`.
  UpdateBatch Batch(const std::map<uint64_t, WatchOracle::OracleBody>& bodies) {
    UpdateBatch batch;
    std::set<uint64_t> used;
    const int n = 1 + Pick(10);
    for (int i = 0; i < n; ++i) {
      const uint64_t id = 1 + Pick(40);
      if (!used.insert(id).second) continue;
      auto it = bodies.find(id);
      if (it == bodies.end()) {
        if (Pick(3) == 0) continue;
        batch.ops.push_back(UpsertOp(BodyDesc{.id = id,
                                              .shape = BodyShape(),
                                              .pose = Pose{Rotation(), Position(7.0f)},
                                              .category = Category(),
                                              .mask = Pick(4) == 0 ? 2u : ~0u}));
        continue;
      }
      const int roll = Pick(100);
      if (roll < 4) {
        batch.ops.push_back(RemoveOp(id));
      } else if (roll < 8) {
        batch.ops.push_back(SetFilterOp(id, Category(), Pick(3) == 0 ? 2u : ~0u));
      } else if (roll < 11) {
        batch.ops.push_back(UpsertOp(BodyDesc{.id = id,
                                              .shape = BodyShape(),
                                              .pose = Pose{Rotation(), Position(10.0f)},
                                              .category = Category()}));
      } else {
        Pose pose = it->second.pose;
        const float reach = Pick(8) == 0 ? 12.0f : 1.5f;
        pose.position += Position(reach);
        pose.position = Clamp(pose.position, Vec3{-14, -14, -14}, Vec3{14, 14, 14});
        if (Pick(4) == 0) pose.rotation = Rotation();
        batch.ops.push_back(SetPoseOp(id, pose));
      }
    }
    return batch;
  }

  // A batch for the oracle's bodies whose events the oracle tells without ambiguity, drawn up to
  // 40 times: the batch and its events in `batch` and `expected`; false when every draw was
  // ambiguous (the caller skips the step).
  bool UnambiguousBatch(const WatchOracle& oracle, UpdateBatch* batch,
                        std::vector<OracleEvent>* expected) {
    bool ambiguous = true;
    for (int attempt = 0; attempt < 40 && ambiguous; ++attempt) {
      *batch = Batch(oracle.bodies());
      *expected = oracle.Preview(*batch, &ambiguous);
    }
    return !ambiguous;
  }

  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  float Uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng_); }

 private:
  std::mt19937 rng_;
};

/// Checks the contact of a reported enter against the oracle's (EXPECTs).
inline void CheckEnter(const WatchEvent& got, const OracleEvent& want, uint32_t seed, int step) {
  if (want.swept) {
    EXPECT_EQ(CheckContact(want.body_shape, want.body_pose, want.fence_shape, want.fence_pose,
                           got.point, got.normal, 2e-3),
              "")
        << "seed " << seed << " step " << step << " " << Describe(got);
  } else {
    // A jump or a final rotation into the fence: Penetrate's point on the fence's surface.
    const double sdf = oracle::Sdf(oracle::MakePosed(want.fence_shape, want.fence_pose),
                                   oracle::ToDouble(got.point));
    EXPECT_NEAR(sdf, 0.0, 2e-3) << "seed " << seed << " step " << step << " " << Describe(got);
  }
}

}  // namespace collide::testing
