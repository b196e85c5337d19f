#pragma once

#include "absl/status/status.h"
#include "collide/v1/collide.pb.h"
#include "geom/pose.h"
#include "geom/shapes.h"
#include "geom/vec3.h"

namespace collide {

// The API's vectors, rotations, poses and shapes as core values, translated as they are: the
// core checks them (scene/validate.h), once, where they are used.

/// `v` as a core vector.
Vec3 ToVec3(const v1::Vec3& v);

/// `v` as the API's message.
void ToProtoVec3(const Vec3& v, v1::Vec3* out);

/// `proto` as a core pose: an absent rotation is the identity.
Pose ToPose(const v1::Pose& proto);

/// `pose` as the API's message.
void ToProtoPose(const Pose& pose, v1::Pose* out);

/// `proto` as a core shape, or INVALID_ARGUMENT about the shape itself (a root FieldError with
/// no field, for the caller to place) when it holds none.
absl::Status ToShape(const v1::Shape& proto, Shape* out);

/// `shape` as the API's message.
void ToProtoShape(const Shape& shape, v1::Shape* out);

}  // namespace collide
