#include "server/convert/scene_convert.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "server/convert_test_util.h"

namespace collide {
namespace {

// A create's options as the service and the store take them: translated, then checked against
// the server's cap (ValidateSceneOptions, as Database::CreateScene does).
absl::StatusOr<SceneOptions> Options(const v1::SceneOptions& proto, const ServiceLimits& limits) {
  absl::StatusOr<SceneOptions> options = SceneOptionsFromProto(proto, limits);
  if (!options.ok()) return options;
  if (absl::Status s = ValidateSceneOptions(*options, limits.max_bodies_per_scene); !s.ok()) {
    return s;
  }
  return options;
}

TEST(SceneOptionsFromProto, ChecksRangesAndFillsDefaults) {
  const ServiceLimits limits = TestLimits();
  const Case cases[] = {
      {"fat_margin: -1", absl::StatusCode::kInvalidArgument, "options.fat_margin"},
      {"fat_margin: nan", absl::StatusCode::kInvalidArgument, "options.fat_margin"},
      {"max_bodies: 0", absl::StatusCode::kInvalidArgument, "options.max_bodies"},
      {"max_bodies: 5001", absl::StatusCode::kInvalidArgument, "options.max_bodies"},
      {"durability: 9", absl::StatusCode::kInvalidArgument, "options.durability"},
  };
  for (const Case& c : cases) {
    ExpectError(Options(Parse<v1::SceneOptions>(c.text), limits).status(), c.code, c.path, c.text);
  }
  absl::StatusOr<SceneOptions> defaults = SceneOptionsFromProto(v1::SceneOptions(), limits);
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->max_bodies, 5000u);  // min(1,000,000, the limit)
  EXPECT_FLOAT_EQ(defaults->fat_margin, 0.1f);
  EXPECT_EQ(defaults->durability, DurabilityPolicy::kDefault);
  absl::StatusOr<SceneOptions> set = SceneOptionsFromProto(
      Parse<v1::SceneOptions>("fat_margin: 0 max_bodies: 5000 durability: DURABILITY_NONE"),
      limits);
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->fat_margin, 0.0f);
  EXPECT_EQ(set->durability, DurabilityPolicy::kNone);
  EXPECT_EQ(SceneOptionsFromProto(v1::SceneOptions(), ServiceLimits())->max_bodies, 1000000u);
}

TEST(BodyConversion, RoundTripsThroughTheCore) {
  BodyState state;
  state.id = 42;
  state.shape = Capsule{0.5f, 2.0f};
  state.pose.position = Vec3{1, -2, 3};
  state.pose.rotation = Quat{0.0f, 0.6f, 0.0f, 0.8f};
  state.category = 4;
  state.mask = 5;
  state.kind = BodyKind::kStatic;
  state.user_data = 77;
  v1::Body proto;
  BodyStateToProto(state, &proto);
  UpdateOp op;
  ASSERT_TRUE(BodyToOp(proto, &op).ok());
  EXPECT_EQ(op.body_id, 42u);
  EXPECT_EQ(op.shape.type, ShapeType::kCapsule);
  EXPECT_EQ(op.shape.capsule.radius, 0.5f);
  EXPECT_EQ(op.shape.capsule.half_height, 2.0f);
  EXPECT_EQ(op.pose.position.y, -2.0f);
  // Bit for bit: values are translated as they are.
  EXPECT_EQ(op.pose.rotation, state.pose.rotation);
  EXPECT_EQ(op.category, 4u);
  EXPECT_EQ(op.mask, 5u);
  EXPECT_EQ(op.kind, BodyKind::kStatic);
  EXPECT_EQ(op.user_data, 77u);
}

}  // namespace
}  // namespace collide
