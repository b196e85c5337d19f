#include "scene/op_error.h"

#include <optional>

#include "gtest/gtest.h"
#include "scene/scene.h"

namespace collide {
namespace {

TEST(OpErrorStatus, WordsTheErrorAndCarriesItAsData) {
  const OpError error{.index = 3,
                      .op_type = UpdateOpType::kRemove,
                      .field = OpField::kBodyId,
                      .reason = "no body 2 in scene \"arena\"",
                      .relation = OpRelation::kRemovedBy,
                      .related = 1};
  const absl::Status status = OpErrorStatus(absl::StatusCode::kNotFound, error);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "ops[3].body_id: no body 2 in scene \"arena\" (removed by ops[1])");
  EXPECT_EQ(GetOpError(status), error);
  EXPECT_EQ(
      OpErrorStatus(absl::StatusCode::kInvalidArgument,
                    OpError{.index = 0, .field = OpField::kPoseRotation, .reason = "bad"}, "bodies")
          .message(),
      "bodies[0].pose.rotation: bad");
  EXPECT_EQ(OpErrorStatus(absl::StatusCode::kInvalidArgument, OpError{.index = 7, .reason = "x"})
                .message(),
            "ops[7]: x");
}

TEST(GetOpError, FindsNoneInOtherStatuses) {
  EXPECT_FALSE(GetOpError(absl::OkStatus()).has_value());
  EXPECT_FALSE(GetOpError(absl::NotFoundError("ops[3].body_id: no body 2")).has_value());
}

TEST(OpFieldName, NamesEveryFieldAsTheCoreOpDoes) {
  EXPECT_EQ(OpFieldName(OpField::kNone), "");
  EXPECT_EQ(OpFieldName(OpField::kBodyId), "body_id");
  EXPECT_EQ(OpFieldName(OpField::kCapsuleHalfHeight), "shape.capsule.half_height");
  EXPECT_EQ(OpFieldName(OpField::kPosePosition), "pose.position");
}

TEST(Scene, ValidationErrorsCarryTheOpAndFieldAsData) {
  Scene scene("arena", SceneOptions{});
  ASSERT_TRUE(scene.Apply(UpdateBatch{{UpsertOp(BodyDesc{.id = 1, .shape = Sphere{1}})}}).ok());
  UpdateOp bad_move = SetPoseOp(1, Pose{});
  bad_move.pose.rotation = Quat{0, 0, 0, 0};
  const absl::Status values = scene.Apply(UpdateBatch{{RemoveOp(9), bad_move}}).status();
  // Op 0 fails first (values are checked op by op, with existence).
  std::optional<OpError> error = GetOpError(values);
  ASSERT_TRUE(error.has_value()) << values;
  EXPECT_EQ(error->index, 0u);
  EXPECT_EQ(error->op_type, UpdateOpType::kRemove);
  EXPECT_EQ(error->field, OpField::kBodyId);
  EXPECT_EQ(error->reason, "no body 9 in scene \"arena\"");

  const absl::Status rotation = scene.Apply(UpdateBatch{{bad_move}}).status();
  error = GetOpError(rotation);
  ASSERT_TRUE(error.has_value()) << rotation;
  EXPECT_EQ(error->op_type, UpdateOpType::kSetPose);
  EXPECT_EQ(error->field, OpField::kPoseRotation);
  EXPECT_EQ(error->reason, "must be a unit quaternion (length 0)");

  const BodyDesc again{.id = 1, .shape = Sphere{1}};
  const absl::Status twice = scene.Apply(UpdateBatch{{UpsertOp(again), UpsertOp(again)}}).status();
  error = GetOpError(twice);
  ASSERT_TRUE(error.has_value()) << twice;
  EXPECT_EQ(error->index, 1u);
  EXPECT_EQ(error->relation, OpRelation::kFirstBy);
  EXPECT_EQ(error->related, 0u);
}

}  // namespace
}  // namespace collide
