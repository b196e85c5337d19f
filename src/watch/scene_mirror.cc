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
  slot_bodies_.clear();
  unused_slots_.clear();
  for (BodyHandle h = 0; h < world_.slot_count(); ++h) {
    if (!world_.IsLive(h)) continue;
    handles_.emplace(world_.body(h).id, h);
    if (world_.body(h).asset != kNoAsset) UseSlot(world_.body(h).asset, 1);
  }
  // The scene's assets no body places (unplaced, or kept for its past ticks) are not the
  // mirror's to keep.
  for (uint32_t slot = 1; slot < world_.asset_table_size(); ++slot) {
    const AssetSlot s = static_cast<AssetSlot>(slot);
    const bool placed = slot < slot_bodies_.size() && slot_bodies_[slot] > 0;
    if (!placed && world_.shared_asset(s) != nullptr) world_.RemoveAsset(s);
  }
  captured_ = true;
}

void SceneMirror::UseSlot(AssetSlot slot, int delta) {
  if (slot >= slot_bodies_.size()) slot_bodies_.resize(static_cast<size_t>(slot) + 1, 0);
  slot_bodies_[slot] = static_cast<uint32_t>(static_cast<int>(slot_bodies_[slot]) + delta);
  if (slot_bodies_[slot] == 0) unused_slots_.push_back(slot);
}

void SceneMirror::Apply(std::span<const BodyChange> changes, uint64_t version, uint64_t tick) {
  assert(captured_ && version > version_);
  // The assets no body placed after the last batch (its evaluation is over): the scene may have
  // deleted them, and the mirror must not keep them alive.
  for (AssetSlot slot : unused_slots_) {
    if (slot_bodies_[slot] == 0 && world_.shared_asset(slot) != nullptr) world_.RemoveAsset(slot);
  }
  unused_slots_.clear();
  auto remove = [&](BodyHandle handle) {
    const AssetSlot slot = world_.body(handle).asset;
    world_.Remove(handle);
    if (slot != kNoAsset) UseSlot(slot, -1);
  };
  for (const BodyChange& change : changes) {
    auto it = handles_.find(change.id);
    const bool present = it != handles_.end();
    if (!change.after.has_value()) {
      // Removed.
      if (present) {
        remove(it->second);
        handles_.erase(it);
      }
      continue;
    }
    const Body& after = *change.after;
    if (!present || change.replaced || !change.before.has_value()) {
      // Created or replaced (the kind, and so the tree, may change); its asset in the slot the
      // scene's world has it in.
      if (present) remove(it->second);
      if (after.asset != kNoAsset) {
        assert(change.asset != nullptr);
        world_.PlaceAsset(after.asset, change.asset);
        UseSlot(after.asset, 1);
      }
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
