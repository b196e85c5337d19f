#include "client/cpp/builders.h"

#include <cmath>

namespace collide::client {

v1::Vec3 MakeVec3(float x, float y, float z) {
  v1::Vec3 v;
  v.set_x(x);
  v.set_y(y);
  v.set_z(z);
  return v;
}

v1::Quat MakeQuat(float x, float y, float z, float w) {
  v1::Quat q;
  q.set_x(x);
  q.set_y(y);
  q.set_z(z);
  q.set_w(w);
  return q;
}

v1::Quat MakeQuatFromAxisAngle(const v1::Vec3& axis, float angle) {
  float length = std::sqrt(axis.x() * axis.x() + axis.y() * axis.y() + axis.z() * axis.z());
  if (!(length > 0.0f)) return MakeQuat(0, 0, 0, 1);
  float s = std::sin(0.5f * angle) / length;
  return MakeQuat(axis.x() * s, axis.y() * s, axis.z() * s, std::cos(0.5f * angle));
}

v1::Pose MakePose(const v1::Vec3& position) {
  v1::Pose pose;
  *pose.mutable_position() = position;
  return pose;
}

v1::Pose MakePose(const v1::Vec3& position, const v1::Quat& rotation) {
  v1::Pose pose = MakePose(position);
  *pose.mutable_rotation() = rotation;
  return pose;
}

v1::Shape MakeSphere(float radius) {
  v1::Shape shape;
  shape.mutable_sphere()->set_radius(radius);
  return shape;
}

v1::Shape MakeBox(float half_x, float half_y, float half_z) {
  v1::Shape shape;
  *shape.mutable_box()->mutable_half_extents() = MakeVec3(half_x, half_y, half_z);
  return shape;
}

v1::Shape MakeCapsule(float radius, float half_height) {
  v1::Shape shape;
  shape.mutable_capsule()->set_radius(radius);
  shape.mutable_capsule()->set_half_height(half_height);
  return shape;
}

v1::Shape MakeMesh(std::string_view asset, float scale) {
  v1::Shape shape;
  shape.mutable_mesh()->set_asset(std::string(asset));
  shape.mutable_mesh()->set_scale(scale);
  return shape;
}

v1::Shape MakeHeightfield(std::string_view asset, float scale) {
  v1::Shape shape;
  shape.mutable_heightfield()->set_asset(std::string(asset));
  shape.mutable_heightfield()->set_scale(scale);
  return shape;
}

v1::Body MakeBody(uint64_t id, const v1::Shape& shape, const v1::Pose& pose) {
  v1::Body body;
  body.set_id(id);
  *body.mutable_shape() = shape;
  *body.mutable_pose() = pose;
  return body;
}

v1::Body MakeStaticBody(uint64_t id, const v1::Shape& shape, const v1::Pose& pose) {
  v1::Body body = MakeBody(id, shape, pose);
  body.set_kind(v1::BODY_KIND_STATIC);
  return body;
}

v1::UpdateOp MakeUpsertOp(const v1::Body& body) {
  v1::UpdateOp op;
  *op.mutable_upsert() = body;
  return op;
}

v1::UpdateOp MakeSetPoseOp(uint64_t id, const v1::Pose& pose) {
  v1::UpdateOp op;
  op.mutable_set_pose()->set_id(id);
  *op.mutable_set_pose()->mutable_pose() = pose;
  return op;
}

v1::UpdateOp MakeSetFilterOp(uint64_t id, uint32_t category, uint32_t mask) {
  v1::UpdateOp op;
  op.mutable_set_filter()->set_id(id);
  op.mutable_set_filter()->set_category(category);
  op.mutable_set_filter()->set_mask(mask);
  return op;
}

v1::UpdateOp MakeRemoveOp(uint64_t id) {
  v1::UpdateOp op;
  op.set_remove(id);
  return op;
}

void AddMove(uint64_t id, const v1::Pose& pose, v1::PoseColumns* moves) {
  moves->add_ids(id);
  moves->add_poses(pose.position().x());
  moves->add_poses(pose.position().y());
  moves->add_poses(pose.position().z());
  if (pose.has_rotation()) {
    moves->add_poses(pose.rotation().x());
    moves->add_poses(pose.rotation().y());
    moves->add_poses(pose.rotation().z());
    moves->add_poses(pose.rotation().w());
  } else {
    for (float f : {0.0f, 0.0f, 0.0f, 1.0f}) moves->add_poses(f);
  }
}

v1::Raycast MakeRaycast(const v1::Vec3& origin, const v1::Vec3& direction, float max_distance) {
  v1::Raycast ray;
  *ray.mutable_origin() = origin;
  *ray.mutable_direction() = direction;
  ray.set_max_distance(max_distance);
  return ray;
}

v1::SphereCast MakeSphereCast(const v1::Vec3& origin, const v1::Vec3& direction, float max_distance,
                              float radius) {
  v1::SphereCast cast;
  *cast.mutable_origin() = origin;
  *cast.mutable_direction() = direction;
  cast.set_max_distance(max_distance);
  cast.set_radius(radius);
  return cast;
}

v1::Overlap MakeOverlap(const v1::Shape& shape, const v1::Pose& pose) {
  v1::Overlap overlap;
  *overlap.mutable_shape() = shape;
  *overlap.mutable_pose() = pose;
  return overlap;
}

v1::PointQuery MakePoint(const v1::Vec3& point, float radius) {
  v1::PointQuery query;
  *query.mutable_point() = point;
  query.set_radius(radius);
  return query;
}

v1::AabbQuery MakeRegion(const v1::Vec3& min, const v1::Vec3& max) {
  v1::AabbQuery query;
  *query.mutable_region()->mutable_min() = min;
  *query.mutable_region()->mutable_max() = max;
  return query;
}

namespace {

v1::Query Tagged(uint64_t request_id, v1::Mode mode, uint32_t max_hits) {
  v1::Query query;
  query.set_request_id(request_id);
  query.set_mode(mode);
  query.set_max_hits(max_hits);
  return query;
}

}  // namespace

v1::Query MakeRaycastQuery(uint64_t request_id, const v1::Raycast& ray, v1::Mode mode,
                           uint32_t max_hits) {
  v1::Query query = Tagged(request_id, mode, max_hits);
  *query.mutable_raycast() = ray;
  return query;
}

v1::Query MakeSphereCastQuery(uint64_t request_id, const v1::SphereCast& cast, v1::Mode mode,
                              uint32_t max_hits) {
  v1::Query query = Tagged(request_id, mode, max_hits);
  *query.mutable_sphere_cast() = cast;
  return query;
}

v1::Query MakeOverlapQuery(uint64_t request_id, const v1::Overlap& overlap, v1::Mode mode,
                           bool detail, uint32_t max_hits) {
  v1::Query query = Tagged(request_id, mode, max_hits);
  *query.mutable_overlap() = overlap;
  query.set_detail(detail);
  return query;
}

v1::Query MakePointQuery(uint64_t request_id, const v1::PointQuery& point, v1::Mode mode,
                         uint32_t max_hits) {
  v1::Query query = Tagged(request_id, mode, max_hits);
  *query.mutable_point() = point;
  return query;
}

v1::Query MakeAabbQuery(uint64_t request_id, const v1::AabbQuery& region, v1::Mode mode,
                        uint32_t max_hits) {
  v1::Query query = Tagged(request_id, mode, max_hits);
  *query.mutable_aabb() = region;
  return query;
}

v1::Filter MakeFilter(uint32_t category, uint32_t mask, std::span<const uint64_t> excluded_ids) {
  v1::Filter filter;
  filter.set_category(category);
  filter.set_mask(mask);
  for (uint64_t id : excluded_ids) filter.add_excluded_ids(id);
  return filter;
}

v1::Query AtTick(v1::Query query, uint64_t tick, float fraction) {
  query.set_at_tick(tick);
  query.set_tick_fraction(fraction);
  return query;
}

v1::UpdateBatch WithTick(v1::UpdateBatch batch, uint64_t tick) {
  batch.set_tick(tick);
  return batch;
}

v1::QueryBatch WithMinVersion(v1::QueryBatch batch, uint64_t min_version) {
  batch.set_min_version(min_version);
  return batch;
}

}  // namespace collide::client
