#include "server/convert/geometry_convert.h"

#include "base/field_error.h"

namespace collide {

Vec3 ToVec3(const v1::Vec3& v) { return Vec3{v.x(), v.y(), v.z()}; }

void ToProtoVec3(const Vec3& v, v1::Vec3* out) {
  out->set_x(v.x);
  out->set_y(v.y);
  out->set_z(v.z);
}

Pose ToPose(const v1::Pose& proto) {
  Pose pose;
  pose.position = ToVec3(proto.position());
  if (proto.has_rotation()) {
    const v1::Quat& q = proto.rotation();
    pose.rotation = Quat{q.x(), q.y(), q.z(), q.w()};
  }
  return pose;
}

void ToProtoPose(const Pose& pose, v1::Pose* out) {
  ToProtoVec3(pose.position, out->mutable_position());
  v1::Quat* q = out->mutable_rotation();
  q->set_x(pose.rotation.x);
  q->set_y(pose.rotation.y);
  q->set_z(pose.rotation.z);
  q->set_w(pose.rotation.w);
}

absl::Status ToShape(const v1::Shape& proto, Shape* out) {
  switch (proto.shape_case()) {
    case v1::Shape::kSphere:
      *out = Sphere{proto.sphere().radius()};
      return absl::OkStatus();
    case v1::Shape::kBox:
      *out = Box{ToVec3(proto.box().half_extents())};
      return absl::OkStatus();
    case v1::Shape::kCapsule:
      *out = Capsule{proto.capsule().radius(), proto.capsule().half_height()};
      return absl::OkStatus();
    case v1::Shape::kMesh:
    case v1::Shape::kHeightfield:
      // Asset instances are bodies' shapes only (scene_convert.h, BodyToOp).
    case v1::Shape::SHAPE_NOT_SET:
      break;
  }
  return InvalidFieldError("", "must hold a sphere, a box or a capsule");
}

void ToProtoShape(const Shape& shape, v1::Shape* out) {
  switch (shape.type) {
    case ShapeType::kSphere:
      out->mutable_sphere()->set_radius(shape.sphere.radius);
      break;
    case ShapeType::kBox:
      ToProtoVec3(shape.box.half_extents, out->mutable_box()->mutable_half_extents());
      break;
    case ShapeType::kCapsule:
      out->mutable_capsule()->set_radius(shape.capsule.radius);
      out->mutable_capsule()->set_half_height(shape.capsule.half_height);
      break;
  }
}

}  // namespace collide
