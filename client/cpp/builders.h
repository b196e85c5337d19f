#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "collide/v1/collide.pb.h"

namespace collide::client {

// Small constructors of API messages, so that requests read as one expression.

/// A point or direction.
v1::Vec3 MakeVec3(float x, float y, float z);
/// A rotation (x, y, z, w); the server requires it within 1e-3 of unit length.
v1::Quat MakeQuat(float x, float y, float z, float w);
/// The rotation by `angle` radians about `axis` (normalised here; a zero axis gives identity).
v1::Quat MakeQuatFromAxisAngle(const v1::Vec3& axis, float angle);
/// A pose with an absent rotation (the identity).
v1::Pose MakePose(const v1::Vec3& position);
/// A pose with an explicit rotation.
v1::Pose MakePose(const v1::Vec3& position, const v1::Quat& rotation);

/// A sphere of `radius` (length units) about the body's origin.
v1::Shape MakeSphere(float radius);
/// A box of these half extents along the body's axes (length units).
v1::Shape MakeBox(float half_x, float half_y, float half_z);
/// A capsule along the body's y axis: radius and half the inner segment (length units).
v1::Shape MakeCapsule(float radius, float half_height);
/// A body's instance of the scene's mesh asset `asset` (UploadMesh), scaled uniformly by `scale`.
v1::Shape MakeMesh(std::string_view asset, float scale = 1.0f);
/// A body's instance of the scene's heightfield asset `asset` (UploadHeightfield).
v1::Shape MakeHeightfield(std::string_view asset, float scale = 1.0f);

/// A dynamic body with default filter bits (category 1, mask all).
v1::Body MakeBody(uint64_t id, const v1::Shape& shape, const v1::Pose& pose);
/// The same, static.
v1::Body MakeStaticBody(uint64_t id, const v1::Shape& shape, const v1::Pose& pose);

/// An UpdateBatch operation that creates or replaces `body`.
v1::UpdateOp MakeUpsertOp(const v1::Body& body);
/// An operation that moves body `id` to `pose`.
v1::UpdateOp MakeSetPoseOp(uint64_t id, const v1::Pose& pose);
/// An operation that replaces body `id`'s filter bits.
v1::UpdateOp MakeSetFilterOp(uint64_t id, uint32_t category, uint32_t mask);
/// An operation that removes body `id`.
v1::UpdateOp MakeRemoveOp(uint64_t id);
/// Appends one move to the column form: the position and the rotation (identity when absent).
void AddMove(uint64_t id, const v1::Pose& pose, v1::PoseColumns* moves);

/// A ray: origin, direction (any finite non-zero vector), max distance (length units).
v1::Raycast MakeRaycast(const v1::Vec3& origin, const v1::Vec3& direction, float max_distance);
/// A ball of `radius` swept along a ray.
v1::SphereCast MakeSphereCast(const v1::Vec3& origin, const v1::Vec3& direction, float max_distance,
                              float radius);
/// A posed shape, for overlap queries.
v1::Overlap MakeOverlap(const v1::Shape& shape, const v1::Pose& pose);
/// The bodies within `radius` of `point`.
v1::PointQuery MakePoint(const v1::Vec3& point, float radius);
/// The bodies whose bounds overlap the box [min, max].
v1::AabbQuery MakeRegion(const v1::Vec3& min, const v1::Vec3& max);

// Queries of a QueryBatch, tagged with `request_id`, in `mode` (max_hits 0: the server's 64).

/// A ray cast query (closest hit by default).
v1::Query MakeRaycastQuery(uint64_t request_id, const v1::Raycast& ray,
                           v1::Mode mode = v1::MODE_CLOSEST, uint32_t max_hits = 0);
/// A sphere cast query (closest hit by default).
v1::Query MakeSphereCastQuery(uint64_t request_id, const v1::SphereCast& cast,
                              v1::Mode mode = v1::MODE_CLOSEST, uint32_t max_hits = 0);
/// An overlap query (every hit by default); `detail` asks for depth, point and normal.
v1::Query MakeOverlapQuery(uint64_t request_id, const v1::Overlap& overlap,
                           v1::Mode mode = v1::MODE_ALL, bool detail = false,
                           uint32_t max_hits = 0);
/// A point-radius query (every hit by default, nearest first).
v1::Query MakePointQuery(uint64_t request_id, const v1::PointQuery& point,
                         v1::Mode mode = v1::MODE_ALL, uint32_t max_hits = 0);
/// An AABB region query (every hit by default).
v1::Query MakeAabbQuery(uint64_t request_id, const v1::AabbQuery& region,
                        v1::Mode mode = v1::MODE_ALL, uint32_t max_hits = 0);

/// A filter with explicit bits and excluded ids.
v1::Filter MakeFilter(uint32_t category, uint32_t mask,
                      std::span<const uint64_t> excluded_ids = {});

// Lag compensation and consistency (ticks, past-tick queries, minimum versions).

/// `query` answered against the bodies as they were at the end of `tick` (lag compensation);
/// with `fraction` in (0, 1), poses interpolated that far towards the end of tick + 1. Returns
/// the query for chaining. The server answers OUT_OF_RANGE for a tick it does not retain
/// (SceneStats.oldest_tick .. SceneStats.tick).
v1::Query AtTick(v1::Query query, uint64_t tick, float fraction = 0.0f);
/// The batch tagged with the simulation `tick` it belongs to (never below the scene's current
/// tick; equal amends it).
v1::UpdateBatch WithTick(v1::UpdateBatch batch, uint64_t tick);
/// The batch answered only once the scene reached `min_version` (e.g. the version an UpdateAck
/// reported), waiting at most until the call's deadline and the server's limit.
v1::QueryBatch WithMinVersion(v1::QueryBatch batch, uint64_t min_version);

}  // namespace collide::client
