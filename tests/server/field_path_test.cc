#include "server/convert/field_path.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/field_error.h"
#include "server/convert_test_util.h"

namespace collide {
namespace {

// A status the scene layer would return about core op `index`'s `field`.
absl::Status Core(absl::StatusCode code, size_t index, const char* field, const char* reason) {
  return FieldErrorStatus(
      code, FieldError{.list = "ops", .index = index, .field = field, .reason = reason});
}

TEST(ForRequest, NamesCoreOpsWithTheUpdateBatchsPaths) {
  // ops: upsert, upsert, remove, set_pose, set_filter; then moves of ids 1 and 9 (core ops 5, 6).
  const RequestLayout layout{.kind = RequestLayout::Kind::kUpdateBatch, .op_count = 5};
  const absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;
  const absl::StatusCode kNotFound = absl::StatusCode::kNotFound;
  struct OpCase {
    absl::Status status;
    const char* path;
    const char* reason;
  };
  const OpCase cases[] = {
      {Core(kInvalid, 1, "upsert.id", "body 1 is upserted twice"), "ops[1].upsert.id",
       "body 1 is upserted twice"},
      {Core(kNotFound, 2, "remove", "no body 5"), "ops[2].remove", "no body 5"},
      {Core(kNotFound, 3, "set_pose.id", "no body 6"), "ops[3].set_pose.id", "no body 6"},
      {Core(kInvalid, 3, "set_pose.pose.rotation", "bad"), "ops[3].set_pose.pose.rotation", "bad"},
      {Core(kNotFound, 6, "set_pose.id", "no body 9"), "moves.ids[1]", "no body 9"},
      {Core(kInvalid, 5, "set_pose.pose.position", "must be finite"), "moves.poses[0]",
       "position must be finite"},
      {Core(kInvalid, 6, "set_pose.pose.rotation", "must be a unit quaternion"), "moves.poses[1]",
       "rotation must be a unit quaternion"},
      {Core(kInvalid, 0, "upsert.shape.sphere.radius", "bad"), "ops[0].upsert.shape.sphere.radius",
       "bad"},
      {Core(kInvalid, 2, "", "bad"), "ops[2]", "bad"},
      {FieldStatus(kNotFound, "scene", "scene \"a\" was deleted"), "scene",
       "scene \"a\" was deleted"},
      {InvalidFieldError("tick", "must be at most 9"), "tick", "must be at most 9"},
  };
  for (const OpCase& c : cases) {
    const absl::Status rendered = ForRequest(c.status, layout);
    EXPECT_EQ(rendered.code(), c.status.code());
    EXPECT_EQ(rendered.message(), std::string(c.path) + ": " + c.reason) << c.status;
    // Still data: a later layer could place it again.
    EXPECT_TRUE(GetFieldError(rendered).has_value());
  }
  EXPECT_TRUE(ForRequest(absl::OkStatus(), layout).ok());
}

TEST(ForRequest, NamesTheOtherOpOfAReasonInTheRequestsWordsToo) {
  const absl::Status twice = FieldErrorStatus(absl::StatusCode::kInvalidArgument,
                                              FieldError{.list = "ops",
                                                         .index = 2,
                                                         .field = "upsert.id",
                                                         .reason = "body 8 is upserted twice",
                                                         .relation = "first by",
                                                         .related = 0});
  // The core's own wording.
  EXPECT_EQ(twice.message(), "ops[2].upsert.id: body 8 is upserted twice (first by ops[0])");
  // An UpsertBodiesRequest has bodies, not ops.
  EXPECT_EQ(ForRequest(twice, RequestLayout{.kind = RequestLayout::Kind::kUpsertBodies}).message(),
            "bodies[2].id: body 8 is upserted twice (first by bodies[0])");
  EXPECT_EQ(
      ForRequest(twice, RequestLayout{.kind = RequestLayout::Kind::kUpdateBatch, .op_count = 3})
          .message(),
      "ops[2].upsert.id: body 8 is upserted twice (first by ops[0])");
  // A move removed earlier in the batch is named by its id, the removal by its op.
  const absl::Status removed =
      FieldErrorStatus(absl::StatusCode::kNotFound, FieldError{.list = "ops",
                                                               .index = 3,
                                                               .field = "set_pose.id",
                                                               .reason = "no body 4",
                                                               .relation = "removed by",
                                                               .related = 0});
  EXPECT_EQ(
      ForRequest(removed, RequestLayout{.kind = RequestLayout::Kind::kUpdateBatch, .op_count = 1})
          .message(),
      "moves.ids[2]: no body 4 (removed by ops[0])");
}

TEST(ForRequest, NamesUnaryWritesBodiesAndIds) {
  const RequestLayout bodies{.kind = RequestLayout::Kind::kUpsertBodies};
  const RequestLayout ids{.kind = RequestLayout::Kind::kRemoveBodies};
  ExpectError(ForRequest(Core(absl::StatusCode::kInvalidArgument, 1, "upsert.id", "twice"), bodies),
              absl::StatusCode::kInvalidArgument, "bodies[1].id", "duplicate");
  ExpectError(ForRequest(Core(absl::StatusCode::kInvalidArgument, 0, "upsert.pose.rotation", "bad"),
                         bodies),
              absl::StatusCode::kInvalidArgument, "bodies[0].pose.rotation", "rotation");
  ExpectError(ForRequest(Core(absl::StatusCode::kNotFound, 3, "remove", "no body 4"), ids),
              absl::StatusCode::kNotFound, "ids[3]", "unknown id");
}

TEST(ForRequest, NamesAUnaryQuerysFieldsUnderItsRoot) {
  const RequestLayout ray{.kind = RequestLayout::Kind::kUnaryQuery, .query_root = "ray"};
  EXPECT_EQ(
      ForRequest(InvalidElementError("queries", 0, "raycast.direction", "zero"), ray).message(),
      "ray.direction: zero");
  EXPECT_EQ(ForRequest(InvalidElementError("queries", 0, "max_hits", "too many"), ray).message(),
            "max_hits: too many");
  const RequestLayout overlap{.kind = RequestLayout::Kind::kUnaryQuery, .query_root = "overlap"};
  EXPECT_EQ(ForRequest(InvalidElementError("queries", 0, "overlap.pose.rotation", "bad"), overlap)
                .message(),
            "overlap.pose.rotation: bad");
}

TEST(ForRequest, NamesAnImportsBodiesByChunkAndItsOptionsByTheHeader) {
  const std::vector<uint64_t> starts = {0, 3, 3, 10};
  const RequestLayout import{.kind = RequestLayout::Kind::kImport, .chunk_starts = starts};
  EXPECT_EQ(ForRequest(InvalidElementError("bodies", 2, "pose.rotation", "bad"), import).message(),
            "chunks[0].bodies[2].pose.rotation: bad");
  // Chunk 1 is empty: body 3 is the first of chunk 2.
  EXPECT_EQ(ForRequest(InvalidElementError("bodies", 3, "id", "twice"), import).message(),
            "chunks[2].bodies[0].id: twice");
  EXPECT_EQ(ForRequest(InvalidElementError("bodies", 12, "", "bad"), import).message(),
            "chunks[3].bodies[2]: bad");
  EXPECT_EQ(ForRequest(InvalidFieldError("options.fat_margin", "bad"), import).message(),
            "header.options.fat_margin: bad");
  EXPECT_EQ(ForRequest(InvalidElementError("clients", 1, "client_id", "zero"), import).message(),
            "header.clients[1].client_id: zero");
  EXPECT_EQ(ForRequest(FieldStatus(absl::StatusCode::kAlreadyExists, "scene", "exists"), import)
                .message(),
            "scene: exists");
  // A name the header gave is the header's.
  const RequestLayout named{
      .kind = RequestLayout::Kind::kImport, .chunk_starts = starts, .name_from_header = true};
  EXPECT_EQ(ForRequest(InvalidFieldError("scene", "bad"), named).message(), "header.scene: bad");
}

TEST(ForRequest, NeverReadsPathsOutOfMessages) {
  // Without a FieldError, a message that looks like a core path is left as it is.
  const absl::Status text = absl::NotFoundError("ops[3].remove: no body 4");
  EXPECT_EQ(ForRequest(text, RequestLayout{.kind = RequestLayout::Kind::kRemoveBodies}), text);
}

}  // namespace
}  // namespace collide
