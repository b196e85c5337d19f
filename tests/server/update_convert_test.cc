#include "server/convert/update_convert.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "scene/scene.h"
#include "scene/validate.h"
#include "server/convert/field_path.h"
#include "server/convert_test_util.h"

namespace collide {
namespace {

// A scene holding bodies 1 to 4.
Scene& FourBodies() {
  static Scene* scene = [] {
    auto* s = new Scene("four", SceneOptions{});
    UpdateBatch batch;
    for (uint64_t id = 1; id <= 4; ++id) batch.ops.push_back(UpsertOp(BodyDesc{.id = id}));
    EXPECT_TRUE(s->Apply(batch).ok());
    return s;
  }();
  return *scene;
}

// What the update stream does with `proto` up to the apply: translated, checked by the scene,
// the scene's error in the request's words.
absl::Status Check(const v1::UpdateBatch& proto, const ServiceLimits& limits) {
  UpdateBatch batch;
  COLLIDE_RETURN_IF_ERROR(UpdateBatchFromProto(proto, limits, &batch));
  return ForRequest(FourBodies().ValidateBatch(batch), LayoutOf(proto));
}

TEST(UpdateBatchConversion, RejectsBadValuesWithTheirFieldPaths) {
  const std::string ok_upsert = absl::StrCat("ops { upsert { id: 1 ", kSphere, " } } ");
  const Case cases[] = {
      {"ops { upsert { id: 1 shape { sphere { radius: -1 } } } }",
       absl::StatusCode::kInvalidArgument, "ops[0].upsert.shape.sphere.radius"},
      {"ops { upsert { id: 1 shape { sphere { radius: nan } } } }",
       absl::StatusCode::kInvalidArgument, "ops[0].upsert.shape.sphere.radius"},
      {"ops { upsert { id: 1 shape { box { half_extents { x: 1 y: -0.5 z: 1 } } } } }",
       absl::StatusCode::kInvalidArgument, "ops[0].upsert.shape.box.half_extents"},
      {"ops { upsert { id: 1 shape { capsule { radius: 1 half_height: inf } } } }",
       absl::StatusCode::kInvalidArgument, "ops[0].upsert.shape.capsule.half_height"},
      {"ops { upsert { id: 1 } }", absl::StatusCode::kInvalidArgument, "ops[0].upsert.shape"},
      {"ops { upsert { id: 1 kind: 7 shape { sphere { radius: 1 } } } }",
       absl::StatusCode::kInvalidArgument, "ops[0].upsert.kind"},
      {"ops { upsert { id: 1 shape { sphere { radius: 1 } } pose { position { x: 2e9 } } } }",
       absl::StatusCode::kInvalidArgument, "ops[0].upsert.pose.position"},
      {"ops { upsert { id: 1 shape { sphere { radius: 1 } } pose { rotation { } } } }",
       absl::StatusCode::kInvalidArgument, "ops[0].upsert.pose.rotation"},
      {"ops { remove: 3 } ops { remove: 4 } ops {}", absl::StatusCode::kInvalidArgument,
       "ops[2].op"},
      {"ops { remove: 3 } ops { remove: 4 } ops { set_pose { id: 1 pose { rotation { w: 0.5 } } "
       "} }",
       absl::StatusCode::kInvalidArgument, "ops[2].set_pose.pose.rotation"},
      {"ops { set_pose { id: 1 pose { position { z: -inf } } } }",
       absl::StatusCode::kInvalidArgument, "ops[0].set_pose.pose.position"},
      {"moves { ids: 1 ids: 2 poses: [0, 0, 0, 0, 0, 0, 1] }", absl::StatusCode::kInvalidArgument,
       "moves.poses"},
      {"moves { ids: 1 ids: 2 poses: [0, 0, 0, 0, 0, 0, 1, nan, 0, 0, 0, 0, 0, 1] }",
       absl::StatusCode::kInvalidArgument, "moves.poses[1]"},
      {"moves { ids: 1 poses: [0, 0, 0, 0, 0, 0, 0] }", absl::StatusCode::kInvalidArgument,
       "moves.poses[0]"},
      {"moves { ids: 1 poses: [0, 0, 0, 0, 0, 0, 1.01] }", absl::StatusCode::kInvalidArgument,
       "moves.poses[0]"},
      {"ops { remove: 1 } ops { remove: 2 } ops { remove: 3 } moves { ids: [4, 5] poses: [0, 0, "
       "0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1] }",
       absl::StatusCode::kResourceExhausted, "ops"},
  };
  for (const Case& c : cases) {
    ExpectError(Check(Parse<v1::UpdateBatch>(c.text), TestLimits()), c.code, c.path, c.text);
  }
}

TEST(UpdateBatchFromProto, ConvertsOpsThenMovesWithDefaultsAndValuesAsSent) {
  const v1::UpdateBatch proto = Parse<v1::UpdateBatch>(
      "scene: 'a' ops { upsert { id: 7 kind: BODY_KIND_STATIC user_data: 9 shape { box { "
      "half_extents { x: 1 y: 2 z: 3 } } } pose { position { x: 1 } } } } "
      "ops { set_pose { id: 7 pose { rotation { z: 1.0005 } } } } "
      "ops { set_filter { id: 7 category: 2 mask: 3 } } ops { remove: 8 } "
      "moves { ids: [7] poses: [1, 2, 3, 0, 0, 0, 1] }");
  ServiceLimits limits = TestLimits();
  limits.max_batch_ops = 5;
  UpdateBatch batch;
  ASSERT_TRUE(UpdateBatchFromProto(proto, limits, &batch).ok());
  ASSERT_EQ(batch.ops.size(), 5u);
  const UpdateOp& upsert = batch.ops[0];
  EXPECT_EQ(upsert.type, UpdateOpType::kUpsert);
  EXPECT_EQ(upsert.body_id, 7u);
  EXPECT_EQ(upsert.kind, BodyKind::kStatic);
  EXPECT_EQ(upsert.user_data, 9u);
  EXPECT_EQ(upsert.shape.type, ShapeType::kBox);
  EXPECT_EQ(upsert.shape.box.half_extents.y, 2.0f);
  EXPECT_EQ(upsert.pose.position.x, 1.0f);
  EXPECT_EQ(upsert.pose.rotation, Quat::Identity());  // absent rotation
  EXPECT_EQ(upsert.category, 1u);                     // defaults
  EXPECT_EQ(upsert.mask, ~0u);
  EXPECT_EQ(batch.ops[1].type, UpdateOpType::kSetPose);
  EXPECT_EQ(batch.ops[1].pose.rotation.z, 1.0005f);  // as sent: the scene checks and normalises
  EXPECT_EQ(batch.ops[2].type, UpdateOpType::kSetFilter);
  EXPECT_EQ(batch.ops[2].category, 2u);
  EXPECT_EQ(batch.ops[2].mask, 3u);
  EXPECT_EQ(batch.ops[3].type, UpdateOpType::kRemove);
  EXPECT_EQ(batch.ops[3].body_id, 8u);
  EXPECT_EQ(batch.ops[4].type, UpdateOpType::kSetPose);
  EXPECT_EQ(batch.ops[4].pose.position.z, 3.0f);
  for (size_t i = 0; i < batch.ops.size(); ++i) EXPECT_TRUE(ValidateOpValues(batch.ops[i], i).ok());
}

// An UpsertBodies request up to the apply, as the service does it.
absl::Status CheckUpsert(const v1::UpsertBodiesRequest& request) {
  UpdateBatch batch;
  COLLIDE_RETURN_IF_ERROR(UpsertRequestToBatch(request, TestLimits(), &batch));
  return ForRequest(FourBodies().ValidateBatch(batch),
                    RequestLayout{.kind = RequestLayout::Kind::kUpsertBodies});
}

TEST(UnaryWrites, ConvertWithRequestPaths) {
  UpdateBatch batch;
  ExpectError(CheckUpsert(Parse<v1::UpsertBodiesRequest>(
                  absl::StrCat("bodies { id: 1 ", kSphere, " } bodies { id: 2 ", kSphere,
                               " } bodies { id: 3 shape { sphere { radius: -2 } } }"))),
              absl::StatusCode::kInvalidArgument, "bodies[2].shape.sphere.radius", "radius");
  ExpectError(CheckUpsert(Parse<v1::UpsertBodiesRequest>(
                  absl::StrCat("bodies { id: 1 ", kSphere, " pose { rotation { x: 1 y: 1 } } }"))),
              absl::StatusCode::kInvalidArgument, "bodies[0].pose.rotation", "rotation");
  ExpectError(CheckUpsert(Parse<v1::UpsertBodiesRequest>("bodies { id: 1 }")),
              absl::StatusCode::kInvalidArgument, "bodies[0].shape", "no shape");
  ExpectError(UpsertRequestToBatch(Parse<v1::UpsertBodiesRequest>(
                                       "bodies {} bodies {} bodies {} bodies {} bodies {}"),
                                   TestLimits(), &batch),
              absl::StatusCode::kResourceExhausted, "bodies", "too many bodies");
  ExpectError(RemoveRequestToBatch(Parse<v1::RemoveBodiesRequest>("ids: [1, 2, 3, 4, 5]"),
                                   TestLimits(), &batch),
              absl::StatusCode::kResourceExhausted, "ids", "too many ids");
  ASSERT_TRUE(
      RemoveRequestToBatch(Parse<v1::RemoveBodiesRequest>("ids: [4, 5]"), TestLimits(), &batch)
          .ok());
  ASSERT_EQ(batch.ops.size(), 2u);
  EXPECT_EQ(batch.ops[1].type, UpdateOpType::kRemove);
  EXPECT_EQ(batch.ops[1].body_id, 5u);
}

// The whole way: a request converted, applied to a scene, the scene's error worded with the
// request's paths.
absl::Status ApplyRequest(Scene& scene, const v1::UpdateBatch& proto) {
  ServiceLimits limits = TestLimits();
  limits.max_batch_ops = 16;
  UpdateBatch batch;
  const absl::Status converted = UpdateBatchFromProto(proto, limits, &batch);
  EXPECT_TRUE(converted.ok()) << converted;
  return ForRequest(scene.Apply(batch).status(), LayoutOf(proto));
}

TEST(LayoutOf, NamesTheScenesErrorsWithTheBatchsPaths) {
  Scene scene("a", SceneOptions{.max_bodies = 2});
  ASSERT_TRUE(ApplyRequest(scene, Parse<v1::UpdateBatch>(
                                      absl::StrCat("ops { upsert { id: 1 ", kSphere, " } }")))
                  .ok());
  EXPECT_EQ(ApplyRequest(scene, Parse<v1::UpdateBatch>(
                                    absl::StrCat("ops { upsert { id: 1 ", kSphere,
                                                 " } } ops { upsert { id: 1 ", kSphere, " } }")))
                .message(),
            "ops[1].upsert.id: body 1 is upserted twice in one batch (first by ops[0])");
  EXPECT_EQ(
      ApplyRequest(scene, Parse<v1::UpdateBatch>("ops { remove: 1 } ops { set_pose { id: 1 } }"))
          .message(),
      "ops[1].set_pose.id: no body 1 in scene \"a\" (removed by ops[0])");
  EXPECT_EQ(ApplyRequest(scene, Parse<v1::UpdateBatch>("ops { remove: 5 }")).message(),
            "ops[0].remove: no body 5 in scene \"a\"");
  EXPECT_EQ(ApplyRequest(scene, Parse<v1::UpdateBatch>(
                                    "ops { set_filter { id: 1 } } moves { ids: [1, 9] poses: [0, "
                                    "0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1] }"))
                .message(),
            "moves.ids[1]: no body 9 in scene \"a\"");
  EXPECT_EQ(ApplyRequest(scene, Parse<v1::UpdateBatch>("ops { set_filter { id: 4 } }")).message(),
            "ops[0].set_filter.id: no body 4 in scene \"a\"");
  const absl::Status full = ApplyRequest(
      scene, Parse<v1::UpdateBatch>(absl::StrCat("ops { upsert { id: 2 ", kSphere,
                                                 " } } ops { upsert { id: 3 ", kSphere, " } }")));
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(full.message(),
            "ops[1].upsert.id: scene \"a\" would hold 3 bodies, over its limit of 2");
  // A deleted scene's error names the request's scene field.
  ASSERT_TRUE(scene.MarkDeleted([] { return absl::OkStatus(); }).ok());
  const absl::Status deleted = ApplyRequest(scene, Parse<v1::UpdateBatch>("ops { remove: 1 }"));
  EXPECT_EQ(deleted.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(deleted.message(), "scene: scene \"a\" was deleted");
}

}  // namespace
}  // namespace collide
