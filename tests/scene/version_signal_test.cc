#include "scene/version_signal.h"

#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "scene/scene.h"

namespace collide {
namespace {

Pose At(float x) { return Pose{.rotation = Quat::Identity(), .position = Vec3{x, 0, 0}}; }

UpdateOp Ball(uint64_t id, float x) {
  return UpsertOp(BodyDesc{.id = id, .shape = Sphere{0.5f}, .pose = At(x)});
}

TEST(VersionSignal, NotifyRunsEveryRegisteredFunctionUntilItIsRemoved) {
  VersionSignal signal;
  int a = 0, b = 0;
  signal.Notify();  // nothing registered
  const uint64_t id_a = signal.Add([&a] { ++a; });
  const uint64_t id_b = signal.Add([&b] { ++b; });
  EXPECT_NE(id_a, id_b);
  signal.Notify();
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 1);
  signal.Remove(id_a);
  signal.Notify();
  signal.Notify();
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 3);
  signal.Remove(id_b);
  signal.Remove(id_b);  // removing twice is harmless
  signal.Notify();
  EXPECT_EQ(b, 3);
}

TEST(VersionSignal, ASceneSignalsEachAppliedBatchOnceItsVersionIsVisible) {
  Scene scene("arena", SceneOptions{.max_bodies = 10});
  std::vector<uint64_t> seen;
  // The wake runs after the writer released the reader lock: reading the version is allowed
  // here (the service's wake only cancels an alarm).
  const uint64_t id = scene.version_signal().Add([&] { seen.push_back(scene.version()); });
  ASSERT_TRUE(scene.Apply(UpdateBatch{{Ball(1, 0)}}).ok());
  ASSERT_TRUE(
      scene.Apply(UpdateBatch{{Ball(2, 5)}}, ClientTag{.client_id = 7, .sequence = 1}).ok());
  // Neither a refused batch nor a duplicate is a new version.
  EXPECT_FALSE(scene.Apply(UpdateBatch{{SetPoseOp(99, At(1))}}).ok());
  absl::StatusOr<ApplyResult> again =
      scene.Apply(UpdateBatch{{Ball(2, 6)}}, ClientTag{.client_id = 7, .sequence = 1});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(seen, (std::vector<uint64_t>{1, 2}));
  scene.version_signal().Remove(id);
  ASSERT_TRUE(scene.Apply(UpdateBatch{{Ball(3, 9)}}).ok());
  EXPECT_EQ(seen.size(), 2u);
}

}  // namespace
}  // namespace collide
