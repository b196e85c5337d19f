#include "watch/scene_mirror.h"

#include <atomic>
#include <cassert>
#include <utility>

#include "query/body.h"

namespace collide {
namespace {

// A slot's body marks it live with proxy 0 (the mirror's table is in no tree); free: -1.
constexpr int32_t kLive = 0;

// A slot layout no mirror had before.
uint64_t NewLayout() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

SceneMirror::SceneMirror(const Parts& parts) : parts_(parts), layout_(NewLayout()) {}

uint32_t SceneMirror::TakeSlot() {
  if (!free_.empty()) {
    const uint32_t slot = free_.back();
    free_.pop_back();
    return slot;
  }
  bodies_.emplace_back();
  handles_.push_back(kNullBody);
  return static_cast<uint32_t>(bodies_.size() - 1);
}

void SceneMirror::Capture(const Scene& scene) {
  bodies_.clear();
  free_.clear();
  slots_.clear();
  handles_.clear();
  layout_ = NewLayout();
  scene.ReadWithHistory([&](const CollisionWorld& world, const PoseHistory& history, uint64_t v) {
    if (parts_.world) world_ = world;
    version_ = v;
    tick_ = history.tick();
    bodies_.reserve(static_cast<size_t>(world.body_count()));
    slots_.reserve(static_cast<size_t>(world.body_count()));
    for (BodyHandle h = 0; h < world.slot_count(); ++h) {
      if (!world.IsLive(h)) continue;
      Body body = world.body(h);
      body.proxy = kLive;
      slots_.emplace(body.id, static_cast<uint32_t>(bodies_.size()));
      bodies_.push_back(body);
      handles_.push_back(parts_.world ? h : kNullBody);
    }
  });
  if (!parts_.world) world_ = CollisionWorld();
  if (parts_.grid) BuildGrid();
  captured_ = true;
}

void SceneMirror::BuildWorld() {
  world_ = CollisionWorld();
  std::vector<BodyDesc> descs;
  std::vector<uint32_t> of;
  descs.reserve(slots_.size());
  of.reserve(slots_.size());
  for (uint32_t slot = 0; slot < bodies_.size(); ++slot) {
    if (bodies_[slot].proxy < 0) continue;
    descs.push_back(DescOf(bodies_[slot]));
    of.push_back(slot);
  }
  std::vector<BodyHandle> handles(descs.size());
  world_.AddBulk(descs, handles);
  for (size_t i = 0; i < of.size(); ++i) handles_[of[i]] = handles[i];
}

void SceneMirror::BuildGrid() {
  std::vector<const Body*> live(bodies_.size(), nullptr);
  for (uint32_t slot = 0; slot < bodies_.size(); ++slot) {
    if (bodies_[slot].proxy >= 0) live[slot] = &bodies_[slot];
  }
  grid_.Build(live);
}

void SceneMirror::KeepWorld() {
  if (parts_.world) return;
  parts_.world = true;
  if (captured_) BuildWorld();
}

void SceneMirror::KeepGrid() {
  if (parts_.grid) return;
  parts_.grid = true;
  if (captured_) BuildGrid();
}

void SceneMirror::Apply(std::span<const BodyChange> changes, uint64_t version, uint64_t tick) {
  assert(captured_ && version > version_);
  bool freed = false;
  // The records come by id, and bodies copied or created in id order sit in consecutive slots:
  // the slot after the last one is tried before the id table.
  uint32_t next = 0;
  for (const BodyChange& change : changes) {
    if (change.after.has_value() && next < bodies_.size() && bodies_[next].proxy >= 0 &&
        bodies_[next].id == change.id) {
      const uint32_t slot = next++;
      Body& body = bodies_[slot];
      const bool refiltered =
          body.category != change.after->category || body.mask != change.after->mask;
      body = *change.after;
      body.proxy = kLive;
      if (parts_.grid) grid_.Update(slot, body, refiltered);
      if (parts_.world) UpdateWorld(slot, change);
      continue;
    }
    auto it = slots_.find(change.id);
    const bool present = it != slots_.end();
    if (!change.after.has_value()) {
      // Removed.
      if (present) {
        const uint32_t slot = it->second;
        if (parts_.world) world_.Remove(handles_[slot]);
        if (parts_.grid) grid_.Erase(slot);
        handles_[slot] = kNullBody;
        bodies_[slot].proxy = -1;
        free_.push_back(slot);
        slots_.erase(it);
        freed = true;
      }
      continue;
    }
    Body after = *change.after;
    after.proxy = kLive;
    if (!present) {
      // Created.
      const uint32_t slot = TakeSlot();
      bodies_[slot] = after;
      slots_.emplace(change.id, slot);
      if (parts_.world) handles_[slot] = world_.Add(DescOf(after));
      if (parts_.grid) grid_.Insert(slot, after);
      continue;
    }
    const uint32_t slot = it->second;
    next = slot + 1;
    const bool refiltered =
        bodies_[slot].category != after.category || bodies_[slot].mask != after.mask;
    bodies_[slot] = after;
    if (parts_.grid) grid_.Update(slot, after, refiltered);
    if (parts_.world) UpdateWorld(slot, change);
  }
  if (parts_.world) world_.FinishUpdates();
  if (parts_.grid && grid_.NeedsRebuild()) BuildGrid();
  if (freed) layout_ = NewLayout();
  version_ = version;
  tick_ = tick;
}

const Body* SceneMirror::Find(uint64_t id) const {
  auto it = slots_.find(id);
  return it == slots_.end() ? nullptr : &bodies_[it->second];
}

void SceneMirror::UpdateWorld(uint32_t slot, const BodyChange& change) {
  const Body& after = *change.after;
  if (change.replaced || !change.before.has_value()) {
    // Replaced (the kind, and so the tree, may change).
    world_.Remove(handles_[slot]);
    handles_[slot] = world_.Add(DescOf(after));
    return;
  }
  // Moved and/or filtered: the shape and kind stay.
  const BodyHandle handle = handles_[slot];
  world_.SetPose(handle, after.pose);
  const Body& now = world_.body(handle);
  if (now.category != after.category || now.mask != after.mask) {
    world_.SetFilter(handle, after.category, after.mask);
  }
}

int64_t SceneMirror::SlotOf(uint64_t id) const {
  auto it = slots_.find(id);
  return it == slots_.end() ? -1 : it->second;
}

void SceneMirror::WithView(absl::FunctionRef<void(const SceneView&)> f) const {
  auto find = [this](uint64_t id) -> const Body* { return Find(id); };
  f(SceneView{.world = world_, .find_body = find, .version = version_, .tick = tick_});
}

size_t SceneMirror::MemoryBytes() const {
  size_t bytes = bodies_.capacity() * sizeof(Body) + free_.capacity() * sizeof(uint32_t) +
                 handles_.capacity() * sizeof(BodyHandle) +
                 slots_.capacity() * (sizeof(std::pair<const uint64_t, uint32_t>) + 1);
  if (parts_.world) bytes += world_.MemoryBytes();
  if (parts_.grid) bytes += grid_.MemoryBytes();
  return bytes;
}

}  // namespace collide
