#include "server/convert/query_convert.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "server/convert/geometry_convert.h"
#include "server/convert/scene_convert.h"

namespace collide {
namespace {

// A direction normalised in double (finite, non-zero).
absl::Status DirectionFromProto(const v1::Vec3& proto, const FieldPath& at, Vec3* out) {
  const double x = proto.x(), y = proto.y(), z = proto.z();
  const double len = std::sqrt(x * x + y * y + z * z);
  if (!std::isfinite(len) || len == 0.0)
    return InvalidField(at, "direction", "must be finite and non-zero");
  *out =
      Vec3{static_cast<float>(x / len), static_cast<float>(y / len), static_cast<float>(z / len)};
  return absl::OkStatus();
}

absl::Status MaxDistanceFromProto(float proto, const FieldPath& at, float* out) {
  if (!std::isfinite(proto) || proto < 0.0f) {
    return InvalidField(at, "max_distance", "must be finite and >= 0");
  }
  *out = std::min(proto, kMaxCastDistance);
  return absl::OkStatus();
}

absl::Status RadiusFromProto(float proto, const FieldPath& at, float* out) {
  if (!IsDimension(proto)) return InvalidField(at, "radius", DimensionReason());
  *out = proto;
  return absl::OkStatus();
}

absl::Status RaycastFromProto(const v1::Raycast& proto, const FieldPath& at, Query* out) {
  Ray& ray = out->shape_query.emplace<RaycastQuery>().ray;
  COLLIDE_RETURN_IF_ERROR(PointFromProto(proto.origin(), at, "origin", &ray.origin));
  COLLIDE_RETURN_IF_ERROR(DirectionFromProto(proto.direction(), at, &ray.direction));
  return MaxDistanceFromProto(proto.max_distance(), at, &ray.max_distance);
}

absl::Status SphereCastFromProto(const v1::SphereCast& proto, const FieldPath& at, Query* out) {
  SphereCastQuery& cast = out->shape_query.emplace<SphereCastQuery>();
  COLLIDE_RETURN_IF_ERROR(PointFromProto(proto.origin(), at, "origin", &cast.ray.origin));
  COLLIDE_RETURN_IF_ERROR(DirectionFromProto(proto.direction(), at, &cast.ray.direction));
  COLLIDE_RETURN_IF_ERROR(MaxDistanceFromProto(proto.max_distance(), at, &cast.ray.max_distance));
  return RadiusFromProto(proto.radius(), at, &cast.radius);
}

// `detail` is the overlap's (the batch query's or the unary request's).
absl::Status OverlapFromProto(const v1::Overlap& proto, bool detail, const FieldPath& at,
                              Query* out) {
  OverlapQuery& overlap = out->shape_query.emplace<OverlapQuery>();
  overlap.detail = detail;
  COLLIDE_RETURN_IF_ERROR(ShapeFromProto(proto.shape(), at, "shape", &overlap.shape));
  return PoseFromProto(proto.pose(), at, "pose", &overlap.pose);
}

absl::Status PointQueryFromProto(const v1::PointQuery& proto, const FieldPath& at, Query* out) {
  WithinRadiusQuery& within = out->shape_query.emplace<WithinRadiusQuery>();
  COLLIDE_RETURN_IF_ERROR(PointFromProto(proto.point(), at, "point", &within.point));
  return RadiusFromProto(proto.radius(), at, &within.radius);
}

absl::Status AabbQueryFromProto(const v1::AabbQuery& proto, const FieldPath& at, Query* out) {
  Aabb& b = out->shape_query.emplace<RegionQuery>().region;
  const v1::Aabb& region = proto.region();
  COLLIDE_RETURN_IF_ERROR(PointFromProto(region.min(), at, "region.min", &b.min));
  COLLIDE_RETURN_IF_ERROR(PointFromProto(region.max(), at, "region.max", &b.max));
  if (b.min.x > b.max.x || b.min.y > b.max.y || b.min.z > b.max.z) {
    return InvalidField(at, "region", "min must not exceed max on any axis");
  }
  return absl::OkStatus();
}

// The fields every query has: filter, mode, max_hits (at `at`, the query or request root).
// The tick a query names: `at_tick` and `tick_fraction` (a fraction needs a tick and lies in
// [0, 1)). Whether the scene retains the tick is checked under the scene read (CheckQueryTick).
absl::Status TickFromProto(bool has_tick, uint64_t at_tick, float fraction, const FieldPath& at,
                           Query* out) {
  if (!std::isfinite(fraction) || fraction < 0.0f || fraction >= 1.0f) {
    return InvalidField(at, "tick_fraction", absl::StrCat("must be in [0, 1), got ", fraction));
  }
  if (fraction > 0.0f && !has_tick) {
    return InvalidField(at, "tick_fraction", "needs at_tick");
  }
  if (has_tick) out->at_tick = at_tick;
  out->tick_fraction = fraction;
  return absl::OkStatus();
}

absl::Status CommonFromProto(const v1::Filter& filter, v1::Mode mode, uint32_t max_hits,
                             const FieldPath& at, const ServiceLimits& limits, Query* out) {
  if (filter.excluded_ids_size() > static_cast<int>(limits.max_excluded_ids)) {
    return InvalidField(at, "filter.excluded_ids",
                        absl::StrCat("at most ", limits.max_excluded_ids, " ids, got ",
                                     filter.excluded_ids_size()));
  }
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
      return InvalidField(at, "mode", absl::StrCat("unknown mode ", static_cast<int>(mode)));
  }
  if (max_hits > limits.max_hits) {
    return InvalidField(at, "max_hits", absl::StrCat("must be at most ", limits.max_hits));
  }
  out->max_hits = max_hits != 0 ? max_hits : std::min<uint32_t>(kDefaultMaxHits, limits.max_hits);
  if (out->max_hits == 0) out->max_hits = 1;
  return absl::OkStatus();
}

// The filter, mode, max_hits and tick fields every unary query request has.
template <typename Request>
absl::Status UnaryQueryOptionsFromProto(const Request& request, const ServiceLimits& limits,
                                        Query* query) {
  COLLIDE_RETURN_IF_ERROR(CommonFromProto(request.filter(), request.mode(), request.max_hits(),
                                          FieldPath{}, limits, query));
  return TickFromProto(request.has_at_tick(), request.at_tick(), request.tick_fraction(),
                       FieldPath{}, query);
}

}  // namespace

absl::Status QueryFromProto(const v1::Query& proto, size_t index, const ServiceLimits& limits,
                            Query* out) {
  *out = Query{};
  absl::Status status;
  switch (proto.kind_case()) {
    case v1::Query::kRaycast:
      status = RaycastFromProto(proto.raycast(), FieldPath{"queries", index, ".raycast"}, out);
      break;
    case v1::Query::kSphereCast:
      status = SphereCastFromProto(proto.sphere_cast(), FieldPath{"queries", index, ".sphere_cast"},
                                   out);
      break;
    case v1::Query::kOverlap:
      status = OverlapFromProto(proto.overlap(), proto.detail(),
                                FieldPath{"queries", index, ".overlap"}, out);
      break;
    case v1::Query::kPoint:
      status = PointQueryFromProto(proto.point(), FieldPath{"queries", index, ".point"}, out);
      break;
    case v1::Query::kAabb:
      status = AabbQueryFromProto(proto.aabb(), FieldPath{"queries", index, ".aabb"}, out);
      break;
    case v1::Query::KIND_NOT_SET:
      return InvalidField(FieldPath{"queries", index}, "kind",
                          "must hold a raycast, sphere_cast, overlap, point or aabb query");
  }
  if (!status.ok()) return status;
  COLLIDE_RETURN_IF_ERROR(TickFromProto(proto.has_at_tick(), proto.at_tick(), proto.tick_fraction(),
                                        FieldPath{"queries", index}, out));
  return CommonFromProto(proto.filter(), proto.mode(), proto.max_hits(),
                         FieldPath{"queries", index}, limits, out);
}

absl::StatusOr<Query> RaycastRequestToQuery(const v1::RaycastRequest& request,
                                            const ServiceLimits& limits) {
  Query query;
  COLLIDE_RETURN_IF_ERROR(RaycastFromProto(request.ray(), FieldPath{"ray"}, &query));
  COLLIDE_RETURN_IF_ERROR(UnaryQueryOptionsFromProto(request, limits, &query));
  return query;
}

absl::StatusOr<Query> SphereCastRequestToQuery(const v1::SphereCastRequest& request,
                                               const ServiceLimits& limits) {
  Query query;
  COLLIDE_RETURN_IF_ERROR(SphereCastFromProto(request.cast(), FieldPath{"cast"}, &query));
  COLLIDE_RETURN_IF_ERROR(UnaryQueryOptionsFromProto(request, limits, &query));
  return query;
}

absl::StatusOr<Query> OverlapRequestToQuery(const v1::OverlapRequest& request,
                                            const ServiceLimits& limits) {
  Query query;
  COLLIDE_RETURN_IF_ERROR(
      OverlapFromProto(request.overlap(), request.detail(), FieldPath{"overlap"}, &query));
  COLLIDE_RETURN_IF_ERROR(UnaryQueryOptionsFromProto(request, limits, &query));
  return query;
}

void HitToProto(const QueryHit& hit, v1::Hit* out) {
  out->set_body_id(hit.body_id);
  out->set_distance(hit.distance);
  ToProtoVec3(hit.point, out->mutable_point());
  ToProtoVec3(hit.normal, out->mutable_normal());
  out->set_depth(hit.depth);
  out->set_start_overlapping(hit.start_overlapping);
}

}  // namespace collide
