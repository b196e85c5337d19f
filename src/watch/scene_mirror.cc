#include "watch/scene_mirror.h"

#include <cassert>
#include <utility>

#include "query/body.h"

namespace collide {

void SceneMirror::Capture(const Scene& scene) {
  scene.ReadWithHistory([&](const CollisionWorld& world, const PoseHistory& history, uint64_t v) {
    world_ = world;
    version_ = v;
    tick_ = history.tick();
  });
  handles_.clear();
  handles_.reserve(static_cast<size_t>(world_.body_count()));
  for (BodyHandle h = 0; h < world_.slot_count(); ++h) {
    if (world_.IsLive(h)) handles_.emplace(world_.body(h).id, h);
  }
  captured_ = true;
}

void SceneMirror::Apply(std::span<const BodyChange> changes, uint64_t version, uint64_t tick) {
  assert(captured_ && version > version_);
  for (const BodyChange& change : changes) {
    auto it = handles_.find(change.id);
    const bool present = it != handles_.end();
    if (!change.after.has_value()) {
      // Removed.
      if (present) {
        world_.Remove(it->second);
        handles_.erase(it);
      }
      continue;
    }
    const Body& after = *change.after;
    if (!present || change.replaced || !change.before.has_value()) {
      // Created or replaced (the kind, and so the tree, may change).
      if (present) world_.Remove(it->second);
      handles_.insert_or_assign(change.id, world_.Add(DescOf(after)));
      continue;
    }
    // Moved and/or filtered: the shape and kind stay.
    const BodyHandle handle = it->second;
    world_.SetPose(handle, after.pose);
    const Body& now = world_.body(handle);
    if (now.category != after.category || now.mask != after.mask) {
      world_.SetFilter(handle, after.category, after.mask);
    }
  }
  world_.FinishUpdates();
  version_ = version;
  tick_ = tick;
}

void SceneMirror::WithView(absl::FunctionRef<void(const SceneView&)> f) const {
  auto find = [this](uint64_t id) -> const Body* {
    auto it = handles_.find(id);
    return it == handles_.end() ? nullptr : &world_.body(it->second);
  };
  f(SceneView{.world = world_, .find_body = find, .version = version_, .tick = tick_});
}

size_t SceneMirror::MemoryBytes() const {
  return world_.MemoryBytes() +
         handles_.capacity() * (sizeof(std::pair<const uint64_t, BodyHandle>) + 1);
}

}  // namespace collide
