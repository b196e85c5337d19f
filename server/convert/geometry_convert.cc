#include "server/convert/geometry_convert.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "scene/update_batch.h"

namespace collide {

bool IsCoordinate(float v) { return std::isfinite(v) && std::fabs(v) <= kMaxCoordinate; }
bool IsDimension(float v) { return std::isfinite(v) && v >= 0.0f && v <= kMaxCoordinate; }

std::string CoordinateReason() {
  return absl::StrFormat("must be finite and within +-%g", kMaxCoordinate);
}
std::string DimensionReason() {
  return absl::StrFormat("must be finite, >= 0 and <= %g", kMaxCoordinate);
}

Vec3 ToVec3(const v1::Vec3& v) { return Vec3{v.x(), v.y(), v.z()}; }

void ToProtoVec3(const Vec3& v, v1::Vec3* out) {
  out->set_x(v.x);
  out->set_y(v.y);
  out->set_z(v.z);
}

absl::Status PointFromProto(const v1::Vec3& proto, const FieldPath& at, absl::string_view field,
                            Vec3* out) {
  if (!IsCoordinate(proto.x()) || !IsCoordinate(proto.y()) || !IsCoordinate(proto.z())) {
    return InvalidField(at, field, CoordinateReason());
  }
  *out = ToVec3(proto);
  return absl::OkStatus();
}

absl::Status UnitQuat(float x, float y, float z, float w, const FieldPath& at,
                      absl::string_view field, Quat* out) {
  if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(z) || !std::isfinite(w)) {
    return InvalidField(at, field, "must be finite");
  }
  // In double: float32 rounding of the squares is far below the tolerance.
  const double len = std::sqrt(double{x} * x + double{y} * y + double{z} * z + double{w} * w);
  if (std::fabs(len - 1.0) > kUnitQuaternionTolerance) {
    return InvalidField(at, field, absl::StrFormat("must be a unit quaternion (length %.6g)", len));
  }
  *out = NormalizeRotation(Quat{x, y, z, w});
  return absl::OkStatus();
}

absl::Status PoseFromProto(const v1::Pose& proto, const FieldPath& at, absl::string_view field,
                           Pose* out) {
  Pose pose;
  COLLIDE_RETURN_IF_ERROR(
      PointFromProto(proto.position(), at, absl::StrCat(field, ".position"), &pose.position));
  if (proto.has_rotation()) {
    const v1::Quat& q = proto.rotation();
    COLLIDE_RETURN_IF_ERROR(
        UnitQuat(q.x(), q.y(), q.z(), q.w(), at, absl::StrCat(field, ".rotation"), &pose.rotation));
  }
  *out = pose;
  return absl::OkStatus();
}

absl::Status ShapeFromProto(const v1::Shape& proto, const FieldPath& at, absl::string_view field,
                            Shape* out) {
  switch (proto.shape_case()) {
    case v1::Shape::kSphere:
      if (!IsDimension(proto.sphere().radius())) {
        return InvalidField(at, absl::StrCat(field, ".sphere.radius"), DimensionReason());
      }
      *out = Sphere{proto.sphere().radius()};
      return absl::OkStatus();
    case v1::Shape::kBox: {
      const v1::Vec3& e = proto.box().half_extents();
      if (!IsDimension(e.x()) || !IsDimension(e.y()) || !IsDimension(e.z())) {
        return InvalidField(at, absl::StrCat(field, ".box.half_extents"), DimensionReason());
      }
      *out = Box{ToVec3(e)};
      return absl::OkStatus();
    }
    case v1::Shape::kCapsule:
      if (!IsDimension(proto.capsule().radius())) {
        return InvalidField(at, absl::StrCat(field, ".capsule.radius"), DimensionReason());
      }
      if (!IsDimension(proto.capsule().half_height())) {
        return InvalidField(at, absl::StrCat(field, ".capsule.half_height"), DimensionReason());
      }
      *out = Capsule{proto.capsule().radius(), proto.capsule().half_height()};
      return absl::OkStatus();
    case v1::Shape::SHAPE_NOT_SET:
      break;
  }
  return InvalidField(at, field, "must hold a sphere, a box or a capsule");
}

}  // namespace collide
