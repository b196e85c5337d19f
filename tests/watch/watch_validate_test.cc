#include "watch/watch_validate.h"

#include <cmath>
#include <limits>
#include <vector>

#include "base/field_error.h"
#include "gtest/gtest.h"

namespace collide {
namespace {

TEST(PrepareWatch, NormalisesFenceRotationsAsBodiesAreNormalised) {
  std::vector<FenceSpec> fences(2);
  fences[0].id = 1;
  fences[0].shape = Sphere{1};
  fences[0].pose.rotation = Quat{0, 0, 0.6f * 1.0008f, 0.8f * 1.0008f};  // within 1e-3 of unit
  fences[1].id = 2;
  fences[1].shape = Box{Vec3{1, 2, 3}};
  fences[1].pose.rotation = Quat{0, 0, 0.7071068f, 0.7071068f};  // unit to float precision
  const Quat kept = fences[1].pose.rotation;
  ASSERT_TRUE(PrepareWatch(fences, {}).ok());
  const Quat& q = fences[0].pose.rotation;
  EXPECT_NEAR(std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w), 1.0, 1e-6);
  EXPECT_NEAR(q.z, 0.6f, 1e-6f);
  EXPECT_EQ(fences[1].pose.rotation, kept);  // bit for bit
}

TEST(PrepareWatch, NamesTheFenceOrContactAndTheFirstOfADuplicate) {
  std::vector<FenceSpec> fences(3);
  for (size_t i = 0; i < fences.size(); ++i) {
    fences[i].id = 10 + i;
    fences[i].shape = Sphere{1};
  }
  fences[2].id = 10;
  absl::Status status = PrepareWatch(fences, {});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "fences[2].id: fence 10 appears twice (first by fences[0])");
  fences[2].id = 12;
  fences[1].shape = Capsule{1, -std::numeric_limits<float>::infinity()};
  status = PrepareWatch(fences, {});
  EXPECT_EQ(FieldPathOf(*GetFieldError(status)), "fences[1].shape.capsule.half_height");
  fences[1].shape = Sphere{1};
  fences[0].pose.rotation = Quat{0, 0, 0, 0};
  EXPECT_EQ(FieldPathOf(*GetFieldError(PrepareWatch(fences, {}))), "fences[0].pose.rotation");
  fences[0].pose = Pose{};
  const std::vector<ContactWatchSpec> contacts = {{.id = ~uint64_t{0}}, {.id = ~uint64_t{0}}};
  status = PrepareWatch(fences, contacts);
  EXPECT_EQ(status.message(),
            "contacts[1].id: contact watch 18446744073709551615 appears twice (first by "
            "contacts[0])");
}

}  // namespace
}  // namespace collide
