#pragma once

#include <cstdint>
#include <memory>

#include "scene/scene.h"
#include "scene/update_batch.h"
#include "server/service_options.h"

namespace collide::fuzz {

/// Limits small enough that a fuzz input can cross each of them.
inline ServiceLimits FuzzLimits() {
  ServiceLimits limits;
  limits.max_batch_ops = 64;
  limits.max_queries_per_batch = 16;
  limits.max_scenes = 4;
  limits.max_bodies_per_scene = 256;
  limits.max_hits = 32;
  limits.max_excluded_ids = 8;
  return limits;
}

/// A fresh live scene holding bodies 1..8 (two of each shape kind, some static), at tick 1 with
/// a history of 8 ticks, so that updates can name existing bodies and queries hit something.
inline std::unique_ptr<Scene> MakeLiveScene() {
  SceneOptions options;
  options.max_bodies = 256;
  options.history_ticks = 8;
  auto scene = std::make_unique<Scene>("fuzz", options);
  UpdateBatch batch;
  for (uint64_t id = 1; id <= 8; ++id) {
    BodyDesc desc;
    desc.id = id;
    switch (id % 3) {
      case 0:
        desc.shape = Sphere{0.5f + 0.1f * static_cast<float>(id)};
        break;
      case 1:
        desc.shape = Box{Vec3{0.5f, 1.0f, 0.25f * static_cast<float>(id)}};
        break;
      default:
        desc.shape = Capsule{0.25f, 0.1f * static_cast<float>(id)};
        break;
    }
    desc.pose.position = Vec3{2.0f * static_cast<float>(id) - 8.0f, 0.0f, 0.0f};
    desc.category = 1u << (id % 4);
    desc.kind = id % 4 == 0 ? BodyKind::kStatic : BodyKind::kDynamic;
    batch.ops.push_back(UpsertOp(desc, id * 10));
  }
  batch.tick = 1;
  (void)scene->Apply(batch);
  return scene;
}

}  // namespace collide::fuzz
