#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "collide/v1/collide.pb.h"
#include "geom/pose.h"
#include "geom/shapes.h"
#include "geom/vec3.h"
#include "server/convert/field_path.h"

namespace collide {

// The API's vectors, rotations, poses and shapes, checked once at the service edge: every
// coordinate finite and within +-kMaxCoordinate, every dimension in [0, kMaxCoordinate],
// rotations unit quaternions within kUnitQuaternionTolerance (then renormalised). Errors are
// INVALID_ARGUMENT `<path>: <reason>`, the path being `field` of the message at `at`.

/// The reason given for a coordinate out of range.
std::string CoordinateReason();
/// The reason given for a dimension out of range.
std::string DimensionReason();
/// Whether `v` is a valid coordinate.
bool IsCoordinate(float v);
/// Whether `v` is a valid dimension.
bool IsDimension(float v);

/// `v` as a core vector (unchecked).
Vec3 ToVec3(const v1::Vec3& v);
/// `v` as the API's message.
void ToProtoVec3(const Vec3& v, v1::Vec3* out);

/// `field` (a point) of the message at `at`.
absl::Status PointFromProto(const v1::Vec3& proto, const FieldPath& at, absl::string_view field,
                            Vec3* out);
/// A unit quaternion (NormalizeRotation: kept bit for bit when already unit to float
/// precision) from x, y, z, w, as `field` of the message at `at`.
absl::Status UnitQuat(float x, float y, float z, float w, const FieldPath& at,
                      absl::string_view field, Quat* out);
/// `field` (a Pose) of the message at `at`: an absent rotation is the identity.
absl::Status PoseFromProto(const v1::Pose& proto, const FieldPath& at, absl::string_view field,
                           Pose* out);
/// `field` (a Shape) of the message at `at`: INVALID_ARGUMENT `<field>` when none is set.
absl::Status ShapeFromProto(const v1::Shape& proto, const FieldPath& at, absl::string_view field,
                            Shape* out);

}  // namespace collide
