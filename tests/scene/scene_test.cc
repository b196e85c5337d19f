#include "scene/scene.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "query/batch.h"
#include "query/query_engine.h"
#include "query/run_query.h"

namespace collide {
namespace {

Pose At(float x, float y = 0.0f, float z = 0.0f) {
  return Pose{.rotation = Quat::Identity(), .position = Vec3{x, y, z}};
}

UpdateOp Ball(uint64_t id, float x, float radius = 0.5f, uint64_t user_data = 0) {
  return UpsertOp(BodyDesc{.id = id, .shape = Sphere{radius}, .pose = At(x)}, user_data);
}

UpdateBatch Batch(std::vector<UpdateOp> ops) { return UpdateBatch{std::move(ops)}; }

// A scene "arena" holding bodies 1, 2 and 3 at x = 0, 10, 20, at version 1.
std::unique_ptr<Scene> MakeArena(uint32_t max_bodies = 100) {
  auto scene = std::make_unique<Scene>("arena", SceneOptions{.max_bodies = max_bodies});
  absl::StatusOr<ApplyResult> r = scene->Apply(Batch({Ball(1, 0), Ball(2, 10), Ball(3, 20)}));
  EXPECT_TRUE(r.ok()) << r.status();
  return scene;
}

struct BadBatchCase {
  const char* name;
  std::vector<UpdateOp> ops;
  absl::StatusCode code;
  std::string message;  // the exact status message
};

Quat Scaled(const Quat& q, float s) { return Quat{q.x * s, q.y * s, q.z * s, q.w * s}; }

std::vector<BadBatchCase> BadBatches() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  UpdateOp static_bad_kind = Ball(9, 0);
  static_bad_kind.kind = static_cast<BodyKind>(7);
  UpdateOp bad_shape = Ball(9, 0);
  bad_shape.shape.type = static_cast<ShapeType>(9);
  UpdateOp bad_type = SetPoseOp(1, At(0));
  bad_type.type = static_cast<UpdateOpType>(6);
  return {
      {"MoveOfUnknownBody",
       {SetPoseOp(1, At(1)), SetPoseOp(17, At(2))},
       absl::StatusCode::kNotFound,
       "ops[1].set_pose.id: no body 17 in scene \"arena\""},
      {"FilterOfUnknownBody",
       {SetFilterOp(42, 1, 1)},
       absl::StatusCode::kNotFound,
       "ops[0].set_filter.id: no body 42 in scene \"arena\""},
      {"RemoveOfUnknownBody",
       {RemoveOp(4)},
       absl::StatusCode::kNotFound,
       "ops[0].remove: no body 4 in scene \"arena\""},
      {"MoveAfterRemoveInTheSameBatch",
       {SetPoseOp(2, At(1)), RemoveOp(2), Ball(5, 3), SetPoseOp(2, At(3))},
       absl::StatusCode::kNotFound,
       "ops[3].set_pose.id: no body 2 in scene \"arena\" (removed by ops[1])"},
      {"RemoveTwice",
       {RemoveOp(3), RemoveOp(3)},
       absl::StatusCode::kNotFound,
       "ops[1].remove: no body 3 in scene \"arena\" (removed by ops[0])"},
      {"SameIdCreatedTwice",
       {Ball(8, 0), SetPoseOp(8, At(1)), Ball(8, 2)},
       absl::StatusCode::kInvalidArgument,
       "ops[2].upsert.id: body 8 is upserted twice in one batch (first by ops[0])"},
      {"ExistingIdReplacedTwice",
       {Ball(1, 0), Ball(1, 2)},
       absl::StatusCode::kInvalidArgument,
       "ops[1].upsert.id: body 1 is upserted twice in one batch (first by ops[0])"},
      {"NanPosition",
       {SetPoseOp(1, At(nan))},
       absl::StatusCode::kInvalidArgument,
       "ops[0].set_pose.pose.position: must be finite and within +-1e+09"},
      {"InfinitePosition",
       {SetPoseOp(1, At(0)), SetPoseOp(2, At(0, inf))},
       absl::StatusCode::kInvalidArgument,
       "ops[1].set_pose.pose.position: must be finite and within +-1e+09"},
      {"HugePosition",
       {SetPoseOp(1, At(0, 0, 2e9f))},
       absl::StatusCode::kInvalidArgument,
       "ops[0].set_pose.pose.position: must be finite and within +-1e+09"},
      {"NanRotation",
       {SetPoseOp(1, Pose{.rotation = Quat{nan, 0, 0, 1}})},
       absl::StatusCode::kInvalidArgument,
       "ops[0].set_pose.pose.rotation: must be finite"},
      {"ZeroRotation",
       {SetPoseOp(1, Pose{.rotation = Quat{0, 0, 0, 0}})},
       absl::StatusCode::kInvalidArgument,
       "ops[0].set_pose.pose.rotation: must be a unit quaternion (length 0)"},
      {"NonUnitRotation",
       {SetPoseOp(1, Pose{.rotation = Scaled(Quat::Identity(), 1.01f)})},
       absl::StatusCode::kInvalidArgument,
       "ops[0].set_pose.pose.rotation: must be a unit quaternion (length 1.01)"},
      {"NegativeRadius",
       {Ball(9, 0, -1.0f)},
       absl::StatusCode::kInvalidArgument,
       "ops[0].upsert.shape.sphere.radius: must be finite, >= 0 and <= 1e+09"},
      {"NanBoxExtent",
       {UpsertOp(BodyDesc{.id = 9, .shape = Box{Vec3{1, nan, 1}}})},
       absl::StatusCode::kInvalidArgument,
       "ops[0].upsert.shape.box.half_extents: must be finite, >= 0 and <= 1e+09"},
      {"NegativeCapsuleHeight",
       {UpsertOp(BodyDesc{.id = 9, .shape = Capsule{1, -2}})},
       absl::StatusCode::kInvalidArgument,
       "ops[0].upsert.shape.capsule.half_height: must be finite, >= 0 and <= 1e+09"},
      {"InfiniteCapsuleRadius",
       {UpsertOp(BodyDesc{.id = 9, .shape = Capsule{inf, 2}})},
       absl::StatusCode::kInvalidArgument,
       "ops[0].upsert.shape.capsule.radius: must be finite, >= 0 and <= 1e+09"},
      {"UnknownShapeType",
       {bad_shape},
       absl::StatusCode::kInvalidArgument,
       "ops[0].upsert.shape: unknown shape type 9"},
      {"UnknownBodyKind",
       {static_bad_kind},
       absl::StatusCode::kInvalidArgument,
       "ops[0].upsert.kind: unknown body kind 7"},
      {"UnknownOpType",
       {bad_type},
       absl::StatusCode::kInvalidArgument,
       "ops[0]: unknown operation type 6"},
      {"BadValueAfterAStructuralOp",
       {RemoveOp(1), SetPoseOp(2, At(nan))},
       absl::StatusCode::kInvalidArgument,
       "ops[1].set_pose.pose.position: must be finite and within +-1e+09"},
      {"OverTheBodyLimit",
       {Ball(4, 0), Ball(5, 0), SetPoseOp(4, At(1))},
       absl::StatusCode::kResourceExhausted,
       "ops[1].upsert.id: scene \"arena\" would hold 5 bodies, over its limit of 4"},
  };
}

TEST(SceneValidateBatch, RejectsEachBadBatchWithItsCodeAndFieldPath) {
  for (const BadBatchCase& c : BadBatches()) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<Scene> arena = MakeArena(/*max_bodies=*/4);
    Scene& scene = *arena;
    const UpdateBatch batch = Batch(c.ops);
    absl::Status status = scene.ValidateBatch(batch);
    EXPECT_EQ(status.code(), c.code) << status;
    EXPECT_EQ(status.message(), c.message);
    // Apply reports the same error and changes nothing.
    const SceneState before = scene.CaptureState();
    absl::StatusOr<ApplyResult> applied = scene.Apply(batch);
    EXPECT_EQ(applied.status(), status);
    EXPECT_EQ(scene.version(), 1u);
    const SceneState after = scene.CaptureState();
    ASSERT_EQ(after.bodies.size(), before.bodies.size());
    for (size_t i = 0; i < after.bodies.size(); ++i) {
      EXPECT_EQ(after.bodies[i].id, before.bodies[i].id);
      EXPECT_EQ(after.bodies[i].pose, before.bodies[i].pose);
    }
    EXPECT_TRUE(scene.Validate());
  }
}

TEST(SceneValidateBatch, AcceptsCreateThenMoveAndRemoveThenRecreateInOneBatch) {
  std::unique_ptr<Scene> arena = MakeArena();
  Scene& scene = *arena;
  EXPECT_TRUE(scene
                  .ValidateBatch(
                      Batch({Ball(7, 0), SetPoseOp(7, At(3)), SetFilterOp(7, 2, 2), RemoveOp(7)}))
                  .ok());
  EXPECT_TRUE(scene.ValidateBatch(Batch({RemoveOp(1), Ball(1, 5), SetPoseOp(1, At(6))})).ok());
}

TEST(SceneValidateBatch, AcceptsRotationsWithinTheUnitTolerance) {
  std::unique_ptr<Scene> arena = MakeArena();
  Scene& scene = *arena;
  EXPECT_TRUE(
      scene
          .ValidateBatch(Batch({SetPoseOp(1, Pose{.rotation = Scaled(Quat::Identity(), 1.0009f)})}))
          .ok());
  EXPECT_FALSE(
      scene.ValidateBatch(Batch({SetPoseOp(1, Pose{.rotation = Scaled(Quat::Identity(), 1.002f)})}))
          .ok());
}

TEST(SceneValidateBatch, BodyLimitCountsTheBatchAsAWhole) {
  std::unique_ptr<Scene> arena = MakeArena(/*max_bodies=*/3);
  Scene& scene = *arena;
  // Removing first makes room for a create later in the same batch.
  EXPECT_TRUE(scene.ValidateBatch(Batch({RemoveOp(1), Ball(4, 0)})).ok());
  EXPECT_TRUE(scene.ValidateBatch(Batch({Ball(4, 0), RemoveOp(1)})).ok());
  EXPECT_EQ(scene.ValidateBatch(Batch({Ball(4, 0)})).code(), absl::StatusCode::kResourceExhausted);
  // Replacing an existing body does not grow the scene.
  EXPECT_TRUE(scene.ValidateBatch(Batch({Ball(1, 4, 2.0f)})).ok());
}

TEST(SceneApply, AppliesEveryOpAndBumpsTheVersionByOne) {
  std::unique_ptr<Scene> arena = MakeArena();
  Scene& scene = *arena;
  absl::StatusOr<ApplyResult> r = scene.Apply(
      Batch({SetPoseOp(1, At(5)), SetFilterOp(2, 4, 8), RemoveOp(3), Ball(9, 30, 1.0f, 77)}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->version, 2u);
  EXPECT_FALSE(r->duplicate);
  EXPECT_EQ(scene.version(), 2u);
  EXPECT_EQ(scene.GetBody(1)->pose.position, (Vec3{5, 0, 0}));
  EXPECT_EQ(scene.GetBody(2)->category, 4u);
  EXPECT_EQ(scene.GetBody(2)->mask, 8u);
  EXPECT_FALSE(scene.GetBody(3).has_value());
  EXPECT_EQ(scene.GetBody(9)->user_data, 77u);
  EXPECT_EQ(scene.GetBody(9)->shape.sphere.radius, 1.0f);
  EXPECT_EQ(scene.Stats().body_count, 3);
  EXPECT_TRUE(scene.Validate());
}

TEST(SceneApply, ReplaceChangesEveryPropertyIncludingTheKind) {
  std::unique_ptr<Scene> arena = MakeArena();
  Scene& scene = *arena;
  UpdateOp wall = UpsertOp(BodyDesc{.id = 2,
                                    .shape = Box{Vec3{1, 2, 3}},
                                    .pose = At(-4),
                                    .category = 16,
                                    .mask = 32,
                                    .kind = BodyKind::kStatic},
                           5);
  ASSERT_TRUE(scene.Apply(Batch({wall})).ok());
  std::optional<BodyState> body = scene.GetBody(2);
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ(body->kind, BodyKind::kStatic);
  EXPECT_EQ(body->shape.type, ShapeType::kBox);
  EXPECT_EQ(body->pose.position, (Vec3{-4, 0, 0}));
  EXPECT_EQ(body->category, 16u);
  EXPECT_EQ(body->user_data, 5u);
  SceneStats stats = scene.Stats();
  EXPECT_EQ(stats.body_count, 3);
  EXPECT_EQ(stats.static_body_count, 1);
  EXPECT_TRUE(scene.Validate());
}

TEST(SceneApply, RenormalisesRotations) {
  std::unique_ptr<Scene> arena = MakeArena();
  Scene& scene = *arena;
  ASSERT_TRUE(scene.Apply(Batch({SetPoseOp(1, Pose{.rotation = Quat{0, 0, 0, 1.0008f}})})).ok());
  EXPECT_NEAR(Length(scene.GetBody(1)->pose.rotation), 1.0f, 1e-6f);
}

TEST(SceneApply, ABadOpLateInABatchLeavesNothingApplied) {
  std::unique_ptr<Scene> arena = MakeArena();
  Scene& scene = *arena;
  std::vector<UpdateOp> ops;
  for (int i = 0; i < 500; ++i) ops.push_back(SetPoseOp(1 + i % 3, At(static_cast<float>(i))));
  ops.push_back(Ball(50, 1));
  ops.push_back(RemoveOp(2));
  ops.push_back(SetPoseOp(2, At(0)));  // removed above: NOT_FOUND
  absl::StatusOr<ApplyResult> r = scene.Apply(Batch(ops));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(scene.version(), 1u);
  EXPECT_EQ(scene.GetBody(1)->pose.position, (Vec3{0, 0, 0}));
  EXPECT_TRUE(scene.GetBody(2).has_value());
  EXPECT_FALSE(scene.GetBody(50).has_value());
  // The non-structural hot path too.
  ops.assign(300, SetPoseOp(3, At(99)));
  ops.push_back(SetPoseOp(1, At(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(scene.Apply(Batch(ops)).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(scene.GetBody(3)->pose.position, (Vec3{20, 0, 0}));
  EXPECT_EQ(scene.version(), 1u);
}

TEST(SceneApply, EmptyBatchIsAVersion) {
  std::unique_ptr<Scene> arena = MakeArena();
  Scene& scene = *arena;
  ASSERT_TRUE(scene.Apply(UpdateBatch{}).ok());
  EXPECT_EQ(scene.version(), 2u);
}

TEST(SceneApply, CommitErrorRejectsTheBatch) {
  std::unique_ptr<Scene> arena = MakeArena();
  Scene& scene = *arena;
  absl::StatusOr<ApplyResult> r = scene.Apply(Batch({SetPoseOp(1, At(3))}), {},
                                              [](uint64_t version) -> absl::StatusOr<uint64_t> {
                                                EXPECT_EQ(version, 2u);
                                                return absl::UnavailableError("log down");
                                              });
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(scene.version(), 1u);
  EXPECT_EQ(scene.GetBody(1)->pose.position, (Vec3{0, 0, 0}));
}

TEST(SceneApply, CommitPositionIsRecorded) {
  Scene scene("s", SceneOptions{}, /*log_position=*/7);
  EXPECT_EQ(scene.CaptureState().log_position, 7u);
  ASSERT_TRUE(
      scene.Apply(Batch({Ball(1, 0)}), {}, [](uint64_t) -> absl::StatusOr<uint64_t> { return 12; })
          .ok());
  EXPECT_EQ(scene.log_position(), 12u);
}

// Sleeps `delay` in each callback (a slow watch).
class SlowObserver final : public SceneObserver {
 public:
  explicit SlowObserver(std::chrono::milliseconds delay) : delay_(delay) {}
  void OnApplied(const AppliedBatch&, const SceneView&) override {
    std::this_thread::sleep_for(delay_);
  }
  void OnDeleted() override {}

 private:
  std::chrono::milliseconds delay_;
};

TEST(SceneApply, TimingsPutEachPhasesTimeWhereItWasSpent) {
  using std::chrono::milliseconds;
  std::unique_ptr<Scene> arena = MakeArena();
  Scene& scene = *arena;
  SlowObserver observer(milliseconds(30));
  ASSERT_TRUE(scene.AddObserver(&observer, [](const SceneView&) {}).ok());
  // A commit of 20 ms and observers of 30 ms: each lands in its own phase, and the phases add
  // up to no more than the call.
  ApplyTimings timings;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<ApplyResult> r = scene.Apply(
      Batch({SetPoseOp(1, At(3))}), {},
      [](uint64_t) -> absl::StatusOr<uint64_t> {
        std::this_thread::sleep_for(milliseconds(20));
        return 1;
      },
      nullptr, &timings);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GE(timings.commit, milliseconds(20));
  EXPECT_GE(timings.observers, milliseconds(30));
  for (std::chrono::nanoseconds phase : {timings.writer_wait, timings.validate, timings.apply}) {
    EXPECT_GE(phase.count(), 0);
    EXPECT_LT(phase, milliseconds(20));
  }
  EXPECT_LE(
      timings.writer_wait + timings.validate + timings.commit + timings.apply + timings.observers,
      elapsed);
  scene.RemoveObserver(&observer);

  // A batch refused by validation: its validation is timed, nothing after it.
  ApplyTimings refused;
  r = scene.Apply(
      Batch({SetPoseOp(404, At(3))}), {}, [](uint64_t) -> absl::StatusOr<uint64_t> { return 2; },
      nullptr, &refused);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_GT(refused.validate.count(), 0);
  EXPECT_EQ(refused.commit.count(), 0);
  EXPECT_EQ(refused.apply.count(), 0);
  EXPECT_EQ(refused.observers.count(), 0);

  // A batch the commit refuses: timed up to the commit.
  ApplyTimings failed;
  r = scene.Apply(
      Batch({SetPoseOp(1, At(4))}), {},
      [](uint64_t) -> absl::StatusOr<uint64_t> {
        std::this_thread::sleep_for(milliseconds(5));
        return absl::UnavailableError("log down");
      },
      nullptr, &failed);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_GE(failed.commit, milliseconds(5));
  EXPECT_EQ(failed.apply.count(), 0);
  EXPECT_EQ(failed.observers.count(), 0);
  EXPECT_EQ(scene.GetBody(1)->pose.position, (Vec3{3, 0, 0}));
}

TEST(SceneApply, DuplicateClientSequencesAreAcknowledgedNotApplied) {
  std::unique_ptr<Scene> arena = MakeArena();
  Scene& scene = *arena;
  const ClientTag first{.client_id = 5, .sequence = 10};
  absl::StatusOr<ApplyResult> a = scene.Apply(Batch({SetPoseOp(1, At(1))}), first);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->version, 2u);
  // The same tag again, even with other content: not applied, same version.
  absl::StatusOr<ApplyResult> again = scene.Apply(Batch({SetPoseOp(1, At(2))}), first);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(again->version, 2u);
  EXPECT_EQ(scene.GetBody(1)->pose.position, (Vec3{1, 0, 0}));
  // An older sequence is a duplicate too; a newer one applies; other clients are independent.
  EXPECT_TRUE(scene.Apply(Batch({}), ClientTag{5, 3})->duplicate);
  EXPECT_FALSE(scene.Apply(Batch({}), ClientTag{5, 11})->duplicate);
  EXPECT_FALSE(scene.Apply(Batch({}), ClientTag{6, 1})->duplicate);
  // Client 0 never deduplicates.
  EXPECT_FALSE(scene.Apply(Batch({}), ClientTag{0, 1})->duplicate);
  EXPECT_FALSE(scene.Apply(Batch({}), ClientTag{0, 1})->duplicate);
  EXPECT_EQ(scene.version(), 6u);
  EXPECT_EQ(scene.GetClientMark(5), (ClientMark{5, 11, 3}));
  // A rejected batch does not move the mark.
  EXPECT_FALSE(scene.Apply(Batch({RemoveOp(99)}), ClientTag{5, 12}).ok());
  EXPECT_EQ(scene.GetClientMark(5)->sequence, 11u);
}

TEST(SceneApply, ClientMarksAreBoundedKeepingTheMostRecentWriters) {
  std::unique_ptr<Scene> arena = MakeArena();
  Scene& scene = *arena;
  std::unique_ptr<Scene> twin = MakeArena();
  // Client ids from 2^64 - 1 down, one batch each: a writer inventing ids cannot grow the marks
  // past 2 x kMaxClientMarks.
  const uint64_t writers = 3 * kMaxClientMarks + 7;
  size_t most = 0;
  for (uint64_t k = 0; k < writers; ++k) {
    const ClientTag tag{.client_id = ~uint64_t{0} - k, .sequence = 1};
    ASSERT_TRUE(scene.Apply(Batch({}), tag).ok());
    ASSERT_TRUE(twin->Apply(Batch({}), tag).ok());
    if (k % 1024 == 0) most = std::max(most, scene.CaptureState().clients.size());
  }
  const SceneState state = scene.CaptureState();
  most = std::max(most, state.clients.size());
  EXPECT_LT(most, 2 * kMaxClientMarks);
  EXPECT_GE(state.clients.size(), kMaxClientMarks);
  // The most recent writers keep their marks (a resend is still a duplicate); the oldest lost
  // theirs.
  EXPECT_TRUE(scene.GetClientMark(~uint64_t{0} - (writers - 1)).has_value());
  EXPECT_TRUE(scene.GetClientMark(~uint64_t{0} - (writers - kMaxClientMarks)).has_value());
  EXPECT_FALSE(scene.GetClientMark(~uint64_t{0}).has_value());
  EXPECT_TRUE(scene.Apply(Batch({}), ClientTag{~uint64_t{0} - (writers - 1), 1})->duplicate);
  // Trimming is deterministic: the same batches leave the same marks (a replay agrees).
  EXPECT_EQ(twin->CaptureState().clients, scene.CaptureState().clients);
}

TEST(SceneRestore, RebuildsTheSameStateFromACapture) {
  std::unique_ptr<Scene> arena = MakeArena();
  Scene& scene = *arena;
  ASSERT_TRUE(scene
                  .Apply(Batch({UpsertOp(BodyDesc{.id = 40,
                                                  .shape = Capsule{0.5f, 2.0f},
                                                  .pose = At(1, 2, 3),
                                                  .category = 3,
                                                  .mask = 5,
                                                  .kind = BodyKind::kStatic},
                                         9),
                                SetFilterOp(1, 7, 7)}),
                         ClientTag{3, 4})
                  .ok());
  const SceneState state = scene.CaptureState();
  absl::StatusOr<std::unique_ptr<Scene>> copy = Scene::Restore("arena", scene.options(), state);
  ASSERT_TRUE(copy.ok()) << copy.status();
  const SceneState restored = (*copy)->CaptureState();
  EXPECT_EQ(restored.version, state.version);
  EXPECT_EQ(restored.clients, state.clients);
  ASSERT_EQ(restored.bodies.size(), state.bodies.size());
  for (size_t i = 0; i < state.bodies.size(); ++i) {
    EXPECT_EQ(restored.bodies[i].id, state.bodies[i].id);
    EXPECT_EQ(restored.bodies[i].pose, state.bodies[i].pose);
    EXPECT_EQ(restored.bodies[i].kind, state.bodies[i].kind);
    EXPECT_EQ(restored.bodies[i].user_data, state.bodies[i].user_data);
    EXPECT_EQ(restored.bodies[i].category, state.bodies[i].category);
  }
  EXPECT_TRUE((*copy)->Validate());
  // The restored scene goes on where the original was.
  EXPECT_TRUE((*copy)->Apply(Batch({}), ClientTag{3, 4})->duplicate);
  EXPECT_EQ((*copy)->Apply(Batch({SetPoseOp(40, At(0))}))->version, state.version + 1);
}

TEST(SceneRestore, RefusesDuplicateBodyAndClientIds) {
  SceneState state;
  state.bodies.push_back(BodyState{.id = 1, .shape = Sphere{1}});
  state.bodies.push_back(BodyState{.id = 1, .shape = Sphere{1}});
  absl::StatusOr<std::unique_ptr<Scene>> r = Scene::Restore("s", SceneOptions{}, state);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "bodies[1].id: body 1 appears twice");
  state.bodies.pop_back();
  state.clients = {ClientMark{.client_id = 3}, ClientMark{.client_id = 3}};
  r = Scene::Restore("s", SceneOptions{}, state);
  EXPECT_EQ(r.status().message(), "clients[1].client_id: 3 is zero or appears twice");
  state.clients = {ClientMark{.client_id = 0}};
  r = Scene::Restore("s", SceneOptions{}, state);
  EXPECT_EQ(r.status().message(), "clients[0].client_id: 0 is zero or appears twice");
}

TEST(SceneRead, QueriesSeeTheWorldAndVersion) {
  std::unique_ptr<Scene> arena = MakeArena();
  Scene& scene = *arena;
  const uint64_t version = scene.Read([](const CollisionWorld& world, uint64_t v) {
    EXPECT_EQ(world.body_count(), 3);
    Query q;
    q.shape_query = RaycastQuery{
        .ray = Ray{.origin = Vec3{-5, 0, 0}, .direction = Vec3{1, 0, 0}, .max_distance = 100}};
    std::vector<QueryHit> hits;
    QueryResult result = RunQuery(CurrentTree(world), q, &hits);
    EXPECT_EQ(result.hit_count, 1u);
    EXPECT_EQ(hits.at(0).body_id, 1u);
    return v;
  });
  EXPECT_EQ(version, 1u);
}

TEST(SceneRead, BoundedReadVisitsEveryChunkOnce) {
  std::unique_ptr<Scene> arena = MakeArena();
  Scene& scene = *arena;
  std::vector<int> seen(1000, 0);
  ReadSpan span = scene.ReadBounded(
      seen.size(), ReadBudget{.chunk_size = 64, .max_hold = std::chrono::microseconds(0)},
      [&](const CollisionWorld&, uint64_t version, size_t begin, size_t end) {
        EXPECT_EQ(version, 1u);
        EXPECT_LE(end - begin, 64u);
        for (size_t i = begin; i < end; ++i) ++seen[i];
      });
  for (int s : seen) EXPECT_EQ(s, 1);
  EXPECT_EQ(span.first_version, 1u);
  EXPECT_EQ(span.last_version, 1u);
  // Zero items: no call.
  int calls = 0;
  scene.ReadBounded(0, ReadBudget{},
                    [&](const CollisionWorld&, uint64_t, size_t, size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(SceneMarkDeleted, LaterAppliesAreNotFound) {
  std::unique_ptr<Scene> arena = MakeArena();
  Scene& scene = *arena;
  ASSERT_TRUE(scene.MarkDeleted([] { return absl::OkStatus(); }).ok());
  EXPECT_TRUE(scene.deleted());
  absl::StatusOr<ApplyResult> r = scene.Apply(Batch({SetPoseOp(1, At(1))}));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(scene.MarkDeleted([] { return absl::OkStatus(); }).code(),
            absl::StatusCode::kFailedPrecondition);
  // Readers still see the last version.
  EXPECT_EQ(scene.Read([](const CollisionWorld& w, uint64_t) { return w.body_count(); }), 3);
}

TEST(SceneStats, CountsBodiesHeightAndMemory) {
  Scene scene("big", SceneOptions{});
  std::vector<UpdateOp> ops;
  for (int i = 0; i < 1000; ++i) ops.push_back(Ball(i, static_cast<float>(i)));
  ASSERT_TRUE(scene.Apply(Batch(ops)).ok());
  SceneStats stats = scene.Stats();
  EXPECT_EQ(stats.version, 1u);
  EXPECT_EQ(stats.body_count, 1000);
  EXPECT_GE(stats.tree_height, 10);  // log2(1000)
  EXPECT_LE(stats.tree_height, 64);
  EXPECT_GT(stats.memory_bytes, 1000 * sizeof(Body));
  EXPECT_TRUE(scene.Validate());
}

TEST(SceneStats, MemoryIsTheSumOfItsParts) {
  // Fewer bodies than kBackgroundRebuildMin (collision_world.h): every rebuild of the tree runs
  // within its batch, so no background build's snapshot (counted as scratch while it runs, on a
  // thread whose timing no test controls) can be pending when the memory is read.
  constexpr int kBatches = 4;
  constexpr int kPerBatch = 500;
  constexpr size_t kBodies = kBatches * kPerBatch;
  static_assert(kBodies < static_cast<size_t>(kBackgroundRebuildMin));
  Scene scene("parts", SceneOptions{});
  for (int b = 0; b < kBatches; ++b) {
    std::vector<UpdateOp> ops;
    for (int i = 0; i < kPerBatch; ++i) {
      const int id = b * kPerBatch + i;
      ops.push_back(Ball(id, static_cast<float>(id)));
    }
    ASSERT_TRUE(scene.Apply(Batch(ops)).ok());
  }
  const SceneMemory m = scene.Memory();
  EXPECT_EQ(scene.Stats().memory_bytes, m.Total());
  EXPECT_GE(m.bodies, kBodies * sizeof(Body));
  EXPECT_GT(m.trees.nodes, 0u);
  EXPECT_GT(m.trees.leaves, 0u);
  EXPECT_GE(m.id_map, kBodies * (sizeof(BodyHandle) + 1));  // a handle and a control byte a slot
  EXPECT_GE(m.extra, kBodies * sizeof(uint64_t));
  EXPECT_GT(m.history, 0u);  // the slots' chain heads and ticks of birth
  EXPECT_EQ(m.trees.scratch, 0u);
  EXPECT_EQ(m.client_marks, 0u);
}

}  // namespace
}  // namespace collide
