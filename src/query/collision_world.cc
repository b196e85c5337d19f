#include "query/collision_world.h"

#include <algorithm>
#include <cassert>

#include "geom/bounds.h"
#include "geom/vec3.h"
#include "query/asset_narrow.h"
#include "query/body.h"

namespace collide {

CollisionWorld::CollisionWorld(const CollisionWorldOptions& options)
    : fat_margin_(options.fat_margin),
      rebuild_cost_ratio_(options.rebuild_cost_ratio),
      rebuild_in_background_(options.rebuild_in_background),
      trees_{DynamicTree(DynamicTreeOptions{.fat_margin = options.fat_margin}),
             DynamicTree(DynamicTreeOptions{.fat_margin = options.fat_margin})} {
  assert(options.rebuild_cost_ratio >= 1.0f);
}

BodyHandle CollisionWorld::AllocateSlot() {
  if (!free_slots_.empty()) {
    BodyHandle handle = free_slots_.back();
    free_slots_.pop_back();
    return handle;
  }
  bodies_.emplace_back();
  return static_cast<BodyHandle>(bodies_.size() - 1);
}

BodyHandle CollisionWorld::Add(const BodyDesc& desc) {
  BodyHandle handle = AllocateSlot();
  Body& body = bodies_[handle];
  body = BodyOf(desc);
  body.proxy = MutableTree(desc.kind).CreateProxy(Track(BoundsOf(body)),
                                                  static_cast<uint32_t>(handle), desc.category);
  if (desc.kind == BodyKind::kStatic) ++static_membership_changes_;
  // A body added into the query form's free slots ages it like a move: it counts towards the
  // next decay check.
  ++changed_since_check_[static_cast<int>(desc.kind)];
  ++body_count_;
  return handle;
}

void CollisionWorld::AddBulk(std::span<const BodyDesc> descs, std::span<BodyHandle> handles) {
  assert(descs.size() == handles.size());
  // A bulk build replaces a tree's contents, so it is used only for a tree that is still empty;
  // otherwise bodies go in one by one.
  for (int kind = 0; kind < 2; ++kind) {
    bool bulk = trees_[kind].ProxyCount() == 0;
    std::vector<Aabb> boxes;
    std::vector<uint32_t> users;
    std::vector<uint32_t> categories;
    std::vector<size_t> indices;
    for (size_t i = 0; i < descs.size(); ++i) {
      if (static_cast<int>(descs[i].kind) != kind) continue;
      if (!bulk) {
        handles[i] = Add(descs[i]);
        continue;
      }
      BodyHandle handle = AllocateSlot();
      const BodyDesc& desc = descs[i];
      bodies_[handle] = BodyOf(desc);
      handles[i] = handle;
      boxes.push_back(Track(BoundsOf(bodies_[handle])));
      users.push_back(static_cast<uint32_t>(handle));
      categories.push_back(desc.category);
      indices.push_back(i);
      ++body_count_;
    }
    if (!bulk || boxes.empty()) continue;
    std::vector<int32_t> proxies(boxes.size());
    trees_[kind].Build(boxes, users, categories, proxies);
    for (size_t j = 0; j < indices.size(); ++j) bodies_[handles[indices[j]]].proxy = proxies[j];
    built_cost_[kind] = -1.0f;
    changed_since_check_[kind] = 0;
  }
  FinishUpdates();
}

void CollisionWorld::Remove(BodyHandle handle) {
  assert(IsLive(handle));
  Body& body = bodies_[handle];
  MutableTree(body.kind).DestroyProxy(body.proxy);
  if (body.kind == BodyKind::kStatic) ++static_membership_changes_;
  body.proxy = -1;
  free_slots_.push_back(handle);
  --body_count_;
}

void CollisionWorld::SetPose(BodyHandle handle, const Pose& pose) {
  assert(IsLive(handle));
  Body& body = bodies_[handle];
  body.pose = pose;
  const int kind = static_cast<int>(body.kind);
  trees_[kind].SetProxyBox(body.proxy, Track(BoundsOf(body)));
  ++changed_since_check_[kind];
}

void CollisionWorld::SetShape(BodyHandle handle, const Shape& shape) {
  assert(IsLive(handle));
  Body& body = bodies_[handle];
  body.shape = shape;
  body.asset = kNoAsset;
  body.scale = 1.0f;
  const int kind = static_cast<int>(body.kind);
  trees_[kind].SetProxyBox(body.proxy, Track(BoundsOf(body)));
  ++changed_since_check_[kind];
}

void CollisionWorld::SetFilter(BodyHandle handle, uint32_t category, uint32_t mask) {
  assert(IsLive(handle));
  Body& body = bodies_[handle];
  body.category = category;
  body.mask = mask;
  MutableTree(body.kind).SetCategoryBits(body.proxy, category);
}

void CollisionWorld::FinishUpdates() {
  for (int kind = 0; kind < 2; ++kind) {
    DynamicTree& tree = trees_[kind];
    // The queries run on the 8-wide form, which Optimize refits bottom-up from the leaves marked
    // since the last batch. The binary tree's boxes above those leaves wait for whatever reads
    // them next (an insertion, a collapse, a Refit); the quality check reads the 8-wide form.
    // A background build done by now is installed first (its new shape, refitted to every move
    // since its snapshot; Optimize collapses it into a new 8-wide form).
    const bool installed = tree.FinishBackgroundRebuild(/*wait=*/false);
    tree.Optimize();
    if (installed) TakeInstalledCost(kind);
    if (built_cost_[kind] < 0.0f) {
      built_cost_[kind] = tree.WideAreaOverLeafArea();
      changed_since_check_[kind] = 0;
    }
    if (kind == static_cast<int>(BodyKind::kStatic) && static_membership_changes_ > 0 &&
        !tree.BackgroundRebuildPending()) {
      // The static pruner: level geometry comes and goes in batches and then stays, so its tree
      // is built by binned SAH after every batch that added or removed a static body (not left
      // to age by insertion): at once when small, else in the background (the bodies added
      // while that build runs are inserted at its install and start the next one).
      static_membership_changes_ = 0;
      if (rebuild_in_background_ && tree.ProxyCount() >= kBackgroundRebuildMin) {
        tree.StartBackgroundRebuild();
      } else {
        RebuildNow(kind);
      }
      continue;
    }
    if (rebuild_in_background_ && tree.ProxyCount() >= kBackgroundRebuildMin &&
        !tree.BackgroundRebuildPending() && tree.SecondaryCount() >= tree.MaxSecondary() / 2) {
      // The bodies added since the last collapse wait in the secondary structure: a build in the
      // background takes them into the main form at its install, before Optimize would have to
      // collapse the tree at once for them.
      tree.StartBackgroundRebuild();
    }
    if (changed_since_check_[kind] > 0 && changed_since_check_[kind] >= tree.ProxyCount() / 4) {
      changed_since_check_[kind] = 0;
      const float cost = tree.WideAreaOverLeafArea();
      if (built_cost_[kind] <= 0.0f) built_cost_[kind] = cost;
      const bool background = rebuild_in_background_ && tree.ProxyCount() >= kBackgroundRebuildMin;
      if (cost > rebuild_cost_ratio_ * built_cost_[kind]) {
        // Past the bound: the tree is rebuilt now (a build under way is waited for; it was
        // started at the lower mark below and is usually done by now).
        if (tree.BackgroundRebuildPending() && tree.FinishBackgroundRebuild(/*wait=*/true)) {
          tree.Optimize();
          TakeInstalledCost(kind);
        }
        // A background build's shape is its snapshot's: when the moves since left it past the
        // bound too, the tree is built now from the present boxes.
        if (tree.WideAreaOverLeafArea() > rebuild_cost_ratio_ * built_cost_[kind]) {
          RebuildNow(kind);
        }
      } else if (background && !tree.BackgroundRebuildPending() &&
                 cost > BackgroundStartRatio() * built_cost_[kind]) {
        tree.StartBackgroundRebuild();
      }
    }
  }
}

void CollisionWorld::TakeInstalledCost(int kind) {
  // An installed background build is its snapshot's shape refitted to the moves made since,
  // never better than a build of the present boxes: the cost a build of the present boxes set
  // stays the bar (else each stale install would raise it, and the decay would compound), and
  // only a lower cost replaces it.
  const float cost = trees_[kind].WideAreaOverLeafArea();
  if (built_cost_[kind] <= 0.0f || cost < built_cost_[kind]) built_cost_[kind] = cost;
  changed_since_check_[kind] = 0;
}

void CollisionWorld::RebuildNow(int kind) {
  trees_[kind].Rebuild();
  trees_[kind].Optimize();
  built_cost_[kind] = trees_[kind].WideAreaOverLeafArea();
  changed_since_check_[kind] = 0;
}

void CollisionWorld::Optimize() {
  for (int kind = 0; kind < 2; ++kind) {
    trees_[kind].FinishBackgroundRebuild(/*wait=*/true);
    RebuildNow(kind);
  }
  static_membership_changes_ = 0;
}

AssetSlot CollisionWorld::AddAsset(std::shared_ptr<const AssetGeometry> asset) {
  assert(asset != nullptr);
  AssetSlot slot = kNoAsset;
  if (!free_asset_slots_.empty()) {
    slot = free_asset_slots_.back();
    free_asset_slots_.pop_back();
  } else if (assets_.size() <= kMaxAssetSlots) {
    slot = static_cast<AssetSlot>(assets_.size());
    assets_.emplace_back();
  } else {
    return kNoAsset;
  }
  assets_[slot] = std::move(asset);
  ++asset_slots_taken_;
  return slot;
}

void CollisionWorld::RemoveAsset(AssetSlot slot) {
  assert(slot != kNoAsset && slot < assets_.size() && assets_[slot] != nullptr);
  assets_[slot].reset();
  free_asset_slots_.push_back(slot);
  --asset_slots_taken_;
}

void CollisionWorld::PlaceAsset(AssetSlot slot, std::shared_ptr<const AssetGeometry> asset) {
  assert(slot != kNoAsset && asset != nullptr);
  if (slot >= assets_.size()) assets_.resize(static_cast<size_t>(slot) + 1);
  if (assets_[slot] == nullptr) {
    ++asset_slots_taken_;
    free_asset_slots_.erase(std::remove(free_asset_slots_.begin(), free_asset_slots_.end(), slot),
                            free_asset_slots_.end());
  }
  assets_[slot] = std::move(asset);
}

Aabb CollisionWorld::BoundsOf(const Body& body) const {
  if (body.asset == kNoAsset) return Bounds(body.shape, body.pose);
  return AssetBounds(asset(body.asset), ScaledPose{body.pose, body.scale});
}

float CollisionWorld::BoundingRadiusOf(const Body& body) const {
  if (body.asset != kNoAsset) return asset(body.asset).bounding_radius() * body.scale;
  const Shape& shape = body.shape;
  switch (shape.type) {
    case ShapeType::kBox:
      return Length(shape.box.half_extents);
    case ShapeType::kCapsule:
      return shape.capsule.half_height + shape.capsule.radius;
    case ShapeType::kSphere:
    default:
      return shape.sphere.radius;
  }
}

size_t CollisionWorld::MemoryBytes() const {
  return BodyBytes() + trees_[0].MemoryBytes() + trees_[1].MemoryBytes();
}

size_t CollisionWorld::BodyBytes() const {
  // The trees' own objects are counted by their MemoryBytes().
  // The assets themselves are the scene's to count (they are shared).
  return sizeof(*this) - sizeof(trees_) + bodies_.capacity() * sizeof(Body) +
         free_slots_.capacity() * sizeof(BodyHandle) +
         assets_.capacity() * sizeof(std::shared_ptr<const AssetGeometry>) +
         free_asset_slots_.capacity() * sizeof(AssetSlot);
}

bool CollisionWorld::Validate() const {
  if (!trees_[0].Validate() || !trees_[1].Validate()) return false;
  int32_t live = 0;
  for (BodyHandle h = 0; h < slot_count(); ++h) {
    const Body& body = bodies_[h];
    if (body.proxy < 0) continue;
    ++live;
    const DynamicTree& t = tree(body.kind);
    if (t.UserData(body.proxy) != static_cast<uint32_t>(h)) return false;
    if (body.asset != kNoAsset &&
        (body.asset >= assets_.size() || assets_[body.asset] == nullptr)) {
      return false;
    }
    // A leaf's box is its body's exact box, or holds it when the body was added with a margin
    // and has not moved since.
    const Aabb tight = BoundsOf(body);
    if (!Contains(t.FatAabb(body.proxy), tight) || Magnitude(tight) > magnitude_) return false;
    if (fat_margin_ == 0.0f && !(t.FatAabb(body.proxy) == tight)) return false;
  }
  return live == body_count_ && live == trees_[0].ProxyCount() + trees_[1].ProxyCount() &&
         live + static_cast<int32_t>(free_slots_.size()) == slot_count();
}

}  // namespace collide
