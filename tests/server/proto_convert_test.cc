#include "server/proto_convert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"

namespace collide {
namespace {

template <typename Message>
Message Parse(const std::string& text) {
  Message message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

// Checks the code exactly and that the message starts with `path` + ": ".
void ExpectError(const absl::Status& status, absl::StatusCode code, const std::string& path,
                 const std::string& what) {
  EXPECT_EQ(status.code(), code) << what << ": " << status;
  EXPECT_TRUE(absl::StartsWith(status.message(), path + ": "))
      << what << ": expected path " << path << ", got " << status.message();
}

ServiceLimits TestLimits() {
  ServiceLimits limits;
  limits.max_batch_ops = 4;
  limits.max_hits = 100;
  limits.max_excluded_ids = 2;
  limits.max_bodies_per_scene = 5000;
  return limits;
}

constexpr char kSphere[] = "shape { sphere { radius: 1 } }";

struct Case {
  const char* text;
  absl::StatusCode code;
  const char* path;
};

TEST(UpdateBatchFromProto, RejectsBadValuesWithTheirFieldPaths) {
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
    UpdateBatch batch;
    ExpectError(UpdateBatchFromProto(Parse<v1::UpdateBatch>(c.text), TestLimits(), &batch), c.code,
                c.path, c.text);
  }
}

TEST(UpdateBatchFromProto, ConvertsOpsThenMovesWithDefaultsAndNormalisedRotations) {
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
  EXPECT_NEAR(batch.ops[1].pose.rotation.z, 1.0f, 1e-6f);  // renormalised
  EXPECT_EQ(batch.ops[2].type, UpdateOpType::kSetFilter);
  EXPECT_EQ(batch.ops[2].category, 2u);
  EXPECT_EQ(batch.ops[2].mask, 3u);
  EXPECT_EQ(batch.ops[3].type, UpdateOpType::kRemove);
  EXPECT_EQ(batch.ops[3].body_id, 8u);
  EXPECT_EQ(batch.ops[4].type, UpdateOpType::kSetPose);
  EXPECT_EQ(batch.ops[4].pose.position.z, 3.0f);
  for (size_t i = 0; i < batch.ops.size(); ++i) EXPECT_TRUE(ValidateOpValues(batch.ops[i], i).ok());
}

TEST(TranslateUpdateError, RewritesCorePathsIntoProtoPaths) {
  const v1::UpdateBatch proto = Parse<v1::UpdateBatch>(
      "ops { upsert { id: 1 shape { sphere { radius: 1 } } } } ops { upsert { id: 1 shape { "
      "sphere { radius: 1 } } } } ops { remove: 5 } ops { set_pose { id: 6 } } "
      "ops { set_filter { id: 6 } } moves { ids: [1, 9] poses: [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, "
      "0, 0, 1] }");
  const Case cases[] = {
      {"ops[1].body_id: body 1 is upserted twice", absl::StatusCode::kInvalidArgument,
       "ops[1].upsert.id"},
      {"ops[2].body_id: no body 5 in scene \"a\"", absl::StatusCode::kNotFound, "ops[2].remove"},
      {"ops[3].body_id: no body 6", absl::StatusCode::kNotFound, "ops[3].set_pose.id"},
      {"ops[3].pose.rotation: bad", absl::StatusCode::kInvalidArgument,
       "ops[3].set_pose.pose.rotation"},
      {"ops[4].body_id: no body 6", absl::StatusCode::kNotFound, "ops[4].set_filter.id"},
      {"ops[6].body_id: no body 9", absl::StatusCode::kNotFound, "moves.ids[1]"},
      {"ops[5].pose.position: bad", absl::StatusCode::kInvalidArgument, "moves.poses[0]"},
      {"ops[0].body_id: scene \"a\" would hold 3 bodies", absl::StatusCode::kResourceExhausted,
       "ops[0].upsert.id"},
      {"scene \"a\" was deleted", absl::StatusCode::kNotFound, "scene"},
      {"scene: no scene \"a\"", absl::StatusCode::kNotFound, "scene"},
  };
  for (const Case& c : cases) {
    ExpectError(TranslateUpdateError(absl::Status(c.code, c.text), proto), c.code, c.path, c.text);
  }
  EXPECT_TRUE(TranslateUpdateError(absl::OkStatus(), proto).ok());
}

TEST(UnaryWrites, ConvertAndTranslateWithRequestPaths) {
  UpdateBatch batch;
  ExpectError(UpsertRequestToBatch(Parse<v1::UpsertBodiesRequest>(absl::StrCat(
                                       "bodies { id: 1 ", kSphere, " } bodies { id: 2 ", kSphere,
                                       " } bodies { id: 3 shape { sphere { radius: -2 } } }")),
                                   TestLimits(), &batch),
              absl::StatusCode::kInvalidArgument, "bodies[2].shape.sphere.radius", "radius");
  ExpectError(
      UpsertRequestToBatch(Parse<v1::UpsertBodiesRequest>(absl::StrCat(
                               "bodies { id: 1 ", kSphere, " pose { rotation { x: 1 y: 1 } } }")),
                           TestLimits(), &batch),
      absl::StatusCode::kInvalidArgument, "bodies[0].pose.rotation", "rotation");
  ExpectError(UpsertRequestToBatch(Parse<v1::UpsertBodiesRequest>(
                                       "bodies {} bodies {} bodies {} bodies {} bodies {}"),
                                   TestLimits(), &batch),
              absl::StatusCode::kResourceExhausted, "bodies", "too many bodies");
  ExpectError(TranslateUpsertError(absl::InvalidArgumentError("ops[1].body_id: twice")),
              absl::StatusCode::kInvalidArgument, "bodies[1].id", "duplicate");
  // The other op an explanation names is in the request's words too: an UpsertBodiesRequest
  // has bodies, not ops.
  EXPECT_EQ(TranslateUpsertError(
                absl::InvalidArgumentError(
                    "ops[2].body_id: body 8 is upserted twice in one batch (first by ops[0])"))
                .message(),
            "bodies[2].id: body 8 is upserted twice in one batch (first by bodies[0])");
  EXPECT_EQ(TranslateUpdateError(
                absl::InvalidArgumentError(
                    "ops[1].body_id: body 1 is upserted twice in one batch (first by ops[0])"),
                Parse<v1::UpdateBatch>("ops { upsert { id: 1 } } ops { upsert { id: 1 } }"))
                .message(),
            "ops[1].upsert.id: body 1 is upserted twice in one batch (first by ops[0])");
  ExpectError(RemoveRequestToBatch(Parse<v1::RemoveBodiesRequest>("ids: [1, 2, 3, 4, 5]"),
                                   TestLimits(), &batch),
              absl::StatusCode::kResourceExhausted, "ids", "too many ids");
  ASSERT_TRUE(
      RemoveRequestToBatch(Parse<v1::RemoveBodiesRequest>("ids: [4, 5]"), TestLimits(), &batch)
          .ok());
  ASSERT_EQ(batch.ops.size(), 2u);
  EXPECT_EQ(batch.ops[1].type, UpdateOpType::kRemove);
  EXPECT_EQ(batch.ops[1].body_id, 5u);
  ExpectError(TranslateRemoveError(absl::NotFoundError("ops[3].body_id: no body 4")),
              absl::StatusCode::kNotFound, "ids[3]", "unknown id");
}

TEST(QueryFromProto, RejectsBadQueriesWithTheirFieldPaths) {
  const Case cases[] = {
      {"raycast { direction { } max_distance: 1 }", absl::StatusCode::kInvalidArgument,
       "queries[3].raycast.direction"},
      {"raycast { direction { x: inf } max_distance: 1 }", absl::StatusCode::kInvalidArgument,
       "queries[3].raycast.direction"},
      {"raycast { direction { x: 1 } max_distance: -1 }", absl::StatusCode::kInvalidArgument,
       "queries[3].raycast.max_distance"},
      {"raycast { direction { x: 1 } max_distance: nan }", absl::StatusCode::kInvalidArgument,
       "queries[3].raycast.max_distance"},
      {"raycast { origin { y: nan } direction { x: 1 } }", absl::StatusCode::kInvalidArgument,
       "queries[3].raycast.origin"},
      {"sphere_cast { direction { x: 1 } radius: -1 }", absl::StatusCode::kInvalidArgument,
       "queries[3].sphere_cast.radius"},
      {"sphere_cast { direction { } radius: 1 }", absl::StatusCode::kInvalidArgument,
       "queries[3].sphere_cast.direction"},
      {"overlap { }", absl::StatusCode::kInvalidArgument, "queries[3].overlap.shape"},
      {"overlap { shape { sphere { radius: 1 } } pose { rotation { } } }",
       absl::StatusCode::kInvalidArgument, "queries[3].overlap.pose.rotation"},
      {"point { radius: inf }", absl::StatusCode::kInvalidArgument, "queries[3].point.radius"},
      {"aabb { region { min { x: 1 } max { x: 0 } } }", absl::StatusCode::kInvalidArgument,
       "queries[3].aabb.region"},
      {"aabb { region { min { x: nan } } }", absl::StatusCode::kInvalidArgument,
       "queries[3].aabb.region.min"},
      {"request_id: 4", absl::StatusCode::kInvalidArgument, "queries[3].kind"},
      {"point { } max_hits: 101", absl::StatusCode::kInvalidArgument, "queries[3].max_hits"},
      {"point { } filter { excluded_ids: [1, 2, 3] }", absl::StatusCode::kInvalidArgument,
       "queries[3].filter.excluded_ids"},
      {"point { } mode: 9", absl::StatusCode::kInvalidArgument, "queries[3].mode"},
  };
  for (const Case& c : cases) {
    Query query;
    ExpectError(QueryFromProto(Parse<v1::Query>(c.text), 3, TestLimits(), &query), c.code, c.path,
                c.text);
  }
}

TEST(QueryFromProto, NormalisesDirectionsAndFillsDefaults) {
  const v1::Query proto = Parse<v1::Query>(
      "raycast { origin { x: 1 } direction { z: 2 } max_distance: 1e30 } mode: MODE_ALL "
      "filter { mask: 6 excluded_ids: [5, 6] }");
  Query query;
  ASSERT_TRUE(QueryFromProto(proto, 0, TestLimits(), &query).ok());
  EXPECT_EQ(query.kind, QueryKind::kRaycast);
  EXPECT_EQ(query.mode, CollectMode::kAll);
  EXPECT_EQ(query.ray.origin.x, 1.0f);
  EXPECT_EQ(query.ray.direction.z, 1.0f);
  EXPECT_EQ(query.ray.max_distance, kMaxCastDistance);
  EXPECT_EQ(query.max_hits, 64u);  // 0 means 64
  EXPECT_EQ(query.filter.category, ~0u);
  EXPECT_EQ(query.filter.mask, 6u);
  ASSERT_EQ(query.filter.excluded_ids.size(), 2u);
  EXPECT_EQ(query.filter.excluded_ids[1], 6u);

  const v1::Query region =
      Parse<v1::Query>("aabb { region { min { x: -1 } max { x: 1 y: 2 z: 3 } } } max_hits: 7");
  ASSERT_TRUE(QueryFromProto(region, 0, TestLimits(), &query).ok());
  EXPECT_EQ(query.kind, QueryKind::kRegion);
  EXPECT_EQ(query.region.max.z, 3.0f);
  EXPECT_EQ(query.max_hits, 7u);
  EXPECT_EQ(query.filter.excluded_ids.size(), 0u);

  const v1::Query point = Parse<v1::Query>("point { point { y: 4 } radius: 2 } mode: MODE_ANY");
  ASSERT_TRUE(QueryFromProto(point, 0, TestLimits(), &query).ok());
  EXPECT_EQ(query.kind, QueryKind::kWithinRadius);
  EXPECT_EQ(query.mode, CollectMode::kAny);
  EXPECT_EQ(query.ray.origin.y, 4.0f);
  EXPECT_EQ(query.radius, 2.0f);
}

TEST(UnaryQueries, UseTheRequestsFieldPaths) {
  const ServiceLimits limits = TestLimits();
  ExpectError(
      RaycastRequestToQuery(Parse<v1::RaycastRequest>("ray { max_distance: 1 }"), limits).status(),
      absl::StatusCode::kInvalidArgument, "ray.direction", "ray direction");
  ExpectError(RaycastRequestToQuery(
                  Parse<v1::RaycastRequest>("ray { direction { x: 1 } max_distance: -1 }"), limits)
                  .status(),
              absl::StatusCode::kInvalidArgument, "ray.max_distance", "ray max_distance");
  ExpectError(RaycastRequestToQuery(
                  Parse<v1::RaycastRequest>("ray { origin { x: inf } direction { x: 1 } }"), limits)
                  .status(),
              absl::StatusCode::kInvalidArgument, "ray.origin", "ray origin");
  ExpectError(RaycastRequestToQuery(
                  Parse<v1::RaycastRequest>("ray { direction { x: 1 } } max_hits: 1000"), limits)
                  .status(),
              absl::StatusCode::kInvalidArgument, "max_hits", "max_hits");
  ExpectError(RaycastRequestToQuery(
                  Parse<v1::RaycastRequest>("ray { direction { x: 1 } } filter { excluded_ids: [1, "
                                            "2, 3] }"),
                  limits)
                  .status(),
              absl::StatusCode::kInvalidArgument, "filter.excluded_ids", "excluded");
  ExpectError(SphereCastRequestToQuery(
                  Parse<v1::SphereCastRequest>("cast { direction { x: 1 } radius: nan }"), limits)
                  .status(),
              absl::StatusCode::kInvalidArgument, "cast.radius", "cast radius");
  ExpectError(OverlapRequestToQuery(Parse<v1::OverlapRequest>("overlap { }"), limits).status(),
              absl::StatusCode::kInvalidArgument, "overlap.shape", "overlap shape");
  ExpectError(OverlapRequestToQuery(Parse<v1::OverlapRequest>(
                                        "overlap { shape { sphere { radius: 1 } } pose { rotation "
                                        "{ w: 2 } } }"),
                                    limits)
                  .status(),
              absl::StatusCode::kInvalidArgument, "overlap.pose.rotation", "overlap rotation");
  absl::StatusOr<Query> overlap = OverlapRequestToQuery(
      Parse<v1::OverlapRequest>(
          "overlap { shape { capsule { radius: 1 half_height: 2 } } } detail: true"),
      limits);
  ASSERT_TRUE(overlap.ok()) << overlap.status();
  EXPECT_EQ(overlap->kind, QueryKind::kOverlap);
  EXPECT_TRUE(overlap->detail);
  EXPECT_EQ(overlap->shape.type, ShapeType::kCapsule);
  EXPECT_EQ(overlap->pose.rotation, Quat::Identity());
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
    ExpectError(SceneOptionsFromProto(Parse<v1::SceneOptions>(c.text), limits).status(), c.code,
                c.path, c.text);
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
  ASSERT_TRUE(BodyToOp(proto, FieldPath{"bodies", 0}, &op).ok());
  EXPECT_EQ(op.body_id, 42u);
  EXPECT_EQ(op.shape.type, ShapeType::kCapsule);
  EXPECT_EQ(op.shape.capsule.radius, 0.5f);
  EXPECT_EQ(op.shape.capsule.half_height, 2.0f);
  EXPECT_EQ(op.pose.position.y, -2.0f);
  EXPECT_NEAR(op.pose.rotation.y, 0.6f, 1e-6f);
  EXPECT_NEAR(op.pose.rotation.w, 0.8f, 1e-6f);
  EXPECT_EQ(op.category, 4u);
  EXPECT_EQ(op.mask, 5u);
  EXPECT_EQ(op.kind, BodyKind::kStatic);
  EXPECT_EQ(op.user_data, 77u);
}

TEST(HitToProto, CopiesEveryField) {
  QueryHit hit;
  hit.body_id = 3;
  hit.distance = 1.5f;
  hit.depth = 0.25f;
  hit.point = Vec3{1, 2, 3};
  hit.normal = Vec3{0, 0, -1};
  hit.start_overlapping = true;
  v1::Hit proto;
  HitToProto(hit, &proto);
  EXPECT_EQ(proto.body_id(), 3u);
  EXPECT_EQ(proto.distance(), 1.5f);
  EXPECT_EQ(proto.depth(), 0.25f);
  EXPECT_EQ(proto.point().y(), 2.0f);
  EXPECT_EQ(proto.normal().z(), -1.0f);
  EXPECT_TRUE(proto.start_overlapping());
}

TEST(FieldPath, RendersHeadIndexTailAndField) {
  EXPECT_EQ((FieldPath{"ops", 3, ".upsert"}.Of("pose.rotation")), "ops[3].upsert.pose.rotation");
  EXPECT_EQ((FieldPath{"ray"}.Of("direction")), "ray.direction");
  EXPECT_EQ((FieldPath{}.Of("max_hits")), "max_hits");
  EXPECT_EQ((FieldPath{"moves.poses", 4}.Of("")), "moves.poses[4]");
}

}  // namespace
}  // namespace collide
