#include "scene/validate.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "base/field_error.h"
#include "gtest/gtest.h"
#include "scene/scene.h"

namespace collide {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kDenormal = std::numeric_limits<float>::denorm_min();

// The path of the FieldError `status` carries ("" without one).
std::string PathOf(const absl::Status& status) {
  const std::optional<FieldError> error = GetFieldError(status);
  return error.has_value() ? FieldPathOf(*error) : "";
}

TEST(ValidatePose, NamesThePartThatIsWrong) {
  EXPECT_TRUE(ValidatePose(Pose{}).ok());
  EXPECT_TRUE(ValidatePose(Pose{.position = Vec3{-1e9f, 1e9f, kDenormal}}).ok());
  for (float bad : {kNaN, kInf, -kInf, 1.0001e9f, -1e30f}) {
    EXPECT_EQ(PathOf(ValidatePose(Pose{.position = Vec3{0, bad, 0}})), "position") << bad;
  }
  for (float bad : {kNaN, kInf}) {
    EXPECT_EQ(PathOf(ValidatePose(Pose{.rotation = Quat{bad, 0, 0, 1}})), "rotation") << bad;
  }
  // Within 1e-3 of unit length is accepted; beyond, refused with the length.
  EXPECT_TRUE(ValidatePose(Pose{.rotation = Quat{0, 0, 0, 1.0009f}}).ok());
  const absl::Status far = ValidatePose(Pose{.rotation = Quat{0, 0, 0, 1.0011f}});
  EXPECT_EQ(PathOf(far), "rotation");
  EXPECT_EQ(GetFieldError(far)->reason, "must be a unit quaternion (length 1.0011)");
  EXPECT_EQ(PathOf(ValidatePose(Pose{.rotation = Quat{0, 0, 0, 0}})), "rotation");
  EXPECT_EQ(PathOf(ValidatePose(Pose{.rotation = Quat{1e30f, 1e30f, 0, 0}})), "rotation");
}

TEST(ValidateShape, NamesEachDimension) {
  EXPECT_TRUE(ValidateShape(Sphere{0}).ok());
  EXPECT_TRUE(ValidateShape(Box{Vec3{0, 1e9f, kDenormal}}).ok());
  EXPECT_TRUE(ValidateShape(Capsule{1, 0}).ok());
  for (float bad : {-1.0f, -kDenormal, kNaN, kInf, 1.5e9f}) {
    EXPECT_EQ(PathOf(ValidateShape(Sphere{bad})), "sphere.radius") << bad;
    EXPECT_EQ(PathOf(ValidateShape(Box{Vec3{1, 1, bad}})), "box.half_extents") << bad;
    EXPECT_EQ(PathOf(ValidateShape(Capsule{bad, 1})), "capsule.radius") << bad;
    EXPECT_EQ(PathOf(ValidateShape(Capsule{1, bad})), "capsule.half_height") << bad;
  }
  Shape unknown = Sphere{1};
  unknown.type = static_cast<ShapeType>(200);
  const absl::Status status = ValidateShape(unknown);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PathOf(status), "");
}

TEST(ValidateOpValues, NamesTheFieldUnderTheOpsType) {
  UpdateOp upsert = UpsertOp(BodyDesc{.id = ~uint64_t{0}, .shape = Sphere{-1}});
  EXPECT_EQ(PathOf(ValidateOpValues(upsert, 3)), "ops[3].upsert.shape.sphere.radius");
  upsert.shape = Sphere{1};
  upsert.pose.rotation = Quat{0, 0, 0, 2};
  EXPECT_EQ(PathOf(ValidateOpValues(upsert, 0)), "ops[0].upsert.pose.rotation");
  upsert.pose = Pose{};
  upsert.kind = static_cast<BodyKind>(7);
  EXPECT_EQ(PathOf(ValidateOpValues(upsert, 1)), "ops[1].upsert.kind");
  UpdateOp move = SetPoseOp(1, Pose{.position = Vec3{kNaN, 0, 0}});
  EXPECT_EQ(PathOf(ValidateOpValues(move, 5, "bodies")), "bodies[5].set_pose.pose.position");
  // Filters and removals carry no values to check; an unknown type is named as the op.
  EXPECT_TRUE(ValidateOpValues(SetFilterOp(1, 0, 0), 0).ok());
  EXPECT_TRUE(ValidateOpValues(RemoveOp(~uint64_t{0}), 0).ok());
  UpdateOp odd = RemoveOp(1);
  odd.type = static_cast<UpdateOpType>(9);
  EXPECT_EQ(PathOf(ValidateOpValues(odd, 2)), "ops[2]");
}

TEST(ValidateBody, NamesTheFieldOfTheStoredBody) {
  BodyState body{.id = 4, .shape = Capsule{1, 2}};
  EXPECT_TRUE(ValidateBody(body, 0).ok());
  body.pose.rotation = Quat{0.5f, 0, 0, 0};
  EXPECT_EQ(PathOf(ValidateBody(body, 9)), "bodies[9].pose.rotation");
  body.pose = Pose{};
  body.shape = Capsule{1, -2};
  EXPECT_EQ(PathOf(ValidateBody(body, 0)), "bodies[0].shape.capsule.half_height");
}

// A ray query as a transport makes it: max_hits 0 asks for the default.
Query RayQuery(Vec3 origin, Vec3 direction, float max_distance) {
  Query query;
  query.max_hits = 0;
  query.shape_query =
      RaycastQuery{Ray{.origin = origin, .direction = direction, .max_distance = max_distance}};
  return query;
}

TEST(PrepareQuery, NormalisesDirectionsClampsDistancesAndFillsMaxHits) {
  const QueryLimits limits{.max_hits = 100, .max_excluded_ids = 2};
  Query query = RayQuery(Vec3{1, 2, 3}, Vec3{0, 0, -4}, 1e30f);
  ASSERT_TRUE(PrepareQuery(&query, limits, 0).ok());
  const Ray& ray = std::get<RaycastQuery>(query.shape_query).ray;
  EXPECT_EQ(ray.direction, (Vec3{0, 0, -1}));
  EXPECT_EQ(ray.max_distance, kMaxCastDistance);
  EXPECT_EQ(query.max_hits, 64u);
  // The default is bounded by the server's limit, and never 0.
  query = RayQuery(Vec3{}, Vec3{1, 0, 0}, 1);
  ASSERT_TRUE(PrepareQuery(&query, QueryLimits{.max_hits = 5}, 0).ok());
  EXPECT_EQ(query.max_hits, 5u);
  query = RayQuery(Vec3{}, Vec3{1, 0, 0}, 1);
  ASSERT_TRUE(PrepareQuery(&query, QueryLimits{.max_hits = 0}, 0).ok());
  EXPECT_EQ(query.max_hits, 1u);
  // A tiny direction is normalised in double, where its squares do not underflow.
  query = RayQuery(Vec3{}, Vec3{kDenormal, 0, 0}, 1);
  ASSERT_TRUE(PrepareQuery(&query, limits, 0).ok());
  EXPECT_EQ(std::get<RaycastQuery>(query.shape_query).ray.direction, (Vec3{1, 0, 0}));
  // Preparing a prepared query changes nothing.
  query = RayQuery(Vec3{}, Vec3{0.3f, 0.4f, 1.7f}, 10);
  ASSERT_TRUE(PrepareQuery(&query, limits, 0).ok());
  const Query once = query;
  ASSERT_TRUE(PrepareQuery(&query, limits, 0).ok());
  EXPECT_EQ(std::get<RaycastQuery>(query.shape_query).ray.direction,
            std::get<RaycastQuery>(once.shape_query).ray.direction);
}

TEST(PrepareQuery, NamesTheFieldUnderTheQuerysKind) {
  const QueryLimits limits{.max_hits = 100, .max_excluded_ids = 2};
  struct QueryCase {
    Query query;
    const char* path;
  };
  std::vector<QueryCase> cases;
  cases.push_back({RayQuery(Vec3{}, Vec3{}, 1), "queries[4].raycast.direction"});
  cases.push_back({RayQuery(Vec3{}, Vec3{kInf, 0, 0}, 1), "queries[4].raycast.direction"});
  cases.push_back({RayQuery(Vec3{}, Vec3{kNaN, 1, 0}, 1), "queries[4].raycast.direction"});
  cases.push_back({RayQuery(Vec3{}, Vec3{1, 0, 0}, -1), "queries[4].raycast.max_distance"});
  cases.push_back({RayQuery(Vec3{}, Vec3{1, 0, 0}, kNaN), "queries[4].raycast.max_distance"});
  cases.push_back({RayQuery(Vec3{}, Vec3{1, 0, 0}, kInf), "queries[4].raycast.max_distance"});
  cases.push_back({RayQuery(Vec3{0, 2e9f, 0}, Vec3{1, 0, 0}, 1), "queries[4].raycast.origin"});
  Query cast;
  cast.shape_query = SphereCastQuery{Ray{.direction = Vec3{1, 0, 0}}, -0.5f};
  cases.push_back({cast, "queries[4].sphere_cast.radius"});
  Query overlap;
  overlap.shape_query = OverlapQuery{.shape = Box{Vec3{1, kNaN, 1}}};
  cases.push_back({overlap, "queries[4].overlap.shape.box.half_extents"});
  overlap.shape_query = OverlapQuery{.shape = Sphere{1}, .pose = Pose{.rotation = Quat{}}};
  std::get<OverlapQuery>(overlap.shape_query).pose.rotation = Quat{0, 0, 0, 0};
  cases.push_back({overlap, "queries[4].overlap.pose.rotation"});
  Query point;
  point.shape_query = WithinRadiusQuery{Vec3{kNaN, 0, 0}, 1};
  cases.push_back({point, "queries[4].point.point"});
  point.shape_query = WithinRadiusQuery{Vec3{}, kInf};
  cases.push_back({point, "queries[4].point.radius"});
  Query region;
  region.shape_query = RegionQuery{Aabb{Vec3{1, 0, 0}, Vec3{0, 1, 1}}};
  cases.push_back({region, "queries[4].aabb.region"});
  region.shape_query = RegionQuery{Aabb{Vec3{-kInf, 0, 0}, Vec3{0, 1, 1}}};
  cases.push_back({region, "queries[4].aabb.region.min"});
  Query common = RayQuery(Vec3{}, Vec3{1, 0, 0}, 1);
  common.max_hits = 101;
  cases.push_back({common, "queries[4].max_hits"});
  common.max_hits = ~uint32_t{0};
  cases.push_back({common, "queries[4].max_hits"});
  common.max_hits = 0;
  const uint64_t ids[] = {1, 2, 3};
  common.filter.excluded_ids = ids;
  cases.push_back({common, "queries[4].filter.excluded_ids"});
  common.filter.excluded_ids = {};
  common.mode = static_cast<CollectMode>(3);
  cases.push_back({common, "queries[4].mode"});
  common.mode = CollectMode::kAll;
  common.tick_fraction = 0.5f;
  cases.push_back({common, "queries[4].tick_fraction"});  // needs at_tick
  common.at_tick = ~uint64_t{0};
  common.tick_fraction = 1.0f;
  cases.push_back({common, "queries[4].tick_fraction"});
  common.tick_fraction = kNaN;
  cases.push_back({common, "queries[4].tick_fraction"});
  for (QueryCase& c : cases) {
    const absl::Status status = PrepareQuery(&c.query, limits, 4);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.path;
    EXPECT_EQ(PathOf(status), c.path) << status;
  }
  // A fraction with a tick is fine; whether the tick is retained is the scene's check.
  common.tick_fraction = 0.25f;
  EXPECT_TRUE(PrepareQuery(&common, limits, 4).ok());
}

TEST(Scene, ValidationErrorsCarryTheOpAndFieldAsData) {
  Scene scene("arena", SceneOptions{});
  ASSERT_TRUE(scene.Apply(UpdateBatch{{UpsertOp(BodyDesc{.id = 1, .shape = Sphere{1}})}}).ok());
  UpdateOp bad_move = SetPoseOp(1, Pose{});
  bad_move.pose.rotation = Quat{0, 0, 0, 0};
  const absl::Status values = scene.Apply(UpdateBatch{{RemoveOp(9), bad_move}}).status();
  // Op 0 fails first (values are checked op by op, with existence).
  std::optional<FieldError> error = GetFieldError(values);
  ASSERT_TRUE(error.has_value()) << values;
  EXPECT_EQ(FieldPathOf(*error), "ops[0].remove");
  EXPECT_EQ(error->reason, "no body 9 in scene \"arena\"");

  const absl::Status rotation = scene.Apply(UpdateBatch{{bad_move}}).status();
  error = GetFieldError(rotation);
  ASSERT_TRUE(error.has_value()) << rotation;
  EXPECT_EQ(FieldPathOf(*error), "ops[0].set_pose.pose.rotation");
  EXPECT_EQ(error->reason, "must be a unit quaternion (length 0)");

  const BodyDesc again{.id = 1, .shape = Sphere{1}};
  const absl::Status twice = scene.Apply(UpdateBatch{{UpsertOp(again), UpsertOp(again)}}).status();
  error = GetFieldError(twice);
  ASSERT_TRUE(error.has_value()) << twice;
  EXPECT_EQ(FieldPathOf(*error), "ops[1].upsert.id");
  EXPECT_EQ(error->relation, "first by");
  EXPECT_EQ(error->related, 0u);
  EXPECT_EQ(twice.message(),
            "ops[1].upsert.id: body 1 is upserted twice in one batch (first by ops[0])");
}

}  // namespace
}  // namespace collide
