#include "scene/scene_options.h"

#include "gtest/gtest.h"

namespace collide {
namespace {

TEST(DurabilityPolicy, NamesRoundTrip) {
  for (DurabilityPolicy p :
       {DurabilityPolicy::kDefault, DurabilityPolicy::kNone, DurabilityPolicy::kPeriodic,
        DurabilityPolicy::kAlways, DurabilityPolicy::kReplicated}) {
    absl::StatusOr<DurabilityPolicy> parsed = ParseDurabilityPolicy(DurabilityPolicyName(p));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, p);
  }
  absl::StatusOr<DurabilityPolicy> bad = ParseDurabilityPolicy("sometimes");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "durability: \"sometimes\" is not one of default, none, periodic, always, replicated");
}

TEST(ValidateSceneOptions, ChecksEveryField) {
  EXPECT_TRUE(ValidateSceneOptions(SceneOptions{}).ok());
  EXPECT_FALSE(ValidateSceneOptions(SceneOptions{.fat_margin = -0.1f}).ok());
  EXPECT_FALSE(ValidateSceneOptions(SceneOptions{.fat_margin = 1e7f}).ok());
  EXPECT_FALSE(ValidateSceneOptions(SceneOptions{.max_bodies = 0}).ok());
  EXPECT_FALSE(ValidateSceneOptions(SceneOptions{.max_bodies = kMaxBodiesLimit + 1}).ok());
  absl::Status bad =
      ValidateSceneOptions(SceneOptions{.durability = static_cast<DurabilityPolicy>(9)});
  EXPECT_EQ(bad.message(), "options.durability: unknown policy 9");
}

}  // namespace
}  // namespace collide
