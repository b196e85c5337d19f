#pragma once

// The reference scene's geometry as collide.v1 messages, and its upload to a running server:
// shared by the benchmarks that go through the service (service_bench.cc, load/load_main.cc).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "bench/reference_scene.h"
#include "client/cpp/builders.h"
#include "client/cpp/client.h"
#include "collide/v1/collide.pb.h"
#include "geom/cast.h"
#include "geom/pose.h"
#include "geom/shapes.h"
#include "geom/vec3.h"

// (collide::v1 spelled out: collide-load also has the echo service's collide::bench::v1.)
namespace collide::bench {

/// `v` as a message.
inline collide::v1::Vec3 ToProto(const Vec3& v) { return client::MakeVec3(v.x, v.y, v.z); }

/// `s` as a message.
inline collide::v1::Shape ToProto(const Shape& s) {
  switch (s.type) {
    case ShapeType::kSphere:
      return client::MakeSphere(s.sphere.radius);
    case ShapeType::kBox:
      return client::MakeBox(s.box.half_extents.x, s.box.half_extents.y, s.box.half_extents.z);
    case ShapeType::kCapsule:
      return client::MakeCapsule(s.capsule.radius, s.capsule.half_height);
  }
  return {};
}

/// `p` as a message.
inline collide::v1::Pose ToProto(const Pose& p) {
  const Quat& q = p.rotation;
  return client::MakePose(ToProto(p.position), client::MakeQuat(q.x, q.y, q.z, q.w));
}

/// A raycast along `r`.
inline collide::v1::Raycast RaycastAlong(const Ray& r) {
  return client::MakeRaycast(ToProto(r.origin), ToProto(r.direction), r.max_distance);
}

/// Upserts the bodies of `ref` (body i has id i) into `scene`, which must exist, in requests of
/// 10,000 bodies; prints the error and returns false on the first that fails.
inline bool UpsertReferenceBodies(client::Client& c, const std::string& scene,
                                  const ReferenceScene& ref) {
  constexpr size_t kChunk = 10000;
  for (size_t first = 0; first < ref.shapes.size(); first += kChunk) {
    collide::v1::UpsertBodiesRequest req;
    req.set_scene(scene);
    for (size_t i = first; i < std::min(ref.shapes.size(), first + kChunk); ++i) {
      *req.add_bodies() = client::MakeBody(i, ToProto(ref.shapes[i]), ToProto(ref.poses[i]));
    }
    if (auto s = c.UpsertBodies(req); !s.ok()) {
      std::fprintf(stderr, "upsert: %s\n", s.status().ToString().c_str());
      return false;
    }
  }
  return true;
}

}  // namespace collide::bench
