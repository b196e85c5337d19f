#include "server/convert/query_convert.h"

#include <span>
#include <variant>

#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "base/status_macros.h"
#include "server/convert/geometry_convert.h"

namespace collide {
namespace {

Ray ToRay(const v1::Vec3& origin, const v1::Vec3& direction, float max_distance) {
  return Ray{
      .origin = ToVec3(origin), .direction = ToVec3(direction), .max_distance = max_distance};
}

// The fields every query has: filter, mode, max_hits, at_tick, tick_fraction. INVALID_ARGUMENT
// `mode` (a root FieldError) for a mode the API does not have.
absl::Status CommonFromProto(const v1::Filter& filter, v1::Mode mode, uint32_t max_hits,
                             bool has_tick, uint64_t at_tick, float tick_fraction, Query* out) {
  out->filter.category = filter.has_category() ? filter.category() : ~0u;
  out->filter.mask = filter.has_mask() ? filter.mask() : ~0u;
  out->filter.excluded_ids = std::span<const uint64_t>(
      filter.excluded_ids().data(), static_cast<size_t>(filter.excluded_ids_size()));
  switch (mode) {
    case v1::MODE_CLOSEST:
      out->mode = CollectMode::kClosest;
      break;
    case v1::MODE_ANY:
      out->mode = CollectMode::kAny;
      break;
    case v1::MODE_ALL:
      out->mode = CollectMode::kAll;
      break;
    default:
      return InvalidFieldError("mode", absl::StrCat("unknown mode ", static_cast<int>(mode)));
  }
  out->max_hits = max_hits;
  if (has_tick) out->at_tick = at_tick;
  out->tick_fraction = tick_fraction;
  return absl::OkStatus();
}

template <typename Request>
absl::Status UnaryCommonFromProto(const Request& request, Query* query) {
  return CommonFromProto(request.filter(), request.mode(), request.max_hits(),
                         request.has_at_tick(), request.at_tick(), request.tick_fraction(), query);
}

void OverlapFromProto(const v1::Overlap& proto, bool detail, Query* out) {
  OverlapQuery& overlap = out->shape_query.emplace<OverlapQuery>();
  overlap.detail = detail;
  overlap.pose = ToPose(proto.pose());
}

}  // namespace

QueryLimits QueryLimitsOf(const ServiceLimits& limits) {
  return QueryLimits{.max_hits = limits.max_hits, .max_excluded_ids = limits.max_excluded_ids};
}

absl::Status QueryFromProto(const v1::Query& proto, size_t index, Query* out) {
  *out = Query{};
  switch (proto.kind_case()) {
    case v1::Query::kRaycast: {
      const v1::Raycast& r = proto.raycast();
      out->shape_query = RaycastQuery{ToRay(r.origin(), r.direction(), r.max_distance())};
      break;
    }
    case v1::Query::kSphereCast: {
      const v1::SphereCast& c = proto.sphere_cast();
      out->shape_query =
          SphereCastQuery{ToRay(c.origin(), c.direction(), c.max_distance()), c.radius()};
      break;
    }
    case v1::Query::kOverlap:
      OverlapFromProto(proto.overlap(), proto.detail(), out);
      COLLIDE_RETURN_IF_ERROR(AtElement(
          ToShape(proto.overlap().shape(), &std::get<OverlapQuery>(out->shape_query).shape),
          "queries", index, "overlap.shape"));
      break;
    case v1::Query::kPoint:
      out->shape_query = WithinRadiusQuery{ToVec3(proto.point().point()), proto.point().radius()};
      break;
    case v1::Query::kAabb:
      out->shape_query = RegionQuery{
          Aabb{ToVec3(proto.aabb().region().min()), ToVec3(proto.aabb().region().max())}};
      break;
    case v1::Query::KIND_NOT_SET:
      return InvalidElementError("queries", index, "kind",
                                 "must hold a raycast, sphere_cast, overlap, point or aabb query");
  }
  return AtElement(
      CommonFromProto(proto.filter(), proto.mode(), proto.max_hits(), proto.has_at_tick(),
                      proto.at_tick(), proto.tick_fraction(), out),
      "queries", index);
}

absl::StatusOr<Query> RaycastRequestToQuery(const v1::RaycastRequest& request) {
  Query query;
  const v1::Raycast& r = request.ray();
  query.shape_query = RaycastQuery{ToRay(r.origin(), r.direction(), r.max_distance())};
  COLLIDE_RETURN_IF_ERROR(UnaryCommonFromProto(request, &query));
  return query;
}

absl::StatusOr<Query> SphereCastRequestToQuery(const v1::SphereCastRequest& request) {
  Query query;
  const v1::SphereCast& c = request.cast();
  query.shape_query =
      SphereCastQuery{ToRay(c.origin(), c.direction(), c.max_distance()), c.radius()};
  COLLIDE_RETURN_IF_ERROR(UnaryCommonFromProto(request, &query));
  return query;
}

absl::StatusOr<Query> OverlapRequestToQuery(const v1::OverlapRequest& request) {
  Query query;
  OverlapFromProto(request.overlap(), request.detail(), &query);
  COLLIDE_RETURN_IF_ERROR(UnderField(
      ToShape(request.overlap().shape(), &std::get<OverlapQuery>(query.shape_query).shape),
      "overlap.shape"));
  COLLIDE_RETURN_IF_ERROR(UnaryCommonFromProto(request, &query));
  return query;
}

void HitToProto(const QueryHit& hit, v1::Hit* out) {
  out->set_body_id(hit.body_id);
  out->set_distance(hit.distance);
  ToProtoVec3(hit.point, out->mutable_point());
  ToProtoVec3(hit.normal, out->mutable_normal());
  out->set_depth(hit.depth);
  out->set_start_overlapping(hit.start_overlapping);
  // Reused messages: a hit on a shape clears what an asset's hit set.
  if (hit.triangle != kNoTriangle) {
    out->set_triangle(hit.triangle);
  } else {
    out->clear_triangle();
  }
  out->set_back_face(hit.back_face);
}

}  // namespace collide
