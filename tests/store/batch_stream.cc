#include "store/batch_stream.h"

#include <algorithm>
#include <cmath>

namespace collide {

BatchStream::BatchStream(uint64_t seed, int max_live)
    : state_(seed * 0x9E3779B97F4A7C15ull + 1), max_live_(max_live) {}

uint64_t BatchStream::Random() {
  // splitmix64: a fixed, portable sequence.
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

float BatchStream::Uniform(float lo, float hi) {
  return lo + (hi - lo) * static_cast<float>(Random() >> 40) / static_cast<float>(1 << 24);
}

Pose BatchStream::RandomPose() {
  Quat q{Uniform(-1, 1), Uniform(-1, 1), Uniform(-1, 1), Uniform(-1, 1)};
  q = Length(q) > 0.1f ? Normalize(q) : Quat::Identity();
  return Pose{.rotation = q,
              .position = Vec3{Uniform(-500, 500), Uniform(-50, 50), Uniform(-500, 500)}};
}

UpdateOp BatchStream::RandomUpsert(uint64_t id) {
  Shape shape;
  switch (Random() % 3) {
    case 0:
      shape = Sphere{Uniform(0.1f, 3.0f)};
      break;
    case 1:
      shape = Box{Vec3{Uniform(0.1f, 2.0f), Uniform(0.1f, 2.0f), Uniform(0.1f, 2.0f)}};
      break;
    default:
      shape = Capsule{Uniform(0.1f, 1.0f), Uniform(0.0f, 2.0f)};
      break;
  }
  return UpsertOp(BodyDesc{.id = id,
                           .shape = shape,
                           .pose = RandomPose(),
                           .category = static_cast<uint32_t>(Random()),
                           .mask = static_cast<uint32_t>(Random()),
                           .kind = Random() % 4 == 0 ? BodyKind::kStatic : BodyKind::kDynamic},
                  Random());
}

UpdateBatch BatchStream::Next() {
  ++count_;
  UpdateBatch batch;
  const int ops = 1 + static_cast<int>(Random() % 24);
  std::vector<uint64_t> upserted;  // at most one upsert per id and batch
  for (int i = 0; i < ops; ++i) {
    const uint64_t roll = Random() % 100;
    const bool can_create = static_cast<int>(live_.size()) < max_live_;
    if (live_.empty() || (roll < 10 && can_create)) {
      if (!can_create) continue;
      const uint64_t id = next_id_++;
      batch.ops.push_back(RandomUpsert(id));
      upserted.push_back(id);
      live_.push_back(id);
      continue;
    }
    const size_t pick = Random() % live_.size();
    const uint64_t id = live_[pick];
    if (roll < 70) {
      batch.ops.push_back(SetPoseOp(id, RandomPose()));
    } else if (roll < 82) {
      batch.ops.push_back(
          SetFilterOp(id, static_cast<uint32_t>(Random()), static_cast<uint32_t>(Random())));
    } else if (roll < 90) {
      if (std::find(upserted.begin(), upserted.end(), id) != upserted.end()) continue;
      batch.ops.push_back(RandomUpsert(id));  // a replacement
      upserted.push_back(id);
    } else {
      batch.ops.push_back(RemoveOp(id));
      live_[pick] = live_.back();
      live_.pop_back();
    }
  }
  return batch;
}

}  // namespace collide
