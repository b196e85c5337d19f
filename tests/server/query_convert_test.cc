#include "server/convert/query_convert.h"

#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "absl/strings/str_cat.h"
#include "server/convert/field_path.h"
#include "server/convert_test_util.h"

namespace collide {
namespace {

// A batch's query as the stream makes it: translated, then checked by the core.
absl::Status Convert(const v1::Query& proto, size_t index, const ServiceLimits& limits,
                     Query* query) {
  absl::Status status = QueryFromProto(proto, index, query);
  if (status.ok()) status = PrepareQuery(query, QueryLimitsOf(limits), index);
  return status;
}

// A unary request's query as the service makes it: translated, checked, and its errors in the
// request's words (the query's kind under `root`).
template <typename Request>
absl::StatusOr<Query> Unary(absl::StatusOr<Query> (*convert)(const Request&),
                            absl::string_view root, const Request& request,
                            const ServiceLimits& limits) {
  absl::StatusOr<Query> query = convert(request);
  if (query.ok()) {
    if (absl::Status s = PrepareQuery(&*query, QueryLimitsOf(limits), 0); !s.ok()) query = s;
  }
  if (query.ok()) return query;
  return ForRequest(query.status(),
                    RequestLayout{.kind = RequestLayout::Kind::kUnaryQuery, .query_root = root});
}

absl::StatusOr<Query> RaycastRequestToQuery(const v1::RaycastRequest& request,
                                            const ServiceLimits& limits) {
  return Unary(&collide::RaycastRequestToQuery, "ray", request, limits);
}
absl::StatusOr<Query> SphereCastRequestToQuery(const v1::SphereCastRequest& request,
                                               const ServiceLimits& limits) {
  return Unary(&collide::SphereCastRequestToQuery, "cast", request, limits);
}
absl::StatusOr<Query> OverlapRequestToQuery(const v1::OverlapRequest& request,
                                            const ServiceLimits& limits) {
  return Unary(&collide::OverlapRequestToQuery, "overlap", request, limits);
}

TEST(QueryConversion, RejectsBadQueriesWithTheirFieldPaths) {
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
    ExpectError(Convert(Parse<v1::Query>(c.text), 3, TestLimits(), &query), c.code, c.path, c.text);
  }
}

TEST(QueryConversion, NormalisesDirectionsAndFillsDefaults) {
  const v1::Query proto = Parse<v1::Query>(
      "raycast { origin { x: 1 } direction { z: 2 } max_distance: 1e30 } mode: MODE_ALL "
      "filter { mask: 6 excluded_ids: [5, 6] }");
  Query query;
  ASSERT_TRUE(Convert(proto, 0, TestLimits(), &query).ok());
  ASSERT_TRUE(std::holds_alternative<RaycastQuery>(query.shape_query));
  EXPECT_EQ(query.mode, CollectMode::kAll);
  const Ray& ray = std::get<RaycastQuery>(query.shape_query).ray;
  EXPECT_EQ(ray.origin.x, 1.0f);
  EXPECT_EQ(ray.direction.z, 1.0f);
  EXPECT_EQ(ray.max_distance, kMaxCastDistance);
  EXPECT_EQ(query.max_hits, 64u);  // 0 means 64
  EXPECT_EQ(query.filter.category, ~0u);
  EXPECT_EQ(query.filter.mask, 6u);
  ASSERT_EQ(query.filter.excluded_ids.size(), 2u);
  EXPECT_EQ(query.filter.excluded_ids[1], 6u);

  const v1::Query region =
      Parse<v1::Query>("aabb { region { min { x: -1 } max { x: 1 y: 2 z: 3 } } } max_hits: 7");
  ASSERT_TRUE(Convert(region, 0, TestLimits(), &query).ok());
  ASSERT_TRUE(std::holds_alternative<RegionQuery>(query.shape_query));
  EXPECT_EQ(std::get<RegionQuery>(query.shape_query).region.max.z, 3.0f);
  EXPECT_EQ(query.max_hits, 7u);
  EXPECT_EQ(query.filter.excluded_ids.size(), 0u);

  const v1::Query point = Parse<v1::Query>("point { point { y: 4 } radius: 2 } mode: MODE_ANY");
  ASSERT_TRUE(Convert(point, 0, TestLimits(), &query).ok());
  ASSERT_TRUE(std::holds_alternative<WithinRadiusQuery>(query.shape_query));
  EXPECT_EQ(query.mode, CollectMode::kAny);
  EXPECT_EQ(std::get<WithinRadiusQuery>(query.shape_query).point.y, 4.0f);
  EXPECT_EQ(std::get<WithinRadiusQuery>(query.shape_query).radius, 2.0f);
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
  ASSERT_TRUE(std::holds_alternative<OverlapQuery>(overlap->shape_query));
  const OverlapQuery& shape = std::get<OverlapQuery>(overlap->shape_query);
  EXPECT_TRUE(shape.detail);
  EXPECT_EQ(shape.shape.type, ShapeType::kCapsule);
  EXPECT_EQ(shape.pose.rotation, Quat::Identity());
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

}  // namespace
}  // namespace collide
