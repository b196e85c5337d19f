#include "scene/validate.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/field_error.h"
#include "base/status_macros.h"
#include "mesh/scaled_pose.h"
#include "scene/asset.h"

namespace collide {
namespace {

std::string CoordinateReason() {
  return absl::StrFormat("must be finite and within +-%g", kMaxCoordinate);
}

std::string DimensionReason() {
  return absl::StrFormat("must be finite, >= 0 and <= %g", kMaxCoordinate);
}

absl::Status CheckPoint(const Vec3& p, absl::string_view field) {
  if (IsCoordinate(p.x) && IsCoordinate(p.y) && IsCoordinate(p.z)) return absl::OkStatus();
  return InvalidFieldError(field, CoordinateReason());
}

absl::Status CheckDimension(float v, absl::string_view field) {
  if (IsDimension(v)) return absl::OkStatus();
  return InvalidFieldError(field, DimensionReason());
}

// An asset placement of a body: the kind it names and its scale (`shape.mesh.scale`).
absl::Status CheckPlacement(AssetKind kind, float scale) {
  if (kind != AssetKind::kMesh && kind != AssetKind::kHeightfield) {
    return InvalidFieldError("shape", absl::StrCat("unknown asset kind ", static_cast<int>(kind)));
  }
  if (!IsValidInstanceScale(scale)) {
    return InvalidFieldError(absl::StrCat("shape.", AssetKindName(kind), ".scale"),
                             absl::StrCat("must be finite and within [", kMinInstanceScale, ", ",
                                          kMaxInstanceScale, "], got ", scale));
  }
  return absl::OkStatus();
}

// The checks a body's own values get, wherever it comes from: fields `kind`, `shape.*`, `pose.*`
// (a body that places an asset: its kind and scale instead of the shape's dimensions).
absl::Status CheckBodyValues(BodyKind kind, const Shape& shape, const Pose& pose,
                             const AssetKind* asset_kind, float scale) {
  if (kind != BodyKind::kDynamic && kind != BodyKind::kStatic) {
    return InvalidFieldError("kind", absl::StrCat("unknown body kind ", static_cast<int>(kind)));
  }
  if (asset_kind != nullptr) {
    COLLIDE_RETURN_IF_ERROR(CheckPlacement(*asset_kind, scale));
  } else {
    COLLIDE_RETURN_IF_ERROR(UnderField(ValidateShape(shape), "shape"));
  }
  return UnderField(ValidatePose(pose), "pose");
}

// A cast's ray: origin, direction (normalised in double), max_distance (clamped).
absl::Status PrepareRay(Ray* ray) {
  COLLIDE_RETURN_IF_ERROR(CheckPoint(ray->origin, "origin"));
  const double x = ray->direction.x, y = ray->direction.y, z = ray->direction.z;
  const double length = std::sqrt(x * x + y * y + z * z);
  if (!std::isfinite(length) || length == 0.0) {
    return InvalidFieldError("direction", "must be finite and non-zero");
  }
  ray->direction = Vec3{static_cast<float>(x / length), static_cast<float>(y / length),
                        static_cast<float>(z / length)};
  if (!std::isfinite(ray->max_distance) || ray->max_distance < 0.0f) {
    return InvalidFieldError("max_distance", "must be finite and >= 0");
  }
  ray->max_distance = std::min(ray->max_distance, kMaxCastDistance);
  return absl::OkStatus();
}

// The kind-specific part of a query: errors name the field inside the kind (`direction`).
struct PrepareKind {
  absl::Status operator()(RaycastQuery& q) const { return PrepareRay(&q.ray); }
  absl::Status operator()(SphereCastQuery& q) const {
    COLLIDE_RETURN_IF_ERROR(PrepareRay(&q.ray));
    return CheckDimension(q.radius, "radius");
  }
  absl::Status operator()(OverlapQuery& q) const {
    COLLIDE_RETURN_IF_ERROR(UnderField(ValidateShape(q.shape), "shape"));
    COLLIDE_RETURN_IF_ERROR(UnderField(ValidatePose(q.pose), "pose"));
    // The rotation's canonical form, as a body's (NormalizeRotation).
    q.pose = NormalizedPose(q.pose);
    return absl::OkStatus();
  }
  absl::Status operator()(WithinRadiusQuery& q) const {
    COLLIDE_RETURN_IF_ERROR(CheckPoint(q.point, "point"));
    return CheckDimension(q.radius, "radius");
  }
  absl::Status operator()(RegionQuery& q) const {
    COLLIDE_RETURN_IF_ERROR(CheckPoint(q.region.min, "region.min"));
    COLLIDE_RETURN_IF_ERROR(CheckPoint(q.region.max, "region.max"));
    const Aabb& b = q.region;
    if (b.min.x > b.max.x || b.min.y > b.max.y || b.min.z > b.max.z) {
      return InvalidFieldError("region", "min must not exceed max on any axis");
    }
    return absl::OkStatus();
  }
};

// The API's name of a query kind (the Query oneof's field).
struct KindName {
  absl::string_view operator()(const RaycastQuery&) const { return "raycast"; }
  absl::string_view operator()(const SphereCastQuery&) const { return "sphere_cast"; }
  absl::string_view operator()(const OverlapQuery&) const { return "overlap"; }
  absl::string_view operator()(const WithinRadiusQuery&) const { return "point"; }
  absl::string_view operator()(const RegionQuery&) const { return "aabb"; }
};

// The fields every query has: tick_fraction, filter, mode, max_hits.
absl::Status PrepareCommon(Query* query, const QueryLimits& limits) {
  const float fraction = query->tick_fraction;
  if (!std::isfinite(fraction) || fraction < 0.0f || fraction >= 1.0f) {
    return InvalidFieldError("tick_fraction", absl::StrCat("must be in [0, 1), got ", fraction));
  }
  if (fraction > 0.0f && !query->at_tick.has_value()) {
    return InvalidFieldError("tick_fraction", "needs at_tick");
  }
  if (query->filter.excluded_ids.size() > limits.max_excluded_ids) {
    return InvalidFieldError("filter.excluded_ids",
                             absl::StrCat("at most ", limits.max_excluded_ids, " ids, got ",
                                          query->filter.excluded_ids.size()));
  }
  switch (query->mode) {
    case CollectMode::kClosest:
    case CollectMode::kAny:
    case CollectMode::kAll:
      break;
    default:
      return InvalidFieldError("mode",
                               absl::StrCat("unknown mode ", static_cast<int>(query->mode)));
  }
  if (query->max_hits > limits.max_hits) {
    return InvalidFieldError("max_hits", absl::StrCat("must be at most ", limits.max_hits));
  }
  if (query->max_hits == 0) {
    query->max_hits = std::max<uint32_t>(std::min(kDefaultMaxHits, limits.max_hits), 1);
  }
  return absl::OkStatus();
}

}  // namespace

bool IsCoordinate(float v) { return std::isfinite(v) && std::fabs(v) <= kMaxCoordinate; }

bool IsDimension(float v) { return std::isfinite(v) && v >= 0.0f && v <= kMaxCoordinate; }

absl::Status ValidatePose(const Pose& pose) {
  COLLIDE_RETURN_IF_ERROR(CheckPoint(pose.position, "position"));
  const Quat& q = pose.rotation;
  if (!std::isfinite(q.x) || !std::isfinite(q.y) || !std::isfinite(q.z) || !std::isfinite(q.w)) {
    return InvalidFieldError("rotation", "must be finite");
  }
  // In double: float32 rounding of the squares alone is ~1e-7, far below the tolerance.
  const double length =
      std::sqrt(double{q.x} * q.x + double{q.y} * q.y + double{q.z} * q.z + double{q.w} * q.w);
  if (std::fabs(length - 1.0) > kUnitQuaternionTolerance) {
    return InvalidFieldError("rotation",
                             absl::StrFormat("must be a unit quaternion (length %.6g)", length));
  }
  return absl::OkStatus();
}

absl::Status ValidateShape(const Shape& shape) {
  switch (shape.type) {
    case ShapeType::kSphere:
      return CheckDimension(shape.sphere.radius, "sphere.radius");
    case ShapeType::kBox: {
      const Vec3& e = shape.box.half_extents;
      if (!IsDimension(e.x) || !IsDimension(e.y) || !IsDimension(e.z)) {
        return InvalidFieldError("box.half_extents", DimensionReason());
      }
      return absl::OkStatus();
    }
    case ShapeType::kCapsule:
      COLLIDE_RETURN_IF_ERROR(CheckDimension(shape.capsule.radius, "capsule.radius"));
      return CheckDimension(shape.capsule.half_height, "capsule.half_height");
  }
  return InvalidFieldError("", absl::StrCat("unknown shape type ", static_cast<int>(shape.type)));
}

absl::Status ValidateOpValues(const UpdateOp& op, size_t index, absl::string_view list) {
  switch (op.type) {
    case UpdateOpType::kUpsert:
      return AtElement(CheckBodyValues(op.kind, op.shape, op.pose,
                                       op.asset != 0 ? &op.asset_kind : nullptr, op.scale),
                       list, index, UpdateOpName(op.type));
    case UpdateOpType::kSetPose:
      return AtElement(UnderField(ValidatePose(op.pose), "pose"), list, index,
                       UpdateOpName(op.type));
    case UpdateOpType::kSetFilter:
    case UpdateOpType::kRemove:
      return absl::OkStatus();
  }
  return InvalidElementError(list, index, "",
                             absl::StrCat("unknown operation type ", static_cast<int>(op.type)));
}

absl::Status ValidateBody(const BodyState& body, size_t index, absl::string_view list) {
  const bool placed = !body.asset.empty();
  COLLIDE_RETURN_IF_ERROR(
      AtElement(CheckBodyValues(body.kind, body.shape, body.pose,
                                placed ? &body.asset_kind : nullptr, body.scale),
                list, index, ""));
  if (placed) {
    if (absl::Status status = ValidateAssetName(body.asset); !status.ok()) {
      return InvalidElementError(list, index,
                                 absl::StrCat("shape.", AssetKindName(body.asset_kind), ".asset"),
                                 GetFieldError(status)->reason);
    }
  }
  return absl::OkStatus();
}

absl::Status PrepareQuery(Query* query, const QueryLimits& limits, size_t index,
                          absl::string_view list) {
  const absl::string_view kind = std::visit(KindName{}, query->shape_query);
  COLLIDE_RETURN_IF_ERROR(
      AtElement(std::visit(PrepareKind{}, query->shape_query), list, index, kind));
  return AtElement(PrepareCommon(query, limits), list, index, "");
}

}  // namespace collide
