#include "base/field_error.h"

#include <optional>

#include "gtest/gtest.h"

namespace collide {
namespace {

TEST(FieldPath, WritesListIndexAndField) {
  EXPECT_EQ(FieldPath("ops", 3, "upsert.pose.rotation"), "ops[3].upsert.pose.rotation");
  EXPECT_EQ(FieldPath("moves.poses", 4, ""), "moves.poses[4]");
  EXPECT_EQ(FieldPath("", FieldError::kNoIndex, "ray.direction"), "ray.direction");
  EXPECT_EQ(FieldPath("header", FieldError::kNoIndex, "tick"), "header.tick");
  EXPECT_EQ(FieldPath("", FieldError::kNoIndex, ""), "");
}

TEST(FieldErrorStatus, WordsTheErrorAndCarriesItAsData) {
  const FieldError error{.list = "ops",
                         .index = 3,
                         .field = "remove",
                         .reason = "no body 2 in scene \"arena\"",
                         .relation = "removed by",
                         .related = 1};
  const absl::Status status = FieldErrorStatus(absl::StatusCode::kNotFound, error);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "ops[3].remove: no body 2 in scene \"arena\" (removed by ops[1])");
  EXPECT_EQ(GetFieldError(status), error);

  FieldError other_list = error;
  other_list.list = "moves.ids";
  other_list.field = "";
  other_list.related_list = "ops";
  EXPECT_EQ(FieldErrorStatus(absl::StatusCode::kNotFound, other_list).message(),
            "moves.ids[3]: no body 2 in scene \"arena\" (removed by ops[1])");
  EXPECT_EQ(InvalidFieldError("options.fat_margin", "bad").message(), "options.fat_margin: bad");
  EXPECT_EQ(InvalidElementError("bodies", 0, "pose.rotation", "bad").message(),
            "bodies[0].pose.rotation: bad");
  EXPECT_EQ(InvalidElementError("ops", 7, "", "x").message(), "ops[7]: x");
}

TEST(GetFieldError, FindsNoneInOtherStatuses) {
  EXPECT_FALSE(GetFieldError(absl::OkStatus()).has_value());
  EXPECT_FALSE(GetFieldError(absl::NotFoundError("ops[3].remove: no body 2")).has_value());
  // A payload under the same URL that is not one of ours (a truncated or foreign one).
  absl::Status odd = absl::InvalidArgumentError("x");
  odd.SetPayload("collide/FieldError", absl::Cord("abc"));
  EXPECT_FALSE(GetFieldError(odd).has_value());
}

TEST(AtElement, MovesARootErrorIntoAnElement) {
  const absl::Status root = InvalidFieldError("rotation", "must be finite");
  const absl::Status placed = AtElement(root, "ops", 2, "set_pose.pose");
  EXPECT_EQ(placed.message(), "ops[2].set_pose.pose.rotation: must be finite");
  EXPECT_EQ(GetFieldError(placed)->index, 2u);
  EXPECT_EQ(AtElement(InvalidFieldError("", "no shape"), "fences", 1, "shape").message(),
            "fences[1].shape: no shape");
  EXPECT_TRUE(AtElement(absl::OkStatus(), "ops", 0).ok());
  // A status without a FieldError is not touched.
  EXPECT_EQ(AtElement(absl::InternalError("x"), "ops", 0).message(), "x");
}

TEST(UnderField, PutsTheErrorUnderAParent) {
  EXPECT_EQ(UnderField(InvalidFieldError("options.fat_margin", "bad"), "header").message(),
            "header.options.fat_margin: bad");
  EXPECT_EQ(UnderField(InvalidElementError("clients", 2, "client_id", "zero"), "header").message(),
            "header.clients[2].client_id: zero");
  EXPECT_EQ(UnderField(InvalidFieldError("", "no shape"), "shape").message(), "shape: no shape");
  EXPECT_EQ(UnderField(absl::InternalError("x"), "header").message(), "x");
  const absl::Status kept = UnderField(InvalidFieldError("tick", "bad"), "header");
  EXPECT_EQ(kept.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GetFieldError(kept)->field, "header.tick");
}

}  // namespace
}  // namespace collide
