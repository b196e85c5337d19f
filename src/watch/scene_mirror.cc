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

void SceneMirror::UseAsset(AssetSlot slot, int delta) {
  if (slot >= asset_bodies_.size()) asset_bodies_.resize(static_cast<size_t>(slot) + 1, 0);
  asset_bodies_[slot] = static_cast<uint32_t>(static_cast<int>(asset_bodies_[slot]) + delta);
  if (asset_bodies_[slot] == 0) unused_assets_.push_back(slot);
}

void SceneMirror::PlaceAsset(AssetSlot slot, std::shared_ptr<const AssetGeometry> asset) {
  assert(asset != nullptr);
  if (slot >= assets_.size()) assets_.resize(static_cast<size_t>(slot) + 1);
  if (parts_.world) world_.PlaceAsset(slot, asset);
  assets_[slot] = std::move(asset);
}

void SceneMirror::Capture(const Scene& scene) {
  bodies_.clear();
  free_.clear();
  slots_.clear();
  handles_.clear();
  assets_.clear();
  asset_bodies_.clear();
  unused_assets_.clear();
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
      if (body.asset != kNoAsset) {
        if (body.asset >= assets_.size()) assets_.resize(static_cast<size_t>(body.asset) + 1);
        assets_[body.asset] = world.shared_asset(body.asset);
        UseAsset(body.asset, 1);
      }
    }
  });
  if (parts_.world) {
    // The scene's assets no body places (unplaced, or kept for its past ticks) are not the
    // mirror's to keep.
    for (uint32_t slot = 1; slot < world_.asset_table_size(); ++slot) {
      const AssetSlot s = static_cast<AssetSlot>(slot);
      const bool placed = slot < asset_bodies_.size() && asset_bodies_[slot] > 0;
      if (!placed && world_.shared_asset(s) != nullptr) world_.RemoveAsset(s);
    }
  } else {
    world_ = CollisionWorld();
  }
  if (parts_.grid) BuildGrid();
  captured_ = true;
}

void SceneMirror::BuildWorld() {
  world_ = CollisionWorld();
  // The assets first, in the slots the bodies name.
  for (uint32_t slot = 1; slot < assets_.size(); ++slot) {
    if (assets_[slot] != nullptr && slot < asset_bodies_.size() && asset_bodies_[slot] > 0) {
      world_.PlaceAsset(static_cast<AssetSlot>(slot), assets_[slot]);
    }
  }
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

void SceneMirror::ReleaseUnusedAssets() {
  // The assets no body placed after the last batch (its evaluation is over): the scene may have
  // deleted them, and the mirror must not keep them alive.
  for (AssetSlot slot : unused_assets_) {
    if (asset_bodies_[slot] != 0) continue;
    if (slot < assets_.size()) assets_[slot].reset();
    if (parts_.world && world_.shared_asset(slot) != nullptr) world_.RemoveAsset(slot);
  }
  unused_assets_.clear();
}

void SceneMirror::ApplyMoves(std::span<const BodyMove> moves, uint64_t version, uint64_t tick,
                             std::vector<BodyChange>* changes) {
  assert(captured_ && version > version_);
  ReleaseUnusedAssets();
  if (changes != nullptr) {
    changes->clear();
    changes->reserve(moves.size());
  }
  // As in Apply: the slot after the last one is tried before the id table.
  uint32_t next = 0;
  for (const BodyMove& move : moves) {
    uint32_t slot = next;
    if (slot >= bodies_.size() || bodies_[slot].proxy < 0 || bodies_[slot].id != move.id) {
      auto it = slots_.find(move.id);
      // The scene validated that the body exists at the version before; the mirror holds it.
      assert(it != slots_.end());
      if (it == slots_.end()) continue;
      slot = it->second;
    }
    next = slot + 1;
    Body& body = bodies_[slot];
    const bool refiltered = body.category != move.category || body.mask != move.mask;
    if (changes != nullptr) {
      BodyChange& change = changes->emplace_back();
      change.id = move.id;
      change.before = body;
    }
    body.pose = move.pose;
    body.category = move.category;
    body.mask = move.mask;
    if (changes != nullptr) {
      BodyChange& change = changes->back();
      change.after = body;
      if (body.asset != kNoAsset && body.asset < assets_.size()) change.asset = assets_[body.asset];
    }
    if (parts_.grid) grid_.Update(slot, body, refiltered);
    if (parts_.world) UpdateWorld(slot, body, /*replaced=*/false);
  }
  if (parts_.world) world_.FinishUpdates();
  if (parts_.grid && grid_.NeedsRebuild()) BuildGrid();
  version_ = version;
  tick_ = tick;
}

void SceneMirror::Apply(std::span<const BodyChange> changes, uint64_t version, uint64_t tick) {
  assert(captured_ && version > version_);
  ReleaseUnusedAssets();
  bool freed = false;
  // The records come by id, and bodies copied or created in id order sit in consecutive slots:
  // the slot after the last one is tried before the id table.
  uint32_t next = 0;
  for (const BodyChange& change : changes) {
    if (change.after.has_value() && next < bodies_.size() && bodies_[next].proxy >= 0 &&
        bodies_[next].id == change.id) {
      const uint32_t slot = next++;
      Body& body = bodies_[slot];
      if (change.replaced || !change.before.has_value()) {
        // Replaced: its asset placed first (the same asset's count never passes through 0).
        if (change.after->asset != kNoAsset) {
          PlaceAsset(change.after->asset, change.asset);
          UseAsset(change.after->asset, 1);
        }
        if (body.asset != kNoAsset) UseAsset(body.asset, -1);
      }
      const bool refiltered =
          body.category != change.after->category || body.mask != change.after->mask;
      body = *change.after;
      body.proxy = kLive;
      if (parts_.grid) grid_.Update(slot, body, refiltered);
      if (parts_.world) UpdateWorld(slot, body, change.replaced || !change.before.has_value());
      continue;
    }
    auto it = slots_.find(change.id);
    const bool present = it != slots_.end();
    if (!change.after.has_value()) {
      // Removed.
      if (present) {
        const uint32_t slot = it->second;
        const AssetSlot asset = bodies_[slot].asset;
        if (parts_.world) world_.Remove(handles_[slot]);
        if (parts_.grid) grid_.Erase(slot);
        handles_[slot] = kNullBody;
        bodies_[slot].proxy = -1;
        free_.push_back(slot);
        slots_.erase(it);
        if (asset != kNoAsset) UseAsset(asset, -1);
        freed = true;
      }
      continue;
    }
    Body after = *change.after;
    after.proxy = kLive;
    const bool placed = !present || change.replaced || !change.before.has_value();
    if (placed && after.asset != kNoAsset) {
      // Created or replaced: its asset in the slot the scene's world has it in.
      PlaceAsset(after.asset, change.asset);
      UseAsset(after.asset, 1);
    }
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
    if (placed && bodies_[slot].asset != kNoAsset) UseAsset(bodies_[slot].asset, -1);
    next = slot + 1;
    const bool refiltered =
        bodies_[slot].category != after.category || bodies_[slot].mask != after.mask;
    bodies_[slot] = after;
    if (parts_.grid) grid_.Update(slot, after, refiltered);
    if (parts_.world) UpdateWorld(slot, after, placed);
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

void SceneMirror::UpdateWorld(uint32_t slot, const Body& after, bool replaced) {
  if (replaced) {
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
  bytes += assets_.capacity() * sizeof(assets_[0]) + asset_bodies_.capacity() * sizeof(uint32_t);
  if (parts_.world) bytes += world_.MemoryBytes();
  if (parts_.grid) bytes += grid_.MemoryBytes();
  return bytes;
}

}  // namespace collide
