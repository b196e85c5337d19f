#include "integration/reference.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "geom/quat.h"
#include "geom/vec3.h"
#include "query/query_engine.h"
#include "query/run_query.h"

namespace collide::integration {
namespace {

Vec3 ToCore(const v1::Vec3& v) { return {v.x(), v.y(), v.z()}; }

Shape ToCoreShape(const v1::Shape& shape) {
  switch (shape.shape_case()) {
    case v1::Shape::kBox:
      return Box{ToCore(shape.box().half_extents())};
    case v1::Shape::kCapsule:
      return Capsule{shape.capsule().radius(), shape.capsule().half_height()};
    case v1::Shape::kSphere:
    default:
      return Sphere{shape.sphere().radius()};
  }
}

v1::Vec3 ToApi(const Vec3& v) {
  v1::Vec3 out;
  out.set_x(v.x);
  out.set_y(v.y);
  out.set_z(v.z);
  return out;
}

CollectMode ToCoreMode(v1::Mode mode) {
  switch (mode) {
    case v1::MODE_ANY:
      return CollectMode::kAny;
    case v1::MODE_ALL:
      return CollectMode::kAll;
    default:
      return CollectMode::kClosest;
  }
}

bool Near(float got, float expected, float relative) {
  return std::fabs(got - expected) <= relative * std::max(1.0f, std::fabs(expected));
}

bool NearVec(const v1::Vec3& got, const v1::Vec3& expected, float relative) {
  return Near(got.x(), expected.x(), relative) && Near(got.y(), expected.y(), relative) &&
         Near(got.z(), expected.z(), relative);
}

bool NearNormal(const v1::Vec3& got, const v1::Vec3& expected, float tolerance) {
  return std::fabs(got.x() - expected.x()) <= tolerance &&
         std::fabs(got.y() - expected.y()) <= tolerance &&
         std::fabs(got.z() - expected.z()) <= tolerance;
}

std::string Describe(const v1::Hit& hit) {
  return absl::StrCat("{id ", hit.body_id(), " d ", hit.distance(), " depth ", hit.depth(), " p (",
                      hit.point().x(), ", ", hit.point().y(), ", ", hit.point().z(), ") n (",
                      hit.normal().x(), ", ", hit.normal().y(), ", ", hit.normal().z(), ")",
                      hit.start_overlapping() ? " start" : "", "}");
}

std::string Describe(const google::protobuf::RepeatedPtrField<v1::Hit>& hits) {
  std::string text = "[";
  for (const v1::Hit& hit : hits) absl::StrAppend(&text, Describe(hit), " ");
  return absl::StrCat(text, "]");
}

// Which values of a hit a query kind defines.
struct Checked {
  bool point_and_normal = false;
  bool distance = false;
};

Checked WhatToCheck(const v1::Query& query) {
  switch (query.kind_case()) {
    case v1::Query::kRaycast:
    case v1::Query::kSphereCast:
      return {.point_and_normal = true, .distance = true};
    case v1::Query::kOverlap:
      return {.point_and_normal = query.detail(), .distance = false};
    case v1::Query::kPoint:
      return {.point_and_normal = false, .distance = true};
    default:
      return {};
  }
}

::testing::AssertionResult HitMatches(const v1::Query& query, const v1::Hit& got,
                                      const v1::Hit& expected, HitTolerance tolerance) {
  Checked checked = WhatToCheck(query);
  bool ok = got.body_id() == expected.body_id() &&
            got.start_overlapping() == expected.start_overlapping();
  if (checked.distance) ok = ok && Near(got.distance(), expected.distance(), tolerance.relative);
  if (query.kind_case() == v1::Query::kPoint) {
    ok = ok && NearVec(got.point(), expected.point(), tolerance.relative);
  }
  if (checked.point_and_normal) {
    ok = ok && NearVec(got.point(), expected.point(), tolerance.relative) &&
         NearNormal(got.normal(), expected.normal(), tolerance.normal);
    if (query.kind_case() == v1::Query::kOverlap) {
      ok = ok && Near(got.depth(), expected.depth(), tolerance.relative);
    }
  }
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "got " << Describe(got) << ", expected " << Describe(expected);
}

::testing::AssertionResult HitsMatch(const v1::Query& query,
                                     const google::protobuf::RepeatedPtrField<v1::Hit>& got,
                                     bool got_truncated, const ReferenceWorld& world,
                                     HitTolerance tolerance) {
  if (query.mode() == v1::MODE_ANY) {
    v1::Query all = query;
    all.set_mode(v1::MODE_ALL);
    all.set_max_hits(1u << 20);
    v1::QueryResult expected = world.Run(all);
    if (got.size() != (expected.hits_size() > 0 ? 1 : 0)) {
      return ::testing::AssertionFailure() << "MODE_ANY: got " << Describe(got)
                                           << ", expected one of " << Describe(expected.hits());
    }
    if (got.empty()) return ::testing::AssertionSuccess();
    for (const v1::Hit& candidate : expected.hits()) {
      if (candidate.body_id() == got[0].body_id()) {
        return HitMatches(query, got[0], candidate, tolerance);
      }
    }
    return ::testing::AssertionFailure() << "MODE_ANY: got " << Describe(got)
                                         << ", expected one of " << Describe(expected.hits());
  }
  v1::QueryResult expected = world.Run(query);
  if (got.size() != expected.hits_size() || got_truncated != expected.truncated()) {
    return ::testing::AssertionFailure()
           << "got " << got.size() << " hits" << (got_truncated ? " (truncated) " : " ")
           << Describe(got) << ", expected " << expected.hits_size() << " hits"
           << (expected.truncated() ? " (truncated) " : " ") << Describe(expected.hits());
  }
  for (int i = 0; i < got.size(); ++i) {
    ::testing::AssertionResult hit = HitMatches(query, got[i], expected.hits(i), tolerance);
    if (!hit) return hit << " at hit " << i << " of " << Describe(expected.hits());
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

Pose ToCorePose(const v1::Pose& pose) {
  Pose out;
  out.position = ToCore(pose.position());
  if (pose.has_rotation()) {
    const v1::Quat& q = pose.rotation();
    out.rotation = Normalize(Quat{q.x(), q.y(), q.z(), q.w()});
  }
  return out;
}

BodyDesc ToBodyDesc(const v1::Body& body) {
  BodyDesc desc;
  desc.id = body.id();
  desc.shape = ToCoreShape(body.shape());
  desc.pose = ToCorePose(body.pose());
  desc.category = body.has_category() ? body.category() : 1u;
  desc.mask = body.has_mask() ? body.mask() : ~0u;
  desc.kind = body.kind() == v1::BODY_KIND_STATIC ? BodyKind::kStatic : BodyKind::kDynamic;
  return desc;
}

v1::Query AsQuery(const v1::RaycastRequest& request) {
  v1::Query query;
  *query.mutable_raycast() = request.ray();
  *query.mutable_filter() = request.filter();
  query.set_mode(request.mode());
  query.set_max_hits(request.max_hits());
  return query;
}

v1::Query AsQuery(const v1::SphereCastRequest& request) {
  v1::Query query;
  *query.mutable_sphere_cast() = request.cast();
  *query.mutable_filter() = request.filter();
  query.set_mode(request.mode());
  query.set_max_hits(request.max_hits());
  return query;
}

v1::Query AsQuery(const v1::OverlapRequest& request) {
  v1::Query query;
  *query.mutable_overlap() = request.overlap();
  *query.mutable_filter() = request.filter();
  query.set_mode(request.mode());
  query.set_max_hits(request.max_hits());
  query.set_detail(request.detail());
  return query;
}

ReferenceWorld::ReferenceWorld(std::span<const v1::Body> bodies) {
  for (const v1::Body& body : bodies) world_.Add(ToBodyDesc(body));
  world_.FinishUpdates();
}

v1::QueryResult ReferenceWorld::Run(const v1::Query& api) const {
  Query query;
  query.mode = ToCoreMode(api.mode());
  query.max_hits = api.max_hits() == 0 ? 64 : api.max_hits();
  std::vector<uint64_t> excluded(api.filter().excluded_ids().begin(),
                                 api.filter().excluded_ids().end());
  query.filter.category = api.filter().has_category() ? api.filter().category() : ~0u;
  query.filter.mask = api.filter().has_mask() ? api.filter().mask() : ~0u;
  query.filter.excluded_ids = excluded;
  switch (api.kind_case()) {
    case v1::Query::kRaycast:
      query.shape_query = RaycastQuery{.ray = {ToCore(api.raycast().origin()),
                                               Normalize(ToCore(api.raycast().direction())),
                                               api.raycast().max_distance()}};
      break;
    case v1::Query::kSphereCast:
      query.shape_query = SphereCastQuery{.ray = {ToCore(api.sphere_cast().origin()),
                                                  Normalize(ToCore(api.sphere_cast().direction())),
                                                  api.sphere_cast().max_distance()},
                                          .radius = api.sphere_cast().radius()};
      break;
    case v1::Query::kOverlap:
      query.shape_query = OverlapQuery{.shape = ToCoreShape(api.overlap().shape()),
                                       .pose = ToCorePose(api.overlap().pose()),
                                       .detail = api.detail()};
      break;
    case v1::Query::kPoint:
      query.shape_query =
          WithinRadiusQuery{.point = ToCore(api.point().point()), .radius = api.point().radius()};
      break;
    case v1::Query::kAabb:
      query.shape_query = RegionQuery{
          .region = {ToCore(api.aabb().region().min()), ToCore(api.aabb().region().max())}};
      break;
    default:
      break;
  }
  std::vector<QueryHit> hits;
  QueryResult result = RunQuery(CurrentTree(world_), query, &hits);
  v1::QueryResult out;
  out.set_request_id(api.request_id());
  out.set_truncated(result.truncated);
  for (uint32_t i = 0; i < result.hit_count; ++i) {
    const QueryHit& hit = hits[result.first_hit + i];
    v1::Hit* h = out.add_hits();
    h->set_body_id(hit.body_id);
    h->set_distance(hit.distance);
    h->set_depth(hit.depth);
    *h->mutable_point() = ToApi(hit.point);
    *h->mutable_normal() = ToApi(hit.normal);
    h->set_start_overlapping(hit.start_overlapping);
  }
  return out;
}

::testing::AssertionResult ResultMatches(const v1::Query& query, const v1::QueryResult& got,
                                         const ReferenceWorld& world, HitTolerance tolerance) {
  if (got.has_error()) {
    return ::testing::AssertionFailure()
           << "error " << got.error().code() << ": " << got.error().message();
  }
  if (got.request_id() != query.request_id()) {
    return ::testing::AssertionFailure()
           << "request id " << got.request_id() << ", expected " << query.request_id();
  }
  return HitsMatch(query, got.hits(), got.truncated(), world, tolerance);
}

::testing::AssertionResult ResponseMatches(const v1::Query& query, const v1::QueryResponse& got,
                                           const ReferenceWorld& world, HitTolerance tolerance) {
  return HitsMatch(query, got.hits(), got.truncated(), world, tolerance);
}

}  // namespace collide::integration
