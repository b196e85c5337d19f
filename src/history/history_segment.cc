#include "history/history_segment.h"

#include <cassert>
#include <limits>

#include "geom/bounds.h"

namespace collide {

HistorySegment::HistorySegment(const CollisionWorld& world, std::span<const uint32_t> generations,
                               uint64_t start)
    : start_(start), leaf_at_(static_cast<size_t>(world.slot_count()), -1) {
  for (int p = 0; p < kParts; ++p) {
    CopyPart(world, static_cast<BodyKind>(p), generations, &parts_[p]);
  }
}

void HistorySegment::CopyPart(const CollisionWorld& world, BodyKind kind,
                              std::span<const uint32_t> generations, Part* part) {
  const DynamicTree& tree = world.tree(kind);
  const int p = static_cast<int>(kind);
  auto generation_of = [&](uint32_t slot) {
    return slot < generations.size() ? generations[slot] : 0u;
  };
  auto body_box = [&](uint32_t slot) {
    return world.BoundsOf(world.body(static_cast<BodyHandle>(slot)));
  };
  if (tree.ProxyCount() == 0) return;
  if (tree.ProxyCount() == 1) {
    // The 8-wide form needs two leaves; one is a node of its own here.
    int32_t proxy = 0;
    while (!tree.IsLiveProxy(proxy)) ++proxy;
    const uint32_t slot = tree.UserData(proxy);
    WideTree::Node& node = part->tree.node(part->tree.AddNode());
    node.Set(0, ~0, body_box(slot), tree.CategoryBits(proxy));
    for (int i = 1; i < WideTree::kWidth; ++i) node.SetEmpty(i);
    part->tree.SetRoot(0);
    part->parent_at.assign(1, -1);
    part->slot.push_back(slot);
    part->generation.push_back(generation_of(slot));
    leaf_at_[slot] = 0 * kParts + p;
    return;
  }
  tree.CopyWide(&part->tree, &part->parent_at);
  const int32_t nodes = part->tree.NodeCount();
  part->slot.reserve(static_cast<size_t>(tree.ProxyCount()));
  part->generation.reserve(static_cast<size_t>(tree.ProxyCount()));
  // Preorder: every child node has a larger index than its parent, so a backward pass sets each
  // node's leaves to their tight boxes and hands the node's union up after its children did.
  for (int32_t w = nodes; w-- > 0;) {
    WideTree::Node& node = part->tree.node(w);
    Aabb all;
    uint32_t category = 0;
    bool first = true;
    for (int i = 0; i < WideTree::kWidth; ++i) {
      const int32_t child = node.child[i];
      if (child == std::numeric_limits<int32_t>::min()) continue;  // an unused slot
      if (child < 0) {
        const int32_t proxy = ~child;
        const uint32_t slot = tree.UserData(proxy);
        const int32_t leaf = static_cast<int32_t>(part->slot.size());
        part->slot.push_back(slot);
        part->generation.push_back(generation_of(slot));
        leaf_at_[slot] = (w * WideTree::kWidth + i) * kParts + p;
        node.Set(i, ~leaf, body_box(slot), node.category[i]);
      }
      const Aabb box = node.Box(i);
      all = first ? box : Union(all, box);
      category |= node.category[i];
      first = false;
    }
    const int32_t up = part->parent_at[w];
    if (up < 0 || first) continue;
    WideTree::Node& parent = part->tree.node(up / WideTree::kWidth);
    const int slot = up % WideTree::kWidth;
    parent.Set(slot, parent.child[slot], all, category);
  }
}

void HistorySegment::Grow(Part& part, int32_t at, const Aabb& box, uint32_t category) {
  while (at >= 0) {
    const int32_t w = at / WideTree::kWidth;
    const int i = at % WideTree::kWidth;
    WideTree::Node& node = part.tree.node(w);
    const Aabb now = node.Box(i);
    if (Contains(now, box) && (node.category[i] & category) == category) return;
    node.Set(i, node.child[i], Union(now, box), node.category[i] | category);
    at = part.parent_at[w];
  }
}

void HistorySegment::Include(BodyHandle slot, uint32_t generation, const Aabb& box,
                             uint32_t category) {
  assert(open_);
  const size_t s = static_cast<size_t>(slot);
  if (s < leaf_at_.size() && leaf_at_[s] >= 0) {
    const int32_t code = leaf_at_[s];
    Part& part = parts_[code % kParts];
    const int32_t at = code / kParts;
    const int32_t leaf = ~part.tree.node(at / WideTree::kWidth).child[at % WideTree::kWidth];
    if (part.generation[leaf] == generation) {
      Grow(part, at, box, category);
      return;
    }
    leaf_at_[s] = -1;  // the copy's body has gone
  }
  if (added_of_.size() <= s) added_of_.resize(s + 1, -1);
  int32_t& index = added_of_[s];
  if (index >= 0 && added_generation_[index] != generation) index = -1;
  if (index < 0) {
    index = static_cast<int32_t>(added_slot_.size());
    added_slot_.push_back(static_cast<uint32_t>(slot));
    added_generation_.push_back(generation);
    added_box_.push_back(box);
    added_category_.push_back(category);
    added_proxy_.push_back(added_.CreateProxy(box, static_cast<uint32_t>(index), category));
    return;
  }
  const Aabb grown = Union(added_box_[index], box);
  const uint32_t bits = added_category_[index] | category;
  if (bits != added_category_[index]) {
    added_category_[index] = bits;
    added_.SetCategoryBits(added_proxy_[index], bits);
  }
  if (!Contains(added_box_[index], box)) {
    added_box_[index] = grown;
    added_.MoveProxy(added_proxy_[index], grown);
  }
}

void HistorySegment::FreeScratch() {
  leaf_at_ = {};
  added_of_ = {};
  added_box_ = {};
  added_category_ = {};
  added_proxy_ = {};
  for (Part& part : parts_) part.parent_at = {};
  added_.Optimize();
}

size_t HistorySegment::MemoryBytes() const {
  size_t bytes =
      sizeof(*this) + leaf_at_.capacity() * sizeof(int32_t) + added_.MemoryBytes() +
      added_slot_.capacity() * sizeof(uint32_t) + added_generation_.capacity() * sizeof(uint32_t) +
      added_proxy_.capacity() * sizeof(int32_t) + added_box_.capacity() * sizeof(Aabb) +
      added_category_.capacity() * sizeof(uint32_t) + added_of_.capacity() * sizeof(int32_t);
  for (const Part& part : parts_) {
    bytes += part.tree.MemoryBytes() + part.parent_at.capacity() * sizeof(int32_t) +
             part.slot.capacity() * sizeof(uint32_t) +
             part.generation.capacity() * sizeof(uint32_t) +
             part.anchor.capacity() * sizeof(uint64_t);
  }
  return bytes;
}

}  // namespace collide
