#include "server/convert/field_path.h"

#include <gtest/gtest.h>

#include <string>

#include "scene/op_error.h"
#include "server/convert_test_util.h"

namespace collide {
namespace {

TEST(FieldPath, RendersHeadIndexTailAndField) {
  EXPECT_EQ((FieldPath{"ops", 3, ".upsert"}.Of("pose.rotation")), "ops[3].upsert.pose.rotation");
  EXPECT_EQ((FieldPath{"ray"}.Of("direction")), "ray.direction");
  EXPECT_EQ((FieldPath{}.Of("max_hits")), "max_hits");
  EXPECT_EQ((FieldPath{"moves.poses", 4}.Of("")), "moves.poses[4]");
}

// A status the scene layer would return for `error`.
absl::Status Core(absl::StatusCode code, size_t index, UpdateOpType type, OpField field,
                  const char* reason) {
  return OpErrorStatus(code,
                       OpError{.index = index, .op_type = type, .field = field, .reason = reason});
}

TEST(WithRequestPaths, NamesCoreOpsWithTheUpdateBatchsPaths) {
  // ops: upsert, upsert, remove, set_pose, set_filter; then moves of ids 1 and 9 (core ops 5, 6).
  const RequestOps ops{.kind = RequestOps::Kind::kUpdateBatch, .op_count = 5};
  using T = UpdateOpType;
  using F = OpField;
  const absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;
  const absl::StatusCode kNotFound = absl::StatusCode::kNotFound;
  struct OpCase {
    absl::Status status;
    const char* path;
  };
  const OpCase cases[] = {
      {Core(kInvalid, 1, T::kUpsert, F::kBodyId, "body 1 is upserted twice"), "ops[1].upsert.id"},
      {Core(kNotFound, 2, T::kRemove, F::kBodyId, "no body 5 in scene \"a\""), "ops[2].remove"},
      {Core(kNotFound, 3, T::kSetPose, F::kBodyId, "no body 6"), "ops[3].set_pose.id"},
      {Core(kInvalid, 3, T::kSetPose, F::kPoseRotation, "bad"), "ops[3].set_pose.pose.rotation"},
      {Core(kNotFound, 4, T::kSetFilter, F::kBodyId, "no body 6"), "ops[4].set_filter.id"},
      {Core(kNotFound, 6, T::kSetPose, F::kBodyId, "no body 9"), "moves.ids[1]"},
      {Core(kInvalid, 5, T::kSetPose, F::kPosePosition, "bad"), "moves.poses[0]"},
      {Core(absl::StatusCode::kResourceExhausted, 0, T::kUpsert, F::kBodyId,
            "scene \"a\" would hold 3 bodies"),
       "ops[0].upsert.id"},
      {Core(kInvalid, 0, T::kUpsert, F::kSphereRadius, "bad"), "ops[0].upsert.shape.sphere.radius"},
      {Core(kInvalid, 2, T::kRemove, F::kNone, "bad"), "ops[2]"},
      {absl::NotFoundError("scene: scene \"a\" was deleted"), "scene"},
      {absl::NotFoundError("scene: no scene \"a\""), "scene"},
  };
  for (const OpCase& c : cases) {
    const absl::Status rendered = WithRequestPaths(c.status, ops);
    ExpectError(rendered, c.status.code(), c.path, std::string(c.status.message()));
    // The reason follows the path unchanged.
    const std::optional<OpError> error = GetOpError(c.status);
    if (error.has_value()) {
      EXPECT_EQ(rendered.message(), std::string(c.path) + ": " + error->reason);
    }
  }
  EXPECT_TRUE(WithRequestPaths(absl::OkStatus(), ops).ok());
}

TEST(WithRequestPaths, NamesTheOtherOpOfAReasonInTheRequestsWordsToo) {
  const absl::Status twice = OpErrorStatus(
      absl::StatusCode::kInvalidArgument, OpError{.index = 2,
                                                  .op_type = UpdateOpType::kUpsert,
                                                  .field = OpField::kBodyId,
                                                  .reason = "body 8 is upserted twice in one batch",
                                                  .relation = OpRelation::kFirstBy,
                                                  .related = 0});
  // The core's own wording.
  EXPECT_EQ(twice.message(),
            "ops[2].body_id: body 8 is upserted twice in one batch (first by ops[0])");
  // An UpsertBodiesRequest has bodies, not ops.
  EXPECT_EQ(WithRequestPaths(twice, RequestOps{.kind = RequestOps::Kind::kUpsertBodies}).message(),
            "bodies[2].id: body 8 is upserted twice in one batch (first by bodies[0])");
  EXPECT_EQ(
      WithRequestPaths(twice, RequestOps{.kind = RequestOps::Kind::kUpdateBatch, .op_count = 3})
          .message(),
      "ops[2].upsert.id: body 8 is upserted twice in one batch (first by ops[0])");
  // A move removed earlier in the batch is named by its id.
  const absl::Status removed =
      OpErrorStatus(absl::StatusCode::kNotFound, OpError{.index = 3,
                                                         .op_type = UpdateOpType::kSetPose,
                                                         .field = OpField::kBodyId,
                                                         .reason = "no body 4 in scene \"a\"",
                                                         .relation = OpRelation::kRemovedBy,
                                                         .related = 0});
  EXPECT_EQ(
      WithRequestPaths(removed, RequestOps{.kind = RequestOps::Kind::kUpdateBatch, .op_count = 1})
          .message(),
      "moves.ids[2]: no body 4 in scene \"a\" (removed by ops[0])");
}

TEST(WithRequestPaths, NamesUnaryWritesBodiesAndIds) {
  ExpectError(WithRequestPaths(Core(absl::StatusCode::kInvalidArgument, 1, UpdateOpType::kUpsert,
                                    OpField::kBodyId, "twice"),
                               RequestOps{.kind = RequestOps::Kind::kUpsertBodies}),
              absl::StatusCode::kInvalidArgument, "bodies[1].id", "duplicate");
  ExpectError(WithRequestPaths(Core(absl::StatusCode::kInvalidArgument, 0, UpdateOpType::kUpsert,
                                    OpField::kPoseRotation, "bad"),
                               RequestOps{.kind = RequestOps::Kind::kUpsertBodies}),
              absl::StatusCode::kInvalidArgument, "bodies[0].pose.rotation", "rotation");
  ExpectError(WithRequestPaths(Core(absl::StatusCode::kNotFound, 3, UpdateOpType::kRemove,
                                    OpField::kBodyId, "no body 4"),
                               RequestOps{.kind = RequestOps::Kind::kRemoveBodies}),
              absl::StatusCode::kNotFound, "ids[3]", "unknown id");
}

TEST(WithRequestPaths, NeverReadsPathsOutOfMessages) {
  // Without an OpError, a message that looks like a core path is left as it is.
  const absl::Status text = absl::NotFoundError("ops[3].body_id: no body 4");
  EXPECT_EQ(WithRequestPaths(text, RequestOps{.kind = RequestOps::Kind::kRemoveBodies}), text);
}

}  // namespace
}  // namespace collide
